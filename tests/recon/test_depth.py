"""Dense points from posed keyframes lie on the synthetic street's surfaces, and a pose that is wrong
leaves far fewer (the two partners then disagree)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.video.synth import Street, StreetRenderer, camera_path, street_reconstruction
from urbanverse.errors import InputError
from urbanverse.recon.depth import DenseCfg, dense_cloud, load_cloud, midpoints, partners, save_cloud

STREET = Street(width=480, height_px=270)
#: The frames are half the pipeline's working size (960 x 540), so the flow runs at full size here.
PARAMS = DenseCfg(scale=1.0)


def _surface_distance(xyz: np.ndarray) -> np.ndarray:
    """Distance (m) of each point to the nearest surface of the synthetic street."""
    ground = np.abs(xyz[:, 2])
    walls = np.abs(np.abs(xyz[:, 1]) - STREET.half_width)
    return np.minimum(np.minimum(ground, walls), np.abs(xyz[:, 0] - STREET.end_x))


@pytest.fixture(scope="module")
def walk():
    poses = camera_path(STREET, np.array([1.0, 2.0, 3.0]))  # keyframes 1.2 m apart
    renderer = StreetRenderer(STREET)
    images = {i: cv2.cvtColor(renderer.render(m), cv2.COLOR_BGR2RGB) for i, m in enumerate(poses)}
    return poses, images


def test_dense_points_lie_on_the_street_surfaces(walk) -> None:
    poses, images = walk
    cloud = dense_cloud(street_reconstruction(STREET, poses), images, PARAMS)
    assert len(cloud.xyz) > 3000
    assert len(np.unique(cloud.keyframe)) >= 2
    assert cloud.rgb.shape == cloud.xyz.shape and cloud.rgb.dtype == np.uint8
    off = _surface_distance(cloud.xyz)
    assert np.median(off) < 0.05
    assert np.mean(off < 0.25) > 0.95
    on_walls = np.abs(np.abs(cloud.xyz[:, 1]) - STREET.half_width) < 0.25
    assert on_walls.sum() > 1000 and cloud.xyz[on_walls, 2].max() > 4.0  # facades, not only ground


def test_a_wrong_pose_breaks_the_partners_agreement(walk) -> None:
    poses, images = walk
    good = len(dense_cloud(street_reconstruction(STREET, poses), images, PARAMS).xyz)
    shifted = poses.copy()
    shifted[2, :3, 3] += (0.0, 0.4, 0.0)  # keyframe 2 put 40 cm sideways
    cloud = dense_cloud(street_reconstruction(STREET, shifted), images, PARAMS)
    assert len(cloud.xyz) < 0.6 * good


def test_partners_are_the_nearest_in_time_within_the_baselines(walk) -> None:
    poses, _ = walk
    recon = street_reconstruction(STREET, poses)
    assert partners(recon, 1, DenseCfg()) == [0, 2]
    assert partners(recon, 0, DenseCfg(max_baseline_m=1.5)) == [1]
    assert partners(recon, 0, DenseCfg(min_baseline_m=2.0)) == [2]


def test_midpoints_recover_points_seen_by_two_cameras(walk) -> None:
    poses, _ = walk
    rng = np.random.default_rng(1)
    points = np.c_[rng.uniform(5, 20, 100), rng.uniform(-4, 4, 100), rng.uniform(0, 6, 100)]
    k = STREET.k

    def pixels(m: np.ndarray) -> np.ndarray:
        cam = (points - m[:3, 3]) @ m[:3, :3]
        return (cam @ k.T)[:, :2] / cam[:, 2:3]

    found = midpoints(poses[0], poses[2], k, pixels(poses[0]), pixels(poses[2]))
    assert found == pytest.approx(points, abs=1e-6)
    assert np.isnan(midpoints(poses[0], poses[0], k, pixels(poses[0]), pixels(poses[0]))).all()


def test_a_saved_cloud_loads_back_and_a_broken_file_says_so(walk, tmp_path) -> None:
    poses, images = walk
    cloud = dense_cloud(street_reconstruction(STREET, poses), images, PARAMS)
    save_cloud(cloud, tmp_path / "dense.npz")
    back = load_cloud(tmp_path / "dense.npz")
    assert np.abs(back.xyz - cloud.xyz).max() < 1e-5  # float32: well under a millimetre
    assert (back.rgb == cloud.rgb).all() and (back.keyframe == cloud.keyframe).all()
    (tmp_path / "broken.npz").write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(InputError, match="broken.npz: dense points missing or unreadable"):
        load_cloud(tmp_path / "broken.npz")
