"""Convex collision parts of a mesh: one convex hull per connected component, a clearly non-convex
closed component cut into convex pieces by coacd (:class:`DecompositionCfg`), at most ``MAX_PARTS``.

Used by ingest; MuJoCo, PhysX and the batched simulator collide with convex parts only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError

from urbanverse.errors import MissingDependencyError

#: Most convex parts one asset keeps (the largest).
MAX_PARTS = 32


@dataclass(frozen=True, kw_only=True)
class DecompositionCfg:
    """When a connected component is cut into convex pieces, and how coacd cuts it.

    Only a *closed* component is cut: one whose every edge joins exactly two of its triangles, wound the
    same way (vertices merged by position first, so texture seams do not open it). Its volume is then
    exact, and it is cut when that volume is below ``min_solidity`` of its convex hull's. An open
    component (a mesh with holes, one-sided surfaces) keeps its hull: it has no volume to compare, and
    coacd, which needs a closed surface, first remeshes it into a thin shell around the surface, whose
    pieces leave the solid hollow (measured on a 1 x 1 m L-shaped block, 0.3 m arms, without its bottom
    face: the pieces covered 27-43 % of the block and took 5-14 s; its hull covers it all and adds 49 %).
    """

    min_solidity: float = 0.8
    """A closed component whose volume is below this share of its convex hull's is cut (1 = convex).
    Measured: that L-shaped block 0.68, a torus 0.53, a bench (a seat on two legs) 0.19."""
    threshold: float = 0.08
    """coacd's concavity threshold (0.01-1): a piece whose concavity (its distance from its own hull,
    on the component scaled to a unit box) is above it is cut again. coacd's default, 0.05, fitted the
    shapes above no better and took a third longer on the torus."""
    max_pieces: int = 8
    """Most convex pieces one component is cut into (coacd's ``max_convex_hull``)."""
    resolution: int = 500
    """Surface samples coacd measures concavity with (its default 2000; time grows with it). With 500 the
    pieces fit the shapes above as closely: the L and the bench covered whole with under 0.2 % of their
    volume added, 98.5 % of the torus covered."""
    mcts_iterations: int = 60
    """coacd's tree-search iterations per cut (its default 150)."""
    mcts_nodes: int = 10
    """coacd's tree-search children per node (its default 20)."""
    max_direct_triangles: int = 5000
    """A component of at most this many triangles goes to coacd as it is; a larger one is first remeshed
    on a voxel grid (coacd's manifold pre-pass), which bounds coacd's time: as it is, that time grows
    with the triangle count (measured with these settings: a torus of 4k triangles 3 s, of 65k 39 s;
    the 65k one remeshed 5 s)."""
    remesh_resolution: int = 20
    """Voxels along the longest side for coacd's manifold pre-pass (its ``preprocess_resolution``,
    default 50)."""
    seed: int = 0
    """coacd's random seed: the same file gives the same pieces."""


def _hull(points: np.ndarray) -> trimesh.Trimesh | None:
    """Convex hull with outward faces straight from qhull (trimesh's hull also repairs normals, which is
    the slow part and not needed here); None for flat or degenerate point sets."""
    try:
        hull = ConvexHull(points)
    except QhullError:  # flat pieces (decals, single quads) do not collide
        return None
    if hull.volume <= 1e-9:
        return None
    faces = hull.simplices.copy()
    tri = points[faces]
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    inward = (normals * hull.equations[:, :3]).sum(1) < 0
    faces[inward] = faces[inward][:, ::-1]
    used = np.unique(faces)
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    return trimesh.Trimesh(points[used], remap[faces], process=False)


def load_coacd():
    """The coacd module, its log lines silenced.

    coacd is a dependency of urbanverse, so without it the install is broken: ingest stops with the
    install command (``MissingDependencyError``) rather than fall back to one hull per component, which
    would store other collision parts for the same file on this machine alone and fill the notches of
    every non-convex asset."""
    try:
        import coacd
    except ImportError as exc:
        raise MissingDependencyError(
            f"coacd is not installed ({exc}); install it with: pip install 'coacd>=1.0'"
        ) from exc
    coacd.set_log_level("error")
    return coacd


def _is_closed(faces: np.ndarray) -> bool:
    """Whether every edge joins exactly two of ``faces`` wound the same way: each directed edge occurs
    once, and so does its reverse."""
    edges = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2).astype(np.int64)
    n = int(faces.max()) + 1
    forward = np.sort(edges[:, 0] * n + edges[:, 1])
    backward = np.sort(edges[:, 1] * n + edges[:, 0])
    return bool(np.all(forward[1:] != forward[:-1]) and np.array_equal(forward, backward))


