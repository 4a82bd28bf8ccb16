"""Building facades from the tall dense points: split where the colour changes, turned to the camera
path, poles left out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.layout.test_proposals import _box, _cloud
from urbanverse.layout.facades import FACADE_CLASS, FacadeCfg, facade_objects, find_facades
from urbanverse.layout.proposals import _is_green

BRICK, RENDER, GREEN = (150, 60, 45), (215, 200, 160), (50, 110, 40)
PATH = np.c_[np.linspace(-10, 10, 21), np.zeros(21)]
#: The keyframes of a walk past the fronts.
WALK = tuple(range(8))


def _facades(*parts):
    cloud = _cloud(*parts)
    return find_facades(cloud, PATH, _is_green(cloud.rgb), FacadeCfg())


def test_two_fronts_split_by_colour_face_the_path() -> None:
    brick = _box((-5.0, -6.0), (10.0, 0.3, 9.0), BRICK, n=6000, keyframes=WALK)
    render = _box((4.0, -6.0), (8.0, 0.3, 7.0), RENDER, n=5000, keyframes=WALK)
    fronts = sorted(_facades(brick, render), key=lambda f: f.centre[0])
    assert len(fronts) == 2
    for front, (x, length, height) in zip(fronts, [(-5.0, 10.0, 9.0), (4.0, 8.0, 7.0)], strict=True):
        assert front.centre == pytest.approx([x, -5.9], abs=0.3)
        assert front.length_m == pytest.approx(0.9 * length, abs=0.5)  # the 5-95 % core
        assert front.height_m == pytest.approx(height, abs=0.4)
        assert front.normal == pytest.approx([0.0, 1.0], abs=0.05)  # towards the path
    objects = facade_objects(fronts, 7, FacadeCfg())
    assert [o.category for o in objects] == [FACADE_CLASS] * 2 and objects[0].track_id == 7
    assert objects[0].yaw == pytest.approx(math.pi / 2, abs=0.05)
    assert objects[0].position[1] == pytest.approx(-5.9 - 0.5, abs=0.3)  # the centre lies behind the front


def test_poles_tree_crowns_and_runs_few_views_saw_are_no_facades() -> None:
    pole = _box((2.0, -3.0), (0.2, 0.2, 6.0), (90, 90, 95), n=800, keyframes=WALK)
    crown = _box((-4.0, -3.0), (5.0, 3.0, 4.0), GREEN, n=4000, base_m=3.0, keyframes=WALK)
    glimpsed = _box((4.0, -12.0), (8.0, 0.3, 7.0), RENDER, n=3000, keyframes=(0, 1, 2))
    assert _facades(pole, crown, glimpsed) == []
