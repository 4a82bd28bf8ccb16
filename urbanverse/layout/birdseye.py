"""Bird's-eye grids of 3D points, shared by the object proposals and the facades: cell indices,
points grouped by the connected component of their cell, and a point set's principal axes."""

from __future__ import annotations

import numpy as np


def grid_cells(xy: np.ndarray, cell_m: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The flat cell index ``(N,)`` of each point ``xy (N, 2)`` (m) in a grid of ``cell_m`` cells whose
    corner is the points' minimum, and the grid's shape."""
    cell = np.floor((xy - xy.min(axis=0)) / cell_m).astype(int)
    shape = tuple(int(s) for s in cell.max(axis=0) + 1)
    return np.ravel_multi_index(cell.T, shape), shape  # type: ignore[return-value]


def cell_sums(flat: np.ndarray, shape: tuple[int, int], weights: np.ndarray | None = None) -> np.ndarray:
    """Per cell, the number of points (or the sum of their ``weights``), as a ``shape`` array."""
    return np.bincount(flat, weights=weights, minlength=int(np.prod(shape))).reshape(shape)


def points_by_label(point_label: np.ndarray, n: int) -> list[np.ndarray]:
    """The indices of the points labelled ``1..n`` (label 0: none), one array per label; one sort, not
    a mask per label."""
    order = np.argsort(point_label, kind="stable")
    bounds = np.searchsorted(point_label[order], np.arange(1, n + 2))
    return [order[bounds[k] : bounds[k + 1]] for k in range(n)]


def principal_axes(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mean (2,), axes (2, 2))`` of points ``xy (N, 2)``: the rows of ``axes`` are the unit principal
    directions, the long one first."""
    mean = xy.mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov((xy - mean).T) + 1e-9 * np.eye(2))
    return mean, vectors[:, ::-1].T
