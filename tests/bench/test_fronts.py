"""Buildings are matched and scored by the midpoint and direction of the front the walk saw."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.bench.scenes import box, region, scene, thing, walk_along_x
from urbanverse.bench.evaluate import compare_scenes, match_objects
from urbanverse.bench.fronts import anchors, scored_by_front, seen_front, whole_front

#: A house 10 m deep and 60 m wide whose front runs along y = 8 from x = -20 to 40, facing the walk
#: along y = 0 (its yaw, -90 degrees, points at the street).
HOUSE = thing("house", (10.0, 13.0, 0.0), yaw=-math.pi / 2, size=(10.0, 60.0, 8.0))


def _seen_stretch(x0: float, x1: float, depth: float = 8.0, reach: float = 20.0) -> tuple[float, float]:
    """The x range of a wall ``depth`` m beside a walk from ``x0`` to ``x1`` that a 90-degree camera
    looking along the walk sees within ``reach`` m: from 45 degrees off its axis at the walk's start
    to the range at its end."""
    return x0 + depth, x1 + math.sqrt(reach**2 - depth**2)


def test_only_buildings_and_facades_are_scored_by_their_front():
    assert scored_by_front("house") and scored_by_front("shop_front") and scored_by_front("office_tower")
    assert not scored_by_front("bench") and not scored_by_front("sedan")


def test_the_whole_front_is_the_face_ahead_of_the_base_centre_along_the_yaw():
    front = whole_front(HOUSE)
    assert front.midpoint == pytest.approx([10.0, 8.0])
    assert front.length == pytest.approx(60.0)
    assert sorted([front.start[0], front.end[0]]) == pytest.approx([-20.0, 40.0])


def test_the_seen_front_is_clipped_to_what_the_walk_could_see():
    front = seen_front(HOUSE, walk_along_x(0.0, 10.0))
    lo, hi = _seen_stretch(0.0, 10.0)
    xs = sorted([front.start[0], front.end[0]])
    assert xs == pytest.approx([lo, hi], abs=0.8)  # edges: a frame step (0.5 m) and a sample step
    assert front.midpoint == pytest.approx([(lo + hi) / 2, 8.0], abs=0.5)
    assert front.yaw == HOUSE.yaw


def test_a_front_seen_from_behind_keeps_its_whole_length():
    away = thing("house", (10.0, 3.0, 0.0), yaw=math.pi / 2, size=(10.0, 60.0, 8.0))  # front at y = 8
    front = seen_front(away, walk_along_x(0.0, 10.0))
    assert front.length == pytest.approx(60.0) and front.midpoint == pytest.approx([10.0, 8.0])


def test_other_objects_are_anchored_at_their_base_centre():
    tour = walk_along_x(0.0, 10.0)
    xy = anchors(scene(objects=[thing("bench", (3.0, 2.0, 0.0), yaw=1.0), HOUSE]), tour)
    assert xy[0] == pytest.approx([3.0, 2.0])
    assert xy[1] == pytest.approx(seen_front(HOUSE, tour).midpoint)


def _generated_house(yaw_offset_deg: float = 0.0, depth: float = 4.0) -> object:
    """A house with the front the walk saw, but ``depth`` m deep (gen sets the depth behind the front)
    and turned by ``yaw_offset_deg`` about that front's midpoint."""
    lo, hi = _seen_stretch(0.0, 10.0)
    yaw = HOUSE.yaw + math.radians(yaw_offset_deg)
    mid = np.array([(lo + hi) / 2, 8.0])
    centre = mid - depth / 2 * np.array([math.cos(yaw), math.sin(yaw)])
    return thing("house", (*centre, 0.0), yaw=yaw, size=(depth, hi - lo, 8.0))


def test_a_house_with_the_seen_front_but_another_depth_is_found_by_its_front():
    """The generated house's centre stands 3 m from the true one's: by centres it would be unpaired
    (2 m) and missed; by fronts it is found, with its front's error and direction."""
    tour = walk_along_x(0.0, 10.0, visible=(1,))
    ground = [region("road", box(-30, -5, 50, 8))]
    truth = scene(ground, [HOUSE])
    generated = scene(ground, [_generated_house()])
    assert np.linalg.norm(np.subtract(generated.objects[0].position, HOUSE.position)) > 2.5
    scores = compare_scenes(generated, truth, tour, aligned=True)
    assert scores["recall_1m"] == 1.0 and scores["cat_acc"] == 1.0
    assert scores["fronts_seen"] == 1 and scores["front_recall_1m"] == 1.0
    assert scores["front_err_m"] < 0.5 and scores["front_dir_err_deg"] == pytest.approx(0.0, abs=1e-6)
    assert scores["pos_err_m"] == pytest.approx(scores["front_err_m"])


def test_a_turned_front_shows_its_direction_error():
    tour = walk_along_x(0.0, 10.0, visible=(1,))
    truth = scene([region("road", box(-30, -5, 50, 8))], [HOUSE])
    turned = compare_scenes(scene(truth.ground, [_generated_house(30.0)]), truth, tour, aligned=True)
    assert turned["front_dir_err_deg"] == pytest.approx(30.0)
    assert turned["front_dir_errors_deg"] == [pytest.approx(30.0)]


def test_a_front_too_far_off_is_not_paired():
    tour = walk_along_x(0.0, 10.0, visible=(1,))
    truth = scene([region("road", box(-30, -5, 50, 8))], [HOUSE])
    far = _generated_house()
    far = thing("house", (far.position[0], far.position[1] + 3.0, 0.0), yaw=far.yaw, size=far.size)
    match = match_objects(scene(truth.ground, [far]), truth, tour, aligned=True)
    assert match.pairs == []
    scores = compare_scenes(scene(truth.ground, [far]), truth, tour, aligned=True, match=match)
    assert scores["front_recall_1m"] == 0.0 and math.isnan(scores["front_err_m"])


def test_only_a_generated_building_counts_as_the_front_found():
    """A bench standing at the seen front's midpoint pairs with the house (it is nearest), but it is no
    front: the house's front is not found and no front error is scored."""
    tour = walk_along_x(0.0, 10.0, visible=(1,))
    truth = scene([region("road", box(-30, -5, 50, 8))], [HOUSE])
    mid = seen_front(HOUSE, tour).midpoint
    scores = compare_scenes(scene(truth.ground, [thing("bench", (*mid, 0.0))]), truth, tour, aligned=True)
    assert scores["recall_1m"] == 1.0 and scores["cat_acc"] == 0.0
    assert scores["front_recall_1m"] == 0.0 and scores["front_errors_m"] == []
