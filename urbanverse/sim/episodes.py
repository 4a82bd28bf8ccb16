"""Fixed evaluation episodes (Habitat PointNav style): records, JSON lines files, drawing them, and
checking them against their scenes before they run.

An episode file holds one JSON object per line: ``{"id": "example:0000", "scene": "../scenes/example",
"start": [x, y, yaw], "goal": [x, y], "max_steps": null, "geodesic_m": 12.4}`` (world frame, m and
rad; ``max_steps`` null: the task's time limit; ``geodesic_m``: the start-to-goal geodesic distance
when the file was made, for information). A relative scene path is relative to the file's folder.

Before an episode runs (``load_episode_world``) it gets a status: ``ok``; ``start_blocked`` (the
start's coarse cell is not spawnable for the robot: too near an object or off walkable ground);
``goal_blocked`` (the goal's cell is not traversable); ``unreachable`` (no walkable route from start
to goal). Episodes that are not ``ok`` are reported, never run and never replaced.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError
from urbanverse.records import atomic_path
from urbanverse.scene.record import load_scene
from urbanverse.sim.geodesic import cell_centres, coarse_grid, compute_goal_fields, with_goals
from urbanverse.sim.robots import RobotCfg
from urbanverse.sim.task import PointNavCfg
from urbanverse.sim.world import WorldCfg, compile_world
from urbanverse.sim.world_batch import ScenePeople, WorldBatch
from urbanverse.sim.world_loading import goal_spec, unique_names

#: Episode statuses, in the order they are checked (the first that applies is given).
STATUSES = ("ok", "start_blocked", "goal_blocked", "unreachable")

FIELDS = ("id", "scene", "start", "goal", "max_steps", "geodesic_m")
REQUIRED = ("id", "scene", "start", "goal")


@dataclass(frozen=True, kw_only=True)
class Episode:
    """One fixed point-goal episode (world frame)."""

    id: str
    """Unique in its file."""
    scene: str
    """Scene folder (holds scene.json)."""
    start: tuple[float, float, float]
    """Start pose x, y (m) and yaw (rad)."""
    goal: tuple[float, float]
    """Goal x, y (m)."""
    max_steps: int | None = None
    """Time limit (steps); None: the task's ``max_episode_steps``."""
    geodesic_m: float | None = None
    """Start-to-goal geodesic distance (m) measured when the episode was made; None: unknown."""


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where}: expected a finite number, got {json.dumps(value)}")
    return float(value)


def _numbers(value, n: int, what: str, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n:
        raise InputError(f"{where}: expected {what} ({n} numbers), got {json.dumps(value)[:60]}")
    return tuple(_number(v, where) for v in value)


def _parse(data, where: str, folder: str) -> Episode:
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        raise InputError(f"{where}: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})")
    for name in REQUIRED:
        if name not in data:
            raise InputError(f"{where}: field {name!r} is missing")
    for name in ("id", "scene"):
        if not isinstance(data[name], str) or not data[name]:
            raise InputError(
                f"{where}: field {name!r}: expected a non-empty string, got {json.dumps(data[name])}"
            )
    max_steps = data.get("max_steps")
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1
    ):
        raise InputError(
            f"{where}: field 'max_steps': expected an integer >= 1 or null, got {json.dumps(max_steps)}"
        )
    geo = data.get("geodesic_m")
    return Episode(
        id=data["id"],
        scene=os.path.normpath(os.path.join(folder, data["scene"])),
        start=_numbers(data["start"], 3, "[x, y, yaw]", f"{where}: field 'start'"),  # type: ignore[arg-type]
        goal=_numbers(data["goal"], 2, "[x, y]", f"{where}: field 'goal'"),  # type: ignore[arg-type]
        max_steps=max_steps,
        geodesic_m=None if geo is None else _number(geo, f"{where}: field 'geodesic_m'"),
    )


