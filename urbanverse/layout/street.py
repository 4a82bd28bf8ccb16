"""The street an object stands on, from the camera path and the road the ground stage saw: its local
direction, which side the road lies on, and the yaw an object takes from them.

The street runs along the camera path (people film walking along it) and the road lies on the side
of the path where the ground stage saw road. Vehicles lie along the street (right-hand traffic: the
road's middle on their left); street furniture and buildings face the road; other street furniture
is set square to the curb.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Literal

import numpy as np

from urbanverse.assets.taxonomy import get_class

#: L1 classes lying along the street (front along the driving direction).
ALONG_STREET_L1 = frozenset({"vehicles"})


def along_street(category: str) -> bool:
    """Whether objects of ``category`` lie along the street (vehicles: ``ALONG_STREET_L1``)."""
    return get_class(category).l1 in ALONG_STREET_L1


#: L2 classes that face the street (front, +X of the asset, towards the road).
FACING_L2 = frozenset(
    {
        "seating", "waste_containers", "shelters", "kiosks_and_stalls", "advertising", "public_information",
        "postal",
        "buildings", "facades", "small_buildings", "bicycle_parking",
    }
)  # fmt: skip
YawSource = Literal["street_axis", "side_on", "faces_street", "square_to_street"]


def path_directions(path: np.ndarray, reach: int = 3) -> np.ndarray:
    """Unit direction ``(K, 2)`` of a camera path ``(K, 2)`` at each position, from ``reach``
    positions back to ``reach`` ahead; +x where the path does not move (a single view)."""
    index = np.arange(len(path))
    ahead = path[np.minimum(index + reach, len(path) - 1)] - path[np.maximum(index - reach, 0)]
    length = np.linalg.norm(ahead, axis=1, keepdims=True)
    return np.where(length > 1e-9, ahead / np.maximum(length, 1e-9), [1.0, 0.0])


@dataclasses.dataclass(frozen=True)
class StreetFrame:
    """The camera path ``(P, 2)`` and the road's cells ``(R, 2)`` (m): local street axis and road side."""

    path: np.ndarray
    road: np.ndarray
    curb_band_m: float = 0.75
    """Road cells within this of the nearest one make the stretch of road edge an object faces."""
    side_window_m: float = 10.0
    """Road cells within this along the street of the path position nearest an object say which side
    of it the road lies on (the median across the street of theirs: stray road cells beside it
    turned benches away from the street)."""
    min_half_road_m: float = 3.0
    """The road's middle lies at least this beyond its near edge (a parking lane and half a traffic
    lane): where only the near strip of the road was seen, its median put a car parked at the curb
    beyond the middle and turned it against the traffic."""

    @functools.cached_property
    def directions(self) -> np.ndarray:
        """The path's unit direction ``(P, 2)`` at each position (:func:`path_directions`), once per frame."""
        return path_directions(self.path)

    def axis_and_road_side(
        self, xy: np.ndarray, along_path: bool = False, seen_from: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Unit street direction at ``xy`` and the unit normal pointing from ``xy`` across to the road.

        The axis follows the camera path, and the normal points to the side where the road is. But
        where the path runs towards the nearest stretch of road edge (more than 45 degrees off it: the
        camera crosses the street or turns a corner), an object beside the road faces that edge and
        its axis runs along it, unless ``along_path``: a vehicle parks along the street the camera
        walks, and the road seen (near the path) says little of the street's direction at a car 10 m
        ahead (that edge would turn parked cars across the street).
        Such a vehicle's axis is the walking direction where the camera was when it saw it (camera
        centres ``seen_from (V, 2)``), not at the path's nearest point: past the end of a walk that
        turns to cross, or at a corner, that point heads across the street.
        """
        k = int(np.argmin(np.linalg.norm(self.path - xy, axis=1)))
        axis = self.directions[k]
        if along_path and seen_from is not None and len(seen_from):
            axis = self._heading_when_seen(seen_from)
        normal = np.array([-axis[1], axis[0]])
        if not len(self.road):  # no road seen: the road is beyond the camera path, seen from the object
            return axis, (np.sign((self.path[k] - xy) @ normal) or 1.0) * normal
        distance = np.linalg.norm(self.road - xy, axis=1)
        offset = self.road - self.path[k]
        beside = np.abs(offset @ axis) <= self.side_window_m
        if beside.any():  # the road's middle across the street, from the road seen along this stretch
            across = offset[beside] @ normal
            towards = np.sign(np.median(across)) or 1.0
            reach = towards * across  # distances from the path into the road
            near_edge = float(np.percentile(reach[reach > 0], 5)) if (reach > 0).any() else 0.0
            middle_reach = max(float(np.median(reach)), near_edge + self.min_half_road_m)
            middle = towards * middle_reach - (xy - self.path[k]) @ normal
        else:
            middle = (self.road[np.argsort(distance)[:50]].mean(axis=0) - xy) @ normal
        side = (np.sign(middle) or 1.0) * normal
        if along_path or distance.min() <= self.curb_band_m:
            return axis, side
        to_road = self.road[distance <= distance.min() + self.curb_band_m].mean(axis=0) - xy
        to_road = to_road / np.linalg.norm(to_road)
        if abs(to_road @ axis) < math.cos(math.radians(45.0)):
            return axis, side  # the path runs along the road edge: its axis is the steadier
        along = np.array([-to_road[1], to_road[0]])
        return (along if along @ axis >= 0 else -along), to_road

    def _heading_when_seen(self, eyes: np.ndarray) -> np.ndarray:
        """Unit mean walking direction at the path positions nearest the camera centres ``eyes (V, 2)``."""
        nearest = np.argmin(np.linalg.norm(self.path[None] - eyes[:, None], axis=2), axis=1)
        headings = self.directions[nearest]
        total = (headings * np.where(headings @ headings[0] >= 0, 1.0, -1.0)[:, None]).sum(axis=0)
        return total / max(float(np.linalg.norm(total)), 1e-9)


def orient(category: str, axis: np.ndarray, to_road: np.ndarray) -> tuple[float, YawSource]:
    cls = get_class(category)
    if cls.l1 in ALONG_STREET_L1:
        # Right-hand traffic: a vehicle drives with the road's centre on its left.
        away = -to_road
        direction = axis if axis[0] * away[1] - axis[1] * away[0] < 0 else -axis
        return math.atan2(direction[1], direction[0]), "street_axis"
    if cls.l2 in FACING_L2:
        return math.atan2(to_road[1], to_road[0]), "faces_street"
    # No front to turn: set square to the curb, as street furniture is laid out (a yaw of 0 would
    # skew it by however the reconstruction's frame happens to lie).
    return math.atan2(to_road[1], to_road[0]), "square_to_street"
