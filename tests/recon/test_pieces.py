"""Joining a separately mapped piece of a walk to its model (urbanverse.recon.pieces)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from urbanverse.recon.pieces import shared_similarity, unposed_runs


def test_unposed_runs_are_the_long_gaps_at_the_head_middle_and_tail():
    kept = set(range(3, 10)) | {12} | set(range(14, 20))
    assert unposed_runs(kept, 25, min_length=3) == [(0, 2), (20, 24)]  # 10-11 and 13 are short
    assert unposed_runs(kept, 25, min_length=1) == [(0, 2), (10, 11), (13, 13), (20, 24)]
    assert unposed_runs(set(range(10)), 10, min_length=1) == []


def _walk(n: int = 12, seed: int = 0) -> dict[int, np.ndarray]:
    """Camera-to-world poses of a walk along x, 0.6 m a step, with a little head turn and bob."""
    rng = np.random.default_rng(seed)
    poses = {}
    for k in range(n):
        m = np.eye(4)
        m[:3, :3] = Rotation.from_euler("zyx", rng.normal(0, [5, 1, 1]), degrees=True).as_matrix()
        m[:3, 3] = [0.6 * k, rng.normal(0, 0.03), 1.6 + rng.normal(0, 0.02)]
        poses[k] = m
    return poses


def _moved(poses: dict[int, np.ndarray], scale: float, rotation: np.ndarray, shift: np.ndarray):
    out = {}
    for k, m in poses.items():
        n = np.eye(4)
        n[:3, :3] = rotation @ m[:3, :3]
        n[:3, 3] = scale * rotation @ m[:3, 3] + shift
        out[k] = n
    return out


def test_a_piece_in_another_frame_joins_exactly_though_its_centres_lie_near_a_line():
    model = _walk()
    rotation = Rotation.from_euler("xyz", [40, -25, 70], degrees=True).as_matrix()
    # The piece's frame: model = 2.5 * R @ piece + t, so piece = R^T (model - t) / 2.5.
    inverse = rotation.T
    piece_all = _moved(model, 1 / 2.5, inverse, -inverse @ np.array([1.0, -2.0, 0.5]) / 2.5)
    head = {k: m for k, m in model.items() if k < 8}  # the model lost keyframes 8-11
    piece = {k: m for k, m in piece_all.items() if k >= 4}  # the piece holds 4-11
    join = shared_similarity(head, piece)
    assert join is not None and join.error < 1e-9
    assert join.scale == pytest.approx(2.5)
    for k in range(8, 12):  # the lost keyframes, back in the model's frame
        assert join.apply_pose(piece[k]) == pytest.approx(model[k], abs=1e-9)


def test_the_join_error_grows_with_a_bent_piece_and_too_few_shared_keyframes_give_none():
    model = _walk()
    bent = {k: m.copy() for k, m in model.items()}
    for k in range(4, 8):
        bent[k][1, 3] += 0.3 * (k - 3)  # the piece's shared part veers off sideways
    join = shared_similarity(model, bent)
    assert join is not None and join.error > 0.05
    assert shared_similarity({k: model[k] for k in (0, 1)}, model) is None
