"""Training configuration: one frozen ``TrainCfg`` tree, ``--set a.b=v`` overrides, JSON round trip.

``TrainCfg`` nests the environment's own configs (``PointNavCfg``, ``RewardsCfg``,
``PedestrianCfg``, ``LidarCfg``, ``DepthCameraCfg``), the policy and PPO settings, so
``--set env.task.max_goal_distance=15`` or ``--set ppo.learning_rate=3e-4`` reach any field.
Override values are parsed as JSON where they parse (numbers, booleans, lists, objects)
and kept as strings otherwise. The resolved tree is saved with every run (``config.json``)
and read back by ``--resume``, ``urbanverse eval`` and ``urbanverse export``.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from urbanverse.errors import InputError
from urbanverse.rl.policy import PolicyCfg
from urbanverse.rl.ppo import PPOCfg
from urbanverse.sim import DepthCameraCfg, LidarCfg, NavEnvCfg, PedestrianCfg, PointNavCfg, RewardsCfg

SENSORS = ("lidar", "depth", "rgb")


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvSpec:
    """What the training environments are built from (everything but the scene list)."""

    robot: str = "wheeled"
    """``wheeled`` or ``legged``."""
    sensor: str = "lidar"
    """``lidar`` (planar LiDAR + goal) or ``depth`` (depth camera + goal); ``rgb`` needs a renderer camera."""
    num_envs: int = 64
    lidar: LidarCfg = dataclasses.field(default_factory=LidarCfg)
    depth: DepthCameraCfg = dataclasses.field(default_factory=DepthCameraCfg)
    pedestrians: PedestrianCfg = dataclasses.field(default_factory=PedestrianCfg)
    task: PointNavCfg = dataclasses.field(default_factory=PointNavCfg)
    rewards: RewardsCfg = dataclasses.field(default_factory=RewardsCfg)
    dt: float = 0.1
    """Control period (s)."""

    def __post_init__(self) -> None:
        if self.sensor not in SENSORS:
            raise InputError(f"--sensor: expected one of {', '.join(SENSORS)}, got {self.sensor!r}")
        if self.sensor == "rgb":
            raise InputError(
                "--sensor rgb needs the renderer-backed RGB camera, which urbanverse.sim does not "
                "provide yet; "
                "use --sensor lidar or --sensor depth"
            )
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


# ---------------------------------------------------------------------- generic dataclass tools
def to_dict(cfg: Any) -> Any:
    """A JSON-ready nested dict of a dataclass tree (tuples become lists, paths strings)."""
    if dataclasses.is_dataclass(cfg):
        return {f.name: to_dict(getattr(cfg, f.name)) for f in dataclasses.fields(cfg) if f.init}
    if isinstance(cfg, (list, tuple)):
        return [to_dict(v) for v in cfg]
    if isinstance(cfg, dict):
        return {k: to_dict(v) for k, v in cfg.items()}
    if isinstance(cfg, Path):
        return str(cfg)
    return cfg


def _coerce(tp: Any, value: Any, where: str) -> Any:
    """Convert a JSON value to field type ``tp`` (dataclasses, tuples, unions, scalars)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        if dataclasses.is_dataclass(value):
            return value
        if not isinstance(value, dict):
            raise InputError(f"{where}: expected an object, got {value!r}")
        return from_dict(tp, value, where)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(a, value, where)
            except InputError as exc:
                errors.append(str(exc))
        raise InputError(errors[0] if errors else f"{where}: cannot use {value!r}")
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise InputError(f"{where}: expected one of {typing.get_args(tp)}, got {value!r}")
        return value
    if origin is tuple or tp is tuple:
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v, where) for v in value)
        if args and len(args) != len(value):
            raise InputError(f"{where}: expected {len(args)} values, got {value!r}")
        return tuple(_coerce(a, v, where) for a, v in zip(args, value, strict=True)) if args else tuple(value)
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise InputError(f"{where}: expected an object, got {value!r}")
        return dict(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ):
            raise InputError(f"{where}: expected an integer, got {value!r}")
        return int(value)
    if tp is bool:
        if not isinstance(value, bool):
            raise InputError(f"{where}: expected true or false, got {value!r}")
        return value
    if tp is str:
        return str(value)
    if tp is Path or tp == Path | str:
        return str(value)
    return value


def from_dict(cls: type, data: dict, where: str = "") -> Any:
    """Build dataclass ``cls`` from a (possibly partial) nested dict; unknown keys are errors."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise InputError(
            f"{where or cls.__name__}: unknown field(s) {unknown}; valid: {', '.join(sorted(fields))}"
        )
    kwargs = {k: _coerce(hints[k], v, f"{where}.{k}" if where else k) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where or cls.__name__}: {exc}") from None


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def apply_overrides(cfg: Any, overrides: list[str] | tuple[str, ...]) -> Any:
    """Return ``cfg`` with every ``a.b.c=value`` in ``overrides`` applied (``--set``)."""
    data = to_dict(cfg)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InputError(f"--set {item!r}: expected key=value, e.g. ppo.learning_rate=3e-4")
        node, parts = data, key.strip().split(".")
        for i, part in enumerate(parts[:-1]):
            if not isinstance(node.get(part), dict):
                raise InputError(f"--set {item!r}: {'.'.join(parts[: i + 1])} is not a config section")
            node = node[part]
        if parts[-1] not in node and not (len(parts) >= 2 and parts[-2] == "backbone_overrides"):
            raise InputError(f"--set {item!r}: no field {key!r} (known here: {', '.join(sorted(node))})")
        node[parts[-1]] = _parse_value(text.strip())
    return from_dict(type(cfg), data)


def save_cfg(cfg: TrainCfg, path: Path) -> None:
    """Write the resolved config as JSON."""
    path.write_text(json.dumps(to_dict(cfg), indent=2) + "\n")


def load_cfg(path: Path) -> TrainCfg:
    """Read a config written by :func:`save_cfg`."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read the run config ({exc})") from None
    return from_dict(TrainCfg, data, str(path))