def load_episodes(path: Path | str) -> list[Episode]:
    """Read and check an episode file (JSON lines; blank lines are skipped). Relative scene paths
    resolve against the file's folder. Raises ``InputError`` naming the file, line and field."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read episode file ({exc})") from None
    folder = str(path.parent)
    episodes: list[Episode] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise InputError(f"{where}: not a JSON object ({getattr(exc, 'msg', exc)})") from None
        episode = _parse(data, where, folder)
        if episode.id in seen:
            raise InputError(f"{where}: field 'id': {episode.id!r} already used on line {seen[episode.id]}")
        seen[episode.id] = lineno
        episodes.append(episode)
    if not episodes:
        raise InputError(f"{path}: holds no episodes")
    return episodes


def _scene_for_file(scene: str, folder: Path) -> str:
    """``scene`` relative to ``folder`` when it lies under it or under its parent, else absolute."""
    target = os.path.abspath(scene)
    try:
        rel = os.path.relpath(target, os.path.abspath(folder))
    except ValueError:  # another drive
        return target
    parts = Path(rel).parts
    return rel if parts.count("..") <= 1 and ".." not in parts[1:] else target


def save_episodes(path: Path | str, episodes: Sequence[Episode]) -> Path:
    """Write ``episodes`` as a JSON lines file, atomically; scene paths under the file's folder or a
    sibling of it are written relative to that folder. Raises ``InputError`` on duplicate ids."""
    path = Path(path)
    ids = [e.id for e in episodes]
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: episode ids must be unique")
    lines = []
    for e in episodes:
        row = {
            "id": e.id,
            "scene": _scene_for_file(e.scene, path.parent),
            "start": list(e.start),
            "goal": list(e.goal),
            "max_steps": e.max_steps,
            "geodesic_m": e.geodesic_m,
        }
        lines.append(json.dumps(row, allow_nan=False))
    with atomic_path(path) as tmp:
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def make_episodes(
    scene_dirs: Sequence[Path | str],
    per_scene: int,
    seed: int,
    robot_cfg: RobotCfg,
    task_cfg: PointNavCfg,
    world_cfg: WorldCfg,
) -> list[Episode]:
    """``per_scene`` episodes in each scene, drawn as training draws them: a uniform goal candidate of
    the scene's goal fields (as ``load_world_batch`` builds them for ``robot_cfg`` under ``task_cfg``),
    a uniform spawn cell of that goal (so the geodesic distance is within the task's range), a uniform
    yaw. Scene ``s`` draws from ``numpy.random.default_rng([seed, s])``: the same call gives the same
    episodes. Ids are ``<scene name>:<number>``."""
    if per_scene < 1:
        raise InputError(f"--per-scene: need >= 1, got {per_scene}")
    if seed < 0:
        raise InputError(f"--seed: need >= 0, got {seed}")
    spec = goal_spec(task_cfg, robot_cfg)
    worlds = [compile_world(d, world_cfg) for d in scene_dirs]
    names = unique_names([w.name for w in worlds])
    out = []
    for s, (scene, world) in enumerate(zip(scene_dirs, worlds, strict=True)):
        fields = compute_goal_fields(world, spec, cache=world_cfg.cache)
        width = fields.traversable.shape[1]
        rng = np.random.default_rng([seed, s])
        for j in range(per_scene):
            g = int(rng.integers(len(fields.goals_xy)))
            cell = int(fields.spawn_cells[g, rng.integers(fields.spawn_count[g])])
            yaw = float(rng.uniform(-math.pi, math.pi))
            centre = cell_centres(fields.origin, fields.resolution, width, np.array([cell]))[0]
            x, y = (round(float(v), 4) for v in centre)
            gx, gy = (round(float(v), 4) for v in fields.goals_xy[g])
            out.append(
                Episode(
                    id=f"{names[s]}:{j:04d}",
                    scene=str(scene),
                    start=(x, y, round(yaw, 4)),
                    goal=(gx, gy),
                    geodesic_m=round(float(fields.distance[g].ravel()[cell]), 3),
                )
            )
    return out


@dataclass(frozen=True)
class EpisodePlan:
    """Fixed episodes checked against a ``WorldBatch``: per episode (E) its ``status`` (``STATUSES``),
    ``scene`` index and ``goal`` index in the batch (int64), and ``geodesic_m`` (float64, m) from
    start to goal (inf: unreachable or blocked)."""

    episodes: tuple[Episode, ...]
    status: tuple[str, ...]
    scene: np.ndarray
    goal: np.ndarray
    geodesic_m: np.ndarray

    @property
    def runnable(self) -> list[int]:
        """Indices of the ``ok`` episodes, in file order."""
        return [i for i, s in enumerate(self.status) if s == "ok"]


def _scene_key(path: Path | str) -> str:
    return str(Path(path).resolve())


def load_episode_world(
    scene_dirs: Sequence[Path | str],
    world_cfg: WorldCfg,
    task: PointNavCfg,
    robot: RobotCfg,
    device: str,
    episodes: Sequence[Episode],
) -> tuple[WorldBatch, EpisodePlan]:
    """``load_world_batch`` with every episode's goal added to its scene's goal fields
    (``geodesic.with_goals``; random draws still use the usual candidates), and the episodes checked.
    Every episode's scene must be one of ``scene_dirs`` (``InputError`` otherwise)."""
    keys = [_scene_key(d) for d in scene_dirs]
    scene_of = []
    for e in episodes:
        if _scene_key(e.scene) not in keys:
            raise InputError(f"episode {e.id!r}: scene {e.scene} is not among the environment's scenes")
        scene_of.append(keys.index(_scene_key(e.scene)))
    spec = goal_spec(task, robot)
    worlds, fields = [], []
    goal = np.zeros(len(episodes), np.int64)
    geo = np.full(len(episodes), np.inf)
    status = ["ok"] * len(episodes)
    for m, d in enumerate(scene_dirs):
        world = compile_world(d, world_cfg)
        grid = coarse_grid(world, spec)
        base = compute_goal_fields(world, spec, cache=world_cfg.cache)
        mine = [i for i, s in enumerate(scene_of) if s == m]
        points = sorted({episodes[i].goal for i in mine})
        f = with_goals(base, grid, spec, np.array(points, np.float32).reshape(-1, 2))
        g0 = len(base.goals_xy)
        for i in mine:
            e = episodes[i]
            goal[i] = g0 + points.index(e.goal)
            start_cell, goal_cell = grid.cells(np.array([e.start[:2], e.goal]))
            if start_cell < 0 or not grid.spawnable.ravel()[start_cell]:
                status[i] = "start_blocked"
            elif goal_cell < 0 or not grid.traversable.ravel()[goal_cell]:
                status[i] = "goal_blocked"
            else:
                geo[i] = float(f.distance[goal[i]].ravel()[start_cell])
                status[i] = "ok" if math.isfinite(geo[i]) else "unreachable"
        worlds.append(world)
        fields.append(f)
    people = ScenePeople([load_scene(Path(d)) for d in scene_dirs], device)
    plan = EpisodePlan(tuple(episodes), tuple(status), np.array(scene_of, np.int64), goal, geo)
    return WorldBatch(worlds, fields, device, people), plan
