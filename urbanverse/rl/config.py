"""Training configuration: one frozen ``TrainCfg`` tree, ``--set a.b=v`` overrides, JSON round trip.

``TrainCfg`` nests the environment's own configs (``PointNavCfg``, ``RewardsCfg``,
``PedestrianCfg``, ``LidarCfg``, ``DepthCameraCfg``), the policy and PPO settings, so
``--set env.task.max_goal_distance=15`` or ``--set ppo.learning_rate=3e-4`` reach any field
(``urbanverse.config``). The resolved tree is saved with every run (``config.json``)
and read back by ``--resume``, ``urbanverse eval`` and ``urbanverse export``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from urbanverse.config import apply_overrides, from_dict, to_dict
from urbanverse.errors import InputError
from urbanverse.records import atomic_path
from urbanverse.rl.policy import PolicyCfg
from urbanverse.rl.ppo import PPOCfg
from urbanverse.rl.schedule import ScheduleCfg
from urbanverse.sim import (
    DepthCameraCfg,
    LidarCfg,
    NavEnvCfg,
    PedestrianCfg,
    PointNavCfg,
    RewardsCfg,
    RgbCameraCfg,
)

__all__ = ["EnvSpec", "TrainCfg", "apply_overrides", "from_dict", "load_cfg", "save_cfg", "to_dict"]

SENSORS = ("lidar", "depth", "rgb")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvSpec:
    """What the training environments are built from (everything but the scene list)."""

    robot: str = "wheeled"
    """``wheeled`` or ``legged``."""
    sensor: str = "lidar"
    """``lidar`` (planar LiDAR + goal), ``depth`` (depth camera + goal) or ``rgb`` (rendered colour
    camera + goal; CPU rendering, hundreds of env-steps/s rather than thousands)."""
    num_envs: int = 64
    lidar: LidarCfg = dataclasses.field(default_factory=LidarCfg)
    depth: DepthCameraCfg = dataclasses.field(default_factory=DepthCameraCfg)
    rgb: RgbCameraCfg = dataclasses.field(default_factory=RgbCameraCfg)
    pedestrians: PedestrianCfg = dataclasses.field(default_factory=PedestrianCfg)
    """Pedestrians: behaviour (``--pedestrians``), count (``--pedestrian-count``), size, speeds and
    the flow crowd model (``--set env.pedestrians.social.repulsion=3``)."""
    task: PointNavCfg = dataclasses.field(default_factory=PointNavCfg)
    rewards: RewardsCfg = dataclasses.field(default_factory=RewardsCfg)
    dt: float = 0.1
    """Control period (s)."""

    def __post_init__(self) -> None:
        if self.sensor not in SENSORS:
            raise InputError(f"--sensor: expected one of {', '.join(SENSORS)}, got {self.sensor!r}")
        if self.num_envs < 1:
            raise InputError(f"--num-envs: need >= 1, got {self.num_envs}")

    def env_cfg(self, scene_dirs: tuple[str, ...], seed: int, device: str, **changes: Any) -> NavEnvCfg:
        """The ``NavEnvCfg`` for ``scene_dirs``; ``changes`` replace fields (e.g. ``num_envs``)."""
        cfg = NavEnvCfg(
            scene_dirs=tuple(scene_dirs),
            num_envs=self.num_envs,
            robot=self.robot,
            lidar=self.lidar if self.sensor == "lidar" else None,
            depth=self.depth if self.sensor == "depth" else None,
            rgb=self.rgb if self.sensor == "rgb" else None,
            pedestrians=self.pedestrians,
            task=self.task,
            rewards=self.rewards,
            dt=self.dt,
            seed=seed,
            device=device,
        )
        return dataclasses.replace(cfg, **changes) if changes else cfg


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainCfg:
    """A whole training run."""

    scenes: tuple[str, ...] = ()
    """Training scene folders."""
    env: EnvSpec = dataclasses.field(default_factory=EnvSpec)
    policy: PolicyCfg = dataclasses.field(default_factory=PolicyCfg)
    ppo: PPOCfg = dataclasses.field(default_factory=PPOCfg)
    schedule: ScheduleCfg = dataclasses.field(default_factory=ScheduleCfg)
    """Late-training schedules: QAT with an LR cooldown, late batch switch (``urbanverse.rl.schedule``)."""
    init_from: str = ""
    """Start from the policy weights of this checkpoint (a fine-tune; optimiser and counters start
    fresh). It must have the same observation layout and policy architecture."""
    algo: str = "ppo"
    """``ppo`` (this package) or ``sb3-ppo`` (Stable-Baselines3)."""
    total_steps: int = 1_000_000
    """Environment steps (summed over environments) to train for."""
    num_steps_per_env: int = 32
    """Rollout length per environment and iteration."""
    max_minutes: float = 0.0
    """Stop (with a checkpoint) once this much training wall-clock time is spent (0: no limit)."""
    save_interval: int = 20
    """Write a checkpoint every this many iterations (and at the end)."""
    seed: int = 0
    device: str = "cpu"
    experiment: str = ""
    """Experiment name in the run folder name (default: the backbone name)."""
    torch_threads: int = 0
    """torch intra-op threads (0: leave torch's default)."""

    def __post_init__(self) -> None:
        if self.algo not in ("ppo", "sb3-ppo"):
            raise InputError(f"--algo: expected ppo or sb3-ppo, got {self.algo!r}")
        if self.max_minutes < 0:
            raise InputError(f"TrainCfg.max_minutes: need >= 0, got {self.max_minutes}")
        if self.total_steps < 1 or self.num_steps_per_env < 1 or self.save_interval < 1:
            raise InputError("TrainCfg: total_steps, num_steps_per_env and save_interval must be >= 1")
        if self.ppo.num_mini_batches % self.schedule.batch_large_mult:
            raise InputError(
                f"schedule.batch_large_mult={self.schedule.batch_large_mult} must divide "
                f"ppo.num_mini_batches={self.ppo.num_mini_batches}"
            )
        if self.algo == "sb3-ppo" and (
            self.schedule.qat or self.schedule.batch_large_mult > 1 or self.init_from
        ):
            raise InputError("schedule.* and init_from apply to --algo ppo only")
        if self.algo == "sb3-ppo" and self.policy.mup:
            raise InputError(
                "policy.mup_base_width applies to --algo ppo only (SB3 builds its own optimizer)"
            )
        if self.policy.encoder is not None and self.algo == "sb3-ppo":
            raise InputError("policy.encoder (--encoder) applies to --algo ppo only; use --encoder none")
        if self.policy.encoder is not None and self.env.sensor == "lidar":
            raise InputError(
                f"--encoder {self.policy.encoder}: the lidar sensor gives no images; use --encoder none"
            )

    @property
    def task_name(self) -> str:
        """``pointnav-<robot>-<sensor>``: the task part of run names."""
        return f"pointnav-{self.env.robot}-{self.env.sensor}"

    @property
    def steps_per_iteration(self) -> int:
        return self.env.num_envs * self.num_steps_per_env

    @property
    def num_iterations(self) -> int:
        return -(-self.total_steps // self.steps_per_iteration)


def save_cfg(cfg: TrainCfg, path: Path) -> None:
    """Write the resolved config as JSON, atomically (``--resume`` rewrites it in place)."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(to_dict(cfg), indent=2) + "\n")


def load_cfg(path: Path) -> TrainCfg:
    """Read a config written by :func:`save_cfg`."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read the run config ({exc})") from None
    return from_dict(TrainCfg, data, str(path))
