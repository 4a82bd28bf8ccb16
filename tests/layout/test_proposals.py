"""Class-agnostic object proposals from dense points: furniture, cars and trees found and named by
shape and colour, walls left out, a bench beside a facade kept apart from it, and tracked objects
not repeated."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.video.synth import Street, camera_path, street_reconstruction
from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.appearance import box_corners, view_boxes
from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.layout.proposal_placing import (
    PROPOSAL_TRACK_BASE,
    add_proposals,
    proposal_objects,
    refine_tracked,
)
from urbanverse.layout.proposals import (
    Proposal,
    ProposalCfg,
    classify,
    classify_by_look,
    find_proposals,
    located_proposals,
    proposal_views,
    smeared,
    top_cut,
)
from urbanverse.layout.street import StreetFrame
from urbanverse.layout.walked_ground import above_ground, levelled, walked_ground
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.geometry import project

GREY, GREEN, WOOD = (120, 120, 125), (50, 110, 40), (120, 80, 50)
RNG = np.random.default_rng(0)


def _box(centre, size, colour, n=800, keyframes=(0, 1, 2), base_m=0.0):
    """Points filling a box: ``centre (x, y)``, ``size (dx, dy, dz)`` (m), bottom at ``base_m``."""
    lo = np.array([centre[0] - size[0] / 2, centre[1] - size[1] / 2, base_m])
    xyz = lo + RNG.random((n, 3)) * np.asarray(size)
    return xyz, np.tile(np.array(colour, np.uint8), (n, 1)), RNG.choice(keyframes, n)


def _cloud(*parts) -> DenseCloud:
    ground = _box((0.0, 0.0), (30.0, 12.0, 0.05), GREY, n=3000)
    parts = (ground, *parts)
    return DenseCloud(*(np.concatenate([p[i] for p in parts]) for i in range(3)))


STREET = StreetFrame(np.c_[np.linspace(-10, 10, 21), np.zeros(21)], np.zeros((0, 2)))


def _by_class(cloud: DenseCloud):
    cfg = ProposalCfg()
    return {classify(p, cfg): p for p in find_proposals(cloud, cfg)}


def test_furniture_cars_and_trees_are_named_by_shape_and_colour() -> None:
    found = _by_class(
        _cloud(
            _box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD),  # bench
            _box((6.0, -2.0), (0.2, 0.2, 0.95), GREY),  # bollard
            _box((-4.0, 3.0), (4.6, 1.9, 1.5), (30, 30, 160)),  # parked car
            _box((-8.0, -2.0), (0.25, 0.25, 1.8), WOOD, n=100),  # trunk
            _box((-8.0, -2.0), (1.8, 1.8, 2.2), GREEN, base_m=1.8),  # crown
        )
    )
    assert {"bench", "bollard", "sedan"} <= set(found)
    assert found["bench"].long_m == pytest.approx(0.7 * 1.8, abs=0.2)  # the 15-85 % core
    assert found["bench"].xy == pytest.approx([2.0, -2.0], abs=0.2)
    assert "young_street_tree" in found  # 4 m tall, crown under 2.5 m wide


def test_green_paint_and_yellow_bins_are_no_shrubs() -> None:
    bench_wood = _box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD, n=560)
    bench_frame = _box((2.0, -2.0), (1.8, 0.5, 0.8), GREEN, n=240)  # a green-painted frame: 30 %
    yellow_bin = _box((-3.0, -2.0), (0.6, 0.6, 1.0), (130, 125, 20))  # hue 58 degrees
    shrub = _box((6.0, -2.0), (1.0, 1.0, 0.9), GREEN)
    found = _by_class(_cloud(bench_wood, bench_frame, yellow_bin, shrub))
    assert found["bench"].green == pytest.approx(0.3, abs=0.05)
    assert found["shrub"].xy == pytest.approx([6.0, -2.0], abs=0.2)
    (bin_class,) = [c for c, p in found.items() if p.xy[0] < -2]
    assert bin_class not in ("shrub", None) and found[bin_class].green == 0.0


def test_a_planter_needs_plants() -> None:
    size = (2.3, 2.3, 1.4)  # fits a planter's size range best
    bare = _by_class(_cloud(_box((2.0, -3.0), size, GREY)))
    planted = _by_class(_cloud(_box((2.0, -3.0), size, GREY, n=560), _box((2.0, -3.0), size, GREEN, n=240)))
    assert "planter" not in bare and list(bare) != [None]
    assert list(planted) == ["planter"]


def test_a_facade_is_left_out_and_the_bench_before_it_kept_apart() -> None:
    facade = _box((0.0, -5.0), (20.0, 0.3, 8.0), (150, 140, 130), n=8000)
    bench = _box((0.0, -4.2), (1.8, 0.5, 0.8), WOOD)
    props = find_proposals(_cloud(facade, bench), ProposalCfg())
    named = [(classify(p, ProposalCfg()), p) for p in props]
    benches = [p for c, p in named if c == "bench"]
    assert len(benches) == 1 and benches[0].xy == pytest.approx([0.0, -4.2], abs=0.2)
    assert all(p.long_m < 6.0 for p in props)  # nothing facade-long survives


def test_a_bollard_at_a_lamp_post_is_kept_and_one_at_a_wall_is_not() -> None:
    """Tall cells make a foot only where they run a wall's length: the tall top of a post (a lamp,
    a sign, a trunk) is compact, and what stands at its foot is an object."""
    bollard = _box((0.0, -3.1), (0.3, 0.3, 0.9), GREY, n=400)
    post = _box((0.0, -3.35), (0.2, 0.2, 6.0), GREY, n=1500)  # a lamp post: its cells tall
    wall = _box((0.0, -3.4), (8.0, 0.3, 4.0), (150, 140, 130), n=8000)
    at_post, at_wall = (find_proposals(_cloud(bollard, tall), ProposalCfg()) for tall in (post, wall))
    assert [classify(p, ProposalCfg()) for p in at_post] == ["bollard"]
    assert at_post[0].xy == pytest.approx([0.0, -3.1], abs=0.3)  # with the post's lowest points
    assert {classify(p, ProposalCfg()) for p in at_wall} == {None}  # the wall's pieces, unnamed
    assert find_proposals(_cloud(bollard, post), ProposalCfg(wall_length_m=0.0)) == []


def test_a_crown_with_shaded_foliage_is_no_wall() -> None:
    """Leaves in shadow are grey, not green; a crown's cells still hold mostly green points."""
    trunk = _box((3.0, -2.0), (0.3, 0.3, 2.2), WOOD, n=150)
    crown = _box((3.0, -2.0), (2.4, 2.4, 3.0), GREEN, n=1400, base_m=1.4)
    shade = _box((3.0, -2.0), (2.4, 2.4, 3.0), (40, 40, 40), n=450, base_m=1.4)
    cloud = _cloud(trunk, crown, shade)
    (tree,) = find_proposals(cloud, ProposalCfg())
    assert (
        tree.xy == pytest.approx([3.0, -2.0], abs=0.1)
        and classify(tree, ProposalCfg()) == "young_street_tree"
    )
    assert find_proposals(cloud, ProposalCfg(tall_share=0.0)) == []  # every crown cell taken for a wall


