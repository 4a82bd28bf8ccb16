"""World compilation: a Scene becomes 2D grids that batched environments query in O(1).

From ``scene.json`` and the assets' convex collision parts this builds, on a regular grid
(``WorldCfg.resolution`` metres per cell, row ``iy`` along +y, column ``ix`` along +x, cell
``(iy, ix)`` centred at ``origin + (ix + 0.5, iy + 0.5) * resolution``):

- ``ground_height`` (H, W), m: top of the ground regions (flat or ramped); robots stand on it.
- ``surface_height`` (H, W), m: ground plus the tops of obstacles (2.5D map for depth cameras);
  off-map cells read ``EDGE_WALL_HEIGHT``.
- ``ground_type`` (H, W), int8: index into ``GROUND_TYPES`` (0 = off the map).
- ``occupancy`` (H, W), bool: obstacle parts that reach into the robot's height band, and every
  cell off the map (the scene's edge acts as a wall). A one-cell off-map border surrounds it.
- ``sdf`` (H, W), m: signed distance to the nearest occupied cell boundary (negative inside).
- ``walkable`` (H, W), bool: free cells of a walkable ground type (goal sampling, pedestrians).

Overhanging parts (tree canopies, lamp heads) that start above ``obstacle_max_height`` are left
out of both occupancy and the 2.5D surface: a 2.5D map cannot hold overhangs. Results are
cached on disk per scene content and config under ``urbanverse.paths.cache_dir("worlds")``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from scipy import ndimage
from scipy.spatial import ConvexHull

from urbanverse.assets.record import load_asset, load_collision_parts
from urbanverse.errors import InputError
from urbanverse.paths import cache_dir
from urbanverse.records import atomic_path
from urbanverse.scene.ground import top_triangles
from urbanverse.scene.record import SCENE_FILE, Scene, load_scene, resolve_inside
from urbanverse.sim import rules

log = logging.getLogger(__name__)

#: Ground type codes of ``CompiledWorld.ground_type``; code 0 is off the map.
GROUND_TYPES = ("void", "road", "sidewalk", "crosswalk", "ramp", "terrain", "plaza")
WalkableType = Literal["road", "sidewalk", "crosswalk", "ramp", "terrain", "plaza"]

#: Height (m) of the wall that the edge of a scene shows to depth cameras.
EDGE_WALL_HEIGHT = 2.0

_WORLD_FORMAT = 2


@dataclass(frozen=True, kw_only=True)
class WorldCfg:
    """How a scene is compiled into grids."""

    resolution: float = 0.05
    """Grid cell size (m)."""
    obstacle_min_height: float = 0.05
    """Parts whose top is less than this (m) above the object's base do not block robots."""
    obstacle_max_height: float = 1.8
    """Parts whose bottom is more than this (m) above the object's base are overhead (ignored)."""
    walkable_types: tuple[WalkableType, ...] = ("sidewalk", "crosswalk", "ramp", "plaza")
    """Ground types where goals, spawns and pedestrians may be; add ``"road"`` where a task allows."""
    cache: bool = True
    """Read and write compiled grids under ``cache_dir("worlds")``."""

    def __post_init__(self) -> None:
        if not 0.005 <= self.resolution <= 1.0:
            raise InputError(f"WorldCfg.resolution: {self.resolution} m is outside [0.005, 1.0]")
        if not 0.0 <= self.obstacle_min_height < self.obstacle_max_height:
            raise InputError("WorldCfg: need 0 <= obstacle_min_height < obstacle_max_height")
        unknown = set(self.walkable_types) - set(GROUND_TYPES[1:])
        if unknown or not self.walkable_types:
            raise InputError(f"WorldCfg.walkable_types: unknown or empty ({sorted(unknown)})")


