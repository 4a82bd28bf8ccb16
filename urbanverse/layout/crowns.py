"""Trees placed by their crowns' dense points, not by their boxes' bottom edges.

The vegetation detector boxes a crown; a trunk joins the box only where a vertical strip was found under it
(:mod:`urbanverse.perception.vegetation`), and a tree's cone of roots or a trunk in the crown's shade often
gives none. The bottom of a crown's box then lies a metre or two above the ground, and its ray meets the
ground far behind the tree, metres from where the tree stands. The crown itself is in the dense points
(:func:`urbanverse.recon.depth.dense_cloud`): the green points that a track's keyframes triangulated inside
its boxes, of those the nearest (the crown in front, not a tree or hedge behind it), give the crown's centre,
over the trunk for any tree the walk passes.

Lifting measured the tree's size from its boxes at the distance it cast them to: a moved tree's size
is scaled by the ratio of the distances from its keyframes, and a tree that the detector named only
"tree" takes the kind that size fits (:func:`urbanverse.layout.lift.tree_class_from_shape`: cast 10 m
too far, a young street tree would measure as tall as a broadleaf one). The height is not measured
again from where the boxes' top edges pass over the trunk: a crown's box top is a rough edge.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.lift import (
    GENERIC_TREE_LABELS,
    SHAPED_TREES,
    LiftedObject,
    LiftedObjects,
    tree_class_from_shape,
)
from urbanverse.perception.record import Tracks
from urbanverse.perception.vegetation import VEGETATION_LABELS
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.geometry import project
from urbanverse.recon.record import Reconstruction


@dataclasses.dataclass(frozen=True, kw_only=True)
class CrownCfg:
    """Crown fitting (lengths in m): the green points ``min_height_m`` or more above the ground plane
    inside a track's boxes, of each box those within ``depth_band_m`` of its ``near_percentile``
    depth; a tree moves to their median when there are ``min_points`` from ``min_views`` keyframes."""

    enabled: bool = True
    """Move trees to their crowns' dense points; off keeps lifting's placement from the box bottoms."""
    min_height_m: float = 1.0
    """Green points at least this high (m) above the ground plane count as crown: lower green is hedge
    or grass."""
    near_percentile: float = 20.0
    """Percentile of a box's green-point depths taken as the crown's front (a low one: the crown in
    front, not a tree or hedge seen behind it through the box)."""
    depth_band_m: float = 1.5
    """Points up to this (m) beyond that front depth belong to the crown: about a street tree's crown
    radius."""
    min_points: int = 30
    """Fewest crown points to move a tree: fewer are as likely stray green points as a crown."""
    min_views: int = 2
    """Fewest keyframes that must give crown points: one view's depth can be noise streaked along its
    rays."""


def crown_points(
    track_boxes: list[tuple[int, tuple[float, float, float, float]]],
    recon: Reconstruction,
    xyz: np.ndarray,
    keyframe: np.ndarray,
    cfg: CrownCfg,
) -> tuple[np.ndarray, int]:
    """The crown points ``(M, 3)`` among green points ``xyz (N, 3)`` (each triangulated in keyframe
    ``keyframe (N,)``) for a track's ``(keyframe, box xyxy px)`` observations, and the number of
    keyframes that gave some."""
    out, views = [], 0
    for index, (x0, y0, x1, y1) in track_boxes:
        own = np.flatnonzero(keyframe == index)
        if not len(own) or not recon.keyframes[index].registered:
            continue
        uv, depth = project(recon, index, xyz[own])
        inside = (uv[:, 0] >= x0) & (uv[:, 0] <= x1) & (uv[:, 1] >= y0) & (uv[:, 1] <= y1) & (depth > 0)
        if not inside.any():
            continue
        d = depth[inside]
        near = d <= np.percentile(d, cfg.near_percentile) + cfg.depth_band_m
        out.append(xyz[own[inside][near]])
        views += 1
    return (np.concatenate(out) if out else np.zeros((0, 3))), views


def place_by_crowns(
    lifted: LiftedObjects,
    tracks: Tracks,
    recon: Reconstruction,
    cloud: DenseCloud,
    green: np.ndarray,
    cfg: CrownCfg,
) -> LiftedObjects:
    """``lifted`` with each plant that the vegetation detector boxed (its label one of
    ``VEGETATION_LABELS``) moved to its crown's centre (module docstring); ``green (N,)``: which points
    of ``cloud`` are vegetation-coloured. Other detectors' boxes (YOLO's, ground-truth boxes) reach
    down to the trunk's foot, whose ground contact stands."""
    if not cfg.enabled:
        return lifted
    keep = green & (cloud.xyz[:, 2] >= cfg.min_height_m)
    xyz, keyframe = cloud.xyz[keep], cloud.keyframe[keep]
    boxes = {t.track_id: [(o.frame_index, tuple(o.box)) for o in t.observations] for t in tracks.tracks}
    out: list[LiftedObject] = []
    for obj in lifted.objects:
        crown = obj.label in VEGETATION_LABELS and get_class(obj.category).l1 == "vegetation"
        if crown and obj.track_id in boxes:
            points, views = crown_points(boxes[obj.track_id], recon, xyz, keyframe, cfg)
            if len(points) >= cfg.min_points and views >= cfg.min_views:
                obj = _moved(obj, np.median(points[:, :2], axis=0), boxes[obj.track_id], recon)
        out.append(obj)
    return dataclasses.replace(lifted, objects=tuple(out))


def _moved(obj: LiftedObject, xy: np.ndarray, track_boxes: list, recon: Reconstruction) -> LiftedObject:
    """``obj`` moved to ``xy (2,)``, its size scaled by the ratio of the distances at which its boxes
    now and before put it (a box's extent in metres grows with the distance it is cast to), and a
    tree a detector named only "tree" of the kind that size fits."""
    eyes = np.array(
        [recon.keyframes[i].position[:2] for i, _ in track_boxes if recon.keyframes[i].registered]
    )
    before = np.linalg.norm(eyes - np.asarray(obj.position[:2]), axis=1)
    ratio = float(np.median(np.linalg.norm(eyes - xy, axis=1) / np.maximum(before, 0.5)))
    category, size = obj.category, np.asarray(obj.size, float) * ratio
    if category in SHAPED_TREES and obj.label.lower() in GENERIC_TREE_LABELS:
        category = tree_class_from_shape(category, float(size[2]), float(size[0]))
    cls = get_class(category)
    size = np.clip(size, cls.size_min, cls.size_max)
    return dataclasses.replace(
        obj,
        category=category,
        position=(float(xy[0]), float(xy[1]), obj.position[2]),
        size=tuple(float(v) for v in size),
    )