def test_a_bench_under_the_dark_underside_of_a_crown_is_kept() -> None:
    """Shadowed foliage is not green; only points that stand from low to high mark a wall or post."""
    bench = _box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD)
    underside = _box((2.0, -2.0), (3.0, 3.0, 1.5), (40, 42, 38), base_m=2.6)
    props = find_proposals(_cloud(bench, underside), ProposalCfg())
    assert any(np.linalg.norm(p.xy - [2.0, -2.0]) < 0.3 for p in props)


def test_a_bench_under_a_crown_stands_apart_from_the_tree() -> None:
    trunk = _box((3.0, -2.0), (0.3, 0.3, 2.4), WOOD, n=150)
    crown = _box((3.0, -2.0), (3.0, 3.0, 2.5), GREEN, n=2000, base_m=2.2)
    bench = _box((4.0, -2.0), (0.5, 1.8, 0.8), WOOD)
    cloud = _cloud(trunk, crown, bench)
    assert set(_by_class(cloud)) == {"young_street_tree", "bench"}
    (merged,) = find_proposals(cloud, ProposalCfg(layer_m=0.0))  # whole columns: one cluster
    assert classify(merged, ProposalCfg()) == "young_street_tree"


def test_the_grounds_depth_noise_does_not_join_two_bollards() -> None:
    """Two bollards 4 m apart over a sparse film of ground noise 0.2-0.35 m up (a ground plane a few
    centimetres off): two proposals, not one 4 m cluster; without the film's voxels thinned (nor the
    cluster split into its dense cores), one."""
    film = _box((0.0, -3.0), (6.0, 2.0, 0.15), GREY, n=800, base_m=0.2)  # under 3 points per cell
    bollards = [_box((x, -3.0), (0.2, 0.2, 0.95), GREY) for x in (-2.0, 2.0)]
    cloud = _cloud(film, *bollards)
    found = find_proposals(cloud, ProposalCfg())
    near = sorted(p.xy[0] for p in found if abs(p.xy[1] + 3.0) < 1.0)
    assert near == pytest.approx([-2.0, 2.0], abs=0.2)
    joined = find_proposals(cloud, ProposalCfg(low_voxel_points=0, split_length_m=0.0))
    assert len([p for p in joined if abs(p.xy[1] + 3.0) < 1.0]) == 1


