"""The plane sweep finds the ground of the synthetic street at its true height, in an arbitrary
reconstruction scale, and finds nothing in a textureless pair."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.video.synth import Street, StreetRenderer, camera_path
from urbanverse.recon.dense import spread_pairs, sweep_ground

STREET = Street(width=480, height_px=270)
SCALE = 0.37  # reconstruction units per metre, as an SfM model might have


def _scaled(poses: np.ndarray) -> dict[int, np.ndarray]:
    out = {}
    for i, m in enumerate(poses):
        m = m.copy()
        m[:3, 3] *= SCALE
        out[i] = m
    return out


@pytest.fixture(scope="module")
def pair():
    poses = camera_path(STREET, np.array([1.0, 2.0]))
    renderer = StreetRenderer(STREET)
    grays = {i: cv2.cvtColor(renderer.render(m), cv2.COLOR_BGR2GRAY) for i, m in enumerate(poses)}
    return grays, _scaled(poses)


def test_sweep_finds_the_ground_at_the_camera_height(pair) -> None:
    grays, wfc = pair
    points = sweep_ground(spread_pairs([0, 1]), grays, wfc, STREET.k, np.array([0.0, 0.0, 1.0]))
    assert len(points) > 500
    height = float(np.mean([m[2, 3] for m in wfc.values()]) - np.median(points[:, 2]))
    assert height == pytest.approx(STREET.camera_height * SCALE, rel=0.03)


def test_sweep_finds_nothing_without_texture(pair) -> None:
    _, wfc = pair
    flat = {i: np.full((STREET.height_px, STREET.width), 128, np.uint8) for i in wfc}
    assert len(sweep_ground([(0, 1)], flat, wfc, STREET.k, np.array([0.0, 0.0, 1.0]))) == 0


def test_spread_pairs_keeps_the_ends() -> None:
    pairs = spread_pairs(list(range(20)), max_pairs=4)
    assert len(pairs) == 4 and pairs[0] == (0, 1) and pairs[-1] == (18, 19)
