"""Which keyframes of a camera-stage model a walking camera can have: a model that breaks part way."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.video.synth import Street, camera_path
from urbanverse.recon.geometry import SparsePoints
from urbanverse.recon.sfm import RawReconstruction
from urbanverse.recon.stage import ReconCfg, _consistent_keyframes

BREAK_AT = 7  # keyframes 7..11 of 12 are bent downwards, as when a registration fails at a turn


def _broken_model(with_ground: bool) -> tuple[RawReconstruction, SimpleNamespace]:
    rng = np.random.default_rng(0)
    times = np.linspace(0.0, 8.0, 12)
    poses = camera_path(Street(), times)
    pivot = poses[BREAK_AT - 1, :3, 3].copy()
    bend = Rotation.from_euler("y", 45, degrees=True).as_matrix()  # the path dives 45 deg
    for m in poses[BREAK_AT:]:
        m[:3, :3] = bend @ m[:3, :3]
        m[:3, 3] = pivot + bend @ (m[:3, 3] - pivot)
    n = 300
    walls = np.c_[rng.uniform(-2, 12, n), rng.choice([-4.0, 4.0], n), rng.uniform(0.5, 8, n)]
    ground = np.c_[rng.uniform(-2, 12, n), rng.uniform(-4, 4, n), rng.normal(0, 0.01, n)]
    xyz = np.vstack([walls, ground]) if with_ground else walls
    # Every point is seen by two of the consistent keyframes.
    observers = np.sort(rng.choice(BREAK_AT, size=(len(xyz), 2), replace=True), axis=1)
    observers[:, 1] = np.where(observers[:, 0] == observers[:, 1], observers[:, 0] + 1, observers[:, 1])
    points = SparsePoints(
        xyz=xyz,
        rgb=np.zeros((len(xyz), 3), np.uint8),
        error_px=np.zeros(len(xyz), np.float32),
        obs_offsets=np.arange(0, 2 * len(xyz) + 1, 2, dtype=np.int64),
        obs_keyframes=observers.ravel().astype(np.int32),
    )
    raw = RawReconstruction(
        wfc={i: m for i, m in enumerate(poses)},
        points=points,
        fx=300.0,
        fy=300.0,
        cx=160.0,
        cy=120.0,
        mean_reprojection_error_px=0.5,
        num_observations={},
    )
    keyframes = SimpleNamespace(keyframes=[SimpleNamespace(time_s=float(t)) for t in times])
    return raw, keyframes


def test_the_part_before_the_break_is_kept_and_gets_its_own_ground() -> None:
    raw, keyframes = _broken_model(with_ground=True)
    kept = _consistent_keyframes(raw, keyframes, ReconCfg())  # type: ignore[arg-type]
    assert kept.keyframes == list(range(BREAK_AT)) and kept.dropped == list(range(BREAK_AT, 12))
    assert "height" in kept.why and kept.alignment.ground.method == "ransac"
    heights = [kept.alignment.apply_pose(raw.wfc[i])[2, 3] for i in kept.keyframes]
    assert heights == pytest.approx([1.6] * BREAK_AT, abs=0.1)


def test_a_minority_without_a_ground_plane_of_its_own_is_not_plausible() -> None:
    raw, keyframes = _broken_model(with_ground=False)
    kept = _consistent_keyframes(raw, keyframes, ReconCfg())  # type: ignore[arg-type]
    assert kept.keyframes == [] and kept.dropped == list(range(12))
