"""A street's axis on the ground: a polyline (m, world xy) with street coordinates along and across it.

Street coordinates ``(t, s)``: ``t`` the arc length (m) along the axis, extrapolated straight past
its ends; ``s`` the signed distance (m) to its left (counter-clockwise from its direction). A
layout built in a straight street's own frame (x along, y across: :mod:`urbanverse.procgen.layout`)
is bent onto a curved walk by :meth:`StreetAxis.to_world`.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import scipy.ndimage


@dataclasses.dataclass(frozen=True)
class StreetAxis:
    """A polyline ``points (K, 2)`` (K >= 2, consecutive points apart) in world metres."""

    points: np.ndarray

    @functools.cached_property
    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per segment: start ``(K-1, 2)``, unit direction ``(K-1, 2)``, length ``(K-1,)``."""
        start = self.points[:-1]
        delta = np.diff(self.points, axis=0)
        length = np.linalg.norm(delta, axis=1)
        return start, delta / length[:, None], length

    @functools.cached_property
    def _arc(self) -> np.ndarray:
        """Arc length (m) at each point ``(K,)``."""
        return np.concatenate([[0.0], np.cumsum(self._segments[2])])

    @property
    def length(self) -> float:
        """Arc length (m) from the first point to the last."""
        return float(self._arc[-1])

    def to_street(self, xy: np.ndarray) -> np.ndarray:
        """Street coordinates ``(N, 2)`` (t, s) of world points ``xy (N, 2)``: by the nearest segment,
        the first and last extended straight past the ends."""
        xy = np.asarray(xy, float).reshape(-1, 2)
        if len(xy) > 20_000:  # bounded memory: (N, K, 2) arrays per chunk
            return np.vstack([self.to_street(part) for part in np.array_split(xy, -(-len(xy) // 20_000))])
        start, direction, length = self._segments
        rel = xy[:, None, :] - start[None]  # (N, K-1, 2)
        along = np.einsum("nkd,kd->nk", rel, direction)
        clamped = along.copy()
        clamped[:, 1:] = np.maximum(clamped[:, 1:], 0.0)
        clamped[:, :-1] = np.minimum(clamped[:, :-1], length[:-1])
        foot = start[None] + clamped[..., None] * direction[None]
        nearest = np.argmin(np.linalg.norm(xy[:, None, :] - foot, axis=2), axis=1)
        rows = np.arange(len(xy))
        d = direction[nearest]
        r = rel[rows, nearest]
        t = self._arc[nearest] + clamped[rows, nearest]
        s = d[:, 0] * r[:, 1] - d[:, 1] * r[:, 0]
        return np.column_stack([t, s])

    def to_world(self, ts: np.ndarray) -> np.ndarray:
        """World points ``(N, 2)`` of street coordinates ``ts (N, 2)`` (the inverse of :meth:`to_street`
        where the offset is smaller than the axis's radius of curvature)."""
        ts = np.asarray(ts, float).reshape(-1, 2)
        start, direction, length = self._segments
        k = np.clip(np.searchsorted(self._arc, ts[:, 0], side="right") - 1, 0, len(length) - 1)
        d = direction[k]
        normal = np.column_stack([-d[:, 1], d[:, 0]])
        return start[k] + (ts[:, 0] - self._arc[k])[:, None] * d + ts[:, 1:2] * normal

    def headings(self) -> np.ndarray:
        """Unit direction ``(K-1, 2)`` of each segment."""
        return self._segments[1]


def axis_of_path(
    path: np.ndarray, straight_tolerance_m: float, smooth_m: float, max_turn_deg: float = 60.0
) -> StreetAxis | None:
    """The street axis a walk ``path (P, 2)`` (m) follows: a straight line when every position lies within
    ``straight_tolerance_m`` of the path's principal line, else the path resampled every metre and
    smoothed over ``smooth_m`` (Gaussian sigma). None for a path shorter than 2 m (a still camera) and
    for a walk whose smoothed heading turns by more than ``max_turn_deg`` (one that crosses the street
    and walks back, or turns a corner: its path is no street's axis)."""
    path = np.asarray(path, float).reshape(-1, 2)
    steps = np.linalg.norm(np.diff(path, axis=0), axis=1)
    if len(path) < 2 or steps.sum() < 2.0:
        return None
    centre = path.mean(axis=0)
    direction = np.linalg.svd(path - centre, full_matrices=False)[2][0]
    if direction @ (path[-1] - path[0]) < 0:
        direction = -direction  # along the walk
    across = (path - centre) @ np.array([-direction[1], direction[0]])
    if np.abs(across).max() <= straight_tolerance_m:
        along = (path - centre) @ direction
        return StreetAxis(np.stack([centre + along.min() * direction, centre + along.max() * direction]))
    arc = np.concatenate([[0.0], np.cumsum(steps)])
    keep = np.concatenate([[True], steps > 1e-6])
    samples = np.arange(0.0, arc[-1], 1.0)
    resampled = np.column_stack([np.interp(samples, arc[keep], path[keep, i]) for i in range(2)])
    smooth = scipy.ndimage.gaussian_filter1d(resampled, sigma=smooth_m, axis=0, mode="nearest")
    step = np.linalg.norm(np.diff(smooth, axis=0), axis=1)
    smooth = smooth[np.concatenate([[True], step > 1e-3])]
    if len(smooth) < 2:
        return None
    headings = np.diff(smooth, axis=0)
    headings /= np.linalg.norm(headings, axis=1, keepdims=True)
    if (headings @ headings.T).min() < np.cos(np.radians(max_turn_deg)):
        return None
    return StreetAxis(smooth)


def axis_through(point: np.ndarray, direction: np.ndarray) -> StreetAxis:
    """A straight axis through ``point (2,)`` along ``direction (2,)`` (any length)."""
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    p = np.asarray(point, float)
    return StreetAxis(np.stack([p - d, p + d]))


def principal_direction(xy: np.ndarray) -> np.ndarray:
    """Unit direction ``(2,)`` of the largest spread of points ``xy (N, 2)`` (N >= 2)."""
    return np.linalg.svd(xy - xy.mean(axis=0), full_matrices=False)[2][0]
