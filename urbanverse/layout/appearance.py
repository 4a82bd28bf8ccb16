"""What object proposals look like: class log-probabilities from their crops in the keyframes.

A proposal (:mod:`urbanverse.layout.proposals`) is a box of dense points: its footprint and height
over the ground plane. The box's eight corners, projected into the ``views`` registered keyframes
nearest to it that its points came from, bound a crop in each; the crop classifier
(:mod:`urbanverse.perception.crop_classifier`) gives each crop log-probabilities over its classes,
and their mean over the views (the log of the geometric mean probability) is the proposal's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from urbanverse.perception.crop_classifier import CropClassifier, crop
from urbanverse.recon.geometry import project
from urbanverse.recon.record import Reconstruction

#: Nearer than this (m along the optical axis) a corner is taken as behind the camera.
MIN_DEPTH_M = 0.3


def box_corners(
    xy: np.ndarray, axis: np.ndarray, long_m: float, short_m: float, height_m: float
) -> np.ndarray:
    """``(8, 3)`` corners of a box standing on z = 0: centre ``xy (2,)``, long side along unit
    ``axis (2,)``, sides and height in metres."""
    across = np.array([-axis[1], axis[0]])
    foot = [xy + a * 0.5 * long_m * axis + b * 0.5 * short_m * across for a in (-1, 1) for b in (-1, 1)]
    return np.array([[*f, z] for f in foot for z in (0.0, height_m)])


def _nearest_views(recon: Reconstruction, xy: np.ndarray, owners: Sequence[int]) -> list[int]:
    """The registered keyframes of ``owners``, nearest to the point ``xy (2,)`` (m) first."""
    return sorted(
        (i for i in owners if recon.keyframes[i].registered),
        key=lambda i: float(np.linalg.norm(xy - np.asarray(recon.keyframes[i].position[:2]))),
    )


def top_projections(
    recon: Reconstruction, xy: np.ndarray, height_m: float, owners: Sequence[int], views: int
) -> list[tuple[int, float, float, float]]:
    """``(keyframe, u, v, depth)`` of the point ``height_m`` above ``xy (2,)`` in the ``views``
    registered keyframes of ``owners`` nearest to it, skipping a keyframe where the point lies outside
    the frame's columns, below its bottom, or behind the camera (pixels at the working size, depth in
    m): an object's top either shows in such a view or runs out past the frame's top."""
    k = recon.intrinsics
    out = []
    for index in _nearest_views(recon, xy, owners)[:views]:
        uv, depth = project(recon, index, np.array([[*xy, height_m]]))
        (u, v), d = uv[0], float(depth[0])
        if np.isfinite(u) and 0 <= u < k.width and v < k.height and d > MIN_DEPTH_M:
            out.append((index, float(u), float(v), d))
    return out


def view_boxes(
    recon: Reconstruction, corners: np.ndarray, owners: Sequence[int], views: int, min_inside: float = 0.5
) -> list[tuple[int, tuple[float, float, float, float]]]:
    """``(keyframe, pixel box)`` of ``corners (8, 3)`` in the ``views`` registered keyframes of
    ``owners`` nearest to them, skipping a keyframe where a corner is behind the camera or under
    ``min_inside`` of the box's area lies in the frame."""
    k = recon.intrinsics
    out = []
    for index in _nearest_views(recon, corners.mean(axis=0)[:2], owners):
        uv, depth = project(recon, index, corners)
        if (depth < MIN_DEPTH_M).any():
            continue
        x0, y0 = uv.min(axis=0)
        x1, y1 = uv.max(axis=0)
        inside = max(0.0, min(x1, k.width) - max(x0, 0)) * max(0.0, min(y1, k.height) - max(y0, 0))
        if inside < min_inside * (x1 - x0) * (y1 - y0):
            continue
        out.append((index, (float(x0), float(y0), float(x1), float(y1))))
        if len(out) == views:
            break
    return out


def class_log_probabilities(
    boxes: Sequence[Sequence[tuple[int, tuple[float, float, float, float]]]],
    images: Mapping[int, np.ndarray],
    classifier: CropClassifier,
) -> list[dict[str, float] | None]:
    """Per proposal, the mean crop log-probability of each class over its ``(keyframe, box)`` views
    (RGB ``images`` by keyframe), or None when no view gave a crop. All crops go through the
    classifier in one batch."""
    crops, owner = [], []
    for j, views in enumerate(boxes):
        for index, box in views:
            c = crop(images[index], box, classifier.pad) if index in images else None
            if c is not None:
                crops.append(c)
                owner.append(j)
    out: list[dict[str, float] | None] = [None] * len(boxes)
    if not crops:
        return out
    log_p, owner = classifier.log_probabilities(crops), np.array(owner)
    for j in np.unique(owner):
        mean = log_p[owner == j].mean(axis=0)
        out[j] = dict(zip(classifier.classes, (float(v) for v in mean), strict=True))
    return out
