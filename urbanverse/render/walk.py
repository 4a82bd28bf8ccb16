"""A pedestrian's camera path through a scene: where a person filming a city walk would go.

The route is the longest obstacle-free walk along the pedestrian ground (sidewalks, ramps,
crosswalks, plazas): the walkable ground is rasterised, object footprints (plus a margin)
removed, and a clearance-weighted shortest path found between the two far ends of the largest
connected piece (two Dijkstra sweeps). The camera then moves along it at walking speed with
head bob, sway, look-around yaw and occasional stops.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.ndimage
import scipy.sparse
import scipy.sparse.csgraph
import shapely

from urbanverse.errors import InputError
from urbanverse.scene.ground import footprint, top_height_at
from urbanverse.scene.record import Scene

#: Ground types a pedestrian walks on.
PEDESTRIAN_GROUND = ("sidewalk", "ramp", "crosswalk", "plaza")


@dataclasses.dataclass(frozen=True, kw_only=True)
class WalkCfg:
    """How the filming pedestrian walks. Lengths in m, speeds in m/s, angles in degrees."""

    height_range: tuple[float, float] = (1.5, 1.7)
    """Camera height above the ground; one value drawn per tour."""
    speed_range: tuple[float, float] = (1.2, 1.5)
    """Mean walking speed; one value drawn per tour."""
    stop_every_s: float = 15.0
    """Mean time between stops (s); stops last 1-2.5 s."""
    bob_m: float = 0.025
    """Vertical head bob amplitude at walking speed."""
    sway_m: float = 0.02
    """Lateral sway amplitude (once per stride)."""
    step_hz: float = 1.9
    """Steps per second at walking speed."""
    look_around_deg: float = 10.0
    """Amplitude of slow yaw changes away from the walking direction."""
    pitch_deg: float = -6.0
    """Mean camera pitch (negative: looking slightly down)."""
    clearance_m: float = 0.45
    """Minimum distance kept from object footprints."""
    grid_m: float = 0.25
    """Resolution of the route-planning grid."""

    def __post_init__(self) -> None:
        if not 0 < self.height_range[0] <= self.height_range[1]:
            raise InputError(f"WalkCfg.height_range: need 0 < low <= high, got {self.height_range}")
        if not 0 < self.speed_range[0] <= self.speed_range[1]:
            raise InputError(f"WalkCfg.speed_range: need 0 < low <= high, got {self.speed_range}")


def walkable_area(scene: Scene, clearance: float) -> shapely.Geometry:
    """The pedestrian ground (sidewalks, ramps, crosswalks, plazas) 0.3 m in from its edges, less the
    object footprints grown by ``clearance`` m."""
    ground = [shapely.Polygon(r.polygon) for r in scene.ground if r.type in PEDESTRIAN_GROUND]
    if not ground:
        raise InputError(f"scene {scene.name!r}: no sidewalk, ramp, crosswalk or plaza to walk on")
    blocked = [footprint(obj.position, obj.yaw, np.asarray(obj.size[:2]), clearance) for obj in scene.objects]
    walk = shapely.union_all(ground).buffer(-0.3)  # keep off the curb edge
    return walk.difference(shapely.union_all(blocked)) if blocked else walk


@dataclasses.dataclass(frozen=True)
class WalkGrid:
    """The largest connected piece of free pedestrian ground on a square grid.

    ``xs`` (cols) and ``ys`` (rows): cell centres (m); ``free`` ``(rows, cols)``: the cells of the piece;
    ``graph``: its 8-connected graph over flat cell indices, edges weighted by length x (1 + 1 /
    clearance) so that shortest paths keep to the middle of the pavement; ``nodes``: the free flat
    indices.
    """

    xs: np.ndarray
    ys: np.ndarray
    free: np.ndarray
    graph: scipy.sparse.csr_matrix
    nodes: np.ndarray

    def points(self, flat: np.ndarray) -> np.ndarray:
        """Cell centres ``(P, 2)`` (m) of flat cell indices ``(P,)``."""
        rows, cols = np.unravel_index(np.asarray(flat), self.free.shape)
        return np.column_stack([self.xs[cols], self.ys[rows]])

    def path(self, source: int, target: int) -> np.ndarray:
        """The shortest path from flat cell ``source`` to ``target`` as flat indices (source first)."""
        _, pred = scipy.sparse.csgraph.dijkstra(self.graph, indices=source, return_predecessors=True)
        path = [target]
        while path[-1] != source:
            path.append(pred[path[-1]])
        return np.asarray(path[::-1])


def walk_grid(scene: Scene, clearance: float, res: float) -> WalkGrid:
    """The scene's free pedestrian ground (:func:`walkable_area`) on a ``res`` m grid."""
    area = walkable_area(scene, clearance)
    if area.is_empty:
        raise InputError(f"scene {scene.name!r}: no free pedestrian ground to walk along")
    x0, y0, x1, y1 = area.bounds
    xs, ys = np.arange(x0, x1 + res, res), np.arange(y0, y1 + res, res)
    gx, gy = np.meshgrid(xs, ys)
    free = shapely.contains_xy(area, gx, gy)
    labels, count = scipy.ndimage.label(free)
    if count == 0:
        raise InputError(f"scene {scene.name!r}: pedestrian ground is too narrow to walk along")
    largest = np.bincount(labels.ravel())[1:].argmax() + 1
    free = labels == largest
    clearance_m = scipy.ndimage.distance_transform_edt(free) * res
    return WalkGrid(xs, ys, free, _grid_graph(free, clearance_m, res), np.flatnonzero(free.ravel()))