def test_a_bench_and_a_bin_joined_by_a_streak_of_flow_errors_are_two_proposals() -> None:
    """A bench and a bin 3 m apart, joined by a sparse streak of points (flow errors between them):
    split into the two dense cores, each where its object stands; unsplit, one 4 m cluster."""
    bench = _box((0.0, -3.0), (1.8, 0.5, 0.8), WOOD, n=1200)
    waste_bin = _box((3.0, -3.0), (0.6, 0.6, 1.0), GREY, n=800)
    streak = _box((1.85, -3.0), (1.7, 0.3, 0.7), GREY, n=120, base_m=0.2)
    cloud = _cloud(bench, waste_bin, streak)
    found = sorted(find_proposals(cloud, ProposalCfg()), key=lambda p: p.xy[0])
    assert [p.xy[0] for p in found] == pytest.approx([0.0, 3.0], abs=0.2)
    assert [classify(p, ProposalCfg()) for p in found][0] == "bench"
    (joined,) = find_proposals(cloud, ProposalCfg(split_length_m=0.0))
    assert joined.long_m > 2.5


def test_heights_are_measured_from_the_ground_the_walk_followed() -> None:
    """A reconstruction bent upwards at one end: the cameras there stand 0.25 m higher above the plane
    z = 0, and so does the pavement (a dense film 0.25 m up) with two bollards on it. Measured from
    the walk's ground: two bollards 0.95 m tall; from the plane: 1.15 m tall, joined into one 4 m
    cluster by the film (split again into its dense cores, the posts still stand on it)."""
    cameras = np.c_[
        np.linspace(-10, 10, 21), np.zeros(21), 1.6 + np.where(np.linspace(-10, 10, 21) > 0, 0.25, 0.0)
    ]
    pavement = _box((4.0, -2.5), (6.0, 2.0, 0.04), GREY, n=4000, base_m=0.23)
    bollards = [_box((x, -2.5), (0.2, 0.2, 0.95), GREY, base_m=0.25) for x in (2.0, 6.0)]
    cloud = _cloud(pavement, *bollards)
    levelled = find_proposals(above_ground(cloud, walked_ground(cameras, 6.0)), ProposalCfg())
    near = sorted((p.xy[0], p.height_m) for p in levelled if abs(p.xy[1] + 2.5) < 1.0)
    assert [x for x, _ in near] == pytest.approx([2.0, 6.0], abs=0.2)
    assert [h for _, h in near] == pytest.approx([0.95, 0.95], abs=0.1)
    raw = above_ground(cloud, walked_ground(cameras, 0.0))
    unlevelled = [p for p in find_proposals(raw, ProposalCfg()) if abs(p.xy[1] + 2.5) < 1.0]
    assert [p.height_m for p in unlevelled] == pytest.approx([1.15, 1.15], abs=0.05)
    assert (
        len([p for p in find_proposals(raw, ProposalCfg(split_length_m=0.0)) if abs(p.xy[1] + 2.5) < 1.0])
        == 1
    )


def test_a_bump_of_the_ground_is_no_object_but_a_low_bench_is() -> None:
    cfg = ProposalCfg()
    bump = _box((2.0, -2.0), (1.5, 1.0, 0.28), GREY)
    bench = _box((6.0, -2.0), (1.8, 0.4, 0.4), WOOD)
    (found,) = find_proposals(_cloud(bump, bench), cfg)
    assert found.xy == pytest.approx((6.0, -2.0), abs=0.2)
    assert len(find_proposals(_cloud(bump, bench), dataclasses.replace(cfg, min_top_m=0.0))) == 2


def test_a_wall_or_hedge_row_longer_than_furniture_is_not_an_object() -> None:
    wall = _box((0.0, -4.0), (9.0, 0.3, 1.2), GREY, n=3000)
    assert [classify(p, ProposalCfg()) for p in find_proposals(_cloud(wall), ProposalCfg())] == [None]


def test_points_seen_from_one_keyframe_only_are_no_object() -> None:
    lone = _box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD, keyframes=(3,))
    assert find_proposals(_cloud(lone), ProposalCfg()) == []


def _lifted(xy, category="bench") -> LiftedObject:
    return LiftedObject(
        track_id=1, category=category, label=category, score=0.9, position=(xy[0], xy[1], 0.0), yaw=0.0,
        yaw_source="faces_street", size=(0.6, 1.8, 0.8), observations=3, spread_m=0.1,
    )  # fmt: skip


