"""The sky sample for matching a sky map: the bright top of each frame, capped in size."""

from __future__ import annotations

import numpy as np

from urbanverse.retrieval.stage import sky_pixels


def test_sky_pixels_are_the_bright_top_of_each_frame():
    frame = np.zeros((100, 40, 3), np.uint8)
    frame[:10, :20] = 200  # bright half of the top tenth
    frame[:10, 20:] = 20
    frame[10:] = 255  # below the top tenth: never sky
    pixels = sky_pixels([frame, frame])
    assert len(pixels) == 2 * 10 * 20 and (pixels == 200).all()


def test_sky_pixels_are_capped_evenly_over_the_frames():
    frames = [np.full((100, 1000, 3), value, np.uint8) for value in (100, 200)]
    pixels = sky_pixels(frames, max_pixels=1000)
    assert 900 <= len(pixels) <= 1000
    assert abs(int((pixels[:, 0] == 100).sum()) - int((pixels[:, 0] == 200).sum())) <= 1
