"""``urbanverse render-tour``: the video, its ground truth, the walk's physical ranges, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from tests.conftest import edit_scene_json
from urbanverse.cli import app
from urbanverse.records import load_record
from urbanverse.render.augment import AugmentCfg, augment
from urbanverse.render.tour import TourGroundTruth

runner = CliRunner()


@pytest.fixture(scope="module")
def tour(tmp_path_factory) -> tuple[Path, TourGroundTruth]:
    import shutil

    from tests.conftest import EXAMPLE_SCENE

    root = tmp_path_factory.mktemp("tour")
    scene = root / "example"
    shutil.copytree(EXAMPLE_SCENE, scene)
    args = ["render-tour", str(scene), "-o", str(root / "walk.mp4"), "--seconds", "4", "--fps", "10"]
    args += ["--width", "320", "--height", "180", "--seed", "2", "--frames-dir", str(root / "frames")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return root, load_record(TourGroundTruth, root / "walk_gt.json")


def test_video_is_h264_with_every_frame(tour):
    root, gt = tour
    cap = cv2.VideoCapture(str(root / "walk.mp4"))
    fourcc = int(cap.get(cv2.CAP_PROP_FOURCC)).to_bytes(4, "little").decode()
    frames = []
    ok, frame = cap.read()
    while ok:
        frames.append(frame)
        ok, frame = cap.read()
    assert fourcc in ("avc1", "h264") and len(frames) == len(gt.frames) == 40
    assert frames[0].shape == (180, 320, 3)
    # The decoded video is the rendered RGB (up to compression).
    png = cv2.imread(str(root / "frames" / "rgb" / "000010.png"))
    assert np.abs(frames[10].astype(int) - png.astype(int)).mean() < 6


def test_ground_truth_walk_is_a_pedestrian_walk(tour):
    _, gt = tour
    poses = np.array([f.world_from_camera for f in gt.frames]).reshape(-1, 4, 4)
    assert np.allclose(poses[:, :3, :3].transpose(0, 2, 1) @ poses[:, :3, :3], np.eye(3), atol=1e-5)
    height = poses[:, 2, 3] - 0.15  # on the raised sidewalk
    assert 1.45 <= height.min() and height.max() <= 1.75
    speed = np.linalg.norm(np.diff(poses[:, :2, 3], axis=0), axis=1) * gt.fps
    assert speed.max() <= 1.6 and np.median(speed) > 0.9
    yaw_rate = np.degrees(np.abs(np.diff(np.unwrap(np.arctan2(poses[:, 1, 2], poses[:, 0, 2])))))
    assert yaw_rate.max() < 6.0  # degrees per frame: smooth enough for feature tracking
    assert gt.intrinsics.width == 320 and gt.camera_convention.startswith("opencv")
    assert gt.semantic_classes["0"] == "sky"


def test_visible_boxes_match_the_instance_images(tour):
    root, gt = tour
    seen = 0
    for frame in gt.frames[::7]:
        ids = cv2.imread(str(root / "frames" / "instance" / f"{frame.index:06d}.png"), cv2.IMREAD_UNCHANGED)
        depth = cv2.imread(str(root / "frames" / "depth" / f"{frame.index:06d}.png"), cv2.IMREAD_UNCHANGED)
        assert ids.dtype == np.uint16 and depth.dtype == np.uint16
        for obj in frame.visible:
            mask = ids == obj.instance_id
            rows, cols = np.nonzero(mask)
            assert obj.box_xyxy == (cols.min(), rows.min(), cols.max() + 1, rows.max() + 1)
            assert obj.pixels == mask.sum()
            # The object's pixels are about as far as the object (metres, to its base).
            assert np.median(depth[mask]) / 1000.0 < obj.distance_m + 6.0
            seen += 1
    assert seen >= 5


def test_bad_inputs_exit_2_and_leave_nothing(example_dir, tmp_path):
    result = runner.invoke(app, ["render-tour", str(example_dir), "-o", str(tmp_path / "walk.avi")])
    assert result.exit_code == 2 and ".mp4" in result.output
    result = runner.invoke(app, ["render-tour", str(tmp_path / "nope"), "-o", str(tmp_path / "t.mp4")])
    assert result.exit_code == 2
    odd = ["render-tour", str(example_dir), "-o", str(tmp_path / "t.mp4"), "--width", "33"]
    result = runner.invoke(app, odd)
    assert result.exit_code == 2 and "even" in result.output
    # A scene with nowhere to walk: only road.
    edit_scene_json(example_dir, lambda d: d.update(ground=[g for g in d["ground"] if g["type"] == "road"]))
    result = runner.invoke(app, ["render-tour", str(example_dir), "-o", str(tmp_path / "t.mp4")])
    assert result.exit_code == 2 and "walk" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["example"]


def test_augment_keeps_geometry_and_is_seeded():
    image = np.random.default_rng(0).integers(0, 255, (60, 80, 3), dtype=np.uint8)
    a = augment(image, AugmentCfg(), np.random.default_rng(1))
    b = augment(image, AugmentCfg(), np.random.default_rng(1))
    assert a.shape == image.shape and a.dtype == np.uint8 and np.array_equal(a, b)
    assert not np.array_equal(a, image)
    off = AugmentCfg(exposure_stops=0, color_jitter=0, blur_sigma_px=0, noise_std=0)
    assert np.array_equal(augment(image, off, np.random.default_rng(1)), image)


def test_gt_json_is_plain_json(tour):
    root, _ = tour
    data = json.loads((root / "walk_gt.json").read_text())
    assert data["video"] == "walk.mp4" and len(data["frames"][0]["world_from_camera"]) == 16