def test_proposals_add_objects_that_no_track_explains() -> None:
    cfg = ProposalCfg()
    props = find_proposals(
        _cloud(_box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD), _box((6.0, -2.0), (0.2, 0.2, 0.95), GREY)), cfg
    )
    added = proposal_objects(props, [_lifted((2.3, -2.1))], STREET, cfg)
    assert [o.category for o in added] == ["bollard"]
    assert added[0].track_id >= PROPOSAL_TRACK_BASE and 0.0 < added[0].score <= cfg.score


def test_a_bench_lies_along_its_long_side_and_faces_the_path() -> None:
    cfg = ProposalCfg()
    props = find_proposals(_cloud(_box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD)), cfg)
    (bench,) = proposal_objects(props, [], STREET, cfg)
    # The asset's front (+X) faces the road; no road seen: the road lies beyond the path (+y).
    assert np.degrees(bench.yaw) == pytest.approx(90.0, abs=10.0)


def test_a_car_seen_by_its_near_side_only_moves_back_from_the_path() -> None:
    cfg = ProposalCfg()
    near_side = _box((0.0, 3.0), (4.6, 0.3, 1.4), (30, 30, 160), n=2000)
    (car,) = proposal_objects(find_proposals(_cloud(near_side), cfg), [], STREET, cfg)
    assert car.category == "sedan"
    assert car.position[1] == pytest.approx(3.0 + (car.size[1] - 0.3) / 2, abs=0.25)


def test_a_car_past_the_end_of_the_walk_lies_along_the_street_its_cameras_walked() -> None:
    """The walk turns across the street at its end; a parked car's points 15 m beyond came from the
    keyframes on the straight part: it lies along x, not along the last steps of the walk."""
    cfg = ProposalCfg()
    path = np.vstack([np.linspace([-20.0, 0.0], [0.0, 0.0], 11), np.linspace([0.5, 1.0], [1.0, 8.0], 5)])
    road = np.stack(np.meshgrid(np.arange(-20, 20, 0.5), np.arange(2.25, 9, 0.5)), axis=-1).reshape(-1, 2)
    street = StreetFrame(path, road)
    cloud = _cloud(_box((15.0, 4.0), (4.6, 1.9, 1.4), (30, 30, 160), n=2000))
    cameras = {k: path[4 + k] for k in range(3)}
    (car,) = proposal_objects(find_proposals(cloud, cfg, cameras), [], street, cfg)
    assert car.category == "sedan" and abs(math.sin(car.yaw)) < 0.05
    (turned,) = proposal_objects(find_proposals(cloud, cfg), [], street, cfg)  # the nearest steps
    assert abs(math.sin(turned.yaw)) > 0.9


def test_a_car_moved_back_onto_a_tracked_car_is_not_a_second_car() -> None:
    """The near side of a car, 1.6 m from the tracked car's centre (beyond ``explained_m``), moves back
    by its missing half depth to within a metre of it: the same car, not a second one stacked on it."""
    cfg = ProposalCfg()
    near_side = _box((0.0, 3.0), (4.6, 0.3, 1.4), (30, 30, 160), n=2000)
    props = find_proposals(_cloud(near_side), cfg)
    assert cfg.explained_m < 1.6
    tracked = dataclasses.replace(_lifted((0.0, 4.6)), category="sedan", size=(4.6, 1.9, 1.45))
    assert proposal_objects(props, [tracked], STREET, cfg) == []
    assert [o.category for o in proposal_objects(props, [], STREET, cfg)] == ["sedan"]


def test_a_car_cluster_under_a_car_length_from_a_tracked_car_is_that_car() -> None:
    """Parked cars stand a whole length apart: a car-sized cluster 2.6 m along the street from a
    tracked car shrunk by its box fit (beyond the footprint, under three quarters of a length) is that
    car's far end; one 5 m on, bumper to bumper, is the next car."""
    cfg = ProposalCfg()
    tracked = dataclasses.replace(_lifted((0.0, 4.0)), category="sedan", size=(4.0, 1.9, 1.45), yaw=0.0)
    for x, expected in ((2.6, []), (5.0, ["sedan"])):
        side = find_proposals(_cloud(_box((x, 4.0), (4.6, 1.9, 1.4), (30, 30, 160), n=2000)), cfg)
        assert [o.category for o in proposal_objects(side, [tracked], STREET, cfg)] == expected


