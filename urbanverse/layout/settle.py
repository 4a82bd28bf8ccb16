"""Objects set on the fitted ground: each moved onto the nearest ground its class may stand on, or dropped.

Vehicles stand on the road (their whole width on it); buildings, facades and small buildings behind
the frontage, on the lots, turned to face the road (their front face kept where it was seen);
everything else on walked paving or terrain
(sidewalk, plaza, terrain), never on the road, a crosswalk or a curb ramp. A plaza has no road and no
lots: there, everything stands on the plaza. An object farther than ``max_move_m`` from where its
class may stand is dropped, with a warning. An object whose footprint reaches over ground higher
than the ground under its base (a car at the curb, a bench on a lot beside the raised sidewalk: it
would stand in the curb) is then pushed clear of it, 10 cm at a time, by at most ``max_move_m`` and
without leaving the ground it may stand on.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely
from shapely.ops import nearest_points

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.layout.street_regions import ModelRegion
from urbanverse.scene.ground import footprint

#: L2 classes that stand on building lots, behind the frontage.
ON_LOTS_L2 = frozenset({"buildings", "facades", "small_buildings"})


def allowed_types(category: str, present: set[str]) -> tuple[str, ...]:
    """The region types an object of ``category`` may stand on, given the types ``present`` in the model."""
    cls = get_class(category)
    if cls.l1 == "vehicles" and "road" in present:
        return ("road",)
    if cls.l2 in ON_LOTS_L2 and "terrain" in present and "road" in present:
        return ("terrain",)
    return ("sidewalk", "plaza", "terrain")


def _facing(obj: LiftedObject, road: shapely.Geometry) -> LiftedObject:
    """``obj`` turned to face the nearest point of ``road``, about its front's midpoint when only its
    front was measured (the front stays where it was seen), else about its centre."""
    centre = np.asarray(obj.position[:2], float)
    front = (
        centre + 0.5 * obj.size[0] * np.array([math.cos(obj.yaw), math.sin(obj.yaw)])
        if obj.front_only
        else centre
    )
    target = np.asarray(nearest_points(road, shapely.Point(front))[0].coords[0])
    if np.linalg.norm(target - front) < 1e-6:
        return obj
    yaw = math.atan2(*(target - front)[::-1])
    if obj.front_only:
        centre = front - 0.5 * obj.size[0] * np.array([math.cos(yaw), math.sin(yaw)])
    return dataclasses.replace(obj, yaw=yaw, position=(float(centre[0]), float(centre[1]), obj.position[2]))


def _anchor(obj: LiftedObject) -> np.ndarray:
    """The point that must stand on the allowed ground: a front-only object's front midpoint (just
    behind it), any other object's base centre."""
    xy = np.asarray(obj.position[:2], float)
    if not obj.front_only:
        return xy
    facing = np.array([math.cos(obj.yaw), math.sin(obj.yaw)])
    return xy + (0.5 * obj.size[0] - 0.2) * facing


def settle_objects(
    lifted: LiftedObjects, regions: tuple[ModelRegion, ...], max_move_m: float
) -> tuple[LiftedObjects, list[str]]:
    """``lifted`` with every object moved onto ground its class allows (see the module docstring);
    warnings name each object moved more than 0.5 m or dropped."""
    by_type: dict[str, list[shapely.Polygon]] = {}
    for region in regions:
        by_type.setdefault(region.type, []).append(shapely.Polygon(region.polygon))
    zones = {kind: shapely.union_all(polys) for kind, polys in by_type.items()}
    ground_of: dict[tuple[str, ...], shapely.Geometry] = {}  # the ground each set of types allows, once

    def allowed_ground(category: str) -> shapely.Geometry:
        types = allowed_types(category, set(zones))
        if types not in ground_of:
            ground_of[types] = shapely.union_all([zones[t] for t in types if t in zones])
        return ground_of[types]

    kept, warnings = [], []
    dropped = dict(lifted.dropped)
    for obj in lifted.objects:
        types = allowed_types(obj.category, set(zones))
        if types == ("terrain",):  # a building on its lot (a street was fitted): it faces the road
            obj = _facing(obj, zones["road"])
        zone = allowed_ground(obj.category)
        # A vehicle's whole width stays on the road; other objects keep their anchor 10 cm inside.
        inset = obj.size[1] / 2 + 0.1 if types == ("road",) else 0.1
        inner = zone.buffer(-inset)
        if inner.is_empty:
            inner = zone
        anchor = _anchor(obj)
        point = shapely.Point(anchor)
        if inner.contains(point):
            kept.append(obj)
            continue
        target = np.asarray(nearest_points(inner, point)[0].coords[0]) if not inner.is_empty else anchor
        move = float(np.linalg.norm(target - anchor))
        where = f"track {obj.track_id} ({obj.category})"
        if inner.is_empty or move > max_move_m:
            warnings.append(f"{where}: {move:.1f} m from any {'/'.join(types)} of the fitted ground; dropped")
            dropped["off the fitted ground"] = dropped.get("off the fitted ground", 0) + 1
            continue
        if move > 0.5:
            warnings.append(f"{where}: moved {move:.1f} m onto the {'/'.join(types)} of the fitted ground")
        x, y, z = obj.position
        dx, dy = target - anchor
        kept.append(dataclasses.replace(obj, position=(float(x + dx), float(y + dy), z)))
    steps = _Steps(regions)
    return LiftedObjects(
        objects=tuple(_clear(o, allowed_ground(o.category), steps, max_move_m) for o in kept), dropped=dropped
    ), warnings


class _Steps:
    """The regions' tops (m; a ramp by its highest corner), to find the ground higher than a point's."""

    def __init__(self, regions: tuple[ModelRegion, ...]) -> None:
        self.polygons = [shapely.Polygon(r.polygon) for r in regions]
        self.tops = np.array(
            [max(r.vertex_elevation) if r.vertex_elevation else r.elevation for r in regions]
        )

    def higher_than_at(self, xy: np.ndarray) -> shapely.Geometry:
        """The ground more than 1 cm higher than the top under ``xy (2,)``."""
        point = shapely.Point(xy)
        under = [top for poly, top in zip(self.polygons, self.tops, strict=True) if poly.covers(point)]
        base = max(under, default=0.0)
        return shapely.union_all(
            [p for p, top in zip(self.polygons, self.tops, strict=True) if top > base + 0.01]
        )


def _clear(obj: LiftedObject, own: shapely.Geometry, steps: _Steps, max_move_m: float) -> LiftedObject:
    """``obj`` pushed off the higher ground its footprint reaches over (module docstring), its base
    staying on ``own``, the ground its class may stand on."""
    position = np.asarray(obj.position[:2], float)
    blocked = steps.higher_than_at(_anchor(obj))
    for _ in range(int(max_move_m / 0.1)):
        overlap = footprint(position, obj.yaw, obj.size, margin=0.05).intersection(blocked)
        if overlap.area < 1e-4:
            break
        away = position - np.asarray(overlap.centroid.coords[0])
        step = position + 0.1 * away / max(float(np.linalg.norm(away)), 1e-9)
        if not own.contains(shapely.Point(step)):
            break  # its base stays on its own ground
        position = step
    return dataclasses.replace(obj, position=(float(position[0]), float(position[1]), obj.position[2]))
