"""The Lab conversions of ``urbanverse.colour``: scales, agreement between them, shapes."""

from __future__ import annotations

import numpy as np

from urbanverse.colour import srgb8_to_lab, srgb8_to_lab_opencv8, srgb_to_lab_opencv


def test_white_black_and_a_known_red() -> None:
    rgb8 = np.array([[255, 255, 255], [0, 0, 0], [255, 0, 0]], np.uint8)
    lab = srgb8_to_lab(rgb8)
    assert np.allclose(lab[0], [100.0, 0.0, 0.0], atol=0.01)
    assert np.allclose(lab[1], [0.0, 0.0, 0.0])
    assert np.allclose(lab[2], [53.24, 80.09, 67.20], atol=0.05)  # sRGB red, D65


def test_the_three_scales_agree() -> None:
    rgb8 = np.random.default_rng(0).integers(0, 256, (2000, 3), dtype=np.uint8)
    exact = srgb8_to_lab(rgb8)
    fast = srgb_to_lab_opencv(rgb8 / 255.0)
    assert fast.dtype == np.float32 and np.abs(fast - exact).max() < 0.5
    coarse = srgb8_to_lab_opencv8(rgb8)
    assert coarse.dtype == np.float64 and ((coarse >= 0) & (coarse <= 255)).all()
    assert np.array_equal(coarse, np.round(coarse))
    expect = np.stack([exact[:, 0] * 255 / 100, exact[:, 1] + 128, exact[:, 2] + 128], -1)
    assert np.abs(coarse - np.clip(expect, 0, 255)).max() < 1.5


def test_shapes_are_kept() -> None:
    grid = np.random.default_rng(1).random((7, 9, 3))
    assert srgb_to_lab_opencv(grid).shape == (7, 9, 3)
    assert srgb_to_lab_opencv(grid.reshape(-1, 3)).shape == (63, 3)
    assert np.array_equal(srgb_to_lab_opencv(grid).reshape(-1, 3), srgb_to_lab_opencv(grid.reshape(-1, 3)))
    rgb8 = (grid * 255).astype(np.uint8)
    assert srgb8_to_lab(rgb8).shape == (7, 9, 3)
    assert srgb8_to_lab_opencv8(rgb8.reshape(-1, 3)).shape == (63, 3)
