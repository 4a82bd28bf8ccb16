"""Which way lifted objects face: street furniture towards the nearest road edge even where the camera
crosses the street, and a vehicle in a single photo across the line of sight when its box says so."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.layout.lift import StreetFrame, TrackView, _seen_side_on

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


def _view(width: float = float("nan"), sides_cut: int = 0) -> TrackView:
    return TrackView(np.zeros(3), np.zeros(3), height=1.5, top_cut=False, width=width, sides_cut=sides_cut)


def test_a_vehicle_is_side_on_when_its_box_is_wide_or_runs_out_of_the_frame():
    sedan = np.array([4.6, 1.8, 1.45])  # seen at 45 degrees its box is 4.5 m wide
    assert not _seen_side_on([_view(width=2.0)], sedan)  # end-on
    assert _seen_side_on([_view(width=4.8)], sedan)
    assert _seen_side_on([_view(sides_cut=2)], sedan)  # a bus filling the photo
    assert not _seen_side_on([_view(sides_cut=1)], sedan)  # cut on one side: its width is unknown