def _closed_volume(vertices: np.ndarray, faces: np.ndarray) -> float:
    """Volume (m^3) enclosed by closed triangles (sum of signed tetrahedra from the origin)."""
    tri = vertices[faces]
    return abs(float(np.einsum("ij,ij->", tri[:, 0], np.cross(tri[:, 1], tri[:, 2])))) / 6


def _decompose(vertices: np.ndarray, faces: np.ndarray, cfg: DecompositionCfg) -> list[trimesh.Trimesh]:
    """coacd's convex pieces of one closed component, as outward-facing hulls (flat pieces dropped).

    The remesh of a large component swells its surface by up to a voxel (1.6 cm on a 24 cm thick torus,
    measured), so the pieces' vertices are clamped to the component's bounding box: no piece reaches
    below the asset's base or past its sides."""
    coacd = load_coacd()
    pieces = coacd.run_coacd(
        coacd.Mesh(vertices, faces),
        threshold=cfg.threshold,
        max_convex_hull=cfg.max_pieces,
        preprocess_mode="on" if len(faces) > cfg.max_direct_triangles else "off",
        preprocess_resolution=cfg.remesh_resolution,
        resolution=cfg.resolution,
        mcts_iterations=cfg.mcts_iterations,
        mcts_nodes=cfg.mcts_nodes,
        seed=cfg.seed,
    )
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    clamped = [np.clip(piece, lo, hi) for piece, _ in pieces if len(piece) >= 4]
    return [hull for piece in clamped if (hull := _hull(piece)) is not None]


def convex_parts(mesh: trimesh.Trimesh, cfg: DecompositionCfg | None = None) -> list[trimesh.Trimesh]:
    """Convex collision parts of ``mesh``, largest first, at most ``MAX_PARTS``; none for
    flat geometry (decals, single quads: nothing to collide with).

    Vertices are merged by position (texture seams and split normals do not cut a surface), then each
    connected component (triangles sharing vertices) gives its convex hull, or coacd's convex pieces
    when it is clearly not convex (``DecompositionCfg``). Only the ``MAX_PARTS`` components with the
    largest hulls are cut, which bounds coacd's time; flat components (decals, single quads) give none.
    """
    cfg = cfg or DecompositionCfg()
    solid = trimesh.Trimesh(mesh.vertices, mesh.faces)  # merges vertices by position
    labels = trimesh.graph.connected_component_labels(solid.face_adjacency, node_count=len(solid.faces))
    components = []
    for label in np.unique(labels):
        faces = solid.faces[labels == label]
        used = np.unique(faces)
        if len(used) >= 4 and (hull := _hull(solid.vertices[used])) is not None:
            components.append((hull, faces))
    components.sort(key=lambda c: -c[0].volume)
    parts = [hull for hull, _ in components[MAX_PARTS:]]
    for hull, faces in components[:MAX_PARTS]:
        used, local = np.unique(faces, return_inverse=True)
        vertices, faces = solid.vertices[used], local.reshape(faces.shape)
        concave = _is_closed(faces) and _closed_volume(vertices, faces) < cfg.min_solidity * hull.volume
        parts += (_decompose(vertices, faces, cfg) if concave else []) or [hull]
    parts.sort(key=lambda h: -h.volume)
    return parts[:MAX_PARTS]