@dataclass(frozen=True, kw_only=True)
class CompiledWorld:
    """Grids of one scene (see the module docstring for each array's meaning and units)."""

    name: str
    key: str
    """Content hash of the scene and the config (names the cache entries)."""
    resolution: float
    origin: tuple[float, float]
    """World xy (m) of the lower-left corner of cell (0, 0)."""
    ground_height: np.ndarray
    surface_height: np.ndarray
    ground_type: np.ndarray
    occupancy: np.ndarray
    sdf: np.ndarray
    walkable: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        """Grid shape ``(H, W)``."""
        return self.occupancy.shape

    def cell_of(self, xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row and column indices ``(iy, ix)`` of world points ``xy`` (..., 2), clamped to the grid."""
        ij = np.floor((np.asarray(xy) - np.asarray(self.origin)) / self.resolution).astype(np.int64)
        return np.clip(ij[..., 1], 0, self.shape[0] - 1), np.clip(ij[..., 0], 0, self.shape[1] - 1)


def signed_distance(occupancy: np.ndarray, resolution: float) -> np.ndarray:
    """Signed distance (m) from cell centres to the boundary of occupied cells: ``(H, W)`` float32.

    Euclidean distance transform to the nearest occupied (or free) cell centre, minus half a
    cell so that the zero level lies on the cell boundary; negative inside obstacles.
    """
    if occupancy.all():
        return np.full(occupancy.shape, -resolution, dtype=np.float32)
    outside = ndimage.distance_transform_edt(~occupancy) * resolution
    inside = ndimage.distance_transform_edt(occupancy) * resolution
    sdf = np.where(occupancy, -(inside - 0.5 * resolution), outside - 0.5 * resolution)
    return sdf.astype(np.float32)


def step_edges(ground_height: np.ndarray, max_step: float) -> np.ndarray:
    """Cells on either side of a ground step the robot cannot climb: ``(H, W)`` bool.

    A step is a height change between 4-neighbour cells (a curb face) that blocks a robot with
    climb limit ``max_step`` (m) by ``rules.step_blocks``, the rule the robot's collision check
    applies; ramps change by far less per cell and are not marked.
    """
    heights = np.asarray(ground_height, dtype=np.float32)
    limit = rules.step_limit(max_step)
    edges = np.zeros(heights.shape, dtype=bool)
    for axis in (0, 1):
        lo = [slice(None), slice(None)]
        hi = [slice(None), slice(None)]
        lo[axis], hi[axis] = slice(None, -1), slice(1, None)
        jump = rules.step_blocks(heights[tuple(hi)], heights[tuple(lo)], limit)
        edges[tuple(lo)] |= jump
        edges[tuple(hi)] |= jump
    return edges


def fill_triangles(
    grid_shape: tuple[int, int], origin: np.ndarray, res: float, tris: np.ndarray, pad: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells whose centres lie in one of the triangles ``tris`` (T, 3, 2), grown by ``pad`` metres.

    Returns rows ``(n,)``, columns ``(n,)`` and barycentric weights ``(n, 3)`` of every hit cell.
    """
    rows, cols, weights = [], [], []
    h, w = grid_shape
    for tri in tris:
        lo = np.floor((tri.min(0) - pad - origin) / res).astype(int)
        hi = np.ceil((tri.max(0) + pad - origin) / res).astype(int)
        x0, y0 = max(lo[0], 0), max(lo[1], 0)
        x1, y1 = min(hi[0], w), min(hi[1], h)
        if x0 >= x1 or y0 >= y1:
            continue
        ys, xs = np.mgrid[y0:y1, x0:x1]
        px = origin[0] + (xs.ravel() + 0.5) * res
        py = origin[1] + (ys.ravel() + 0.5) * res
        a, b, c = tri
        det = (b[1] - c[1]) * (a[0] - c[0]) + (c[0] - b[0]) * (a[1] - c[1])
        if abs(det) < 1e-12:
            continue
        l1 = ((b[1] - c[1]) * (px - c[0]) + (c[0] - b[0]) * (py - c[1])) / det
        l2 = ((c[1] - a[1]) * (px - c[0]) + (a[0] - c[0]) * (py - c[1])) / det
        lam = np.stack([l1, l2, 1.0 - l1 - l2], axis=1)
        # Distance outside each edge, in metres: barycentric coordinate times the height over that edge.
        edge_len = np.linalg.norm(np.array([b - c, c - a, a - b]), axis=1)
        outside_m = -lam * (abs(det) / edge_len)
        keep = (outside_m <= pad + 1e-9).all(axis=1)
        rows.append(ys.ravel()[keep])
        cols.append(xs.ravel()[keep])
        weights.append(np.clip(lam[keep], 0.0, 1.0))
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros((0, 3))
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(weights)


def _scene_key(scene_dir: Path, scene: Scene, cfg: WorldCfg) -> str:
    digest = hashlib.sha256()
    digest.update((scene_dir / SCENE_FILE).read_bytes())
    for folder in sorted({obj.asset.path for obj in scene.objects}):
        asset_dir = resolve_inside(scene_dir, folder, "objects.asset.path")
        digest.update((asset_dir / "asset.json").read_bytes())
        digest.update((asset_dir / load_asset(asset_dir).collision_parts).read_bytes())
    digest.update(json.dumps([_WORLD_FORMAT, dataclasses.asdict(cfg)], sort_keys=True).encode())
    return digest.hexdigest()[:20]


def _object_parts(scene_dir: Path, scene: Scene) -> list[tuple[np.ndarray, float, float, float]]:
    """Per convex part in the world: (hull polygon (P, 2), bottom z, top z, object base z)."""
    cache: dict[str, list] = {}
    out = []
    for obj in scene.objects:
        asset_dir = resolve_inside(scene_dir, obj.asset.path, f"object {obj.id}")
        if obj.asset.path not in cache:
            cache[obj.asset.path] = load_collision_parts(asset_dir, load_asset(asset_dir))
        c, s = np.cos(obj.yaw), np.sin(obj.yaw)
        rot = np.array([[c, -s], [s, c]])
        for part in cache[obj.asset.path]:
            v = np.asarray(part.vertices) * np.asarray(obj.scale)
            xy = v[:, :2] @ rot.T + np.asarray(obj.position[:2])
            z = v[:, 2] + obj.position[2]
            try:
                hull = xy[ConvexHull(xy).vertices]
            except Exception:  # degenerate (flat) part: use its bounding box
                hull = np.array(
                    [xy.min(0), [xy[:, 0].max(), xy[:, 1].min()], xy.max(0), [xy[:, 0].min(), xy[:, 1].max()]]
                )
            out.append((hull, float(z.min()), float(z.max()), float(obj.position[2])))
    return out


def _build(scene_dir: Path, scene: Scene, cfg: WorldCfg, key: str) -> CompiledWorld:
    res = cfg.resolution
    pts = np.concatenate([np.asarray(r.polygon, dtype=np.float64) for r in scene.ground])
    origin = pts.min(0) - res  # one-cell off-map border
    w, h = (np.ceil((pts.max(0) - origin) / res).astype(int) + 1).tolist()
    ground_height = np.zeros((h, w), np.float32)
    ground_type = np.zeros((h, w), np.int8)
    for region in scene.ground:
        top, tris = top_triangles(region)
        for tri in tris:
            rows, cols, lam = fill_triangles((h, w), origin, res, top[tri][None, :, :2])
            ground_height[rows, cols] = lam @ top[tri][:, 2]
            ground_type[rows, cols] = GROUND_TYPES.index(region.type)
    occupancy = ground_type == 0
    surface_height = np.where(occupancy, np.float32(EDGE_WALL_HEIGHT), ground_height)
    for hull, z0, z1, base in _object_parts(scene_dir, scene):
        if z1 < base + cfg.obstacle_min_height or z0 > base + cfg.obstacle_max_height:
            continue
        centre = hull.mean(0)
        fan = np.stack([np.broadcast_to(centre, hull.shape), hull, np.roll(hull, -1, axis=0)], axis=1)
        rows, cols, _ = fill_triangles((h, w), origin, res, fan, pad=0.5 * res)
        occupancy[rows, cols] = True
        surface_height[rows, cols] = np.maximum(surface_height[rows, cols], z1)
    walk_codes = [GROUND_TYPES.index(t) for t in cfg.walkable_types]
    walkable = np.isin(ground_type, walk_codes) & ~occupancy
    if not walkable.any():
        raise InputError(
            f"scene {scene.name!r}: no walkable area (no free cell of types {list(cfg.walkable_types)}); "
            "add sidewalk/plaza regions or widen WorldCfg.walkable_types"
        )
    return CompiledWorld(
        name=scene.name,
        key=key,
        resolution=res,
        origin=(float(origin[0]), float(origin[1])),
        ground_height=ground_height,
        surface_height=surface_height,
        ground_type=ground_type,
        occupancy=occupancy,
        sdf=signed_distance(occupancy, res),
        walkable=walkable,
    )


_ARRAYS = ("ground_height", "surface_height", "ground_type", "occupancy", "sdf", "walkable")


def save_npz(path: Path, **arrays: np.ndarray) -> None:
    """Write arrays to ``path`` (an ``.npz`` name) atomically."""
    with atomic_path(path) as tmp:
        np.savez(tmp, **arrays)


def world_cache_dir(key: str) -> Path:
    """Cache folder of one compiled scene."""
    return cache_dir("worlds", key)


def compile_world(scene_dir: Path, cfg: WorldCfg | None = None) -> CompiledWorld:
    """Compile (or load from the cache) the grids of the scene in ``scene_dir``.

    Raises ``InputError`` for an invalid scene or one without walkable area.
    """
    cfg = cfg or WorldCfg()
    scene_dir = Path(scene_dir)
    scene = load_scene(scene_dir)
    key = _scene_key(scene_dir, scene, cfg)
    path = world_cache_dir(key) / "world.npz" if cfg.cache else None
    if path is not None and path.is_file():
        with np.load(path) as data:
            meta = data["meta"]
            return CompiledWorld(
                name=scene.name,
                key=key,
                resolution=float(meta[0]),
                origin=(float(meta[1]), float(meta[2])),
                **{k: data[k] for k in _ARRAYS},
            )
    world = _build(scene_dir, scene, cfg, key)
    if path is not None:
        meta = np.array([world.resolution, *world.origin])
        save_npz(path, meta=meta, **{k: getattr(world, k) for k in _ARRAYS})
        log.info("compiled world %s (%d x %d cells) -> %s", scene.name, *world.shape, path)
    return world
