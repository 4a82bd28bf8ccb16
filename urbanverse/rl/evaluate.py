"""Evaluate a trained policy: success rate, SPL, collisions, route completion per scene and overall.

Each evaluation scene gets exactly ``episodes`` episodes: ``k`` environments stay in the
scene (no scene rotation) and each contributes its first ``episodes / k`` episodes, so the
sample is not biased towards short episodes. Actions are the policy's mean (deterministic).
Results are a JSON-ready dict (``overall`` and ``scenes``), a Markdown table and a rich table;
the first episodes of a few environments can be recorded for an animation (``plots``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path

import torch

from urbanverse.errors import InputError
from urbanverse.nn.qat import set_qat_enabled
from urbanverse.rl.config import TrainCfg, from_dict
from urbanverse.rl.loaded_policy import LoadedPolicy, actor_act_fn
from urbanverse.rl.policy import DeterministicActor
from urbanverse.rl.runner import build_policy, load_checkpoint, resolve_checkpoint
from urbanverse.sim import NavVecEnv
from urbanverse.sim.metrics import METRIC_NAMES

#: Environments per evaluation scene at most.
MAX_ENVS_PER_SCENE = 32


def load_policy(checkpoint: Path, device: str = "cpu") -> LoadedPolicy:
    """Load a PPO checkpoint (file or run folder) or a Stable-Baselines3 run folder / ``model.zip``."""
    checkpoint = Path(checkpoint)
    sb3_zip = checkpoint if checkpoint.suffix == ".zip" else checkpoint / "model.zip"
    if sb3_zip.is_file():
        from urbanverse.rl.sb3 import load_sb3_policy

        return load_sb3_policy(sb3_zip, device)
    state = load_checkpoint(resolve_checkpoint(checkpoint), device)
    cfg = from_dict(TrainCfg, state["config"], "checkpoint config")
    policy = build_policy(cfg, state["num_obs"], state["num_actions"])
    if state.get("schedule", {}).get("qat_active"):
        set_qat_enabled(policy, True)  # acts as trained: fake-quantised, as its int8 export
    policy.load_state_dict(state["alg"]["policy"])
    actor = DeterministicActor(policy).to(device).eval()
    meta = {k: state[k] for k in ("iteration", "env_steps", "wall_s", "num_obs", "num_actions", "obs_layout")}
    return LoadedPolicy(cfg, actor_act_fn(actor), lambda n: actor.initial_state(n, device), actor, meta)


def _envs_per_scene(episodes: int, cap: int) -> int:
    """Largest divisor of ``episodes`` not above ``cap``."""
    return max(d for d in range(1, min(episodes, cap) + 1) if episodes % d == 0)


@dataclasses.dataclass
class Trajectory:
    """One recorded episode: poses (T+1, 3) as x, y, yaw; pedestrians (T+1, P, 2); goal (2,)."""

    scene_index: int
    scene_name: str
    poses: list
    peds: list
    goal: tuple[float, float]
    outcome: str = "running"


def evaluate(
    loaded: LoadedPolicy,
    scenes: tuple[str, ...],
    episodes: int = 20,
    seed: int = 1,
    device: str = "cpu",
    record: int = 0,
    envs_per_scene_cap: int = MAX_ENVS_PER_SCENE,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict, list[Trajectory], NavVecEnv]:
    """Run ``episodes`` episodes in every scene of ``scenes``; returns (results, trajectories, env).

    ``record`` first episodes (of environments 0, 1, ...: one per scene first) are kept as
    trajectories for an animation.
    """
    if episodes < 1:
        raise InputError(f"--episodes: need >= 1, got {episodes}")
    if not scenes:
        raise InputError("--scenes: give at least one evaluation scene folder")
    cfg = loaded.cfg
    m = len(scenes)
    k = _envs_per_scene(episodes, envs_per_scene_cap)
    quota = episodes // k
    task = dataclasses.replace(cfg.env.task, episodes_per_scene=10**9)
    env = NavVecEnv(cfg.env.env_cfg(tuple(scenes), seed, device, num_envs=m * k, task=task))
    n = env.num_envs
    counts = torch.zeros(n, dtype=torch.long)
    values = torch.zeros(m, len(METRIC_NAMES), dtype=torch.float64)
    per_scene = torch.zeros(m, dtype=torch.long)
    obs = env.get_observations()
    state = loaded.initial_state(n)
    record_ids = list(range(min(record, n)))
    trajs = {i: _start_traj(env, i) for i in record_ids}
    done_trajs: list[Trajectory] = []
    max_steps = quota * cfg.env.task.max_episode_steps + 1
    for _ in range(max_steps):
        if bool((counts >= quota).all()):
            break
        actions, state = loaded.act(obs, state)
        obs, _, dones, extras = env.step(actions)
        if "episode_metrics" in extras:
            ids = extras["final_env_ids"].cpu()
            ep_vals = extras["episode_metrics"].cpu()
            ep_scene = extras["episode_scene"].cpu()
            for row, i in enumerate(ids.tolist()):
                if counts[i] < quota:
                    values[ep_scene[row]] += ep_vals[row]
                    per_scene[ep_scene[row]] += 1
                counts[i] += 1
        for i in list(trajs):
            t = trajs[i]
            if bool(dones[i]):
                t.outcome = _outcome(extras, i)
                _record_final(env, extras, i, t)
                done_trajs.append(trajs.pop(i))
            else:
                _record(env, i, t)
        if dones.any() and state:
            state = tuple(
                torch.where(dones.reshape(-1, *[1] * (s.dim() - 1)).to(s.device), s0, s)
                for s, s0 in zip(state, loaded.initial_state(n), strict=True)
            )
        if progress is not None:
            progress(int(counts.clamp(max=quota).sum()), n * quota)
    results = _summarise(env.scene_names, values, per_scene, episodes)
    return results, done_trajs + list(trajs.values()), env


def _start_traj(env: NavVecEnv, i: int) -> Trajectory:
    s = int(env.scene[i])
    t = Trajectory(s, env.scene_names[s], [], [], tuple(env.goal_xy[i].tolist()))
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
