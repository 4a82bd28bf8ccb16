"""The video stage on small synthetic videos and stills, and its bad-input errors."""

from __future__ import annotations

import math
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.video.synth import Street, StreetRenderer, camera_path, write_video
from urbanverse.errors import InputError
from urbanverse.video import KeyframeSet, VideoCfg, load_keyframes, run_video, split_shots
from urbanverse.video.decode import read_frames

OPENCV_DATA = Path(os.environ.get("OPENCV_SAMPLES_DATA", "/usr/share/doc/opencv-doc/examples/data"))


@pytest.fixture(scope="module")
def walk_video(tmp_path_factory) -> tuple[Path, np.ndarray]:
    path = tmp_path_factory.mktemp("video") / "walk.mp4"
    poses = write_video(path, Street(), seconds=6.0, fps=10.0)
    return path, poses


def _write_frames(path: Path, frames: list[np.ndarray], fps: float = 10.0) -> None:
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    for f in frames:
        writer.write(f)
    writer.release()


def test_walk_video_keyframes(walk_video, tmp_path: Path) -> None:
    path, _ = walk_video
    kfs = run_video(path, tmp_path)
    assert kfs.mode == "video" and kfs.fps == pytest.approx(10.0)
    assert kfs.frame_count == 60 and kfs.duration_s == pytest.approx(6.0)
    assert kfs.original_size == (320, 240) and kfs.working_size == (320, 240)
    assert len(kfs.shots) == 1 and kfs.selected_shots == (0,)
    frames = [k.frame for k in kfs.keyframes]
    assert frames[0] == 0 and frames == sorted(frames) and 4 <= len(frames) <= 20
    assert [k.index for k in kfs.keyframes] == list(range(len(frames)))
    for k in kfs.keyframes:
        assert k.time_s == pytest.approx(k.frame / 10.0)
        img = cv2.imread(str(tmp_path / k.image))
        assert img is not None and img.shape == (240, 320, 3)
    # The camera walks at 1.2 m/s: keyframes are driven by motion, not by the max-gap timer.
    assert sum(k.reason in ("motion", "tracks_lost") for k in kfs.keyframes) >= 2
    assert max(k.motion_px for k in kfs.keyframes) > 0.06 * 320 * 0.9
    f = 0.5 * 320 / math.tan(math.radians(65.0) / 2)
    assert kfs.intrinsics.fx == pytest.approx(f) and kfs.intrinsics.cx == 160.0
    assert kfs.intrinsics.hfov_deg == pytest.approx(65.0)
    assert len(kfs.source_sha256) == 64
    assert load_keyframes(tmp_path) == kfs


def test_downscale_and_focal(walk_video, tmp_path: Path) -> None:
    path, _ = walk_video
    kfs = run_video(path, tmp_path, VideoCfg(max_width=160, focal_px=300.0))
    assert kfs.original_size == (320, 240) and kfs.working_size == (160, 120)
    assert kfs.intrinsics.source == "focal_px" and kfs.intrinsics.fx == pytest.approx(150.0)
    assert cv2.imread(str(tmp_path / kfs.keyframes[0].image)).shape == (120, 160, 3)


