"""Keyframes a model left out are chained from their registered neighbours along the ground plane,
and a keyframe whose image does not continue the walk is not; a stop is believed only where the whole
view stands still."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from tests.video.synth import Street, StreetRenderer, camera_path, street_reconstruction
from urbanverse.recon.extend import (
    ExtendCfg,
    _ground_points,
    _nearer_to_left,
    _still_agreement,
    extend_by_ground,
    video_frames_wanted,
)
from urbanverse.recon.geometry import make_pose

STREET = Street(width=480, height_px=270)
ON = ExtendCfg(enabled=True)


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyframes")
    poses = camera_path(STREET, np.array([1.0, 1.5, 2.0, 2.5, 3.0]))
    renderer = StreetRenderer(STREET)
    for i, m in enumerate(poses):
        cv2.imwrite(str(folder / f"{i}.jpg"), renderer.render(m), [cv2.IMWRITE_JPEG_QUALITY, 100])
    return folder, poses


def _without(recon, missing: set[int]):
    keyframes = tuple(
        make_pose(k.index, k.frame, k.time_s, k.image, None) if k.index in missing else k
        for k in recon.keyframes
    )
    return dataclasses.replace(recon, keyframes=keyframes)


def test_the_head_and_tail_of_a_walk_are_chained_back(walk) -> None:
    folder, poses = walk
    partial = _without(street_reconstruction(STREET, poses), {0, 3, 4})
    extended, added = extend_by_ground(partial, folder, ON)
    assert added == [0, 3, 4]
    for i in added:
        assert extended.keyframes[i].position == pytest.approx(poses[i][:3, 3], abs=0.05)
        assert extended.keyframes[i].yaw_rad == pytest.approx(
            float(np.arctan2(poses[i][1, 2], poses[i][0, 2])), abs=np.radians(1.0)
        )


def test_an_image_that_does_not_continue_the_walk_is_left_out(walk, tmp_path) -> None:
    folder, poses = walk
    for i in range(5):
        image = cv2.imread(str(folder / f"{i}.jpg"))
        cv2.imwrite(str(tmp_path / f"{i}.jpg"), image[::-1] if i == 3 else image)  # 3: upside down
    partial = _without(street_reconstruction(STREET, poses), {3, 4})
    _, added = extend_by_ground(partial, tmp_path, ON)
    assert added == []


def test_a_stop_is_chained_where_the_whole_view_stands_still(tmp_path) -> None:
    poses = camera_path(STREET, np.array([1.0, 1.5, 2.0, 2.0]))  # walking 0.5 m a keyframe, then still
    renderer = StreetRenderer(STREET)
    for i, m in enumerate(poses):
        cv2.imwrite(str(tmp_path / f"{i}.jpg"), renderer.render(m), [cv2.IMWRITE_JPEG_QUALITY, 100])
    extended, added = extend_by_ground(_without(street_reconstruction(STREET, poses), {3}), tmp_path, ON)
    assert added == [3]
    assert extended.keyframes[3].position == pytest.approx(poses[3][:3, 3], abs=0.05)


def test_a_walked_step_taken_for_a_stop_fails_the_still_view_check(walk) -> None:
    """The facades shift with parallax when the camera walked; turned by the rotation alone they do
    not line up (a crosswalk's stripes along the walk let ground PnP keep the camera still)."""
    folder, poses = walk
    gray = [cv2.imread(str(folder / f"{i}.jpg"), cv2.IMREAD_GRAYSCALE) for i in (2, 4)]
    k = street_reconstruction(STREET, poses).intrinsics.matrix()
    h, w = gray[0].shape
    rows, cols = np.mgrid[0:h, 0:w]
    ground = np.isfinite(_ground_points(poses[2], k, np.c_[cols.ravel(), rows.ravel()] + 0.5, 8.0)[:, 0])
    ground = ground.reshape(h, w)
    assert _still_agreement(poses[2], poses[2], gray[0], gray[0], k, ground) > 0.99
    assert _still_agreement(poses[2], poses[2], gray[0], gray[1], k, ground) < 0.3  # walked 1 m


def test_on_by_default_and_nothing_to_do_when_all_are_registered(walk) -> None:
    folder, poses = walk
    partial = _without(street_reconstruction(STREET, poses), {3, 4})
    assert extend_by_ground(partial, folder)[1] == [3, 4]
    assert extend_by_ground(partial, folder, ExtendCfg(enabled=False))[1] == []
    assert extend_by_ground(street_reconstruction(STREET, poses), folder, ON)[1] == []


def _turned(poses: np.ndarray, yaw_deg: np.ndarray) -> np.ndarray:
    """``poses (T, 4, 4)`` with each camera turned about the vertical by ``yaw_deg (T,)`` (left)."""
    out = poses.copy()
    for m, deg in zip(out, np.radians(yaw_deg), strict=True):
        c, s = np.cos(deg), np.sin(deg)
        m[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) @ m[:3, :3]
    return out


def test_a_turn_is_chained_through_the_video_frames_between_keyframes(tmp_path) -> None:
    """Turning 30 degrees in two seconds: the next keyframe is too far round for tracks started from
    the last one; followed through the video frames at 10 per second, and posed again every half
    second (the corners of the first half second leave the view), they get there."""
    times = np.arange(10, 36) / 10.0  # video frames 10..35 at 10 fps
    poses = _turned(camera_path(STREET, times), np.clip(times - 1.5, 0.0, None) * 15.0)
    renderer = StreetRenderer(STREET)
    grays = {10 + i: cv2.cvtColor(renderer.render(m), cv2.COLOR_BGR2GRAY) for i, m in enumerate(poses)}
    keyframe_at = {0: 10, 1: 15, 2: 35}  # keyframe index -> video frame
    for i, f in keyframe_at.items():
        cv2.imwrite(str(tmp_path / f"{i}.jpg"), grays[f], [cv2.IMWRITE_JPEG_QUALITY, 100])
    truth = street_reconstruction(STREET, poses[[f - 10 for f in keyframe_at.values()]])
    truth = dataclasses.replace(
        truth,
        keyframes=tuple(make_pose(i, f, f / 10.0, f"{i}.jpg", poses[f - 10]) for i, f in keyframe_at.items()),
    )
    partial = _without(truth, {2})
    assert extend_by_ground(partial, tmp_path, ON)[1] == []  # keyframes alone: lost in the turn
    wanted = video_frames_wanted(partial, 10.0, ON)
    assert wanted == list(range(15, 36))
    extended, added = extend_by_ground(partial, tmp_path, ON, {f: grays[f] for f in wanted})
    assert added == [2]
    assert extended.keyframes[2].position == pytest.approx(poses[-1][:3, 3], abs=0.05)
    assert extended.keyframes[2].yaw_rad == pytest.approx(truth.keyframes[2].yaw_rad, abs=np.radians(1.0))


def test_a_gap_is_split_between_its_two_ends() -> None:
    registered = [True, False, False, False, False, True, False, False]
    assert _nearer_to_left(registered) == {1, 2, 6, 7}  # 3 and 4 are nearer to keyframe 5
    assert _nearer_to_left([False, True, False]) == {2}  # the head has no registered one before it
