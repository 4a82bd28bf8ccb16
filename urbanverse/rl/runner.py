"""On-policy runner: environments + PPO + logging + atomic checkpoints + resume.

A run lives in ``<root>/<task>__<exp>__<seed>__<time>/``:
``config.json`` (resolved ``TrainCfg``), ``progress.csv``, ``tb/`` (TensorBoard),
``checkpoints/ckpt_<iteration>.pt`` (the last few) and ``checkpoint.pt`` (the latest). Every
checkpoint is written to a temporary file and renamed, so a run killed at any point (SIGKILL
included) leaves a complete latest checkpoint; ``Runner.resume(run_dir)`` continues from it,
losing at most the iterations since. One process trains in a run folder at a time: training holds
the folder's lock (``urbanverse.locks``), so a second ``train --resume`` of it is refused.

Data-parallel training (``urbanverse.rl.distributed``): every rank runs a ``Runner`` with its own
environments (``num_envs`` each, its scenes, seed ``seed + rank``) and the same model; rank 0 alone
creates the run folder, holds its lock and writes the config, logs and checkpoints, whose counters
(``env_steps``, episode statistics) cover all ranks; every rank resumes from the same checkpoint.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from urbanverse.errors import InputError
from urbanverse.locks import folder_lock
from urbanverse.records import atomic_path
from urbanverse.rl.config import TrainCfg, load_cfg, save_cfg, to_dict
from urbanverse.rl.distributed import Sync, rank_device, rank_scenes
from urbanverse.rl.logger import RunLogger
from urbanverse.rl.policy import ActorCritic
from urbanverse.rl.ppo import PPO
from urbanverse.rl.schedule import LateSchedule, prepare_actor_qat
from urbanverse.sim import NavVecEnv

CHECKPOINT = "checkpoint.pt"
KEEP_CHECKPOINTS = 3


def run_name(cfg: TrainCfg, when: datetime | None = None) -> str:
    """``<task>__<exp>__<seed>__<time>``, e.g. ``pointnav-wheeled-lidar__mlp__0__20261202-193000``
    (``<exp>`` defaults to the backbone, ``<encoder>-<backbone>`` with an image encoder)."""
    when = when or datetime.now(UTC)
    pol = cfg.policy
    exp = cfg.experiment or (f"{pol.encoder}-{pol.backbone}" if pol.encoder else pol.backbone)
    return f"{cfg.task_name}__{exp}__{cfg.seed}__{when:%Y%m%d-%H%M%S}"


def atomic_save(obj: object, path: Path) -> None:
    """``torch.save`` to ``path`` through a temporary file, synced to disk before the rename, so a crash
    or power loss leaves the previous checkpoint or the new one, never a torn file."""
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        torch.save(obj, f)
        f.flush()
        os.fsync(f.fileno())


#: The checkpoint of a shipped policy folder (``policies/<name>/``, written by ``slim_checkpoint``).
SHIPPED_CHECKPOINT = "policy.pt"


def resolve_checkpoint(path: Path) -> Path:
    """A checkpoint file from a file, run-folder or shipped-policy-folder argument."""
    path = Path(path)
    if path.is_dir():
        shipped = path / SHIPPED_CHECKPOINT
        path = shipped if shipped.is_file() and not (path / CHECKPOINT).is_file() else path / CHECKPOINT
    if not path.is_file():
        raise InputError(f"{path}: no checkpoint here (give a run folder, a policy folder or a .pt file)")
    return path


def load_checkpoint(path: Path, device: str = "cpu") -> dict:
    """Read a checkpoint written by :class:`Runner` (weights and config)."""
    path = resolve_checkpoint(path)
    try:
        return torch.load(path, map_location=device, weights_only=False)
    except Exception as exc:
        raise InputError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from None


def env_image_shapes(env) -> dict[str, tuple[int, int, int]]:
    """``(H, W, C)`` of each image entry of ``env``'s observation (``NavVecEnv.image_shapes``; none
    for environments without cameras)."""
    shapes = getattr(env, "image_shapes", {})
    return {k: tuple(int(v) for v in s) for k, s in shapes.items() if k in env.obs_layout}


def build_policy(
    cfg: TrainCfg,
    num_obs: int,
    num_actions: int,
    obs_layout: dict | None = None,
    image_shapes: dict | None = None,
) -> ActorCritic:
    """The actor-critic of a run (with QAT Linears in the actor, switched off, when the run uses QAT).

    ``obs_layout`` (name -> slice or ``[start, stop]``) and ``image_shapes`` (name -> ``(H, W, C)``)
    describe the observation; an image encoder (``cfg.policy.encoder``) needs them."""
    try:
        policy = ActorCritic(num_obs, num_actions, cfg.policy, obs_layout, image_shapes)
    except (ValueError, ImportError) as exc:
        raise InputError(f"policy: {exc}") from None
    return prepare_actor_qat(policy, cfg.schedule) if cfg.schedule.qat else policy


def init_policy_from(policy: ActorCritic, path: Path, num_obs: int) -> None:
    """Copy the policy weights of the checkpoint at ``path`` into ``policy`` (``TrainCfg.init_from``)."""
    state = load_checkpoint(path)
    if state.get("num_obs") != num_obs:
        raise InputError(
            f"init_from {path}: its policy takes {state.get('num_obs')} observations, this run's "
            f"environment gives {num_obs} (different sensor or task settings)"
        )
    # Float and QAT weights load into each other: a QAT layer's activation grids (act_*) are extra
    # buffers, set again by the QAT batches.
    try:
        missing, unexpected = policy.load_state_dict(state["alg"]["policy"], strict=False)
    except RuntimeError as exc:  # shape mismatches
        raise InputError(f"init_from {path}: a different policy architecture ({exc})") from None
    missing, unexpected = (
        [k for k in keys if not k.rsplit(".", 1)[-1].startswith("act_")] for keys in (missing, unexpected)
    )
    if missing or unexpected:
        raise InputError(
            f"init_from {path}: a different policy architecture (missing {missing[:3]}, "
            f"unexpected {unexpected[:3]})"
        )


class Runner:
    """Trains ``cfg`` in ``run_dir`` (created by :meth:`create` or reopened by :meth:`resume`).

    ``sync`` is this rank's view of a data-parallel run (default: a one-process run).
    """

    def __init__(self, cfg: TrainCfg, run_dir: Path, quiet: bool = False, sync: Sync | None = None):
        if not cfg.scenes:
            raise InputError("--scenes: give at least one training scene folder")
        self.cfg, self.run_dir, self.quiet = cfg, run_dir, quiet
        self.sync = sync = sync or Sync()
        if cfg.torch_threads:
            torch.set_num_threads(cfg.torch_threads)
        self.seed = cfg.seed + sync.rank
        torch.manual_seed(self.seed)
        device = rank_device(cfg.device, sync.local_rank) if sync.world_size > 1 else cfg.device
        self.device = torch.device(device)
        scenes = rank_scenes(cfg.scenes, sync.rank, sync.world_size)
        self.env = NavVecEnv(cfg.env.env_cfg(scenes, self.seed, device))
        self.image_shapes = env_image_shapes(self.env)
        self.policy = build_policy(
            cfg, self.env.num_obs, self.env.num_actions, self.env.obs_layout, self.image_shapes
        ).to(self.device)
        self.generator = torch.Generator().manual_seed(self.seed)
        if cfg.init_from:
            init_policy_from(self.policy, Path(cfg.init_from), self.env.num_obs)
        sync.broadcast_module(self.policy)
        self.alg = PPO(
            self.policy, cfg.ppo, self.env.num_envs, cfg.num_steps_per_env, self.device, self.generator, sync
        )
        self.schedule = LateSchedule(
            cfg.schedule, self.policy, self.alg, cfg.ppo.num_mini_batches, cfg.steps_per_iteration
        )
        self.steps_per_iteration = cfg.steps_per_iteration * sync.world_size
        """Environment steps of one iteration, all ranks together."""
        self.num_iterations = -(-cfg.total_steps // self.steps_per_iteration)
        """Iterations of the whole budget ``cfg.total_steps``."""
        self.iteration = 0
        self.env_steps = 0
        self.wall_s = 0.0

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(cls, cfg: TrainCfg, root: Path, quiet: bool = False, sync: Sync | None = None) -> Runner:
        """A new run folder under ``root`` with the resolved config saved (``-2``, ``-3``... appended when
        a run of the same name started in the same second); made by rank 0, opened by every rank."""
        sync = sync or Sync()
        if not sync.is_main:
            return cls(cfg, sync.broadcast_object(None), quiet, sync)
        Path(root).mkdir(parents=True, exist_ok=True)
        name = run_name(cfg)
        for k in range(1, 1000):
            run_dir = Path(root) / (name if k == 1 else f"{name}-{k}")
            try:
                run_dir.mkdir()
                break
            except FileExistsError:
                continue
        else:
            raise InputError(f"{root}: 999 runs named {name} already; use another --runs-dir or --exp")
        try:
            save_cfg(cfg, run_dir / "config.json")
            return cls(cfg, sync.broadcast_object(run_dir), quiet, sync)
        except BaseException:
            shutil.rmtree(run_dir, ignore_errors=True)  # a run that cannot start leaves nothing behind
            raise

    @classmethod
    def resume(
        cls, run_dir: Path, total_steps: int | None = None, quiet: bool = False, sync: Sync | None = None
    ) -> Runner:
        """Reopen ``run_dir`` at its latest checkpoint (or from scratch when none was written yet);
        rank 0 reads (and updates) the config, every rank loads the same checkpoint."""
        run_dir, sync = Path(run_dir), sync or Sync()
        # Rank 0 takes the lock: refused at once while another process trains here.
        with folder_lock(run_dir, "training run") if sync.is_main else contextlib.nullcontext():
            cfg = load_cfg(run_dir / "config.json") if sync.is_main else None
            if sync.is_main and total_steps is not None and total_steps != cfg.total_steps:
                cfg = dataclasses.replace(cfg, total_steps=total_steps)
                save_cfg(cfg, run_dir / "config.json")
            runner = cls(sync.broadcast_object(cfg), run_dir, quiet, sync)
            if (run_dir / CHECKPOINT).is_file():
                runner.load(run_dir / CHECKPOINT)
            return runner

    # ------------------------------------------------------------------ checkpoints
    def save(self) -> Path:
        """Write ``checkpoints/ckpt_<it>.pt`` and ``checkpoint.pt`` atomically; keep the last few.

        Called on every rank of a data-parallel run (the ranks' random states are gathered, and their
        models checked to be identical); rank 0 writes."""
        rngs = self.sync.gather_objects(self._rng_state())
        self.sync.check_identical(self.policy)
        path = self.run_dir / "checkpoints" / f"ckpt_{self.iteration:06d}.pt"
        if not self.sync.is_main:
            return path
        state = {
            "format": "urbanverse-ppo-1",
            "config": to_dict(self.cfg),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
            "wall_s": self.wall_s,
            "num_obs": self.env.num_obs,
            "num_actions": self.env.num_actions,
            "obs_layout": {k: [s.start, s.stop] for k, s in self.env.obs_layout.items()},
            "image_shapes": {k: list(s) for k, s in self.image_shapes.items()},
            "alg": self.alg.state_dict(),
            "schedule": self.schedule.state_dict(),
            **rngs[0],
        }
        if self.sync.world_size > 1:
            state["world_size"] = self.sync.world_size
            state["rank_rngs"] = rngs[1:]
        ckpt_dir = path.parent
        ckpt_dir.mkdir(exist_ok=True)
        atomic_save(state, path)
        atomic_save(state, self.run_dir / CHECKPOINT)
        for old in sorted(ckpt_dir.glob("ckpt_*.pt"))[:-KEEP_CHECKPOINTS]:
            old.unlink(missing_ok=True)
        return path

    def _rng_state(self) -> dict:
        """This rank's random streams: torch's (action sampling) and the minibatch generator."""
        return {"torch_rng": torch.get_rng_state(), "generator": self.generator.get_state()}

    def load(self, path: Path) -> None:
        """Continue from the checkpoint at ``path`` (every rank of a data-parallel run loads the same)."""
        state = load_checkpoint(path, str(self.device))
        self.schedule.load_state_dict(state.get("schedule", {}))
        self.alg.load_state_dict(state["alg"])
        self.iteration, self.env_steps, self.wall_s = state["iteration"], state["env_steps"], state["wall_s"]
        rngs = [state, *state.get("rank_rngs", [])]
        if self.sync.rank < len(rngs):
            torch.set_rng_state(rngs[self.sync.rank]["torch_rng"])
            self.generator.set_state(rngs[self.sync.rank]["generator"])
        else:  # a rank the checkpoint's run did not have: fresh streams of its own
            torch.manual_seed(self.seed + 1_000_003 * self.iteration)
            self.generator.manual_seed(self.seed + 1_000_003 * self.iteration)
        # A different episode stream after a resume: the environments restart their episodes.
        self.env.reset(seed=self.seed + 1_000_003 * self.iteration)

    # ------------------------------------------------------------------ training
    def progress(self) -> float:
        """Fraction of the budget spent: steps, or minutes when ``max_minutes`` ends the run first."""
        done = self.iteration / self.num_iterations
        if self.cfg.max_minutes > 0:
            done = max(done, self.wall_s / (60 * self.cfg.max_minutes))
        return min(done, 1.0)

    def learn(self) -> dict[str, float]:
        """Train until ``cfg.total_steps`` (or ``cfg.max_minutes``); returns the last iteration's log row.

        Holds the run folder's lock (rank 0). Ctrl-C raises ``KeyboardInterrupt`` whose text says how to
        resume (from the latest checkpoint; the iterations since it are dropped from the logs then)."""
        try:
            with folder_lock(self.run_dir, "training run") if self.sync.is_main else contextlib.nullcontext():
                return self._learn()
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                f"the latest checkpoint is kept: urbanverse train --resume {self.run_dir}"
            ) from None

    def _learn(self) -> dict[str, float]:
        cfg, env, alg, sync = self.cfg, self.env, self.alg, self.sync
        total_it = self.num_iterations
        obs = env.get_observations().to(self.device)
        state = self.policy.initial_state(env.num_envs, self.device)
        resets = torch.ones(env.num_envs, dtype=torch.bool, device=self.device)
        row: dict[str, float] = {}
        budget = cfg.max_minutes * 60
        logger_cm = (
            RunLogger(self.run_dir, self.iteration, total_it, self.quiet, budget, self.wall_s)
            if sync.is_main
            else contextlib.nullcontext()
        )
        with logger_cm as logger:
            while self.iteration < total_it:
                t0 = time.perf_counter()
                ep = _EpisodeStats()
                self.policy.eval()
                for _ in range(cfg.num_steps_per_env):
                    actions, next_state, pending = alg.act(obs, state, resets)
                    obs, rewards, dones, extras = env.step(actions)
                    obs, dones = obs.to(self.device), dones.to(self.device)
                    alg.process_step(pending, rewards, dones, extras, next_state)
                    state, resets = next_state, dones
                    ep.add(extras)
                alg.compute_returns(obs, state, resets)
                t_collect = time.perf_counter() - t0
                self.policy.train()
                losses = alg.update(self.schedule.apply(self.progress()))
                # The slowest rank's time: every rank then agrees on the budget, progress and schedules.
                elapsed = sync.max(time.perf_counter() - t0)
                self.iteration += 1
                self.env_steps += self.steps_per_iteration
                self.wall_s += elapsed
                row = {
                    "iteration": self.iteration,
                    "env_steps": self.env_steps,
                    "wall_s": self.wall_s,
                    "steps_per_s": self.steps_per_iteration / elapsed,
                    "collect_s": t_collect,
                    "update_s": elapsed - t_collect,
                    **ep.summary(sync),
                    **losses,
                    **(
                        {"train/qat": float(self.schedule.qat_peak_lr is not None)}
                        if cfg.schedule.qat
                        else {}
                    ),
                }
                if logger is not None:
                    logger.log(row)
                out_of_time = 0 < cfg.max_minutes * 60 <= self.wall_s
                if self.iteration % cfg.save_interval == 0 or self.iteration == total_it or out_of_time:
                    self.save()
                if out_of_time:
                    break
        return row


class _EpisodeStats:
    """Episode-weighted means of the environment's ``extras["log"]`` over one iteration."""

    def __init__(self):
        self.n = 0
        self.sums: dict[str, float] = {}

    def add(self, extras: dict) -> None:
        log = extras.get("log")
        if not log:
            return
        k = int(extras["final_env_ids"].numel())
        self.n += k
        ret = sum(v for name, v in log.items() if name.startswith("reward/"))
        items = {"mean_return": ret, "episode_length": log["episode/length"]}
        items.update({name.split("/", 1)[1]: v for name, v in log.items() if name.startswith("metrics/")})
        for name, v in items.items():
            self.sums[name] = self.sums.get(name, 0.0) + k * v

    def summary(self, sync: Sync) -> dict[str, float]:
        """The means over the episodes that ended on all ranks of ``sync`` (NaN when none did)."""
        keys = (
            "mean_return",
            "success_rate",
            "spl",
            "collisions_per_episode",
            "route_completion",
            "episode_length",
        )
        totals = torch.tensor([self.n] + [self.sums.get(k, 0.0) for k in keys], dtype=torch.float64)
        n, *sums = sync.sum(totals).tolist()
        out = {k: (s / n if n else math.nan) for k, s in zip(keys, sums, strict=True)}
        out["episodes"] = float(n)
        return out
