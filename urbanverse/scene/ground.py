"""Ground regions as triangle meshes: a top surface (flat or ramped) and side walls down to z = 0.

Where a raised sidewalk meets the road, its side wall is the curb face. The same
triangulation feeds the USD writer (render + static collider) and the MuJoCo check
(one convex prism per top triangle, since MuJoCo collides meshes as convex hulls).
"""

from __future__ import annotations

import mapbox_earcut
import numpy as np
import shapely
import trimesh

from urbanverse.scene.record import GroundRegion

#: Walls lower than this (m) are not emitted: the region is flush with z = 0 there.
_MIN_WALL_HEIGHT = 1e-4
#: Top triangles smaller than this (m^2) get no collision prism.
_MIN_PRISM_AREA = 1e-4


def _ccw_polygon(region: GroundRegion) -> tuple[np.ndarray, np.ndarray]:
    """Polygon ``(P, 2)`` in counter-clockwise order and its per-vertex top heights ``(P,)``."""
    xy = np.asarray(region.polygon, dtype=np.float64)
    heights = np.asarray(region.top_heights(), dtype=np.float64)
    if not shapely.Polygon(xy).exterior.is_ccw:
        xy, heights = xy[::-1].copy(), heights[::-1].copy()
    return xy, heights


def top_triangles(region: GroundRegion) -> tuple[np.ndarray, np.ndarray]:
    """Top surface: vertices ``(P, 3)`` (x, y, top height) and CCW triangles ``(T, 3)`` (earcut)."""
    xy, heights = _ccw_polygon(region)
    tris = mapbox_earcut.triangulate_float64(xy, np.array([len(xy)], dtype=np.uint32)).reshape(-1, 3)
    return np.column_stack([xy, heights]), tris.astype(np.int64)


def ground_mesh(region: GroundRegion) -> trimesh.Trimesh:
    """Top surface plus outward-facing side walls from the top edge down to z = 0 (no bottom face)."""
    top, tris = top_triangles(region)
    vertices = [top]
    faces = [tris]
    n = len(top)
    base = n
    for i in range(n):
        j = (i + 1) % n
        if max(top[i, 2], top[j, 2]) < _MIN_WALL_HEIGHT:
            continue
        quad = np.array([top[i], top[j], [*top[j, :2], 0.0], [*top[i, :2], 0.0]])
        vertices.append(quad)
        # CCW polygon: the outward side of edge i->j is to its right; (a, d, c), (a, c, b) face outwards.
        faces.append(np.array([[base, base + 3, base + 2], [base, base + 2, base + 1]]))
        base += 4
    return trimesh.Trimesh(np.vstack(vertices), np.vstack(faces), process=False)


def top_triangle_prisms(region: GroundRegion) -> list[np.ndarray]:
    """One convex prism per top triangle, from z = 0 to the top: a list of ``(6, 3)`` vertex arrays.

    Flat regions at z = 0 give no prisms (the collision plane at z = 0 covers them).
    """
    top, tris = top_triangles(region)
    prisms = []
    for tri in tris:
        upper = top[tri]
        if upper[:, 2].max() < _MIN_WALL_HEIGHT:
            continue
        (ax, ay), (bx, by) = upper[1, :2] - upper[0, :2], upper[2, :2] - upper[0, :2]
        if 0.5 * abs(ax * by - ay * bx) < _MIN_PRISM_AREA:
            continue  # a sliver from a jagged outline: no volume to collide with, and qhull rejects it
        lower = upper.copy()
        lower[:, 2] = 0.0
        prisms.append(np.vstack([lower, upper]))
    return prisms


def planar_uv(vertices: np.ndarray, tile_m: float) -> np.ndarray:
    """Texture coordinates ``(V, 2)`` from world x, y: one texture tile every ``tile_m`` metres."""
    return vertices[:, :2] / tile_m


def top_height_at(regions, xy: np.ndarray) -> np.ndarray:
    """Top of the ground (m) at points ``(N, 2)``: the highest region there, interpolated on its top
    triangles (ramps slope); 0 off the ground."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    best = np.zeros(len(xy))
    for region in regions:
        verts, tris = top_triangles(region)
        for a, b, c in verts[tris]:
            m = np.array([b[:2] - a[:2], c[:2] - a[:2]]).T
            if abs(np.linalg.det(m)) < 1e-12:
                continue
            u, v = np.linalg.solve(m, (xy - a[:2]).T)
            inside = (u >= -1e-9) & (v >= -1e-9) & (u + v <= 1 + 1e-9)
            z = a[2] + u * (b[2] - a[2]) + v * (c[2] - a[2])
            best = np.where(inside, np.maximum(best, z), best)
    return best


def footprint(position, yaw: float, size, margin: float = 0.0) -> shapely.Polygon:
    """An object's oriented footprint rectangle in the world xy plane: ``size`` (length, width, ...) m
    grown by ``margin`` m on every side, rotated by ``yaw`` rad about ``position`` (x, y, ...)."""
    c, s = np.cos(yaw), np.sin(yaw)
    half = np.asarray(size[:2], dtype=np.float64) / 2 + margin
    corners = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half
    return shapely.Polygon(corners @ np.array([[c, s], [-s, c]]) + np.asarray(position[:2], dtype=np.float64))
