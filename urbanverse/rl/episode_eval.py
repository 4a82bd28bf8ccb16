"""Evaluate a policy on a fixed list of episodes (``urbanverse.sim.episodes``): every runnable episode
exactly once, the others reported with their status.

Episodes are grouped by scene (in order of first appearance); a scene is one unit, run in one batched
environment of up to ``MAX_ENVS_PER_SCENE`` environments that work through their share of its
episodes (``NavVecEnv`` with ``episodes``), its pedestrians seeded by ``scene_seed(seed, group)``.
As with sampled episodes, units run in this process (:func:`evaluate_episodes`) or through
``run_units`` with the same results. Actions are the policy's mean (deterministic).

Results: ``overall`` and ``scenes`` (as :func:`urbanverse.rl.evaluate.combine` gives them, over the
``ok`` episodes), ``episodes`` (one row per episode of the list, in its order: ``id``, ``scene``,
``status``, ``geodesic_m`` and, for ``ok`` ones, ``success``, ``spl``, ``collisions``,
``route_completion``, ``steps``) and ``skipped`` (episodes per status that did not run).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from urbanverse.errors import InputError
from urbanverse.rl.evaluate import MAX_ENVS_PER_SCENE, PolicySource, SceneResult, scene_seed, summarise_parts
from urbanverse.rl.loaded_policy import LoadedPolicy
from urbanverse.sim import NavVecEnv, PedestrianCfg
from urbanverse.sim.episodes import STATUSES, Episode
from urbanverse.sim.metrics import METRIC_NAMES
from urbanverse.threads import torch_threads

log = logging.getLogger(__name__)


@dataclasses.dataclass
class EpisodesResult(SceneResult):
    """A scene's unit of a fixed-episode evaluation: ``SceneResult`` over its ``ok`` episodes, plus one
    row per episode of the unit (in its order)."""

    rows: list[dict] = dataclasses.field(default_factory=list)


def group_by_scene(episodes: Sequence[Episode]) -> list[tuple[str, tuple[Episode, ...]]]:
    """``(scene folder, its episodes)`` per scene, in order of first appearance (paths that resolve
    to the same folder are one scene)."""
    groups: dict[str, tuple[str, list[Episode]]] = {}
    for e in episodes:
        key = str(Path(e.scene).resolve())
        groups.setdefault(key, (e.scene, []))[1].append(e)
    return [(scene, tuple(eps)) for scene, eps in groups.values()]


def evaluate_scene_episodes(
    loaded: LoadedPolicy,
    episodes: Sequence[Episode],
    index: int,
    seed: int = 1,
    device: str = "cpu",
    pedestrians: PedestrianCfg | None = None,
    envs_cap: int = MAX_ENVS_PER_SCENE,
) -> EpisodesResult:
    """Run every ``ok`` episode of ``episodes`` (all in one scene, group ``index`` of the list) once,
    with ``pedestrians`` (default: the policy's training ones) seeded ``scene_seed(seed, index)``."""
    cfg = loaded.cfg
    k = min(len(episodes), envs_cap)
    task = dataclasses.replace(cfg.env.task, episodes_per_scene=10**9)
    peds = pedestrians or cfg.env.pedestrians
    env_cfg = cfg.env.env_cfg(
        (episodes[0].scene,), scene_seed(seed, index), device, num_envs=k, task=task, pedestrians=peds
    )
    env = NavVecEnv(env_cfg, episodes=episodes)
    plan = env.plan
    assert plan is not None
    rows = [
        {
            "id": e.id,
            "scene": e.scene,
            "status": status,
            "geodesic_m": round(float(geo), 4) if math.isfinite(geo) else None,
        }
        for e, status, geo in zip(episodes, plan.status, plan.geodesic_m.tolist(), strict=True)
    ]
    sums = torch.zeros(len(METRIC_NAMES), dtype=torch.float64)
    pending = set(plan.runnable)
    limits = [e.max_steps or task.max_episode_steps for e in episodes]
    budget = max((sum(limits[i] for i in q) for q in env.episode_queues), default=0) + 1
    obs = env.get_observations()
    state = loaded.initial_state(k)
    for _ in range(budget if pending else 0):
        actions, state = loaded.act(obs, state)
        obs, _, dones, extras = env.step(actions)
        if "episode_index" in extras:
            values = extras["episode_metrics"].cpu()
            steps = extras["episode_steps"].tolist()
            for row, e in enumerate(extras["episode_index"].tolist()):
                if e not in pending:
                    continue
                pending.discard(e)
                v = values[row]
                sums += v
                rows[e].update(
                    success=bool(v[0] > 0),
                    spl=float(v[1]),
                    collisions=int(v[2]),
                    route_completion=float(v[3]),
                    steps=int(steps[row]),
                )
            if not pending:
                break
        if dones.any() and state:
            state = tuple(
                torch.where(dones.reshape(-1, *[1] * (s.dim() - 1)).to(s.device), s0, s)
                for s, s0 in zip(state, loaded.initial_state(k), strict=True)
            )
    env.close()
    if pending:
        raise RuntimeError(f"{len(pending)} episodes did not finish within their time limits")
    done = len(plan.runnable)
    return EpisodesResult(env.world.names[0], sums, done, [], None, rows=rows)


@dataclasses.dataclass(frozen=True)
class EpisodesUnit:
    """One scene of a fixed-episode evaluation: picklable, run by ``evaluate.run_units`` as an
    ``EvalUnit`` is."""

    source: PolicySource
    scenes: tuple[str, ...]
    """The scene of every group of the list (for messages)."""
    index: int
    episodes: tuple[Episode, ...]
    seed: int
    pedestrians: PedestrianCfg | None = None

    def run(self) -> EpisodesResult:
        """Evaluate this unit on one torch thread."""
        loaded = self.source.load()
        with torch_threads(1):
            return evaluate_scene_episodes(
                loaded, self.episodes, self.index, self.seed, self.source.device, self.pedestrians
            )


def combine_episodes(parts: Sequence[EpisodesResult]) -> dict:
    """The results of one policy from its scene units (in group order); warns once per episode that
    did not run."""
    results = summarise_parts(parts, 0)
    results["episodes_per_scene"] = None
    rows = [r for p in parts for r in p.rows]
    results["episodes"] = rows
    results["skipped"] = {s: sum(r["status"] == s for r in rows) for s in STATUSES[1:]}
    for r in rows:
        if r["status"] != "ok":
            log.warning("episode %s in %s not run: %s", r["id"], r["scene"], r["status"])
    return results


def order_rows(results: dict, episodes: Sequence[Episode]) -> dict:
    """``results`` with its ``episodes`` rows in the order of ``episodes`` (the file's order)."""
    by_id = {r["id"]: r for r in results["episodes"]}
    return results | {"episodes": [by_id[e.id] for e in episodes]}


def evaluate_episodes(
    loaded: LoadedPolicy,
    episodes: Sequence[Episode],
    seed: int = 1,
    device: str = "cpu",
    pedestrians: PedestrianCfg | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Run every ``ok`` episode of ``episodes`` once, scene after scene in this process (one torch
    thread), and return the results (see the module docstring). ``pedestrians``: default the policy's
    training ones; seeded from ``seed``. ``progress(scenes done, scenes)`` follows the scenes."""
    if not episodes:
        raise InputError("evaluate_episodes: no episodes")
    groups = group_by_scene(episodes)
    parts = []
    for index, (_, eps) in enumerate(groups):
        with torch_threads(1):
            parts.append(evaluate_scene_episodes(loaded, eps, index, seed, device, pedestrians))
        if progress is not None:
            progress(index + 1, len(groups))
    return order_rows(combine_episodes(parts), episodes)
