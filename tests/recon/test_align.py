"""Ground fit and world-frame alignment on synthetic point clouds under a random similarity (no images)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from tests.video.synth import Street, camera_path
from urbanverse.recon.align import AlignCfg, align_to_ground, level_between
from urbanverse.recon.geometry import pose_angles


def _scene(rng: np.random.Generator, n_ground: int = 400, n_wall: int = 400, n_outliers: int = 150):
    times = np.linspace(0.0, 8.0, 12)
    poses = camera_path(Street(), times)
    ground = np.c_[rng.uniform(-2, 16, n_ground), rng.uniform(-4, 4, n_ground), rng.normal(0, 0.01, n_ground)]
    side = rng.choice([-4.0, 4.0], n_wall)
    walls = np.c_[rng.uniform(-2, 16, n_wall), side + rng.normal(0, 0.01, n_wall), rng.uniform(0, 8, n_wall)]
    junk = np.c_[
        rng.uniform(-2, 16, n_outliers), rng.uniform(-4, 4, n_outliers), rng.uniform(-1, 6, n_outliers)
    ]
    return times, poses, np.vstack([ground, walls, junk])


def _similarity(rng: np.random.Generator) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = 0.37 * Rotation.random(random_state=rng.integers(1 << 31)).as_matrix()
    t[:3, 3] = rng.normal(0, 5, 3)
    return t


def _apply(t: np.ndarray, poses: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rot = t[:3, :3] / np.cbrt(np.linalg.det(t[:3, :3]))
    out = poses.copy()
    out[:, :3, :3] = rot @ poses[:, :3, :3]
    out[:, :3, 3] = poses[:, :3, 3] @ t[:3, :3].T + t[:3, 3]
    return out, pts @ t[:3, :3].T + t[:3, 3]


def _yaw_between(a: np.ndarray, b: np.ndarray) -> float:
    """Rotation angle about +Z (through the origin) that best maps points ``a`` onto ``b`` (least squares)."""
    num = (a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]).sum()
    den = (a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1]).sum()
    return math.atan2(num, den)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alignment_recovers_the_ground_frame(seed: int) -> None:
    rng = np.random.default_rng(seed)
    times, poses, pts = _scene(rng)
    moved_poses, moved_pts = _apply(_similarity(rng), poses, pts)
    al = align_to_ground(moved_poses, moved_pts, times, AlignCfg(camera_height_m=1.6))
    assert al.scale_source == "ground_plane" and al.ground.method == "ransac"
    # Inliers: the ground points along the walked path (within one camera height of it).
    assert al.ground.num_inliers >= 80 and al.ground.residual_m < 0.02 and al.ground.tilt_to_up_deg < 3
    # The true path's mean height is 1.6 m up to its 3 cm bob, so the recovered frame is the truth up to
    # the small yaw between the true X axis and the principal direction of the swaying path.
    rec = np.stack([al.apply_pose(m) for m in moved_poses])
    yaw = _yaw_between(rec[:, :3, 3], poses[:, :3, 3])
    assert abs(yaw) < math.radians(1.0)
    rz = Rotation.from_euler("z", yaw).as_matrix()
    np.testing.assert_allclose(rec[:, :3, 3] @ rz.T, poses[:, :3, 3], atol=0.03)
    for a, b in zip(rec, poses, strict=True):
        np.testing.assert_allclose(pose_angles(rz @ a[:3, :3]), pose_angles(b), atol=math.radians(0.5))
        assert np.linalg.det(a[:3, :3]) == pytest.approx(1.0)
    np.testing.assert_allclose(al.apply_points(moved_pts) @ rz.T, pts, atol=0.05)


def test_without_ground_points_scale_comes_from_walking_speed() -> None:
    rng = np.random.default_rng(3)
    times, poses, pts = _scene(rng, n_ground=0, n_outliers=0)
    pts = pts[pts[:, 2] > 2.0]  # facades above the camera only: nothing to fit a ground to
    moved_poses, moved_pts = _apply(_similarity(rng), poses, pts)
    al = align_to_ground(moved_poses, moved_pts, times, AlignCfg(camera_height_m=1.6, walking_speed_mps=1.5))
    assert al.ground.method == "up_prior" and al.scale_source == "walking_speed_prior"
    rec = np.stack([al.apply_pose(m) for m in moved_poses])
    path = np.linalg.norm(np.diff(rec[:, :3, 3], axis=0), axis=1).sum()
    assert path / (times[-1] - times[0]) == pytest.approx(1.5)
    assert rec[:, 2, 3].mean() == pytest.approx(1.6)
    # The up prior (camera "up" axes with the travel component removed) is still close to the truth.
    assert abs(rec[-1, 2, 3] - rec[0, 2, 3]) < 0.15 and rec[-1, 0, 3] > 5.0
    assert any("walking" in w for w in al.warnings)


def test_the_walked_sidewalk_is_the_ground_not_the_road_beside_it() -> None:
    rng = np.random.default_rng(4)
    times, poses, pts = _scene(rng, n_ground=0, n_outliers=0)
    # The camera walks on a 3 m sidewalk (|y| < 1.5); the road 15 cm lower fills the rest, on one side
    # more than the other, so a plane through both would tilt sideways.
    side = np.c_[rng.uniform(-2, 16, 250), rng.uniform(-1.5, 1.5, 250), rng.normal(0, 0.01, 250)]
    road = np.c_[rng.uniform(-2, 16, 500), rng.uniform(1.5, 4.0, 500), rng.normal(-0.15, 0.01, 500)]
    pts = np.vstack([pts, side, road])
    moved_poses, moved_pts = _apply(_similarity(rng), poses, pts)
    al = align_to_ground(moved_poses, moved_pts, times, AlignCfg(camera_height_m=1.6))
    back = al.apply_points(moved_pts)
    n_side = len(pts) - 750
    assert abs(float(np.median(back[n_side : n_side + 250, 2]))) < 0.02  # the sidewalk is z = 0
    assert float(np.median(back[n_side + 250 :, 2])) == pytest.approx(-0.15, abs=0.03)
    assert al.ground.tilt_to_up_deg < 1.0


def test_the_level_between_two_ground_fits_halves_their_gap_and_rescales() -> None:
    """Two fits of the same walk, one on the pavement and one on a road a curb (0.15 m) below it:
    halfway between them the cameras stand 0.075 m higher than above the pavement's plane, and the
    scale makes that the camera-height prior."""
    rng = np.random.default_rng(3)
    times, poses, _ = _scene(rng)
    pavement = np.c_[rng.uniform(-2, 16, 400), rng.uniform(-4, 4, 400), np.zeros(400)]
    road = pavement - [0.0, 0.0, 0.15]
    t = _similarity(rng)
    wfc, on_pavement = _apply(t, poses, pavement)
    _, on_road = _apply(t, poses, road)
    p = AlignCfg()
    upper, lower = (align_to_ground(wfc, pts, times, p) for pts in (on_pavement, on_road))
    assert lower.scale < upper.scale  # the cameras look higher above the road
    centres = wfc[:, :3, 3]
    middle = level_between(upper, lower, centres, p)
    assert middle.ground.camera_height_m == pytest.approx(p.camera_height_m, abs=0.02)
    heights_m = np.array([upper.apply_pose(m)[2, 3] for m in wfc]) / upper.scale  # model units
    halfway = np.array([middle.apply_pose(m)[2, 3] for m in wfc]) / middle.scale
    assert np.mean(halfway - heights_m) == pytest.approx(0.5 * 0.15 * 0.37, rel=0.05)  # (model units)
    assert middle.rotation == pytest.approx(upper.rotation)
    assert level_between(upper, upper, centres, p).transform == pytest.approx(upper.transform)
