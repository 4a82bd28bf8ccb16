"""Which way lifted objects face: street furniture towards the nearest road edge even where the camera
crosses the street, parked cars along the street, and a vehicle in a single photo across the line of
sight when its box says so."""

from __future__ import annotations

import math

import numpy as np
import pytest

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.ground import GroundLayout, GroundRegionEstimate, road_points
from urbanverse.layout.lift import TrackView, _seen_side_on
from urbanverse.layout.street import StreetFrame, orient

# A road band 2 m < y < 9 m along x, sampled every 0.5 m like the ground stage's road points.
ROAD = np.stack(np.meshgrid(np.arange(-20, 20, 0.5), np.arange(2.25, 9, 0.5)), axis=-1).reshape(-1, 2)


def test_furniture_beside_the_road_faces_it_where_the_path_crosses_the_street():
    crossing = np.linspace([-4.0, -1.0], [4.0, 11.0], 13)  # across the street at 56 degrees
    axis, to_road = StreetFrame(crossing, ROAD).axis_and_road_side(np.array([0.0, -1.0]))
    assert to_road == pytest.approx([0.0, 1.0], abs=0.02)
    assert axis == pytest.approx([1.0, 0.0], abs=0.02)  # along the curb, in the walking direction
    # Across the street the road lies the other way.
    _, to_road = StreetFrame(crossing, ROAD).axis_and_road_side(np.array([3.0, 10.5]))
    assert to_road == pytest.approx([0.0, -1.0], abs=0.02)


def test_on_the_road_the_axis_follows_the_path():
    path = np.linspace([-10.0, 0.0], [10.0, 0.0], 11)
    axis, to_road = StreetFrame(path, ROAD).axis_and_road_side(np.array([0.0, 3.0]))
    assert axis == pytest.approx([1.0, 0.0]) and to_road == pytest.approx([0.0, 1.0])


def test_stray_road_cells_beside_a_bench_do_not_turn_it_from_the_street():
    """A patch of grey paving behind a bench, taken for road, lies nearer it than the street does; the
    road seen along this stretch still says the street is on the other side."""
    path = np.linspace([-10.0, 0.0], [10.0, 0.0], 11)
    stray = np.stack(np.meshgrid(np.arange(-3.0, 3.0, 0.5), np.arange(-4.5, -2.5, 0.5)), axis=-1).reshape(
        -1, 2
    )
    bench = np.array([0.0, -1.5])  # 1 m from the stray patch (48 cells), 3.75 m from the road
    _, to_road = StreetFrame(path, np.vstack([ROAD, stray])).axis_and_road_side(bench)
    assert to_road == pytest.approx([0.0, 1.0])


def test_a_car_at_the_curb_drives_with_the_traffic_when_only_the_near_strip_of_road_was_seen():
    """The walk (y = 0, along +x) sees the road only from its curb (y = 1.75 m) to y = 4.75 m, and a few
    grey cells behind it; a car parked at the curb (y = 3.7 m) lies beyond that strip's median. The
    road's middle is still farther out (right-hand traffic: the car heads +x, the middle on its left)."""
    path = np.linspace([-10.0, 0.0], [10.0, 0.0], 11)
    strip = np.stack(np.meshgrid(np.arange(-10, 10, 0.5), np.arange(2.0, 4.75, 0.5)), axis=-1).reshape(-1, 2)
    behind = np.stack(np.meshgrid(np.arange(-2, 2, 0.5), np.arange(-2.0, -1.0, 0.5)), axis=-1).reshape(-1, 2)
    car = np.array([0.0, 3.7])
    axis, to_road = StreetFrame(path, np.vstack([strip, behind])).axis_and_road_side(car, along_path=True)
    assert to_road == pytest.approx([0.0, 1.0])
    yaw, _ = orient("sedan", axis, to_road)
    assert math.cos(yaw) == pytest.approx(1.0)


def test_a_vehicle_past_the_end_of_the_walk_lies_along_the_street_it_was_seen_down():
    """The walk turns across the street at its end; a car 15 m beyond was seen from the straight part,
    looking down the street: it lies along x, not along the last steps of the walk."""
    path = np.vstack([np.linspace([-20.0, 0.0], [0.0, 0.0], 11), np.linspace([0.5, 1.0], [1.0, 8.0], 5)])
    car = np.array([15.0, 4.0])
    seen_from = path[4:9]
    axis, _ = StreetFrame(path, ROAD).axis_and_road_side(car, along_path=True, seen_from=seen_from)
    assert axis == pytest.approx([1.0, 0.0], abs=0.02)
    axis, _ = StreetFrame(path, ROAD).axis_and_road_side(car, along_path=True)  # the nearest steps
    assert abs(axis[1]) > 0.9


def _view(width: float = float("nan"), sides_cut: int = 0) -> TrackView:
    return TrackView(np.zeros(3), np.zeros(3), height=1.5, top_cut=False, width=width, sides_cut=sides_cut)


def test_a_vehicle_is_side_on_when_its_box_is_wide_or_runs_out_of_the_frame():
    sedan = np.array([4.6, 1.8, 1.45])  # seen at 45 degrees its box is 4.5 m wide
    assert not _seen_side_on([_view(width=2.0)], sedan)  # end-on
    assert _seen_side_on([_view(width=4.8)], sedan)
    assert _seen_side_on([_view(sides_cut=2)], sedan)  # a bus filling the photo
    assert not _seen_side_on([_view(sides_cut=1)], sedan)  # cut on one side: its width is unknown