def plan_route(scene: Scene, cfg: WalkCfg, rng: np.random.Generator) -> np.ndarray:
    """The walking route as points ``(P, 2)`` (m), 0.5 m apart, smoothed; random direction."""
    grid = walk_grid(scene, cfg.clearance_m, cfg.grid_m)
    nodes = grid.nodes
    start = nodes[rng.integers(len(nodes))]
    far_a = _farthest(grid.graph, start, nodes)
    dist = scipy.sparse.csgraph.dijkstra(grid.graph, indices=far_a)
    far_b = nodes[np.argmax(np.where(np.isfinite(dist[nodes]), dist[nodes], -1))]
    points = grid.points(grid.path(far_a, far_b)[::-1])
    if rng.random() < 0.5:
        points = points[::-1]
    return smooth_polyline(points, spacing=0.5, sigma_m=3.0)


def _grid_graph(free: np.ndarray, clearance: np.ndarray, res: float) -> scipy.sparse.csr_matrix:
    """8-connected grid graph over free cells; edges cost length x (1 + 1 / clearance), so routes keep
    to the middle of the pavement."""
    h, w = free.shape
    penalty = 1.0 + 1.0 / np.maximum(clearance, res)
    r, c = np.nonzero(free)
    rows, cols, costs = [], [], []
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        r2, c2 = r + dr, c + dc
        ok = (r2 < h) & (c2 >= 0) & (c2 < w)
        ok[ok] &= free[r2[ok], c2[ok]]
        a, b = (r[ok], c[ok]), (r2[ok], c2[ok])
        rows.append(np.ravel_multi_index(a, (h, w)))
        cols.append(np.ravel_multi_index(b, (h, w)))
        costs.append(res * math.hypot(dr, dc) * (penalty[a] + penalty[b]) / 2)
    i, j, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(costs)
    return scipy.sparse.csr_matrix((np.r_[v, v], (np.r_[i, j], np.r_[j, i])), shape=(h * w, h * w))


def _farthest(graph, source: int, nodes: np.ndarray) -> int:
    dist = scipy.sparse.csgraph.dijkstra(graph, indices=source)[nodes]
    return int(nodes[np.argmax(np.where(np.isfinite(dist), dist, -1))])


def smooth_polyline(points: np.ndarray, spacing: float, sigma_m: float) -> np.ndarray:
    """Resample a polyline every ``spacing`` m and low-pass it (Gaussian, ``sigma_m``)."""
    seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    if s[-1] < 2 * spacing:
        raise InputError("the free pedestrian ground is shorter than a metre: nowhere to walk")
    t = np.arange(0.0, s[-1], spacing)
    resampled = np.column_stack([np.interp(t, s, points[:, k]) for k in range(2)])
    return scipy.ndimage.gaussian_filter1d(resampled, sigma_m / spacing, axis=0, mode="nearest")


