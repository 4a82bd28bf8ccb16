"""Evaluate a trained policy: success rate, SPL, collisions, route completion per scene and overall.

The unit of work is one (policy, scene): :func:`evaluate_scene` runs ``episodes`` episodes in one
scene alone, in its own batched environment, seeded by :func:`scene_seed` from the evaluation seed
and the scene's index in the scene list. A scene's figures therefore depend on nothing else in the
list, and the units can run in any order, in this process (:func:`evaluate`) or on worker processes
or Ray (:func:`run_units` with an ``ExecutorCfg``), with bit-identical results.

In a scene, ``k`` environments each contribute their first ``episodes / k`` episodes, so the sample
is not biased towards short episodes. Actions are the policy's mean (deterministic). Results are a
JSON-ready dict (``overall`` and ``scenes``), a Markdown table and a rich table; the first episodes
of a few environments can be recorded for an animation (``plots``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from urbanverse.errors import InputError, MissingDependencyError
from urbanverse.nn.qat import set_qat_enabled
from urbanverse.parallel import ExecutorCfg, run_tasks
from urbanverse.rl.config import TrainCfg, from_dict
from urbanverse.rl.loaded_policy import LoadedPolicy, actor_act_fn
from urbanverse.rl.policy import DeterministicActor
from urbanverse.rl.runner import build_policy, load_checkpoint, resolve_checkpoint
from urbanverse.sim import NavVecEnv, PedestrianCfg
from urbanverse.sim.metrics import METRIC_NAMES
from urbanverse.sim.world_loading import unique_names
from urbanverse.threads import numba_threads, torch_threads

#: Environments per evaluation scene at most.
MAX_ENVS_PER_SCENE = 32


def _checkpoint_file(checkpoint: Path) -> Path:
    """The file a checkpoint argument names: a Stable-Baselines3 ``model.zip`` or a PPO ``.pt``."""
    checkpoint = Path(checkpoint)
    sb3_zip = checkpoint if checkpoint.suffix == ".zip" else checkpoint / "model.zip"
    return sb3_zip if sb3_zip.is_file() else resolve_checkpoint(checkpoint)


def load_policy(checkpoint: Path, device: str = "cpu") -> LoadedPolicy:
    """Load a PPO checkpoint (file or run folder) or a Stable-Baselines3 run folder / ``model.zip``."""
    path = _checkpoint_file(checkpoint)
    if path.suffix == ".zip":
        from urbanverse.rl.sb3 import load_sb3_policy

        return load_sb3_policy(path, device)
    state = load_checkpoint(path, device)
    cfg = from_dict(TrainCfg, state["config"], "checkpoint config")
    image_shapes = state.get("image_shapes", {})
    policy = build_policy(cfg, state["num_obs"], state["num_actions"], state.get("obs_layout"), image_shapes)
    if state.get("schedule", {}).get("qat_active"):
        set_qat_enabled(policy, True)  # acts as trained: fake-quantised, as its int8 export
    policy.load_state_dict(state["alg"]["policy"])
    actor = DeterministicActor(policy).to(device).eval()
    meta = {k: state[k] for k in ("iteration", "env_steps", "wall_s", "num_obs", "num_actions", "obs_layout")}
    meta["image_shapes"] = image_shapes
    return LoadedPolicy(cfg, actor_act_fn(actor), lambda n: actor.initial_state(n, device), actor, meta)


@dataclasses.dataclass(frozen=True)
class PolicySource:
    """How a unit gets its policy: a picklable recipe (a ``LoadedPolicy`` holds closures), loaded
    once per process and checkpoint file version (:meth:`load`)."""

    checkpoint: str
    """Run folder, checkpoint ``.pt`` or Stable-Baselines3 ``model.zip``."""
    device: str = "cpu"
    quantize_bits: int = 0
    """0: the float actor; 8 or 4: its quantised twin (``urbanverse.rl.quantize``)."""
    calibration_steps: int = 200
    """Rollout steps that calibrate the quantised actor's input ranges."""
    calibration_scenes: tuple[str, ...] = ()
    """Scenes of the calibration rollouts; empty: the policy's training scenes."""
    calibration_seed: int = 1

    def load(self) -> LoadedPolicy:
        """The policy, from this process's cache while the checkpoint file is unchanged."""
        stat = _checkpoint_file(Path(self.checkpoint)).stat()
        return _load_source(self, (stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=2)
def _load_source(source: PolicySource, _file_version: tuple[int, int]) -> LoadedPolicy:
    loaded = load_policy(Path(source.checkpoint), source.device)
    if not source.quantize_bits:
        return loaded
    from urbanverse.rl.quantize import quantize_policy

    if loaded.actor is None:
        raise InputError("--quantize: needs a PPO checkpoint, not a Stable-Baselines3 model")
    scenes = source.calibration_scenes or loaded.cfg.scenes
    with torch_threads(1):  # as the units run: the calibration is the same in every process
        quantized, _ = quantize_policy(
            loaded,
            scenes,
            source.quantize_bits,
            source.calibration_steps,
            source.calibration_seed,
            source.device,
        )
    return quantized


def _envs_per_scene(episodes: int, cap: int) -> int:
    """Largest divisor of ``episodes`` not above ``cap``."""
    return max(d for d in range(1, min(episodes, cap) + 1) if episodes % d == 0)


def scene_seed(seed: int, scene_index: int) -> int:
    """The seed of the episodes in scene ``scene_index`` (its place in the scene list) of an evaluation
    seeded ``seed``: a 63-bit hash of both, so that scenes never share episode draws."""
    digest = hashlib.blake2b(f"urbanverse-eval:{seed}:{scene_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


@dataclasses.dataclass
class Trajectory:
    """One recorded episode: poses (T+1, 3) as x, y, yaw; pedestrians (T+1, P, 2); goal (2,)."""

    scene_index: int
    scene_name: str
    poses: list
    peds: list
    goal: tuple[float, float]
    outcome: str = "running"


@dataclasses.dataclass
class EpisodeCanvas:
    """What the animation draws recorded episodes on: ``worlds[t.scene_index]`` (compiled worlds of the
    scenes that recorded), the robot's footprint (length, width) m, the goal's success radius m, the
    pedestrians' radius m and the control period ``dt`` s."""

    worlds: dict[int, object]
    robot_size: tuple[float, float]
    success_radius: float
    ped_radius: float
    dt: float


@dataclasses.dataclass
class SceneResult:
    """One scene's evaluation: metric sums (``METRIC_NAMES`` order, float64) over ``episodes`` episodes,
    the scene's own name (before de-duplication across the list), and its recorded episodes (in
    environment order) with their canvas."""

    name: str
    sums: torch.Tensor
    episodes: int
    trajectories: list[Trajectory]
    canvas: EpisodeCanvas | None


def evaluate_scene(
    loaded: LoadedPolicy,
    scenes: tuple[str, ...],
    index: int,
    episodes: int = 20,
    seed: int = 1,
    device: str = "cpu",
    record: int = 0,
    envs_per_scene_cap: int = MAX_ENVS_PER_SCENE,
    pedestrians: PedestrianCfg | None = None,
) -> SceneResult:
    """Run ``episodes`` episodes in ``scenes[index]`` alone, seeded ``scene_seed(seed, index)``, with
    ``pedestrians`` (default: the policy's training pedestrians).

    Of the first ``record`` environments of the whole list (environment ``g`` is in scene
    ``g % len(scenes)``, so one per scene first), those in this scene record their first episode.
    """
    cfg = loaded.cfg
    m = len(scenes)
    k = _envs_per_scene(episodes, envs_per_scene_cap)
    quota = episodes // k
    task = dataclasses.replace(cfg.env.task, episodes_per_scene=10**9)
    peds = pedestrians or cfg.env.pedestrians
    env_cfg = cfg.env.env_cfg(
        (scenes[index],), scene_seed(seed, index), device, num_envs=k, task=task, pedestrians=peds
    )
    env = NavVecEnv(env_cfg)
    counts = torch.zeros(k, dtype=torch.long)
    sums = torch.zeros(len(METRIC_NAMES), dtype=torch.float64)
    done_episodes = 0
    obs = env.get_observations()
    state = loaded.initial_state(k)
    recorded = [j for j in range(k) if j * m + index < record]
    trajs = {j: _start_traj(env, j, index) for j in recorded}
    max_steps = quota * cfg.env.task.max_episode_steps + 1
    for _ in range(max_steps):
        if bool((counts >= quota).all()):
            break
        actions, state = loaded.act(obs, state)
        obs, _, dones, extras = env.step(actions)
        if "episode_metrics" in extras:
            ep_vals = extras["episode_metrics"].cpu()
            for row, i in enumerate(extras["final_env_ids"].cpu().tolist()):
                if counts[i] < quota:
                    sums += ep_vals[row]
                    done_episodes += 1
                counts[i] += 1
        for j, t in trajs.items():
            if t.outcome != "running":
                continue
            if bool(dones[j]):
                t.outcome = _outcome(extras, j)
                _record_final(env, extras, j, t)
            else:
                _record(env, j, t)
        if dones.any() and state:
            state = tuple(
                torch.where(dones.reshape(-1, *[1] * (s.dim() - 1)).to(s.device), s0, s)
                for s, s0 in zip(state, loaded.initial_state(k), strict=True)
            )
    env.close()
    canvas = None
    if trajs:
        rc = env_cfg.robot_cfg
        canvas = EpisodeCanvas(
            {index: env.world.worlds[0]},
            (rc.length, rc.width),
            env_cfg.task.success_radius,
            env_cfg.pedestrians.radius,
            env_cfg.dt,
        )
    return SceneResult(env.world.names[0], sums, done_episodes, list(trajs.values()), canvas)


def evaluate(
    loaded: LoadedPolicy,
    scenes: tuple[str, ...],
    episodes: int = 20,
    seed: int = 1,
    device: str = "cpu",
    record: int = 0,
    envs_per_scene_cap: int = MAX_ENVS_PER_SCENE,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict, list[Trajectory], EpisodeCanvas | None]:
    """Run ``episodes`` episodes in every scene of ``scenes``, one scene after another in this process
    on one torch thread (as every unit runs); returns (results, trajectories, their canvas).

    ``record`` first episodes (of environments 0, 1, ...: one per scene first) are kept as
    trajectories for an animation. ``progress(scenes done, scenes)`` is called after each scene.
    """
    check_request(scenes, episodes)
    parts = []
    for index in range(len(scenes)):
        with torch_threads(1):
            parts.append(
                evaluate_scene(loaded, scenes, index, episodes, seed, device, record, envs_per_scene_cap)
            )
        if progress is not None:
            progress(index + 1, len(scenes))
    return combine(parts, episodes)


def check_request(scenes: tuple[str, ...], episodes: int) -> None:
    """Raise ``InputError`` for an evaluation without scenes or episodes."""
    if episodes < 1:
        raise InputError(f"--episodes: need >= 1, got {episodes}")
    if not scenes:
        raise InputError("--scenes: give at least one evaluation scene folder")


def combine(parts: list[SceneResult], episodes: int) -> tuple[dict, list[Trajectory], EpisodeCanvas | None]:
    """The results of one policy from its scenes' units (in scene-list order): (results, recorded
    episodes in environment order, their canvas or None)."""
    names = unique_names([p.name for p in parts])  # as NavVecEnv names them
    trajs = [
        dataclasses.replace(t, scene_name=names[t.scene_index])
        for group in itertools.zip_longest(*(p.trajectories for p in parts))
        for t in group
        if t is not None
    ]
    canvases = [p.canvas for p in parts if p.canvas is not None]
    canvas = None
    if canvases:
        worlds = {i: w for c in canvases for i, w in c.worlds.items()}
        canvas = dataclasses.replace(canvases[0], worlds=worlds)
    return summarise_parts(parts, episodes), trajs, canvas


@dataclasses.dataclass(frozen=True)
class EvalUnit:
    """One (policy, scene) unit of an evaluation sweep: picklable, run by :func:`run_unit`."""

    source: PolicySource
    scenes: tuple[str, ...]
    """The whole scene list (a scene's name and seed depend on its place in it)."""
    index: int
    episodes: int
    seed: int
    record: int = 0
    pedestrians: PedestrianCfg | None = None
    """The pedestrians to evaluate with; None: the policy's training pedestrians."""

    def run(self) -> SceneResult:
        """Evaluate this unit on one torch thread; the simulator's kernels keep this process's threads
        (their results do not depend on the thread count)."""
        loaded = self.source.load()
        with torch_threads(1):
            return evaluate_scene(
                loaded,
                self.scenes,
                self.index,
                self.episodes,
                self.seed,
                self.source.device,
                self.record,
                pedestrians=self.pedestrians,
            )


def run_unit(unit: EvalUnit) -> SceneResult:
    """Evaluate one unit on a worker: one torch thread and one thread in the simulator's multi-threaded
    kernels, since a unit declares one CPU (more would oversubscribe the cores of the other workers)."""
    with numba_threads(1):
        return unit.run()


def run_units(
    units: dict[str, EvalUnit],
    executor: ExecutorCfg | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, SceneResult]:
    """Every unit's result by key: one after another in this process when ``executor`` is None or one
    local job, else fanned out through ``urbanverse.parallel.run_tasks``. ``progress(done, units)`` is
    called as units finish. A failed unit raises after all have finished (``InputError`` for bad input)."""
    done: dict[str, SceneResult] = {}
    if executor is None or (executor.jobs == 1 and not executor.uses_ray):
        for key, unit in units.items():
            done[key] = unit.run()
            if progress is not None:
                progress(len(done), len(units))
        return done
    failed = {}
    for task in run_tasks(run_unit, units, executor):
        if task.ok:
            done[task.key] = task.value
        else:
            failed[task.key] = (task.error_type, task.error)
        if progress is not None:
            progress(len(done) + len(failed), len(units))
    if failed:
        raise _unit_error(failed, units)
    return done


def _unit_error(failed: dict[str, tuple[str | None, str]], units: dict[str, EvalUnit]) -> Exception:
    """One exception for the failed units (``key -> (error type, text)``): the first one's type where
    the CLI maps it to an exit code (bad input, missing dependency), else ``RuntimeError``."""
    lines = []
    for key, (_, error) in failed.items():
        unit = units[key]
        lines.append(f"{unit.source.checkpoint} in {unit.scenes[unit.index]}: {error}")
    kind = next(iter(failed.values()))[0]
    cls = {"InputError": InputError, "MissingDependencyError": MissingDependencyError}.get(kind, RuntimeError)
    return cls(f"{len(failed)} of {len(units)} evaluation units failed: " + "; ".join(lines))


def _start_traj(env: NavVecEnv, i: int, scene_index: int) -> Trajectory:
    t = Trajectory(scene_index, env.scene_names[int(env.scene[i])], [], [], tuple(env.goal_xy[i].tolist()))
    _record(env, i, t)
    return t


def _record(env: NavVecEnv, i: int, t: Trajectory) -> None:
    d = env.robot.data
    t.poses.append((float(d.pos_w[i, 0]), float(d.pos_w[i, 1]), float(d.yaw_w[i])))
    t.peds.append(env.peds.pos_w[i].tolist() if env.cfg.pedestrians.count else [])


def _record_final(env: NavVecEnv, extras: dict, i: int, t: Trajectory) -> None:
    """The pose at the episode's last step, rebuilt from its final observation (the env has reset).

    Yaw advances by the observed yaw rate over one control period; the position is the goal
    minus the observed body-frame goal vector rotated into the world.
    """
    row = extras["final_env_ids"].tolist().index(i)
    final = extras["final_obs"][row].cpu()
    goal_b = final[env.obs_layout["goal_b"]]
    wz = float(final[env.obs_layout["velocity_b"]][2])
    yaw = t.poses[-1][2] + wz * env.cfg.dt
    c, s_ = math.cos(yaw), math.sin(yaw)
    gx, gy = float(goal_b[0]), float(goal_b[1])
    x, y = t.goal[0] - (c * gx - s_ * gy), t.goal[1] - (s_ * gx + c * gy)
    t.poses.append((x, y, yaw))
    t.peds.append(t.peds[-1])


def _outcome(extras: dict, i: int) -> str:
    ids = extras["final_env_ids"].tolist()
    row = ids.index(i)
    if extras["episode_metrics"][row, 0] > 0:
        return "success"
    if bool(extras["time_outs"][i]):
        return "time-out"
    return "collision"


def summarise_parts(parts: Sequence[SceneResult], episodes: int) -> dict:
    """The figures per scene and overall of one policy's scene units (in scene-list order), with
    ``episodes`` per scene recorded (0 where the count varies)."""
    values = torch.stack([p.sums for p in parts])
    counts = torch.tensor([p.episodes for p in parts])
    return _summarise(unique_names([p.name for p in parts]), values, counts, episodes)


def _summarise(names: list[str], values: torch.Tensor, counts: torch.Tensor, episodes: int) -> dict:
    def figures(v: torch.Tensor, c: int) -> dict:
        out = {name: (float(v[j] / c) if c else math.nan) for j, name in enumerate(METRIC_NAMES)}
        out["episodes"] = int(c)
        return out

    scenes = {name: figures(values[j], int(counts[j])) for j, name in enumerate(names)}
    overall = figures(values.sum(0), int(counts.sum()))
    return {"episodes_per_scene": episodes, "scenes": scenes, "overall": overall}


def markdown_table(results: dict) -> str:
    """The per-scene and overall figures as a Markdown table."""
    lines = [
        "| scene | episodes | success rate | SPL | collisions / episode | route completion |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rows = list(results["scenes"].items()) + [("**overall**", results["overall"])]
    for name, r in rows:
        lines.append(
            f"| {name} | {r['episodes']} | {100 * r['success_rate']:.1f} % | {r['spl']:.3f} | "
            f"{r['collisions_per_episode']:.2f} | {100 * r['route_completion']:.1f} % |"
        )
    return "\n".join(lines) + "\n"


def rich_table(results: dict, title: str):
    """The figures as a ``rich.table.Table``."""
    from rich.table import Table

    table = Table("scene", "episodes", "success", "SPL", "collisions/ep", "route compl.", title=title)
    rows = list(results["scenes"].items()) + [("overall", results["overall"])]
    for j, (name, r) in enumerate(rows):
        style = "bold" if j == len(rows) - 1 else None
        table.add_row(
            name,
            str(r["episodes"]),
            f"{100 * r['success_rate']:.1f} %",
            f"{r['spl']:.3f}",
            f"{r['collisions_per_episode']:.2f}",
            f"{100 * r['route_completion']:.1f} %",
            style=style,
        )
    return table


def comparison_table(evaluations: list[dict]):
    """The overall figures of several evaluations (one row per checkpoint) as a ``rich.table.Table``."""
    from rich.table import Column, Table

    headers = ("episodes", "success", "SPL", "collisions/ep", "route compl.")
    table = Table(Column("checkpoint", overflow="fold"), *headers, title="overall")
    for results in evaluations:
        r = results["overall"]
        table.add_row(
            results["checkpoint"],
            str(r["episodes"]),
            f"{100 * r['success_rate']:.1f} %",
            f"{r['spl']:.3f}",
            f"{r['collisions_per_episode']:.2f}",
            f"{100 * r['route_completion']:.1f} %",
        )
    return table
