"""The street model fitted to ground evidence: parameters recovered from a known street, one piece with
no holes over the walk plus its margin, curved walks, plazas, crossings, and objects set on the ground."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.layout.settle import settle_objects
from urbanverse.layout.street_axis import StreetAxis, axis_of_path
from urbanverse.layout.street_fit import Evidence, StreetFitCfg, fit_ground
from urbanverse.procgen.layout import StreetModel, street_layout

CELL = 0.2
#: Evidence class per procgen region kind (ramps are seen as walked paving).
CLASS = {"road": 1, "sidewalk": 2, "ramp": 2, "crosswalk": 3, "terrain": 4, "plaza": 2}


def _evidence(model: StreetModel, path: np.ndarray, seen_m: float, **extra) -> Evidence:
    """The class grid a walk would see of ``model`` (straight, along +X): every cell within ``seen_m``
    of the path, labelled with the region under it."""
    origin = np.array([model.start, -40.0])
    h, w = int(80 / CELL), int((model.end - model.start) / CELL)
    gx, gy = np.meshgrid(origin[0] + (np.arange(w) + 0.5) * CELL, origin[1] + (np.arange(h) + 0.5) * CELL)
    classes = np.zeros((h, w), np.uint8)
    for region in street_layout(model).regions:
        classes[shapely.contains_xy(shapely.Polygon(region.polygon), gx, gy)] = CLASS[region.kind]
    near = shapely.contains_xy(shapely.LineString(path).buffer(seen_m), gx, gy)
    classes[~near] = 0
    empty = np.zeros((0, 2))
    return Evidence(
        classes=classes,
        origin=origin,
        cell_m=CELL,
        path=path,
        fronts=extra.get("fronts", empty),
        vehicles=extra.get("vehicles", empty),
        objects=extra.get("objects", empty),
    )


def _union(regions):
    return shapely.union_all([shapely.Polygon(r.polygon) for r in regions])


def _assert_whole(regions, must_cover: shapely.Geometry) -> None:
    """One piece, no holes, no overlaps, valid simple polygons, covering ``must_cover``."""
    polys = [shapely.Polygon(r.polygon) for r in regions]
    assert all(p.is_valid and not p.interiors and p.exterior.is_ccw for p in polys)
    union = _union(regions)
    assert isinstance(union, shapely.Polygon), f"{len(getattr(union, 'geoms', []))} pieces"
    assert not union.interiors
    assert sum(p.area for p in polys) == pytest.approx(union.area, rel=1e-3)  # no overlaps
    assert union.buffer(1e-3).covers(must_cover)


def test_a_walk_along_a_sidewalk_recovers_the_street_it_saw():
    truth = StreetModel(start=-60, end=60, lanes=2, parking=(True, True), sidewalk=(4.0, 4.0))
    path = np.column_stack([np.linspace(-20, 20, 40), np.full(40, -5.4 - 2.0)])  # on the south sidewalk
    cars = np.array([[-8.0, -4.3], [5.0, 4.3]])
    fit = fit_ground(_evidence(truth, path, 14.0, vehicles=cars), StreetFitCfg())
    assert fit.kind == "street" and fit.agreement["street"] > 0.9 > fit.agreement["plaza"]
    street = fit.street
    assert (street.lanes, street.parking, street.road_width_m) == (2, (True, True), pytest.approx(10.8))
    assert street.far_curb_seen and street.sidewalk_m == pytest.approx((4.0, 4.0), abs=0.3)
    _assert_whole(fit.regions, shapely.LineString(path).buffer(20.0))
    road = shapely.union_all([shapely.Polygon(r.polygon) for r in fit.regions if r.type == "road"])
    assert road.contains(shapely.LineString([(-20, -5.2), (20, -5.2), (20, 5.2), (-20, 5.2)]))
    assert 0.0 < fit.inferred_share < 1.0
    assert all(r.inferred_share == 1.0 for r in fit.regions if r.id.startswith("lots_north"))


def test_a_curved_walk_bends_the_street_and_keeps_it_one_piece():
    angles = np.linspace(-0.3, 0.3, 60)
    path = np.column_stack(
        [100 * np.sin(angles), 100 - 100 * np.cos(angles)]
    )  # an arc, radius 100 m, turning 34 deg
    axis = axis_of_path(path, straight_tolerance_m=2.0, smooth_m=6.0)
    assert axis is not None and len(axis.points) > 2
    # The road 2-12 m to the walk's right, seen within 14 m.
    origin = np.array([-45.0, -30.0])
    gx, gy = np.meshgrid(origin[0] + (np.arange(450) + 0.5) * CELL, origin[1] + (np.arange(400) + 0.5) * CELL)
    ts = axis.to_street(np.column_stack([gx.ravel(), gy.ravel()]))
    s = ts[:, 1].reshape(gx.shape)
    t = ts[:, 0].reshape(gx.shape)
    classes = np.where((s < -2.0) & (s > -12.0), 1, 2).astype(np.uint8)
    classes[(s < -2.0) & (s > -12.0) & (t > 28.0) & (t < 32.0)] = 3  # a crossing 30 m along the walk
    classes[np.abs(s) > 14.0] = 0
    evidence = Evidence(classes, origin, CELL, path, np.zeros((0, 2)), np.zeros((0, 2)), np.zeros((0, 2)))
    fit = fit_ground(evidence, StreetFitCfg())
    assert fit.kind == "street"
    assert fit.street.measured_road_width_m == pytest.approx(10.0, abs=0.6)
    (crossing,) = [shapely.Polygon(r.polygon).centroid for r in fit.regions if r.type == "crosswalk"]
    assert axis.to_street(np.array([[crossing.x, crossing.y]]))[0, 0] == pytest.approx(30.0, abs=1.0)
    ramps = [r for r in fit.regions if r.type == "ramp"]
    assert len(ramps) == 2  # bent with the street, so in one piece with it
    assert all(0.0 <= h <= 0.15 for r in ramps for h in r.vertex_elevation)
    _assert_whole(fit.regions, shapely.LineString(path).buffer(20.0))


def test_paving_without_road_is_a_plaza_and_a_still_camera_is_covered_around_it():
    truth = StreetModel(start=-40, end=40, lanes=1, parking=(False, False), sidewalk=(4.0, 4.0))
    evidence = _evidence(truth, np.array([[0.0, 8.0], [0.0, 8.1]]), 3.0)  # a spot on the north sidewalk
    evidence = Evidence(
        evidence.classes, evidence.origin, CELL, np.array([[0.0, 8.0]]), *([np.zeros((0, 2))] * 3)
    )
    fit = fit_ground(evidence, StreetFitCfg(margin_m=10.0))
    assert fit.kind == "plaza" and fit.street is None
    _assert_whole(fit.regions, shapely.Point(0.0, 8.0).buffer(10.0))


def test_crosswalks_seen_across_the_road_become_crossings_with_ramps():
    truth = StreetModel(
        start=-60, end=60, lanes=2, parking=(False, False), sidewalk=(4.0, 4.0), crossings=(-10.0, 15.0)
    )
    path = np.column_stack([np.linspace(-30, 30, 50), np.full(50, -3.2 - 2.0)])
    fit = fit_ground(_evidence(truth, path, 14.0), StreetFitCfg())
    assert len(fit.street.crossings_m) == 2
    centres = sorted(shapely.Polygon(r.polygon).centroid.x for r in fit.regions if r.type == "crosswalk")
    assert centres == pytest.approx([-10.0, 15.0], abs=0.5)
    ramps = [r for r in fit.regions if r.type == "ramp"]
    assert len(ramps) == 4 and all(max(r.vertex_elevation) == pytest.approx(0.15) for r in ramps)
    _assert_whole(fit.regions, shapely.LineString(path).buffer(20.0))


def test_a_layout_with_two_crossings_tiles_its_street_without_overlaps():
    layout = street_layout(
        StreetModel(
            start=-50, end=50, lanes=3, parking=(True, False), sidewalk=(3.0, 5.0), crossings=(-20.0, 20.0)
        )
    )
    polys = [shapely.Polygon(r.polygon) for r in layout.regions]
    union = shapely.union_all(polys)
    assert sum(p.area for p in polys) == pytest.approx(union.area)
    assert isinstance(union, shapely.Polygon) and not union.interiors
    assert len(layout.crosswalks) == 2 and len(layout.curb_lines) == 6


def _object(category: str, xy, size=(1.8, 0.6, 0.9), yaw=0.0, front_only=False, track=1) -> LiftedObject:
    return LiftedObject(
        track_id=track, category=category, label=category, score=0.9, position=(*xy, 0.0), yaw=yaw,
        yaw_source="street_axis", size=size, observations=5, spread_m=0.1, front_only=front_only,
    )  # fmt: skip


def test_objects_move_onto_the_ground_their_class_stands_on_or_are_dropped():
    truth = StreetModel(start=-60, end=60, lanes=2, parking=(True, True), sidewalk=(4.0, 4.0))
    path = np.column_stack([np.linspace(-20, 20, 40), np.full(40, -7.4)])
    fit = fit_ground(_evidence(truth, path, 14.0), StreetFitCfg())
    objects = LiftedObjects(
        objects=(
            _object("sedan", (0.0, -6.0), size=(4.5, 1.8, 1.5), track=1),  # on the south sidewalk
            _object("bench", (3.0, 2.0), track=2),  # on the road, 3.4 m from the curb
            _object("trash_bin", (5.0, -7.0), track=3),  # already on the sidewalk
            _object(
                "building_facade",
                (0.0, -9.0),
                size=(8.0, 12.0, 9.0),
                yaw=math.pi / 2,
                front_only=True,
                track=4,
            ),
            _object("fire_hydrant", (0.0, 35.0), track=5),  # far beyond any ground it may stand on
        ),
        dropped={},
    )
    settled, warnings = settle_objects(objects, fit.regions, max_move_m=5.0)
    by_track = {o.track_id: o for o in settled.objects}
    zones = {
        kind: _union([r for r in fit.regions if r.type == kind]) for kind in ("road", "sidewalk", "terrain")
    }
    car = by_track[1]
    assert zones["road"].contains(shapely.Point(car.position[:2]).buffer(0.85))
    assert not zones["road"].contains(shapely.Point(by_track[2].position[:2]))
    assert by_track[3].position == objects.objects[2].position
    front = np.asarray(by_track[4].position[:2]) + 4.0 * np.array([0.0, 1.0])
    assert zones["terrain"].buffer(0.3).contains(shapely.Point(front))  # its front behind the frontage
    assert 5 not in by_track and settled.dropped == {"off the fitted ground": 1}
    assert any("track 5" in w and "dropped" in w for w in warnings)
    assert any("track 1" in w and "moved" in w for w in warnings)


def test_street_coordinates_round_trip_on_a_bent_axis():
    axis = StreetAxis(np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 5.0], [30.0, 15.0]]))
    ts = np.array([[-5.0, 2.0], [3.0, -1.0], [12.0, 1.5], [25.0, -2.0], [40.0, 3.0]])
    assert np.allclose(axis.to_street(axis.to_world(ts)), ts, atol=1e-6)
