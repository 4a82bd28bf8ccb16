"""Convex primitives as raw ``(vertices, faces)`` arrays, built directly with numpy for speed.

Every function returns a closed, outward-wound, convex triangle mesh: ``vertices`` is a float
array of shape ``(V, 3)`` in metres, ``faces`` an int array of shape ``(F, 3)``. Building the
``trimesh.Trimesh`` is left to the caller (``Builder.finish``) so that a whole asset can be
translated in one step before any mesh object exists.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError

Geom = tuple[np.ndarray, np.ndarray]


@lru_cache(maxsize=1)
def _unit_box() -> Geom:
    b = trimesh.creation.box(extents=(1.0, 1.0, 1.0))
    return np.asarray(b.vertices, dtype=float), np.asarray(b.faces, dtype=np.int64)


@lru_cache(maxsize=1)
def _unit_sphere() -> Geom:
    s = trimesh.creation.icosphere(subdivisions=1, radius=1.0)
    return np.asarray(s.vertices, dtype=float), np.asarray(s.faces, dtype=np.int64)


@lru_cache(maxsize=32)
def _prism_faces(n: int, apex: bool) -> np.ndarray:
    """Faces of an n-gon prism (2n vertices: bottom ring then top ring) or pyramid (n + 1)."""
    i = np.arange(n)
    j = (i + 1) % n
    fan = np.arange(1, n - 1)
    bottom = np.stack([np.zeros(n - 2, int), fan + 1, fan], axis=1)
    if apex:
        sides = np.stack([i, j, np.full(n, n)], axis=1)
        return np.concatenate([bottom, sides]).astype(np.int64)
    top = np.stack([np.full(n - 2, n), n + fan, n + fan + 1], axis=1)
    sides = np.concatenate([np.stack([i, j, n + j], 1), np.stack([i, n + j, n + i], 1)])
    return np.concatenate([bottom, top, sides]).astype(np.int64)


def yaw_matrix(yaw: float) -> np.ndarray:
    """3x3 rotation about +Z by ``yaw`` radians."""
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _align_z(direction: np.ndarray) -> np.ndarray:
    """Rotation matrix taking +Z onto the unit vector ``direction`` (Rodrigues)."""
    d = direction / np.linalg.norm(direction)
    z = np.array([0.0, 0.0, 1.0])
    v = np.cross(z, d)
    c = float(np.dot(z, d))
    if np.linalg.norm(v) < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + k + k @ k / (1.0 + c)


def box(size, centre=(0.0, 0.0, 0.0), yaw: float = 0.0) -> Geom:
    """Box of extents ``size`` (x, y, z) centred at ``centre``, rotated by ``yaw`` about +Z."""
    v, f = _unit_box()
    v = v * np.asarray(size, dtype=float)
    if yaw:
        v = v @ yaw_matrix(yaw).T
    return v + np.asarray(centre, dtype=float), f


def slab(size, bottom_centre) -> Geom:
    """Axis-aligned box of extents ``size`` whose bottom face is centred at ``bottom_centre``."""
    x, y, z = bottom_centre
    return box(size, (x, y, z + size[2] / 2.0))


def frustum(
    r_bottom: float, r_top: float, height: float, base=(0.0, 0.0, 0.0), sections: int = 12, axis: str = "z"
) -> Geom:
    """Regular ``sections``-gon frustum (cylinder when radii match, cone when ``r_top`` is 0).

    ``base`` is the centre of the bottom cap; ``axis`` ("x", "y", "z") is the direction from the
    bottom cap to the top cap. Radii and height in metres.
    """
    a = np.arange(sections) * (2.0 * np.pi / sections) + np.pi / sections
    ring = np.stack([np.cos(a), np.sin(a), np.zeros(sections)], axis=1)
    bottom = ring * r_bottom
    if r_top <= 0.0:
        v = np.concatenate([bottom, [[0.0, 0.0, height]]])
        f = _prism_faces(sections, True)
    else:
        top = ring * r_top + [0.0, 0.0, height]
        v = np.concatenate([bottom, top])
        f = _prism_faces(sections, False)
    if axis == "x":
        v = v[:, [2, 0, 1]]
    elif axis == "y":
        v = v[:, [1, 2, 0]]
    return v + np.asarray(base, dtype=float), f


def rod(p0, p1, radius: float, sections: int = 8, radius1: float | None = None) -> Geom:
    """Cylinder (or frustum with end radius ``radius1``) from point ``p0`` to point ``p1``."""
    p0, p1 = np.asarray(p0, dtype=float), np.asarray(p1, dtype=float)
    d = p1 - p0
    v, f = frustum(
        radius, radius if radius1 is None else radius1, float(np.linalg.norm(d)), sections=sections
    )
    return v @ _align_z(d).T + p0, f


def ellipsoid(radii, centre=(0.0, 0.0, 0.0)) -> Geom:
    """Ellipsoid with semi-axes ``radii`` (x, y, z): an icosphere (subdivision 1, 80 faces) scaled."""
    v, f = _unit_sphere()
    return v * np.asarray(radii, dtype=float) + np.asarray(centre, dtype=float), f


def hull(points) -> Geom:
    """Convex hull of a point set of shape ``(N, 3)``; unused points are dropped, faces wound outward."""
    p = np.asarray(points, dtype=float)
    try:
        h = ConvexHull(p)
    except QhullError as exc:
        raise ValueError(f"convex hull of {len(p)} points is degenerate (flat or collinear)") from exc
    used = np.unique(h.simplices)
    remap = np.full(len(p), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    faces = remap[h.simplices]
    v = p[used]
    tri = v[faces]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    flip = np.einsum("ij,ij->i", normal, h.equations[:, :3]) < 0.0
    faces[flip] = faces[flip][:, ::-1]
    return v, faces


def clipped_ellipsoid(radii, centre, z_floor: float) -> Geom:
    """Ellipsoid whose vertices below ``z_floor`` are raised onto it: a flat-bottomed blob."""
    v, _ = ellipsoid(radii, centre)
    v = v.copy()
    v[:, 2] = np.maximum(v[:, 2], z_floor)
    return hull(v)


def ring_segments(radius: float, thickness: float, depth: float, count: int, centre, plane: str = "xz"):
    """Boxes approximating a torus-like ring (wheel tyre, hoop, basin rim) as ``count`` segments.

    ``plane`` is the plane of the ring: "xz" (a wheel rolling along x), "xy" (a horizontal rim)
    or "yz". ``thickness`` is radial, ``depth`` is across the ring plane. Yields ``Geom``s.
    """
    seg_len = 2.0 * np.pi * radius / count * 1.04
    c = np.asarray(centre, dtype=float)
    for k in range(count):
        a = 2.0 * np.pi * k / count
        v, f = box((seg_len, depth, thickness))  # tangent along x, across along y, radial along z
        ca, sa = np.cos(a), np.sin(a)
        rot = np.array([[ca, 0.0, sa], [0.0, 1.0, 0.0], [-sa, 0.0, ca]])  # about +Y: x -> tangent
        v = v @ rot.T + radius * np.array([sa, 0.0, ca])
        if plane == "xy":
            v = np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1)  # proper rotation about +X
        elif plane == "yz":
            v = np.stack([-v[:, 1], v[:, 0], v[:, 2]], axis=1)  # proper rotation about +Z
        yield v + c, f
