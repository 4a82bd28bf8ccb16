"""Building facades from the tall dense points: split where the colour changes (not at each window),
turned to the camera path, poles left out, fronts kept where they were seen, a height whose top ran
out of the frame taken as a lower bound."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.layout.test_proposals import _box, _cloud
from tests.video.synth import Street, camera_path, street_reconstruction
from urbanverse.layout.facades import (
    FACADE_CLASS,
    Facade,
    FacadeCfg,
    facade_objects,
    find_facades,
    front_top_cut,
)
from urbanverse.layout.lift import front_anchored
from urbanverse.layout.proposals import is_green

BRICK, RENDER, GREEN = (150, 60, 45), (215, 200, 160), (50, 110, 40)
PATH = np.c_[np.linspace(-10, 10, 21), np.zeros(21)]
#: The keyframes of a walk past the fronts.
WALK = tuple(range(8))
#: Those keyframes: a walk along +x from x = 0, 1.2 m a second, 1.6 m high, looking 6 deg down.
STREET = Street(width=480, height_px=270)
RECON = street_reconstruction(STREET, camera_path(STREET, np.arange(8.0)))


def _facades(*parts):
    cloud = _cloud(*parts)
    return find_facades(cloud, PATH, is_green(cloud.rgb), FacadeCfg())


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
    objects = facade_objects(fronts, 7, FacadeCfg(), RECON)
    assert [o.category for o in objects] == [FACADE_CLASS] * 2 and objects[0].track_id == 7
    assert objects[0].yaw == pytest.approx(math.pi / 2, abs=0.05)
    assert objects[0].position[1] == pytest.approx(-5.9 - 0.5, abs=0.3)  # the centre lies behind the front
    assert all(o.front_only for o in objects)


def test_a_row_of_dark_windows_does_not_cut_a_front() -> None:
    """A 14 m render front with a 1 m dark window every 3 m: one front, not one per wall between
    windows (neighbouring 1 m bins differ by far more than ``colour_step``)."""
    wall = [
        _box((x, -6.0), (2.0, 0.3, 6.0), RENDER, n=1500, keyframes=WALK) for x in (-6.0, -3.0, 0.0, 3.0, 6.0)
    ]
    glass = [
        _box((x, -6.0), (1.0, 0.3, 6.0), (40, 45, 60), n=700, keyframes=WALK) for x in (-4.5, -1.5, 1.5, 4.5)
    ]
    fronts = _facades(*wall, *glass)
    assert len(fronts) == 1
    assert fronts[0].length_m == pytest.approx(0.9 * 14.0, abs=1.0)


def test_the_front_stays_where_it_was_seen_whatever_the_asset_depth() -> None:
    brick = _box((0.0, -6.0), (10.0, 0.3, 9.0), BRICK, n=6000, keyframes=WALK)
    (obj,) = facade_objects(_facades(brick), 0, FacadeCfg(), RECON)
    front = obj.position[1] + 0.5 * obj.size[0]  # the object faces +y, towards the path
    for depth in (0.4, 1.0, 12.0):
        x, y = front_anchored(obj, depth)
        assert x == pytest.approx(obj.position[0], abs=0.01)
        assert y + 0.5 * depth == pytest.approx(front, abs=0.01)
    # An object measured whole keeps its centre.
    whole = dataclasses.replace(obj, front_only=False)
    assert front_anchored(whole, 12.0) == whole.position[:2]


def test_poles_tree_crowns_and_runs_few_views_saw_are_no_facades() -> None:
    pole = _box((2.0, -3.0), (0.2, 0.2, 6.0), (90, 90, 95), n=800, keyframes=WALK)
    crown = _box((-4.0, -3.0), (5.0, 3.0, 4.0), GREEN, n=4000, base_m=3.0, keyframes=WALK)
    glimpsed = _box((4.0, -12.0), (8.0, 0.3, 7.0), RENDER, n=3000, keyframes=(0, 1, 2))
    assert _facades(pole, crown, glimpsed) == []


def test_a_front_whose_top_runs_out_of_the_frame_has_a_lower_bound_height() -> None:
    """A front 20 m along the walk, 4 m to its right: from the last keyframes (8-14 m before it) a
    top measured at 3 m shows well inside the frame; one measured at 7 m projects above it."""

    def front(height_m: float) -> Facade:
        return Facade(
            centre=np.array([20.0, -4.0]), axis=np.array([1.0, 0.0]), length_m=8.0, height_m=height_m,
            normal=np.array([0.0, 1.0]), points=1000, owners=WALK,
        )  # fmt: skip

    assert not front_top_cut(front(3.0), RECON, FacadeCfg())
    assert front_top_cut(front(7.0), RECON, FacadeCfg())
    low, high = facade_objects([front(3.0), front(7.0)], 0, FacadeCfg(), RECON)
    assert not low.top_cut and high.top_cut
    # Views that never hold the front (all behind it) decide nothing.
    behind = dataclasses.replace(front(7.0), centre=np.array([-30.0, -4.0]))
    assert not front_top_cut(behind, RECON, FacadeCfg())