def test_parked_cars_ahead_lie_along_the_street_on_the_road(tmp_path):
    """True poses and boxes, 6 s into a residential street whose parked cars stand 10-30 m ahead, the
    road seen (and known a curb lower) only along the first 10 m: the cars still lie along the path on
    the road. Before: turned 80-90 degrees towards that stretch of road edge, 1.8-3 m off."""
    from urbanverse.bench.oracle import oracle_detections, oracle_reconstruction, oracle_tracks
    from urbanverse.layout.lift import run_lifting
    from urbanverse.procgen.street import StreetCfg, generate_street
    from urbanverse.render.tour import TourCfg, run_render_tour
    from urbanverse.scene.record import load_scene
    from urbanverse.video.stage import VideoCfg, run_video

    generate_street(StreetCfg(style="residential", seed=1), tmp_path / "street")  # road |y| < 5.4 m
    gt = run_render_tour(
        tmp_path / "street", tmp_path / "walk.mp4", TourCfg(seconds=6.0, width=480, height=270)
    )
    kfs = run_video(tmp_path / "walk.mp4", tmp_path / "video", VideoCfg(max_gap_s=0.5))
    dets = oracle_detections(gt, kfs)
    seen = np.stack(np.meshgrid(np.arange(-40, -30, 0.5), np.arange(-5.25, 5.4, 0.5)), axis=-1).reshape(-1, 2)

    def surface(xy: np.ndarray) -> np.ndarray:  # the road a curb below the pavement, where it was seen
        return np.where((xy[:, 0] < -30) & (np.abs(xy[:, 1]) < 5.4), -0.15, 0.0)

    lifted = run_lifting(oracle_tracks(dets), dets, oracle_reconstruction(gt, kfs), seen, None, surface)
    truth = {o.id: o for o in load_scene(tmp_path / "street").objects}
    cars = [
        (o, truth[o.label]) for o in lifted.objects if get_class(truth[o.label].category).l1 == "vehicles"
    ]
    assert len(cars) >= 2, [o.category for o in lifted.objects]
    for obj, true in cars:
        turn = abs(math.degrees(math.remainder(obj.yaw - true.yaw, math.pi)))  # either way along it
        assert turn < 10.0, (true.category, true.position, obj.yaw)
        assert math.dist(obj.position[:2], true.position[:2]) < 1.5, (
            true.category,
            true.position,
            obj.position,
        )


def test_vehicles_of_any_kind_merge_within_the_vehicle_radius():
    from urbanverse.layout.lift import LiftedObject, _merge

    def obj(track_id: int, category: str, x: float, observations: int) -> LiftedObject:
        return LiftedObject(
            track_id=track_id, category=category, label="", score=0.5, position=(x, 0.0, 0.0), yaw=0.0,
            yaw_source="street_axis", size=(4.5, 1.8, 1.5), observations=observations, spread_m=0.0,
        )  # fmt: skip

    objects = [
        obj(0, "sedan", 0.0, 9),
        obj(1, "van", 1.8, 3),  # COCO's "truck" box on the same parked car: absorbed
        obj(2, "suv", 5.0, 4),  # the next car along the curb: kept
        obj(3, "bench", 8.0, 4),
        obj(4, "bench", 9.5, 4),  # 1.5 m apart: two benches (furniture merges within 1.2 m)
    ]
    assert [o.track_id for o in _merge(objects, 1.2, 2.5)] == [0, 2, 3, 4]


def _layout(*roads: list[tuple[float, float]]) -> GroundLayout:
    regions = tuple(
        GroundRegionEstimate(type="road", polygon=tuple(r), area_m2=0.0, mean_rgb=(0.3, 0.3, 0.3))
        for r in roads
    )
    return GroundLayout(
        regions=regions,
        cell_m=0.2,
        origin=(0.0, 0.0),
        shape=(1, 1),
        grid_file="",
        pixels_file="",
        coverage_m2=0.0,
    )


def test_a_small_patch_of_road_behind_a_bench_does_not_turn_it():
    """Walking along +x (y = 0) with the road at 2 m < y < 9 m; a 2 m x 2 m patch of dark paving behind
    a bench at (14, -3), taken for road, lies nearer to it than the road and off to its side, where
    the street frame's corner rule would turn the bench to face it. Pieces under 6 m2 are no road."""
    road = [(-20.0, 2.0), (20.0, 2.0), (20.0, 9.0), (-20.0, 9.0)]
    patch = [(9.0, -4.0), (11.0, -4.0), (11.0, -2.0), (9.0, -2.0)]
    path = np.linspace([-10.0, 0.0], [20.0, 0.0], 16)
    bench = np.array([14.0, -3.0])
    _, to_road = StreetFrame(path, road_points(_layout(road, patch))).axis_and_road_side(bench)
    assert to_road[0] < -0.9  # faces the patch
    kept = road_points(_layout(road, patch), min_piece_m2=6.0)
    assert len(kept) == len(road_points(_layout(road)))
    _, to_road = StreetFrame(path, kept).axis_and_road_side(bench)
    assert to_road == pytest.approx([0.0, 1.0])
