"""The Lab conversions of ``urbanverse.colour``: scales, agreement between them, shapes."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.colour import ciede2000, srgb8_to_lab, srgb8_to_lab_opencv8, srgb_to_lab_opencv


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


@pytest.mark.parametrize(
    ("lab1", "lab2", "expected"),
    [  # pairs 1, 2, 7, 17 and 25 of Sharma, Wu and Dalal (2005), Table 1
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 3.1571, -77.2803), (50.0, 0.0, -82.7485), 2.8615),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_ciede2000_matches_the_published_test_pairs(lab1, lab2, expected):
    assert float(ciede2000(np.array(lab1), np.array(lab2))) == pytest.approx(expected, abs=1e-4)
    assert float(ciede2000(np.array(lab2), np.array(lab1))) == pytest.approx(expected, abs=1e-4)


def test_ciede2000_broadcasts_and_is_zero_for_equal_colours():
    labs = np.array([[50.0, 10.0, 10.0], [20.0, -5.0, 30.0]])
    assert np.allclose(ciede2000(labs, labs), 0.0)
    assert ciede2000(labs, np.array([50.0, 10.0, 10.0])).shape == (2,)
