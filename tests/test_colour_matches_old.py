"""The colour module reproduces each Lab conversion it replaces, bit for bit."""

from __future__ import annotations

import cv2
import numpy as np

from urbanverse.assets.textures import rgb8_to_lab
from urbanverse.colour import srgb8_to_lab, srgb8_to_lab_opencv8, srgb_to_lab_opencv
from urbanverse.layout.facades import _lab


def test_matches_the_old_conversions() -> None:
    rng = np.random.default_rng(0)
    rgb8 = rng.integers(0, 256, (4000, 3), dtype=np.uint8)
    every = np.stack(np.meshgrid(*[np.arange(0, 256, 5)] * 3), -1).reshape(-1, 3).astype(np.uint8)
    for colours in (rgb8, every, rgb8.reshape(40, 100, 3)):
        assert np.array_equal(srgb8_to_lab(colours), rgb8_to_lab(colours))
    for colours in (rgb8, every, rgb8.astype(float)):
        assert np.array_equal(srgb8_to_lab_opencv8(colours), _lab(colours))
    for shape in ((37, 53, 3), (200, 301, 3)):
        mean = rng.random(shape)  # the ground map's mean colours, float64 in [0, 1]
        old = cv2.cvtColor(mean.astype(np.float32), cv2.COLOR_RGB2Lab)
        new = srgb_to_lab_opencv(mean)
        assert new.dtype == old.dtype and np.array_equal(new, old)
