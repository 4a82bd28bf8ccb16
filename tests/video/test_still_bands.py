"""A band that stays still while the street moves (a burnt-in caption) is cut off the shot's keyframes."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from urbanverse.bench.edited_video import EditCfg, build_edited_video
from urbanverse.video import VideoCfg, run_video
from urbanverse.video.record import split_shots
from urbanverse.video.stage import static_bands


def test_still_rows_at_the_edges_make_bands_and_a_still_camera_makes_none():
    rng = np.random.default_rng(0)
    changes = rng.uniform(8.0, 12.0, (20, 100)).astype(np.float32)
    changes[:, 80:] = 0.5  # a caption bar over the bottom fifth
    assert static_bands(changes, VideoCfg()) == (0, 20)
    changes[:, :2] = 0.5  # two still rows at the top: under 3 % of the height, no band
    assert static_bands(changes, VideoCfg()) == (0, 20)
    assert static_bands(np.full((20, 100), 0.5, np.float32), VideoCfg()) == (0, 0)  # a still camera
    assert static_bands(changes, VideoCfg(static_band_ratio=0.0)) == (0, 0)


def test_a_captioned_walk_is_cropped_above_its_caption(tmp_path: Path):
    cfg = EditCfg(shots=2, shot_s=(2.5, 2.5), width=320, height=180, kinds=("cut",), overlay_p=1.0)
    video = build_edited_video(tmp_path / "captioned.mp4", 3, cfg)
    kfs = run_video(video.path, tmp_path / "work", VideoCfg())
    for part in split_shots(kfs):
        top, bottom = part.crop_rows
        assert top == 0 and 0.17 * 180 <= bottom <= 0.17 * 180 + 6  # the bar covers 18 %
        assert part.intrinsics.height == 180 - bottom
        image = cv2.imread(str(tmp_path / "work" / part.keyframes[0].image))
        assert image.shape[:2] == (180 - bottom, 320)
        assert image[-3:].mean() > 60  # street, not the dark caption bar
