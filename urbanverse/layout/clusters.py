"""Clusters of dense points in a bird's-eye grid, for the object proposals
(:mod:`urbanverse.layout.proposals`): the connected components of occupied voxels, a long cluster's
dense cores, a cluster's footprint and the line of sight of the cameras that triangulated it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.ndimage

from urbanverse.layout.birdseye import cell_sums, grid_cells, points_by_label, principal_axes


def voxel_clusters(
    flat: np.ndarray,
    shape: tuple[int, int],
    z: np.ndarray,
    occupied: np.ndarray,
    *,
    base_m: float,
    layer_m: float,
    low_voxel_points: int,
) -> tuple[np.ndarray, int]:
    """Per point ``(N,)`` in the grid cells ``flat`` of a grid of ``shape``
    (:func:`urbanverse.layout.birdseye.grid_cells`) at heights ``z (N,)`` (m), its cluster ``1..n``
    (0: its cell is not ``occupied``, or its voxel of the lowest layer is too sparse) and ``n``: the
    26-connected components of the occupied cells' points in voxels one cell wide and ``layer_m``
    high from ``base_m`` up (``layer_m`` 0: of the occupied cells, whole columns, 8-connected)."""
    if layer_m <= 0:
        labels, n = scipy.ndimage.label(occupied, structure=np.ones((3, 3)))
        return labels.ravel()[flat], n
    layer = np.floor((z - base_m) / layer_m).astype(int)
    voxels = np.zeros((int(np.prod(shape)), int(layer.max()) + 1), bool)
    inside = occupied.ravel()[flat]
    voxels[flat[inside], layer[inside]] = True
    # The lowest layer holds the ground's depth noise too: a voxel there joins only with
    # ``low_voxel_points`` points or something above it in its cell.
    lowest = np.bincount(flat[inside & (layer == 0)], minlength=len(voxels))
    voxels[:, 0] &= (lowest >= low_voxel_points) | voxels[:, 1:].any(axis=1)
    labels, n = scipy.ndimage.label(voxels.reshape(*shape, -1), structure=np.ones((3, 3, 3)))
    return np.where(inside, labels.reshape(len(voxels), -1)[flat, layer], 0), n


def footprint(xy: np.ndarray, percentile: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(centre (2,), long axis (2,), extents (long, short))`` of points ``xy (N, 2)`` (m): principal
    axes, and the spread between the ``percentile`` and ``100 - percentile`` points along each.

    That is the cluster's dense core: depth noise draws a thin tail along the line of sight (a post
    seen from 10 m spans 2 m), and stray points join; a minimum-area rectangle takes both in. The
    core of an even spread is ``1 - 2 percentile / 100`` of its length (0.7 at 15 %). The core is not
    scaled up to a full length: the tail and stray points it leaves out are not the object.
    """
    mean, axes = principal_axes(xy)
    along = (xy - mean) @ axes.T
    lo, hi = np.percentile(along, [percentile, 100.0 - percentile], axis=0)
    return mean + ((lo + hi) / 2) @ axes, axes[0], hi - lo


def dense_cores(
    xy: np.ndarray,
    *,
    split_length_m: float,
    core_share: float,
    reach_cells: int,
    cell_m: float,
    min_points: int,
    percentile: float,
) -> list[np.ndarray]:
    """The parts of a cluster of points ``xy (N, 2)`` (m): indices into ``xy``, one array per part.

    A cluster whose footprint core (:func:`footprint` at ``percentile``) reaches ``split_length_m``
    is split where its bird's-eye point density (``cell_m`` cells, 3x3 mean) falls under
    ``core_share`` of its 95th percentile: each 8-connected run of denser cells is a core, and it
    takes the points within ``reach_cells`` cells of it (the points farther from every core are left
    out); cores under ``min_points`` points are dropped. Objects pile up points (every keyframe that
    passes them adds some); the flow errors between them (streaks trailing along the line of sight,
    a sheet of misplaced ground) are sparser. A cluster with one core, or shorter, comes back whole.
    """
    everything = [np.arange(len(xy))]
    if split_length_m <= 0 or len(xy) < 2 * min_points:
        return everything
    _, _, extent = footprint(xy, percentile)
    if extent[0] < split_length_m:
        return everything
    flat, shape = grid_cells(xy, cell_m)
    counts = cell_sums(flat, shape).astype(float)
    smooth = scipy.ndimage.uniform_filter(counts, 3, mode="constant")
    core = smooth >= core_share * np.percentile(smooth[counts > 0], 95)
    labels, k = scipy.ndimage.label(core, np.ones((3, 3)))
    if k < 2:
        return everything
    reach, nearest = scipy.ndimage.distance_transform_edt(labels == 0, return_indices=True)
    cell_label = np.where(reach <= reach_cells, labels[nearest[0], nearest[1]], 0).ravel()[flat]
    return [part for part in points_by_label(cell_label, k) if len(part) >= min_points]


def eye_table(cameras: Mapping[int, np.ndarray] | None, owner: np.ndarray) -> np.ndarray | None:
    """Camera positions ``(max keyframe + 1, 2)`` indexed by keyframe, for the keyframes in ``owner``
    (the points' keyframes), so that each point's camera is one array lookup; None without cameras."""
    if cameras is None or not len(owner):
        return None
    table = np.full((int(owner.max()) + 1, 2), np.nan)
    for k in np.unique(owner):
        table[k] = cameras[int(k)]
    return table


def line_of_sight(
    xy: np.ndarray, eye_of: np.ndarray | None, owner: np.ndarray, centre: np.ndarray, percentile: float
) -> tuple[np.ndarray | None, float]:
    """``(ray (2,), near_m)`` of a cluster's points ``xy (N, 2)`` triangulated from keyframes ``owner
    (N,)`` (their cameras' positions in ``eye_of``, :func:`eye_table`): the mean unit direction from
    each point's camera to it, and how far the ``percentile`` point along it lies before ``centre``;
    ``(None, 0)`` without cameras."""
    if eye_of is None:
        return None, 0.0
    sight = xy - eye_of[owner]
    sight /= np.maximum(np.linalg.norm(sight, axis=1, keepdims=True), 1e-9)
    ray = sight.mean(axis=0)
    ray /= max(float(np.linalg.norm(ray)), 1e-9)
    return ray, float(max(0.0, -np.percentile((xy - centre) @ ray, percentile)))