def _speed_profile(
    n: int, dt: float, mean_speed: float, cfg: WalkCfg, rng: np.random.Generator
) -> np.ndarray:
    """Speed per frame (m/s): slow variation around the mean, smooth stops of 1-2.5 s."""
    t = np.arange(n) * dt
    phase = rng.uniform(0, 2 * math.pi)
    speed = mean_speed * (1.0 + 0.06 * np.sin(2 * math.pi * t / 9.0 + phase))
    factor = np.ones(n)
    clock = rng.exponential(cfg.stop_every_s)
    while clock < t[-1] if n else False:
        length = rng.uniform(1.0, 2.5)
        ramp = 0.6  # s to slow down / speed up
        dist = np.minimum(np.abs(t - clock - length / 2) - length / 2, ramp) / ramp
        factor = np.minimum(factor, np.clip(dist, 0.0, 1.0) ** 2)
        clock += length + rng.exponential(cfg.stop_every_s)
    return speed * factor


def walk_poses(
    scene: Scene, route: np.ndarray, seconds: float, fps: float, cfg: WalkCfg, rng: np.random.Generator
) -> np.ndarray:
    """Camera poses ``(N, 4, 4)`` (``world_from_camera``, OpenCV axes) for ``seconds * fps`` frames.

    Past the end of the route the walker turns around and comes back. Heights are above the
    ground under the walker (sidewalks are raised).
    """
    n = max(1, round(seconds * fps))
    dt = 1.0 / fps
    speed = _speed_profile(n, dt, rng.uniform(*cfg.speed_range), cfg, rng)
    travelled = np.concatenate([[0.0], np.cumsum(speed[:-1] * dt)])
    seg = np.linalg.norm(np.diff(route, axis=0), axis=1)
    s_route = np.concatenate([[0.0], np.cumsum(seg)])
    length = s_route[-1]
    folded = np.mod(travelled, 2 * length)
    s = np.where(folded <= length, folded, 2 * length - folded)  # back and forth
    xy = np.column_stack([np.interp(s, s_route, route[:, k]) for k in range(2)])
    tangent = np.gradient(route, axis=0)
    heading_route = np.unwrap(np.arctan2(tangent[:, 1], tangent[:, 0]))
    heading = np.interp(s, s_route, heading_route) + np.where(folded <= length, 0.0, math.pi)
    heading = scipy.ndimage.gaussian_filter1d(np.unwrap(heading), 0.8 * fps, mode="nearest")

    t = np.arange(n) * dt
    walking = speed / max(speed.max(), 1e-6)
    stride = 2 * math.pi * cfg.step_hz * np.cumsum(walking * dt)  # phase advances only while walking
    look = math.radians(cfg.look_around_deg) * (
        0.65 * np.sin(2 * math.pi * t / 7.3 + rng.uniform(0, 6.3))
        + 0.35 * np.sin(2 * math.pi * t / 3.1 + rng.uniform(0, 6.3))
    )
    yaw = heading + look
    pitch = math.radians(cfg.pitch_deg) + math.radians(2.0) * np.sin(
        2 * math.pi * t / 5.3 + rng.uniform(0, 6.3)
    )
    roll = math.radians(0.8) * np.sin(stride / 2)
    side = np.column_stack([-np.sin(heading), np.cos(heading)])
    xy = xy + (cfg.sway_m * walking * np.sin(stride / 2))[:, None] * side
    floor = scipy.ndimage.gaussian_filter1d(top_height_at(scene.ground, xy), 0.3 * fps, mode="nearest")
    z = floor + rng.uniform(*cfg.height_range) + cfg.bob_m * walking * np.cos(stride)
    return np.stack([_pose(p, zz, a, b, c) for p, zz, a, b, c in zip(xy, z, yaw, pitch, roll, strict=True)])


def _pose(xy: np.ndarray, z: float, yaw: float, pitch: float, roll: float) -> np.ndarray:
    """``world_from_camera`` for a camera at (x, y, z) facing ``yaw`` (about +Z), tilted by pitch and roll."""
    forward = np.array([math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch), math.sin(pitch)])
    right = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
    down = np.cross(forward, right)
    c, s = math.cos(roll), math.sin(roll)
    right, down = c * right + s * down, -s * right + c * down
    pose = np.eye(4)
    pose[:3, :3] = np.column_stack([right, down, forward])
    pose[:3, 3] = (xy[0], xy[1], z)
    return pose
