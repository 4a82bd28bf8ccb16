"""Buildings scored by their street front: the midpoint and direction of the front a walk sees.

A building's centre lies 5-15 m behind the front a walk sees, and gen measures only that front (its
depth is a prior: :func:`urbanverse.layout.lift.front_anchored`), so buildings and facades
(``FRONT_L2``) are matched and scored at their front's midpoint, not at their footprint's centre.

- A true building's front is its footprint's edge facing the street (the asset's +X face, at half its
  length ahead of its base centre, as long as its width), clipped to what the tour could see: the
  stretch of points on it, at ``eye_height_m`` above its base, that fall inside the image of at least
  ``min_frames`` frames, in front of the camera, within ``max_distance_m`` of it and on the front's
  street side (occlusion is not modelled). A front no frame sees keeps its whole length.
- A generated building's front is its +X face (gen keeps the front where it was seen and sets the
  depth behind it), whole: gen places only the length it measured.

The front's direction is the building's yaw (its outward normal, towards the street).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.render.tour import TourGroundTruth
from urbanverse.scene.record import Scene, SceneObject

#: L2 classes scored by their front.
FRONT_L2 = frozenset({"buildings", "facades"})
#: Spacing (m) of the points sampled along a true front to find its seen stretch.
SAMPLE_STEP_M = 0.25


@dataclasses.dataclass(frozen=True)
class Front:
    """A front segment in the world plane: ``start`` and ``end`` (m), ``yaw`` (rad) of its outward
    normal."""

    start: np.ndarray
    end: np.ndarray
    yaw: float

    @property
    def midpoint(self) -> np.ndarray:
        """The segment's midpoint (x, y) (m)."""
        return (self.start + self.end) / 2

    @property
    def length(self) -> float:
        """The segment's length (m)."""
        return float(np.linalg.norm(self.end - self.start))


def scored_by_front(category: str) -> bool:
    """Whether objects of the L3 class ``category`` are matched and scored by their front."""
    return get_class(category).l2 in FRONT_L2


def whole_front(obj: SceneObject) -> Front:
    """The +X face of ``obj``'s footprint: centred half its length ahead of its base centre along its
    yaw, as long as its width."""
    normal = np.array([math.cos(obj.yaw), math.sin(obj.yaw)])
    along = np.array([-normal[1], normal[0]])
    centre = np.asarray(obj.position[:2], float) + normal * obj.size[0] / 2
    half = along * obj.size[1] / 2
    return Front(centre - half, centre + half, float(obj.yaw))


def seen_front(
    obj: SceneObject,
    tour: TourGroundTruth,
    min_frames: int = 2,
    max_distance_m: float = 20.0,
    eye_height_m: float = 1.5,
) -> Front:
    """The stretch of ``obj``'s whole front that ``tour`` saw (module docstring); the whole front
    where no stretch of it was seen. ``max_distance_m``: planar camera range (m), that of
    :func:`urbanverse.bench.evaluate.seen_objects`; ``eye_height_m``: height (m) above the base of the
    points tested, at most the object's height."""
    front = whole_front(obj)
    n = max(2, int(math.ceil(front.length / SAMPLE_STEP_M)) + 1)
    t = np.linspace(0.0, 1.0, n)
    xy = front.start + t[:, None] * (front.end - front.start)
    points = np.column_stack([xy, np.full(n, obj.position[2] + min(eye_height_m, obj.size[2]))])
    normal = np.array([math.cos(obj.yaw), math.sin(obj.yaw)])
    k = tour.intrinsics
    frames_seeing = np.zeros(n, int)
    for frame in tour.frames:
        pose = np.reshape(frame.world_from_camera, (4, 4))
        camera = pose[:3, 3]
        local = (points - camera) @ pose[:3, :3]  # world -> camera (OpenCV: x right, y down, z ahead)
        depth = local[:, 2]
        ahead = depth > 0.1
        u = np.where(ahead, k.fx * local[:, 0] / np.where(ahead, depth, 1.0) + k.cx, -1.0)
        v = np.where(ahead, k.fy * local[:, 1] / np.where(ahead, depth, 1.0) + k.cy, -1.0)
        in_image = ahead & (u >= 0) & (u < k.width) & (v >= 0) & (v < k.height)
        near = np.linalg.norm(xy - camera[:2], axis=1) <= max_distance_m
        street_side = (camera[:2] - xy) @ normal > 0
        frames_seeing += in_image & near & street_side
    seen = np.flatnonzero(frames_seeing >= min_frames)
    if len(seen) == 0:
        return front
    return Front(xy[seen[0]], xy[seen[-1]], front.yaw)


def anchors(scene: Scene, tour: TourGroundTruth | None = None) -> np.ndarray:
    """Where each of ``scene``'s objects is matched and scored, ``(N, 2)`` (m, the scene's frame):
    a building's front midpoint (with ``tour``: of the front it saw, :func:`seen_front`; without: of
    its whole front, as gen places it) and any other object's base centre."""
    out = np.array([o.position[:2] for o in scene.objects], float).reshape(-1, 2)
    for i, obj in enumerate(scene.objects):
        if scored_by_front(obj.category):
            out[i] = (seen_front(obj, tour) if tour is not None else whole_front(obj)).midpoint
    return out
