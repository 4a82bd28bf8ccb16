"""Geodesic distance fields for goal sampling, progress rewards and SPL.

A coarse grid (``resolution`` metres, same origin as the world grid) marks the cells where a
robot's centre may be: walkable ground with more than ``clearance`` metres to any obstacle
and to any ground step the robot cannot climb (a curb over its climb limit ``max_step`` is a
wall to it: its footprint must not straddle one, which the robot's own collision check would
stop). Neighbouring cells (8-connected, no corner cutting) are linked when the robot can climb
the height difference between them. Steps and clearances follow ``rules`` (the climb and
clearance rules the robot's collision check and the LiDAR apply), so a wheeled robot's field
goes around curbs through ramps and a legged robot's field steps over them. Dijkstra (scipy)
from each goal cell gives the distance field; on an 8-connected grid it overestimates
straight-line distances in open space by at most 8 % (octile metric).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

from urbanverse.errors import InputError
from urbanverse.sim import rules
from urbanverse.sim.world import CompiledWorld, save_npz, step_edges, world_cache_dir

#: Bumped when the fields' meaning changes, so cached fields of an older rule are not reused.
FIELDS_VERSION = 2


@dataclass(frozen=True, kw_only=True)
class GoalFieldsSpec:
    """What the goal fields depend on (all lengths in metres)."""

    resolution: float = 0.2
    """Coarse grid cell size (m)."""
    clearance: float
    """Free space a robot centre needs around it to pass (m): half the footprint width."""
    spawn_clearance: float
    """Free space needed to spawn with any yaw (m): the footprint's circumradius."""
    max_step: float
    """Largest ground height change a robot can climb between neighbouring cells (m)."""
    num_goals: int = 32
    """Goal candidates per scene."""
    min_distance: float = 2.0
    """Shortest geodesic spawn-to-goal distance (m)."""
    max_distance: float = 30.0
    """Longest geodesic spawn-to-goal distance (m)."""
    seed: int = 0
    """Seed of the goal choice."""


@dataclass(frozen=True, kw_only=True)
class GoalFields:
    """Goal candidates of one scene and their distance fields.

    ``goals_xy`` (G, 2) m, world; ``distance`` (G, Hc, Wc) float32 geodesic metres (inf where
    unreachable); ``spawn_cells`` (G, S) int32 flat coarse-cell indices of valid spawns per goal,
    padded with -1, ``spawn_count`` (G,) how many are valid; ``traversable`` (Hc, Wc) bool.
    Random goals and spawns are drawn from the first ``candidates`` goals (None: all of them); the
    goals after those are fixed ones (``with_goals``), which may have no spawn cell in range.
    """

    resolution: float
    origin: tuple[float, float]
    goals_xy: np.ndarray
    distance: np.ndarray
    spawn_cells: np.ndarray
    spawn_count: np.ndarray
    traversable: np.ndarray
    candidates: int | None = None


def _clearance(world: CompiledWorld, max_step: float) -> np.ndarray:
    """Distance (m) to the nearest obstacle or unclimbable ground step, ``(H, W)`` world grid."""
    steps = step_edges(world.ground_height, max_step)
    if not steps.any():
        return world.sdf
    to_step = ndimage.distance_transform_edt(~steps) * world.resolution
    return np.minimum(world.sdf, to_step.astype(np.float32))


def _coarse_grid(world: CompiledWorld, spec: GoalFieldsSpec) -> tuple[np.ndarray, ...]:
    """Coarse traversability, ground height and clearance (m) sampled at the coarse cell centres."""
    h, w = world.shape
    hc = int(np.ceil(h * world.resolution / spec.resolution))
    wc = int(np.ceil(w * world.resolution / spec.resolution))
    ys = (np.arange(hc) + 0.5) * spec.resolution
    xs = (np.arange(wc) + 0.5) * spec.resolution
    iy = np.clip((ys / world.resolution).astype(int), 0, h - 1)
    ix = np.clip((xs / world.resolution).astype(int), 0, w - 1)
    walk = world.walkable[np.ix_(iy, ix)]
    sdf = _clearance(world, spec.max_step)[np.ix_(iy, ix)]
    height = world.ground_height[np.ix_(iy, ix)]
    return walk & rules.has_margin(sdf, rules.clearance_limit(spec.clearance)), height, sdf


