"""People lifting: the pieces a track is cut into, the smoothing, cameras between keyframes, and the
flow field of the walks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from urbanverse.errors import InputError
from urbanverse.layout.lift import TrackView
from urbanverse.layout.people import (
    PeopleCfg,
    contact_confidence,
    fused_position,
    poses_at,
    smooth_trajectory,
    split_pieces,
)
from urbanverse.recon import GroundPlaneFit, Reconstruction
from urbanverse.recon.geometry import make_pose
from urbanverse.scene.agents import flow_arrays, flow_field, make_agent, position_at
from urbanverse.video import CameraIntrinsics


def test_a_step_faster_than_walking_cuts_the_track_and_so_does_a_long_gap() -> None:
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 7.0, 7.5])
    x = np.array([0.0, 0.6, 1.2, 6.0, 6.6, 7.0, 7.6])  # 1.2 -> 6.0 in 0.5 s: another person
    pieces = split_pieces(t, np.column_stack([x, np.zeros_like(x)]), PeopleCfg())
    assert [p.tolist() for p in pieces] == [[0, 1, 2], [3, 4], [5, 6]]


def test_smoothing_keeps_a_steady_walk_and_halves_the_noise_around_it() -> None:
    rng = np.random.default_rng(0)
    t = np.arange(0.0, 20.0, 0.5)
    walk = np.column_stack([1.3 * t, 0.2 * t + 3.0])
    assert np.allclose(
        smooth_trajectory(t, walk, np.ones(len(t)), 1.0), walk, atol=1e-9
    )  # ends not pulled in
    noisy = walk + rng.normal(0.0, 0.3, walk.shape)
    smoothed = smooth_trajectory(t, noisy, np.ones(len(t)), 1.0)
    assert np.abs(smoothed - walk).mean() < 0.5 * np.abs(noisy - walk).mean()


def test_a_contact_seen_at_a_grazing_angle_counts_less() -> None:
    eye = np.array([0.0, 0.0, 1.6])
    steep = contact_confidence(0.9, eye, np.array([3.0, 0.0, 0.0]), top_cut=False)
    grazing = contact_confidence(0.9, eye, np.array([30.0, 0.0, 0.0]), top_cut=False)
    assert steep == pytest.approx(0.9) and grazing < 0.3 * steep
    assert contact_confidence(0.9, eye, np.array([3.0, 0.0, 0.0]), top_cut=True) == pytest.approx(0.675)


def _camera(x: float, yaw: float) -> np.ndarray:
    """A camera 1.6 m up at (x, 0) looking level along ``yaw`` (OpenCV axes: x right, y down, z forward)."""
    c, s = np.cos(yaw), np.sin(yaw)
    m = np.eye(4)
    m[:3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array([[0, 0, 1], [-1, 0, 0], [0, -1, 0]])
    m[:3, 3] = (x, 0.0, 1.6)
    return m


def test_cameras_between_keyframes_are_interpolated_and_outside_them_unregistered() -> None:
    first, last = (
        make_pose(0, 10, 1.0, "a.jpg", _camera(0.0, 0.0)),
        make_pose(1, 30, 3.0, "b.jpg", _camera(2.0, 0.4)),
    )
    recon = Reconstruction(
        mode="sfm",
        intrinsics=CameraIntrinsics.from_hfov(640, 480, 70.0),
        keyframes=(first, last),
        ground=GroundPlaneFit(method="camera_prior", camera_height_m=1.6),
        scale_source="ground_plane",
        metric_scale=1.0,
        camera_height_prior_m=1.6,
    )
    between = poses_at(recon, (0.5, 2.0, 3.0))
    assert [k.registered for k in between.keyframes] == [False, True, True]
    assert np.asarray(between.keyframes[1].world_from_camera)[:3, 3] == pytest.approx([1.0, 0.0, 1.6])
    assert between.keyframes[1].yaw_rad == pytest.approx(0.2, abs=1e-6)
    assert np.asarray(between.keyframes[2].world_from_camera) == pytest.approx(_camera(2.0, 0.4))


def test_the_flow_field_shows_a_one_way_walk_and_a_two_way_one() -> None:
    t = np.arange(0.0, 10.0, 0.5)
    east = make_agent("a", np.column_stack([t, 1.2 * t, np.full_like(t, 0.5)]), np.ones(len(t)))
    west = make_agent("b", np.column_stack([t, 12 - 1.2 * t, np.full_like(t, 0.5)]), np.ones(len(t)))
    one_way = flow_arrays(flow_field([east]))
    seen = one_way["seen"]
    assert one_way["velocity"][seen][:, 0] == pytest.approx(1.2, abs=0.05)
    both = flow_field([east, west])
    grid = flow_arrays(both)
    middle = grid["seen"] & (np.abs(grid["velocity"][..., 0]) < 0.3)
    assert middle.any() and grid["speed"][middle] == pytest.approx(1.2, abs=0.05)  # fast, but both ways
    # mean people per m² summed over the cells: the two people, all the time
    assert grid["density"].sum() * both.cell**2 == pytest.approx(2.0, abs=0.1)
    assert position_at(east, [2.25, 99.0]) == pytest.approx(np.array([[2.7, 0.5], [11.4, 0.5]]))


def test_bad_settings_are_refused_by_name() -> None:
    with pytest.raises(InputError, match="height_range_m"):
        PeopleCfg(height_range_m=(2.0, 1.0))
    with pytest.raises(InputError, match="step_s"):
        dataclasses.replace(PeopleCfg(), step_s=0.0)


def _view(contact_m: float, true_m: float, top_cut: bool = False) -> TrackView:
    """A person ``true_m`` away along +x whose feet's ray met the ground at ``contact_m`` (a pitch
    error): the box's height at the contact's depth is then 1.7 m scaled by their ratio."""
    return TrackView(
        ground=np.array([contact_m, 0.0, 0.0]),
        eye=np.array([0.0, 0.0, 1.6]),
        height=1.7 * contact_m / true_m,
        top_cut=top_cut,
        width=0.5,
    )


def test_far_people_lean_on_their_height_and_near_ones_on_their_feet() -> None:
    cfg, fy = PeopleCfg(), 900.0
    far = fused_position(_view(24.0, 20.0), fy, cfg)
    assert abs(far[0] - 20.0) < 1.0 and far[1] == pytest.approx(0.0)  # the contact alone: 4 m off
    near = fused_position(_view(5.2, 5.0), fy, cfg)
    assert 5.1 < near[0] <= 5.2  # near the camera the feet are the better cue
    assert fused_position(_view(24.0, 20.0, top_cut=True), fy, cfg)[0] == pytest.approx(24.0)
