"""Figures of the real-to-sim transfer experiment (``tools/exp_real2sim.py``): what the training
scenes of each arm look like to a robot, and the arms' scores over seeds with their intervals and
power laws in the number of training scenes.

A scene's statistics are measured on the grids the robot trains on (``urbanverse.sim``: the compiled
world and the wheeled robot's goal fields), so they say what the policy met, not what the scene file
claims: walkable area, the share of it the robot can drive, the clearance there, the objects on it,
and how long its episodes run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: Two-sided 95 % Student t quantiles by degrees of freedom (1..10); beyond them, the normal's.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228)


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """Mean of ``values`` and the half-width of its 95 % Student t interval (NaN for one value)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    t = _T95[x.size - 2] if x.size - 1 <= len(_T95) else 1.96
    return float(x.mean()), float(t * x.std(ddof=1) / math.sqrt(x.size))


def power_law(ns: Sequence[int], ys: Sequence[float]) -> tuple[float, float] | None:
    """Least-squares ``y = a * n^b`` in log-log space over the points with y > 0; None under 2 points
    or a single n."""
    pts = [(math.log(n), math.log(y)) for n, y in zip(ns, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    x, y = np.asarray(pts).T
    sxx = float(((x - x.mean()) ** 2).sum())
    if sxx == 0:
        return None
    b = float(((x - x.mean()) * (y - y.mean())).sum() / sxx)
    return math.exp(float(y.mean()) - b * float(x.mean())), b


#: Metrics aggregated per arm and K, from each evaluation's ``overall``.
ARM_METRICS = ("success_rate", "spl", "collisions_per_episode", "route_completion")


def aggregate(units: Sequence[dict]) -> dict[str, list[dict]]:
    """Per arm, one point per K (ascending): each metric's mean and 95 % half-width over the seeds,
    the seeds' own values, and the minutes they trained. ``units``: dicts with ``arm``, ``k``, ``seed``,
    ``overall`` (an evaluation's) and ``train_minutes``."""
    arms: dict[str, dict[int, list[dict]]] = {}
    for u in units:
        arms.setdefault(u["arm"], {}).setdefault(u["k"], []).append(u)
    out: dict[str, list[dict]] = {}
    for arm, by_k in arms.items():
        points = []
        for k in sorted(by_k):
            runs = sorted(by_k[k], key=lambda u: u["seed"])
            point: dict = {"k": k, "seeds": [u["seed"] for u in runs]}
            for metric in ARM_METRICS:
                values = [float(u["overall"][metric]) for u in runs]
                mean, half = mean_interval(values)
                point[metric] = {"mean": mean, "ci95": half, "values": values}
            point["train_minutes"] = float(np.mean([u["train_minutes"] for u in runs]))
            points.append(point)
        out[arm] = points
    return out


def fits(arms: dict[str, list[dict]], metric: str = "success_rate") -> dict[str, dict | None]:
    """The power law ``metric = a * K^b`` per arm, fitted to the means over seeds."""
    out: dict[str, dict | None] = {}
    for arm, points in arms.items():
        fit = power_law([p["k"] for p in points], [p[metric]["mean"] for p in points])
        out[arm] = {"a": fit[0], "b": fit[1]} if fit else None
    return out


def scene_statistics(scene_dir: Path | str, robot: str = "wheeled") -> dict[str, float]:
    """What ``robot`` meets in a scene, on the grids it trains on: ``walkable_m2`` (ground of a
    walkable type, free of objects), ``drivable_share`` (the part of it the robot's centre may take:
    its clearance and climb limits), ``clearance_p50_m`` (median distance to the nearest obstacle or
    unclimbable step over the drivable cells), ``objects_per_100m2`` (objects standing on walkable
    ground per 100 m2 of it), ``extent_m2`` (the scene's grid) and ``goal_reach_m`` (median geodesic
    distance from the goal candidates to their valid spawn cells, m: how long its episodes run).
    Walkable ground is that of the default ``WorldCfg.walkable_types`` (sidewalks, crosswalks, ramps,
    plazas)."""
    from urbanverse.scene.record import load_scene
    from urbanverse.sim.geodesic import compute_goal_fields
    from urbanverse.sim.robots import ROBOTS
    from urbanverse.sim.task import PointNavCfg
    from urbanverse.sim.world import GROUND_TYPES, WorldCfg, compile_world
    from urbanverse.sim.world_loading import goal_spec

    world_cfg = WorldCfg()
    world = compile_world(scene_dir, world_cfg)
    spec = goal_spec(PointNavCfg(), ROBOTS[robot])
    fields = compute_goal_fields(world, spec)
    cell_m2 = world.resolution**2
    walkable_m2 = float(world.walkable.sum()) * cell_m2
    coarse_m2 = spec.resolution**2
    drivable_m2 = float(fields.traversable.sum()) * coarse_m2
    clearance = world.sdf[world.walkable]
    reach = np.concatenate(
        [
            fields.distance[g].ravel()[fields.spawn_cells[g, : fields.spawn_count[g]]]
            for g in range(len(fields.goals_xy))
        ]
    )
    scene = load_scene(Path(scene_dir))
    on_walk = 0
    h, w = world.shape
    ox, oy = world.origin
    for obj in scene.objects:
        i = int((obj.position[1] - oy) / world.resolution)
        j = int((obj.position[0] - ox) / world.resolution)
        if 0 <= i < h and 0 <= j < w and GROUND_TYPES[world.ground_type[i, j]] in world_cfg.walkable_types:
            on_walk += 1
    return {
        "walkable_m2": walkable_m2,
        "drivable_share": drivable_m2 / walkable_m2 if walkable_m2 else 0.0,
        "clearance_p50_m": float(np.median(clearance)) if clearance.size else 0.0,
        "objects_per_100m2": 100.0 * on_walk / walkable_m2 if walkable_m2 else 0.0,
        "extent_m2": float(h * w) * cell_m2,
        "goal_reach_m": float(np.median(reach)) if reach.size else 0.0,
    }


def outcomes(units: Sequence[dict]) -> dict[str, dict[int, dict[str, float]]]:
    """How the test episodes ended, per arm and K, pooled over seeds: the shares that reached the goal,
    ended in a collision (the task ends an episode at its first) and ran out of time; from the units'
    per-episode rows (``episodes``: ``status``, ``success``, ``collisions``)."""
    counts: dict[str, dict[int, list[int]]] = {}
    for u in units:
        c = counts.setdefault(u["arm"], {}).setdefault(u["k"], [0, 0, 0])
        for row in u.get("episodes", ()):
            if row["status"] != "ok":
                continue
            c[0 if row["success"] else 1 if row["collisions"] > 0 else 2] += 1
    return {
        arm: {
            k: dict(zip(("success", "collision", "timeout"), (n / max(1, sum(c)) for n in c), strict=True))
            for k, c in sorted(by_k.items())
        }
        for arm, by_k in counts.items()
    }


def without_objects(scene_dir: Path | str, out_dir: Path | str) -> Path:
    """Write to ``out_dir`` a copy of the scene in ``scene_dir`` with no objects (ground, sky and people
    kept): the ``oracle-bare`` arm of the experiment, the true street with every object missed, which
    tells the cost of missing objects from the cost of wrong ground."""
    import dataclasses
    import shutil

    from urbanverse.scene.record import load_scene, save_scene

    scene = load_scene(Path(scene_dir))
    out_dir = Path(out_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    shutil.copytree(
        Path(scene_dir), out_dir, ignore=shutil.ignore_patterns("scene.usda", "preview.png", "assets")
    )
    save_scene(dataclasses.replace(scene, name=out_dir.name, objects=()), out_dir)
    return out_dir