@dataclass(frozen=True, kw_only=True)
class CoarseGrid:
    """The coarse grid of one scene for one robot: ``traversable`` (Hc, Wc) bool (where its centre
    may be), ``spawnable`` (Hc, Wc) bool (where it may start with any yaw: ``spawn_clearance`` free
    around it), ground ``height`` (Hc, Wc) float32 m; cell ``(i, j)`` spans
    ``origin + (j, i) * resolution`` to ``origin + (j + 1, i + 1) * resolution``."""

    resolution: float
    origin: tuple[float, float]
    traversable: np.ndarray
    spawnable: np.ndarray
    height: np.ndarray

    def cells(self, xy: np.ndarray) -> np.ndarray:
        """Flat indices (K,) int64 of the cells holding points ``xy`` (K, 2) m; -1 off the grid."""
        hc, wc = self.traversable.shape
        rel = (np.asarray(xy, dtype=np.float64).reshape(-1, 2) - np.asarray(self.origin)) / self.resolution
        ij = np.floor(rel).astype(np.int64)
        inside = (ij[:, 0] >= 0) & (ij[:, 0] < wc) & (ij[:, 1] >= 0) & (ij[:, 1] < hc)
        return np.where(inside, ij[:, 1] * wc + ij[:, 0], -1)

    def centres(self, cells: np.ndarray) -> np.ndarray:
        """World xy (K, 2) float32 m of the centres of flat cells ``cells`` (K,)."""
        return cell_centres(self.origin, self.resolution, self.traversable.shape[1], cells)


