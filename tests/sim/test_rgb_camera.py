"""RGB camera: poses, renders of a known plaza (sky over ground, a pedestrian ahead), env wiring."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import urbanverse.sim as sim
from urbanverse.sim import NavEnvCfg, NavVecEnv, PedestrianCfg, RgbCameraCfg
from urbanverse.sim.sensors.rgb_camera import RgbCamera, camera_poses

from .conftest import EXAMPLE, world_batch

LEVEL = RgbCameraCfg(height=24, width=32, pitch=0.0, mount_height=1.0, mount_forward=0.0)


@pytest.fixture(scope="module")
def plaza_camera(plaza_dir):
    camera = RgbCamera(LEVEL, world_batch(plaza_dir), [plaza_dir], 2, "cpu", max_pedestrians=1)
    yield camera
    camera.close()


def test_camera_pose_axes_follow_yaw_and_pitch():
    cfg = RgbCameraCfg(pitch=math.radians(30), mount_height=0.5, mount_forward=0.2)
    pose = camera_poses(cfg, np.array([[1.0, 2.0]]), np.array([math.pi / 2]), np.array([0.15]))[0]
    rot = pose[:3, :3]
    assert np.allclose(rot.T @ rot, np.eye(3)) and np.linalg.det(rot) == pytest.approx(1.0)
    assert np.allclose(rot[:, 2], [0.0, math.cos(math.radians(30)), -0.5])  # optical axis: +y, 30 deg down
    assert np.allclose(rot[:, 0], [1.0, 0.0, 0.0])  # image x (right) is world +x when facing +y
    assert np.allclose(pose[:3, 3], [1.0, 2.2, 0.65])


def test_level_view_shows_sky_above_ground_and_a_pedestrian_ahead(plaza_camera):
    scene = torch.zeros(2, dtype=torch.long)
    pos = torch.tensor([[2.0, 5.0], [2.0, 5.0]])
    yaw = torch.zeros(2)
    ground = torch.zeros(2)
    # Environment 0 has a pedestrian 3 m ahead; environment 1's stands behind the camera.
    peds = torch.tensor([[[5.0, 5.0]], [[0.5, 5.0]]])
    rgb = plaza_camera.compute(scene, pos, yaw, ground, peds, 0.3).numpy().astype(int)
    assert rgb.shape == (2, 24, 32, 3)
    sky, floor = rgb[1, :6], rgb[1, -6:]
    assert (sky[..., 2] > sky[..., 0]).all()  # blue sky in the top rows
    assert np.abs(floor - floor.mean((0, 1))).max() < 40  # a uniform plaza below the horizon
    centre = (slice(8, 16), slice(14, 18))
    assert np.abs(rgb[0][centre] - rgb[1][centre]).sum(-1).mean() > 60  # the pedestrian covers the centre
    assert np.array_equal(rgb[0, :, :4], rgb[1, :, :4])  # and nothing else changes
    again = plaza_camera.compute(scene, pos, yaw, ground, peds, 0.3).numpy()
    assert np.array_equal(again, rgb)


def test_env_with_rgb_passes_check_env_and_lays_out_pixels():
    cfg = RgbCameraCfg(height=8, width=8)
    env = NavVecEnv(
        NavEnvCfg(scene_dirs=(EXAMPLE,), num_envs=3, lidar=None, rgb=cfg, pedestrians=PedestrianCfg(count=2))
    )
    try:
        sim.check_env(env, steps=6)
        pixels = env.get_observations()[:, env.obs_layout["rgb"]]
        assert pixels.shape == (3, 8 * 8 * 3) and 0.0 <= float(pixels.min()) and float(pixels.max()) <= 1.0
        assert torch.equal(pixels, env.rgb.data.rgb.flatten(1).float() / 255.0)
        assert float(pixels.std()) > 0.02  # a real image, not a blank buffer
    finally:
        env.close()