def test_shot_cut_keeps_every_usable_shot(tmp_path: Path) -> None:
    # Shot A: 2.5 s of one street; shot B: 3.5 s of a differently coloured street.
    street_a, street_b = Street(seed=1, width=160, height_px=120), Street(seed=2, width=160, height_px=120)
    frames = [StreetRenderer(street_a).render(m) for m in camera_path(street_a, np.arange(25) / 10)]
    r_b = StreetRenderer(street_b)
    for name in r_b.tex:
        r_b.tex[name] = cv2.applyColorMap(cv2.cvtColor(r_b.tex[name], cv2.COLOR_BGR2GRAY), cv2.COLORMAP_JET)
    frames += [r_b.render(m) for m in camera_path(street_b, np.arange(35) / 10 + 5.0)]
    video = tmp_path / "two_shots.mp4"
    _write_frames(video, frames)

    both = run_video(video, tmp_path / "all")
    assert [(s.start_frame, s.end_frame) for s in both.shots] == [(0, 25), (25, 60)]
    assert [(t.kind, t.start_frame) for t in both.transitions] == [("cut", 25)]
    assert both.selected_shots == (0, 1)
    assert all(k.frame >= 25 for k in both.keyframes if k.shot == 1)
    assert sorted(p.name for p in (tmp_path / "all").glob("kf_*")) == sorted(k.image for k in both.keyframes)
    parts = split_shots(both)
    assert [p.selected_shots for p in parts] == [(0,), (1,)]
    assert parts[0].keyframes[0].frame == 0 and parts[1].keyframes[0].frame == 25
    assert all(k.index == i for p in parts for i, k in enumerate(p.keyframes))


def test_black_frames_are_a_transition_and_give_no_keyframe(tmp_path: Path) -> None:
    # 2.5 s of a walk, cut to 2 s of black (a fade-out): the black frames belong to no shot.
    street = Street(seed=1, width=160, height_px=120)
    frames = [StreetRenderer(street).render(m) for m in camera_path(street, np.arange(25) / 10)]
    video = tmp_path / "fade.mp4"
    _write_frames(video, frames + [np.zeros_like(frames[0])] * 20)
    kfs = run_video(video, tmp_path / "w")
    assert len(kfs.shots) == 1 and kfs.selected_shots == (0,) and kfs.shots[0].end_frame <= 25
    assert [t.kind for t in kfs.transitions] == ["fade"] and kfs.transitions[0].end_frame == 45
    assert all(k.frame < 25 for k in kfs.keyframes)
    assert sorted(p.name for p in (tmp_path / "w").glob("kf_*")) == sorted(k.image for k in kfs.keyframes)


def test_static_camera(tmp_path: Path) -> None:
    street = Street()
    still = StreetRenderer(street).render(camera_path(street, np.zeros(1))[0])
    rng = np.random.default_rng(0)
    frames = [np.clip(still + rng.normal(0, 2, still.shape), 0, 255).astype(np.uint8) for _ in range(40)]
    video = tmp_path / "static.mp4"
    _write_frames(video, frames)
    kfs = run_video(video, tmp_path / "w", VideoCfg(max_gap_s=1.0))
    assert [k.frame for k in kfs.keyframes] == [0, 10, 20, 30, 39]
    assert all(k.reason in ("first", "max_gap", "last") for k in kfs.keyframes)
    assert all(k.motion_px < 1.0 for k in kfs.keyframes)
    assert any("static" in w for w in kfs.warnings)


def test_still_image_and_folder(tmp_path: Path) -> None:
    street = Street()
    r = StreetRenderer(street)
    poses = camera_path(street, np.array([0.0, 1.0]))
    folder = tmp_path / "pair"
    folder.mkdir()
    for i, m in enumerate(poses):
        cv2.imwrite(str(folder / f"view{i}.png"), r.render(m))
    one = run_video(folder / "view0.png", tmp_path / "one")
    assert one.mode == "image" and len(one.keyframes) == 1 and one.keyframes[0].reason == "image"
    assert one.working_size == (320, 240) and one.fps == 0.0
    pair = run_video(folder, tmp_path / "two")
    assert pair.mode == "images" and [k.frame for k in pair.keyframes] == [0, 1]
    cv2.imwrite(str(folder / "view2.png"), np.zeros((24, 32, 3), np.uint8))
    with pytest.raises(InputError, match="view2.png.*differs"):
        run_video(folder, tmp_path / "three")