def cell_centres(origin: tuple[float, float], resolution: float, width: int, cells: np.ndarray) -> np.ndarray:
    """World xy (K, 2) float32 m of the centres of flat cells ``cells`` (K,) of a grid ``width`` cells
    wide with ``resolution`` m cells from ``origin`` (the coarse grid's and ``GoalFields``' layout)."""
    cells = np.asarray(cells)
    ij = np.stack([cells % width, cells // width], axis=1)
    return (np.asarray(origin) + (ij + 0.5) * resolution).astype(np.float32)


def coarse_grid(world: CompiledWorld, spec: GoalFieldsSpec) -> CoarseGrid:
    """The ``CoarseGrid`` of ``world`` under ``spec``'s clearances and climb limit."""
    trav, height, sdf = _coarse_grid(world, spec)
    spawnable = trav & rules.has_margin(sdf, rules.clearance_limit(spec.spawn_clearance))
    return CoarseGrid(
        resolution=spec.resolution, origin=world.origin, traversable=trav, spawnable=spawnable, height=height
    )


def grid_graph(traversable: np.ndarray, height: np.ndarray, res: float, max_step: float) -> csr_matrix:
    """8-connected grid graph (edge weight: metres) over traversable cells ``(Hc, Wc)``."""
    hc, wc = traversable.shape
    idx = np.arange(hc * wc).reshape(hc, wc)
    limit = rules.step_limit(max_step)
    height = np.asarray(height, dtype=np.float32)
    rows, cols, weights = [], [], []
    for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
        ya, yb = slice(0, hc - dy), slice(dy, hc)
        xa, xb = (slice(0, wc - dx), slice(dx, wc)) if dx >= 0 else (slice(-dx, wc), slice(0, wc + dx))
        ok = traversable[ya, xa] & traversable[yb, xb]
        ok &= ~rules.step_blocks(height[ya, xa], height[yb, xb], limit)
        if dy and dx:  # diagonal: both orthogonal neighbours must be free (no corner cutting)
            ok &= traversable[yb, xa] & traversable[ya, xb]
        rows.append(idx[ya, xa][ok])
        cols.append(idx[yb, xb][ok])
        weights.append(np.full(int(ok.sum()), res * np.hypot(dy, dx)))
    r, c, wt = np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)
    return csr_matrix((wt, (r, c)), shape=(hc * wc, hc * wc))


def _fields_key(world: CompiledWorld, spec: GoalFieldsSpec) -> str:
    payload = json.dumps(
        [FIELDS_VERSION, rules.RULES_VERSION, world.key, spec.__dict__], sort_keys=True, default=str
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def distance_fields(grid: CoarseGrid, max_step: float, cells: np.ndarray) -> np.ndarray:
    """Geodesic distance (m, float64) from each flat cell of ``cells`` (K,) to every cell: (K, Hc * Wc),
    inf where unreachable (Dijkstra on ``grid_graph``). A source off the grid (-1) reaches nothing."""
    cells = np.asarray(cells, dtype=np.int64)
    out = np.full((cells.size, grid.traversable.size), np.inf)
    ok = cells >= 0
    if ok.any():
        graph = grid_graph(grid.traversable, grid.height, grid.resolution, max_step)
        out[ok] = dijkstra(graph, directed=False, indices=cells[ok])
    return out


def _spawn_table(spawn_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``spawn_cells`` (G, S) int32 padded with -1 and ``spawn_count`` (G,) int32 from a (G, cells) mask."""
    counts = spawn_ok.sum(axis=1)
    spawn_cells = np.full((spawn_ok.shape[0], max(1, int(counts.max(initial=0)))), -1, dtype=np.int32)
    for row in range(spawn_ok.shape[0]):
        cells = np.flatnonzero(spawn_ok[row])
        spawn_cells[row, : cells.size] = cells
    return spawn_cells, counts.astype(np.int32)


def compute_goal_fields(world: CompiledWorld, spec: GoalFieldsSpec, cache: bool = True) -> GoalFields:
    """Pick goal candidates and compute their geodesic fields (cached beside the world grids).

    Raises ``InputError`` when no goal has a spawn cell in the distance range (scene too small,
    walkable area too narrow for the robot, or every goal unreachable).
    """
    path = world_cache_dir(world.key) / f"goals_{_fields_key(world, spec)}.npz"
    if cache and path.is_file():
        with np.load(path) as d:
            return GoalFields(
                resolution=spec.resolution,
                origin=world.origin,
                **{k: d[k] for k in ("goals_xy", "distance", "spawn_cells", "spawn_count", "traversable")},
            )
    grid = coarse_grid(world, spec)
    trav, spawnable = grid.traversable, grid.spawnable
    candidates = np.flatnonzero(spawnable)
    if candidates.size == 0:
        raise InputError(
            f"scene {world.name!r}: no walkable cell with {spec.spawn_clearance:.2f} m clearance "
            "for the robot"
        )
    rng = np.random.default_rng(spec.seed)
    picks = rng.choice(candidates, size=min(4 * spec.num_goals, candidates.size), replace=False)
    dist = distance_fields(grid, spec.max_step, picks)
    spawn_ok = (dist >= spec.min_distance) & (dist <= spec.max_distance) & spawnable.ravel()[None]
    keep = np.flatnonzero(spawn_ok.any(axis=1))[: spec.num_goals]
    if keep.size == 0:
        raise InputError(
            f"scene {world.name!r}: no goal is reachable from a spawn at geodesic distance "
            f"[{spec.min_distance}, {spec.max_distance}] m; lower min_distance or check connectivity"
        )
    spawn_cells, counts = _spawn_table(spawn_ok[keep])
    fields = GoalFields(
        resolution=spec.resolution,
        origin=world.origin,
        goals_xy=grid.centres(picks[keep]),
        distance=dist[keep].reshape(keep.size, *trav.shape).astype(np.float32),
        spawn_cells=spawn_cells,
        spawn_count=counts,
        traversable=trav,
    )
    if cache:
        save_npz(
            path,
            **{
                k: getattr(fields, k)
                for k in ("goals_xy", "distance", "spawn_cells", "spawn_count", "traversable")
            },
        )
    return fields


def with_goals(
    fields: GoalFields, grid: CoarseGrid, spec: GoalFieldsSpec, goals_xy: np.ndarray
) -> GoalFields:
    """``fields`` with the goals ``goals_xy`` (E, 2) m appended: exactly these points, each one's field
    run from the coarse cell holding it (a goal on a blocked cell or off the grid reaches nothing).
    The original goals stay first and remain the only ``candidates`` of random draws, so sampled
    spawns (the robot's, the pedestrians') are as before; an appended goal's spawn cells are the
    spawnable cells within ``spec``'s distance range of it (possibly none)."""
    goals_xy = np.asarray(goals_xy, dtype=np.float32).reshape(-1, 2)
    unique, inverse = np.unique(grid.cells(goals_xy), return_inverse=True)
    dist = distance_fields(grid, spec.max_step, unique)[inverse.ravel()]
    spawn_ok = (dist >= spec.min_distance) & (dist <= spec.max_distance) & grid.spawnable.ravel()[None]
    new_cells, new_count = _spawn_table(spawn_ok)
    width = max(fields.spawn_cells.shape[1], new_cells.shape[1])

    def pad(a: np.ndarray) -> np.ndarray:
        return np.pad(a, ((0, 0), (0, width - a.shape[1])), constant_values=-1)

    return GoalFields(
        resolution=fields.resolution,
        origin=fields.origin,
        goals_xy=np.concatenate([fields.goals_xy, goals_xy]),
        distance=np.concatenate(
            [fields.distance, dist.reshape(-1, *grid.traversable.shape).astype(np.float32)]
        ),
        spawn_cells=np.concatenate([pad(fields.spawn_cells), pad(new_cells)]),
        spawn_count=np.concatenate([fields.spawn_count, new_count]),
        traversable=fields.traversable,
        candidates=len(fields.goals_xy) if fields.candidates is None else fields.candidates,
    )