def test_a_car_seen_end_on_stands_half_its_length_beyond_its_near_face() -> None:
    """Walking up to a parked car, the cameras see its rear face alone: the car's centre lies half its
    unseen length on along the street, away from them, not at the face's points."""
    cfg = ProposalCfg()
    cameras = {k: np.array([-12.0 + k, 0.0]) for k in range(3)}
    rear = _box((0.0, 3.0), (0.4, 1.9, 1.4), (30, 30, 160), n=2000)
    (face,) = find_proposals(_cloud(rear), cfg, cameras)
    looked = dataclasses.replace(face, looks={"sedan": -0.2, "bench": -2.5})  # its crops look like a car
    (car,) = proposal_objects([looked], [], STREET, cfg)
    assert car.category == "sedan"
    assert car.position[:2] == pytest.approx(((car.size[0] - 0.4) / 2, 3.0), abs=0.3)


def test_a_car_track_moves_onto_a_car_cluster_beyond_explained_m_and_a_bench_track_does_not() -> None:
    """A car track cast from box bottoms 2.5 m from a car-sized cluster is that car, moved onto the
    measured cluster, not a second car beside it; a bench track so far off keeps its place, and the
    cluster becomes a car of its own."""
    cfg = ProposalCfg()
    props = find_proposals(_cloud(_box((0.0, 4.0), (4.6, 1.9, 1.5), (30, 30, 160), n=2000)), cfg)
    assert cfg.explained_m < 2.5
    track = dataclasses.replace(_lifted((2.5, 4.0), "sedan"), label="car", size=(4.6, 1.9, 1.5))
    (moved,), left = refine_tracked([track], props, STREET, cfg)
    assert left == [] and moved.position[:2] == pytest.approx((0.0, 4.0), abs=0.3)
    bench = _lifted((0.0, 1.7))
    (kept,), left = refine_tracked([bench], props, STREET, cfg)
    assert kept.position[:2] == pytest.approx((0.0, 1.7)) and len(left) == 1
    assert [o.category for o in proposal_objects(left, [kept], STREET, cfg)] == ["sedan"]


def test_a_proposal_within_a_tracked_cars_footprint_is_a_part_of_it() -> None:
    """A post-sized cluster 2 m from a tracked car's centre along its length (beyond ``explained_m``)
    lies within the car's footprint: an end of the car, no bollard; 2 m off its side, a bollard."""
    cfg = ProposalCfg()
    tracked = dataclasses.replace(_lifted((0.0, 4.0)), category="sedan", size=(4.6, 1.9, 1.45), yaw=0.0)
    for x, y, expected in ((2.0, 4.0, []), (0.0, 6.0, ["bollard"])):
        post = find_proposals(_cloud(_box((x, y), (0.2, 0.2, 0.95), GREY)), cfg)
        assert [o.category for o in proposal_objects(post, [tracked], STREET, cfg)] == expected


def test_a_tracked_object_moves_onto_its_proposal_and_a_shape_guess_is_renamed() -> None:
    cfg = ProposalCfg()
    props = find_proposals(
        _cloud(_box((2.0, -2.0), (1.8, 0.5, 0.8), WOOD), _box((-4.0, 3.0), (4.6, 1.9, 1.5), (30, 30, 160))),
        cfg,
    )
    shrub = dataclasses.replace(_lifted((2.8, -1.5), "shrub"), label="tree")  # a green-blob guess
    car = dataclasses.replace(_lifted((-3.2, 3.6), "sedan"), label="car", track_id=2, size=(4.6, 1.9, 1.5))
    (bench, sedan), left = refine_tracked([shrub, car], props, STREET, cfg)
    assert left == []
    assert bench.category == "bench" and bench.position[:2] == pytest.approx((2.0, -2.0), abs=0.2)
    assert sedan.category == "sedan" and sedan.position[:2] == pytest.approx((-4.0, 3.0), abs=0.3)