@pytest.mark.parametrize(
    "case",
    ["missing", "text_as_mp4", "zero_frames", "one_second", "empty_folder", "bad_png", "blank", "blank_png"],
)
def test_bad_inputs(case: str, tmp_path: Path) -> None:
    if case == "missing":
        path = tmp_path / "nope.mp4"
    elif case == "text_as_mp4":
        path = tmp_path / "notes.mp4"
        path.write_text("this is not a video\n" * 50)
    elif case == "zero_frames":
        path = tmp_path / "empty.mp4"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), 10.0, (64, 48))
        writer.release()
    elif case == "one_second":
        path = tmp_path / "short.mp4"
        _write_frames(path, [np.full((48, 64, 3), i * 20, np.uint8) for i in range(10)])
    elif case == "empty_folder":
        path = tmp_path / "nothing"
        path.mkdir()
    elif case == "blank":  # 3 s of a flat grey (a covered lens), faintly noisy as an encoder leaves it
        path = tmp_path / "blank.mp4"
        rng = np.random.default_rng(0)
        _write_frames(path, [np.clip(128 + rng.normal(0, 1, (48, 64, 3)), 0, 255).astype(np.uint8)] * 30)
    elif case == "blank_png":
        path = tmp_path / "black.png"
        cv2.imwrite(str(path), np.zeros((48, 64, 3), np.uint8))
    else:
        path = tmp_path / "broken.png"
        path.write_bytes(b"\x89PNG not really")
    with pytest.raises(InputError) as info:
        run_video(path, tmp_path / "work")
    msg = str(info.value)
    assert path.name in msg and "\n" not in msg
    if case == "one_second":
        assert "1.00 s" in msg and "2 s" in msg
    if case.startswith("blank"):
        assert "blank" in msg
    assert not list((tmp_path / "work").glob("kf_*")) if (tmp_path / "work").exists() else True


def test_cfg_validation() -> None:
    with pytest.raises(ValueError, match="fov_deg"):
        VideoCfg(fov_deg=180.0)
    with pytest.raises(ValueError, match="min_gap_s"):
        VideoCfg(min_gap_s=3.0, max_gap_s=1.0)


@pytest.mark.skipif(not (OPENCV_DATA / "vtest.avi").is_file(), reason="opencv-doc sample data not installed")
def test_vtest_static_street(tmp_path: Path) -> None:
    kfs = run_video(OPENCV_DATA / "vtest.avi", tmp_path)
    assert isinstance(kfs, KeyframeSet) and kfs.frame_count == 795 and kfs.duration_s == pytest.approx(79.5)
    assert kfs.original_size == (768, 576) and len(kfs.shots) == 1
    assert all(k.reason != "motion" for k in kfs.keyframes)
    assert 40 <= len(kfs.keyframes) <= 60


def test_gray_frames_are_read_by_the_stage_s_frame_numbers(tmp_path: Path) -> None:
    """Frame i of this video is grey level 20 i: the frames asked for come back resized, by number;
    numbers past the end are left out."""
    frames = [np.full((64, 96, 3), 20 * i, np.uint8) for i in range(10)]
    _write_frames(tmp_path / "grey.mp4", frames)
    got = read_frames(tmp_path / "grey.mp4", [7, 2, 5, 40], (48, 32))
    assert sorted(got) == [2, 5, 7]
    for i, gray in got.items():
        assert gray.shape == (32, 48)
        assert float(gray.mean()) == pytest.approx(20 * i, abs=3)
    assert read_frames(tmp_path / "grey.mp4", [], (48, 32)) == {}


def test_colour_frames_come_back_as_rgb(tmp_path: Path) -> None:
    """A red video (BGR 0, 0, 200 written) reads back red first in RGB order."""
    frames = [np.zeros((64, 96, 3), np.uint8) + np.array([0, 0, 200], np.uint8) for _ in range(4)]
    _write_frames(tmp_path / "red.mp4", frames)
    got = read_frames(tmp_path / "red.mp4", [1, 3], (48, 32), colour=True)
    assert sorted(got) == [1, 3] and got[3].shape == (32, 48, 3)
    r, g, b = got[3].reshape(-1, 3).mean(axis=0)
    assert r > 150 and g < 40 and b < 40
