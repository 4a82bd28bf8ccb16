"""Pedestrians for a procedural street: people walking along its sidewalks and over its crossings.

Each person walks from a random spot of the free pedestrian ground (:func:`urbanverse.render.walk.
walk_grid`: sidewalks, ramps, crosswalks and plazas, kept ``clearance_m`` off every object footprint) to
a far one, and on to another, along clearance-weighted shortest paths (so crossing the road means
taking a crosswalk), smoothed, at a steady speed with a slow swell, for the whole ``seconds`` span.
The result is a tuple of :class:`~urbanverse.scene.record.Agent` records in the scene's frame
(t in s, x, y in m), deterministic for a given random generator.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from urbanverse.errors import InputError
from urbanverse.render.walk import WalkGrid, smooth_polyline, walk_grid
from urbanverse.scene.agents import make_agent
from urbanverse.scene.record import Agent, Scene


@dataclasses.dataclass(frozen=True, kw_only=True)
class PeopleCfg:
    """How many people walk a procedural street, and how."""

    count: tuple[int, int] = (4, 8)
    """Number of pedestrians, drawn uniformly from this inclusive range; (0, 0): none."""
    seconds: float = 60.0
    """Time span of every trajectory (s from the start, as a tour's frame times): longer than a tour."""
    step_s: float = 0.2
    """Time between trajectory points (s)."""
    speed_range: tuple[float, float] = (1.0, 1.6)
    """Mean walking speed (m/s), one per person."""
    height_range: tuple[float, float] = (1.6, 1.85)
    """Body height (m), one per person."""
    radius: float = 0.25
    """Body radius (m): the half-width of the shoulders."""
    clearance_m: float = 0.55
    """Least distance (m) of a walking line from any object footprint."""
    min_leg_m: float = 15.0
    """Least straight-line distance (m) from one waypoint to the next."""

    def __post_init__(self) -> None:
        if not 0 <= self.count[0] <= self.count[1]:
            raise InputError(f"people.count: need 0 <= low <= high, got {self.count}")
        if self.seconds <= 0 or not 0 < self.step_s <= 1.0:
            raise InputError(
                f"people: need seconds > 0 and 0 < step_s <= 1, got {self.seconds}, {self.step_s}"
            )
        if not 0 < self.speed_range[0] <= self.speed_range[1]:
            raise InputError(f"people.speed_range: need 0 < low <= high, got {self.speed_range}")
        if self.clearance_m < self.radius:
            raise InputError(f"people.clearance_m ({self.clearance_m}) is less than the body radius")


#: Grid resolution (m) of the path planning.
GRID_M = 0.25


def _route(grid: WalkGrid, length: float, min_leg: float, rng: np.random.Generator) -> np.ndarray:
    """A walking line ``(P, 2)`` (m) of at least ``length`` m through far-apart waypoints of ``grid``."""
    nodes = grid.nodes
    everywhere = grid.points(nodes)
    here = int(nodes[rng.integers(len(nodes))])
    points = [grid.points(np.array([here]))]
    total = 0.0
    for _ in range(20):  # bounded: a small piece of ground may never give enough far waypoints
        if total >= length:
            break
        far = nodes[np.linalg.norm(everywhere - grid.points(np.array([here]))[0], axis=1) >= min_leg]
        target = int(rng.choice(far if len(far) else nodes))
        if target == here:  # a piece of ground smaller than min_leg: the draw may land where it stands
            continue
        leg = grid.points(grid.path(here, target))
        total += float(np.linalg.norm(np.diff(leg, axis=0), axis=1).sum())
        points.append(leg[1:])
        here = target
    return np.vstack(points)


def _trajectory(route: np.ndarray, speed: float, cfg: PeopleCfg, rng: np.random.Generator) -> np.ndarray:
    """``(T, 3)`` ``(t, x, y)`` points every ``cfg.step_s`` over ``cfg.seconds``, walking ``route`` at
    ``speed`` m/s (a +-8 % swell over ~10 s); past its end the walker turns back."""
    line = smooth_polyline(route, spacing=GRID_M, sigma_m=0.75)
    s_line = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(line, axis=0), axis=1))])
    t = np.arange(0.0, cfg.seconds + 0.5 * cfg.step_s, cfg.step_s)
    phase = rng.uniform(0, 2 * math.pi)
    v = speed * (1.0 + 0.08 * np.sin(2 * math.pi * t / rng.uniform(8.0, 12.0) + phase))
    travelled = np.concatenate([[0.0], np.cumsum((v[1:] + v[:-1]) / 2 * np.diff(t))])
    folded = np.mod(travelled, 2 * s_line[-1])
    s = np.where(folded <= s_line[-1], folded, 2 * s_line[-1] - folded)
    return np.column_stack([t, np.interp(s, s_line, line[:, 0]), np.interp(s, s_line, line[:, 1])])


def street_people(scene: Scene, cfg: PeopleCfg, rng: np.random.Generator) -> tuple[Agent, ...]:
    """Pedestrians walking the free pedestrian ground of ``scene`` (module docstring)."""
    count = int(rng.integers(cfg.count[0], cfg.count[1] + 1))
    if count == 0:
        return ()
    grid = walk_grid(scene, cfg.clearance_m, GRID_M)
    agents = []
    for k in range(count):
        speed = float(rng.uniform(*cfg.speed_range))
        route = _route(grid, speed * cfg.seconds * 1.1, cfg.min_leg_m, rng)
        trajectory = _trajectory(route, speed, cfg, rng)
        agents.append(
            make_agent(
                f"person_{k:02d}",
                trajectory,
                np.ones(len(trajectory)),
                height=round(float(rng.uniform(*cfg.height_range)), 3),
                radius=cfg.radius,
            )
        )
    return tuple(agents)