def _smeared_post(centre, cameras, trail_m=1.6, n=600):
    """A post 0.25 m wide and 0.9 m tall at ``centre``: half its dense points on it, half trailing
    ``trail_m`` behind it along the line of sight from the cameras (keyframe -> (x, y)), as flow at
    its edges gives."""
    sight = np.asarray(centre) - np.mean(list(cameras.values()), axis=0)
    sight /= np.linalg.norm(sight)
    across = np.array([-sight[1], sight[0]])
    depth = np.r_[RNG.random(n // 2) * 0.25, 0.25 + RNG.random(n - n // 2) * trail_m]
    xy = np.asarray(centre) + (depth - 0.125)[:, None] * sight + RNG.normal(0.0, 0.05, (n, 1)) * across
    xyz = np.c_[xy, RNG.random(n) * 0.9]
    return xyz, np.tile(np.array(GREY, np.uint8), (n, 1)), RNG.choice(list(cameras), n)


def test_a_post_whose_points_trail_along_the_line_of_sight_stands_at_their_near_end() -> None:
    cfg = ProposalCfg()
    cameras = {0: np.array([-2.0, 0.0]), 1: np.array([-1.0, 0.0]), 2: np.array([0.0, 0.0])}
    cloud = _cloud(_smeared_post((8.0, -3.0), cameras))
    (seen,) = find_proposals(cloud, cfg, cameras)
    (blind,) = find_proposals(cloud, cfg)  # no cameras: no line of sight
    assert seen.ray is not None and blind.ray is None and seen.near_m > 0.5
    bollard = dataclasses.replace(_lifted((8.4, -3.1), "bollard"), size=(0.25, 0.25, 0.9))
    ((placed,), _), ((centred,), _) = (refine_tracked([bollard], [p], STREET, cfg) for p in (seen, blind))
    assert placed.position[:2] == pytest.approx((8.0, -3.0), abs=0.15)
    assert np.linalg.norm(np.subtract(centred.position[:2], (8.0, -3.0))) > 0.5  # the smear's middle
    # A bench seen side-on runs across the line of sight: no smear, it stays on its points' centre.
    abeam = {k: np.array([1.0 + k, 0.0]) for k in range(3)}
    (bench,) = find_proposals(_cloud(_box((2.0, -4.0), (1.8, 0.5, 0.8), WOOD)), cfg, abeam)
    assert not smeared(bench, cfg) and bench.xy == pytest.approx((2.0, -4.0), abs=0.2)
    assert not smeared(seen, dataclasses.replace(cfg, smear_angle_deg=0.0))


def _near_side_of_crown(centre, radius, cameras, n=3000):
    """Green points on the half of a spherical crown (``radius`` m, centre ``(x, y)`` at 3 m up) that
    faces the cameras (keyframe -> (x, y)): what flow sees of a tree from the sidewalk."""
    sight = np.asarray(centre) - np.mean(list(cameras.values()), axis=0)
    sight /= np.linalg.norm(sight)
    normal = RNG.normal(size=(4 * n, 3))
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    normal = normal[normal[:, :2] @ sight < 0][:n]  # the hemisphere facing the cameras
    xyz = np.r_[centre, 3.0] + radius * normal
    return xyz, np.tile(np.array(GREEN, np.uint8), (len(xyz), 1)), RNG.choice(list(cameras), len(xyz))


def test_a_crown_seen_from_one_side_moves_back_along_the_line_of_sight() -> None:
    """Its points are the crown's near half: their centre lies before the trunk, by about half the
    radius; the tree stands ``crown_depth_share`` of its radius farther along the line of sight."""
    cameras = {0: np.array([3.0, 0.0]), 1: np.array([5.0, 0.0]), 2: np.array([7.0, 0.0])}
    cloud = _cloud(_near_side_of_crown((5.0, -5.0), 1.6, cameras))
    cfg = dataclasses.replace(ProposalCfg(), crop_classifier="")
    (crown,) = find_proposals(cloud, cfg, cameras)
    assert crown.xy[1] > -4.6  # the near half's centre, before the trunk
    placed = {
        share: proposal_objects([crown], [], STREET, dataclasses.replace(cfg, crown_depth_share=share))[0]
        for share in (0.0, 0.5)
    }
    assert placed[0.5].category == placed[0.0].category and get_class(placed[0.5].category).l1 == "vegetation"
    assert placed[0.0].position[:2] == pytest.approx(crown.xy)
    assert placed[0.5].position[1] == pytest.approx(crown.xy[1] - 0.25 * placed[0.5].size[0], abs=0.05)
    assert abs(placed[0.5].position[1] + 5.0) < abs(placed[0.0].position[1] + 5.0)


def test_a_cluster_much_lower_than_the_tracked_tree_is_a_part_of_it() -> None:
    """The trunk and stakes of a young tree, parted from its crown by air, do not rename the tree the
    vegetation detector boxed (4 m tall) into a bin; the tree still moves onto them."""
    cfg = ProposalCfg()
    (stakes,) = find_proposals(_cloud(_box((2.0, -2.0), (0.5, 0.5, 0.8), WOOD)), cfg)
    assert classify(stakes, cfg) not in (None, "young_street_tree")
    tree = dataclasses.replace(_lifted((2.6, -1.6), "young_street_tree"), label="tree", size=(1.5, 1.5, 4.0))
    (moved,), _ = refine_tracked([tree], [stakes], STREET, cfg)
    assert moved.category == "young_street_tree"
    assert moved.position[:2] == pytest.approx((2.0, -2.0), abs=0.2)


def test_a_crown_that_runs_out_of_the_frame_is_cut_and_a_narrow_one_columnar() -> None:
    street = Street(width=480, height_px=270)
    poses = camera_path(street, np.array([1.0, 1.5]))  # walking along +x from x = 1.2 m, 1.6 m high
    recon = street_reconstruction(street, poses)
    sky = np.full((270, 480, 3), (170, 200, 230), np.uint8)
    images = {0: sky.copy(), 1: sky.copy()}

    def paint_crown(x: float, top: float) -> None:
        """Foliage over the crown's box (1.2 m wide, 1.5 m up to ``top``) in both views."""
        corners = np.array(
            [[x + dx, 3.0 + dy, z] for dx in (-0.6, 0.6) for dy in (-0.6, 0.6) for z in (1.5, top)]
        )
        for i, image in images.items():
            uv, _ = project(recon, i, corners)
            (u0, v0), (u1, v1) = np.clip(uv.min(axis=0), 0, None), uv.max(axis=0)
            image[int(v0) : int(v1) + 1, int(u0) : int(u1) + 1] = GREEN

    def crown(x: float, height: float) -> Proposal:
        return Proposal(
            xy=np.array([x, 3.0]), long_m=1.2, short_m=1.0, axis=np.array([1.0, 0.0]), height_m=height,
            green=0.8, points=500, owners=(0, 1),
        )  # fmt: skip

    paint_crown(9.0, 12.0)  # a tall tree whose points stop at 3 m: foliage goes on up
    paint_crown(16.0, 3.0)  # a small one, seen whole against the sky
    cfg = ProposalCfg()
    tall, small = crown(9.0, 3.0), crown(16.0, 3.0)
    assert top_cut(tall, recon, images, cfg)
    assert not top_cut(small, recon, images, cfg)
    assert not top_cut(tall, recon, {0: sky, 1: sky}, cfg)  # no foliage above: the top was seen
    assert top_cut(crown(9.0, 6.0), recon, {0: sky, 1: sky}, cfg)  # a top above the frame is cut
    assert classify(dataclasses.replace(tall, top_cut=True), cfg) == "columnar_tree"
    assert classify(small, cfg) == "young_street_tree"


def test_no_points_no_proposals() -> None:
    # A static camera (vtest.avi) has no keyframe pair with a baseline: no dense points at all.
    empty = DenseCloud(np.zeros((0, 3)), np.zeros((0, 3), np.uint8), np.zeros(0, int))
    assert find_proposals(empty, ProposalCfg()) == []
    street = Street()
    recon = street_reconstruction(street, camera_path(street, np.array([1.0, 2.0])))
    lifted = LiftedObjects(objects=(), dropped={})
    assert add_proposals(lifted, recon, empty, {}, None, ProposalCfg()).objects == ()


def _proposal(long_m: float, height_m: float, green: float = 0.0, **looks: float) -> Proposal:
    return Proposal(
        xy=np.array([2.0, -2.0]), long_m=long_m, short_m=0.4, axis=np.array([1.0, 0.0]), height_m=height_m,
        green=green, points=500, owners=(0, 1), looks={c: np.log(p) for c, p in looks.items()},
    )  # fmt: skip


def test_a_bin_that_surely_looks_like_one_stands_beside_a_bench_track() -> None:
    """A recycling bin's cluster 1.3 m from a tracked bench (within ``explained_m``) is a part of the
    bench unless its crops surely show a bin: then it is an object of its own; never within the
    bench's footprint."""
    cfg = ProposalCfg()
    bench = dataclasses.replace(_lifted((2.0, -3.3)), yaw=0.0, size=(1.8, 0.6, 0.8))
    assert cfg.explained_m > 1.3
    for p_bin, expected in ((0.9, ["recycling_bin"]), (0.45, [])):
        bin_ = dataclasses.replace(_proposal(0.5, 1.0, recycling_bin=p_bin, bench=1 - p_bin), short_m=0.3)
        assert [o.category for o in proposal_objects([bin_], [bench], STREET, cfg)] == expected
    inside = dataclasses.replace(bench, position=(2.0, -2.2, 0.0), size=(1.8, 2.6, 0.8))
    sure = dataclasses.replace(_proposal(0.5, 1.0, recycling_bin=0.9, bench=0.1), short_m=0.3)
    assert proposal_objects([sure], [inside], STREET, cfg) == []


def test_the_look_names_a_proposal_within_what_its_size_allows() -> None:
    cfg = ProposalCfg()
    # A bench-sized cluster that looks like a bench is one, though its size also fits a bollard's row.
    assert classify_by_look(_proposal(1.3, 0.8, bench=0.7, bollard=0.3), cfg) == "bench"
    # Depth streaks stretch a bollard to a bench's length: the look decides between fitting classes.
    assert classify_by_look(_proposal(1.3, 0.9, bench=0.2, bollard=0.8), cfg) == "bollard"
    # A car-sized cluster is no bench, however bench-like one crop looked.
    assert classify_by_look(_proposal(4.6, 1.5, bench=0.6, sedan=0.4), cfg) == "sedan"
    # The foot of a house is not an object; a planter needs plants.
    assert classify_by_look(_proposal(3.0, 2.0, house=0.9, bench=0.1), cfg) is None
    assert classify_by_look(_proposal(1.2, 0.8, planter=0.9, bench=0.1), cfg) == "bench"
    assert classify_by_look(_proposal(1.2, 0.8, 0.4, planter=0.9, bench=0.1), cfg) == "planter"
    # classify() takes the look where there is one, the shape rules where not.
    assert classify(_proposal(1.3, 0.9, bench=0.2, bollard=0.8), cfg) == "bollard"
    assert classify(dataclasses.replace(_proposal(1.3, 0.8), looks=None), cfg) == "bench"


def test_the_look_renames_a_track_by_more_than_the_detectors_confidence() -> None:
    cfg = ProposalCfg()
    hatchback_look = _proposal(4.0, 1.5, sedan=0.2, hatchback=0.8)

    def tracked(category: str, score: float) -> LiftedObject:
        return dataclasses.replace(_lifted((2.2, -2.0), category), label=category, score=score)

    # COCO's "car" at 0.5 (mapped to a sedan): its look (4:1 for a hatchback) wins.
    ((renamed,), _) = refine_tracked([tracked("sedan", 0.5)], [hatchback_look], STREET, cfg)
    # (and moves onto the proposal, then back by the half depth that its near face leaves unseen)
    assert renamed.category == "hatchback" and renamed.position[:2] == pytest.approx((2.0, -2.0), abs=0.7)
    # A true box (score 1) is never overruled, nor a class the crop classifier does not know, nor a
    # class of another family (a car is no bollard, however a crop of it looked).
    bollard_look = _proposal(0.3, 0.9, sedan=0.2, bollard=0.8)
    cases = [(tracked("sedan", 1.0), hatchback_look), (tracked("fire_hydrant", 0.5), hatchback_look)]
    for kept, look in [*cases, (tracked("sedan", 0.5), bollard_look)]:
        ((obj,), _) = refine_tracked([kept], [look], STREET, cfg)
        assert obj.category == kept.category and obj.position[:2] == pytest.approx((2.0, -2.0), abs=0.7)


def test_a_proposal_box_is_cut_from_the_nearest_views_that_hold_it() -> None:
    street = Street(width=480, height_px=270)
    recon = street_reconstruction(street, camera_path(street, np.array([1.0, 1.5, 2.0, 2.5])))
    corners = box_corners(np.array([9.0, 3.0]), np.array([1.0, 0.0]), 1.8, 0.5, 0.8)
    assert corners.shape == (8, 3) and corners[:, 2].max() == pytest.approx(0.8)
    views = view_boxes(recon, corners, owners=(0, 1, 2, 3), views=2)
    positions = [recon.keyframes[i].position[0] for i, _ in views]
    assert len(views) == 2 and positions == sorted(positions, reverse=True)  # the nearest first
    for index, (x0, y0, x1, y1) in views:
        uv, _ = project(recon, index, corners)
        assert (x0, y0, x1, y1) == pytest.approx((*uv.min(axis=0), *uv.max(axis=0)))
    behind = box_corners(np.array([-20.0, 3.0]), np.array([1.0, 0.0]), 1.8, 0.5, 0.8)
    assert view_boxes(recon, behind, owners=(0, 1, 2, 3), views=2) == []


def test_a_proposals_crops_are_cut_around_the_whole_object() -> None:
    """The box a proposal's crops are cut from spans the whole bench in each view, though its
    footprint is the core of the points (15-85 %), in the nearest views that hold it."""
    street = Street(width=480, height_px=270)
    recon = street_reconstruction(street, camera_path(street, np.array([1.0, 1.5, 2.0, 2.5])))
    images = {k.index: np.zeros((270, 480, 3), np.uint8) for k in recon.keyframes}
    bench = _box((9.0, 3.0), (1.8, 0.5, 0.8), WOOD, n=3000, keyframes=(0, 1, 2, 3))
    cloud = levelled(_cloud(bench), recon, ProposalCfg().walk_window_m)
    (p,) = located_proposals(recon, cloud, images, ProposalCfg())
    (views,) = proposal_views(recon, [p], ProposalCfg(crop_views=2))
    whole = box_corners(np.array([9.0, 3.0]), np.array([1.0, 0.0]), 1.8, 0.5, 0.8)
    assert [i for i, _ in views] == [i for i, _ in view_boxes(recon, whole, (0, 1, 2, 3), views=2)]
    for index, box in views:
        uv, _ = project(recon, index, whole)
        assert box == pytest.approx((*uv.min(axis=0), *uv.max(axis=0)), abs=4.0)
