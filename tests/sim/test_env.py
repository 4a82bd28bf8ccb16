"""NavVecEnv: check_env, determinism, terminated vs truncated, many scenes, metrics, wrappers."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import urbanverse.sim as sim
from urbanverse.errors import InputError
from urbanverse.sim import DepthCameraCfg, LidarCfg, NavEnvCfg, NavVecEnv, PedestrianCfg, PointNavCfg
from urbanverse.sim.terms import rotate_b2w

from .conftest import EXAMPLE

LIDAR = LidarCfg(num_beams=16)  # default table: shared with the sensor tests through the session cache


def _env(**kw) -> NavVecEnv:
    base = dict(scene_dirs=(EXAMPLE,), num_envs=8, lidar=LIDAR, pedestrians=PedestrianCfg(count=3))
    return NavVecEnv(NavEnvCfg(**(base | kw)))


@pytest.fixture(scope="module")
def env():
    return _env(depth=DepthCameraCfg(height=8, width=8))


def test_check_env_passes(env):
    sim.check_env(env)
    assert env.num_obs == 16 + 64 + 2 + 3 + 2
    assert env.obs_layout["depth"] == slice(16, 80)


def test_same_seed_same_rollout_and_seed_matters(env):
    def run(seed):
        env.reset(seed=seed)
        gen = torch.Generator().manual_seed(7)
        out = []
        for _ in range(15):
            obs, rew, done, _ = env.step(torch.rand(8, 2, generator=gen) * 2 - 1)
            out.append(torch.cat([obs.flatten(), rew, done.float()]))
        return torch.cat(out)

    assert torch.equal(run(3), run(3))
    assert not torch.equal(run(3), run(4))


def test_nan_actions_never_reach_observations(env):
    env.reset(seed=0)
    for _ in range(5):
        obs, rew, _, extras = env.step(torch.full((8, 2), float("nan")))
        assert torch.isfinite(obs).all() and torch.isfinite(rew).all()
    assert extras["nonfinite_actions"] == 16


def test_time_outs_are_truncations_not_terminations():
    env = _env(task=PointNavCfg(max_episode_steps=5))
    for _ in range(4):
        _, _, dones, extras = env.step(torch.zeros(8, 2))
        assert not dones.any()
    _, _, dones, extras = env.step(torch.zeros(8, 2))  # standing still: nobody arrives or collides
    assert dones.all() and extras["time_outs"].all()
    assert extras["log"]["episode/length"] == 5.0
    assert extras["final_obs"].shape == (8, env.num_obs)
    assert {
        f"reward/{k}" for k in ("arrival", "collision", "position_coarse", "position_fine", "velocity")
    } <= set(extras["log"])


def test_success_terminates_without_time_out():
    env = _env(task=PointNavCfg(success_radius=200.0))
    _, rew, dones, extras = env.step(torch.zeros(8, 2))
    assert dones.all() and not extras["time_outs"].any()
    assert (rew > 2000).all() and extras["log"]["metrics/success_rate"] == 1.0
    summary = env.metrics.summary()
    assert summary["metrics/example/success_rate"] == 1.0 and summary["metrics/episodes"] == 8


def test_many_scenes_rotate(tmp_path):
    import shutil

    other = tmp_path / "copy"
    shutil.copytree(EXAMPLE, other)
    env = _env(scene_dirs=(EXAMPLE, other), task=PointNavCfg(success_radius=200.0, episodes_per_scene=1))
    assert env.scene.tolist() == [0, 1] * 4
    env.step(torch.zeros(8, 2))  # every episode succeeds at once, then each env moves on
    assert env.scene.tolist() == [1, 0] * 4
    assert set(env.scene_names) == {"example_0", "example_1"}


def test_gymnasium_vector_and_single_env():
    venv = gym.make_vec("UrbanVerse-PointNav-Legged-v0", num_envs=4, lidar=LIDAR)
    obs, _ = venv.reset(seed=1)
    assert obs.shape == (4, 16 + 2 + 3 + 3) and venv.single_action_space.shape == (3,)
    for _ in range(5):
        obs, rew, term, trunc, _ = venv.step(venv.action_space.sample())
    assert obs.dtype == np.float32 and rew.shape == term.shape == trunc.shape == (4,)
    single = gym.make("UrbanVerse-PointNav-Wheeled-v0", lidar=LIDAR, task=PointNavCfg(max_episode_steps=3))
    single.reset(seed=0)
    for _ in range(3):
        obs, rew, term, trunc, _ = single.step(single.action_space.sample())
    assert trunc or term


def test_stable_baselines3_vec_env():
    from urbanverse.sim.wrappers_sb3 import SB3VecEnv

    venv = SB3VecEnv(_env(num_envs=4, task=PointNavCfg(max_episode_steps=4)))
    obs = venv.reset()
    assert obs.shape == (4, venv.observation_space.shape[0])
    obs, rew, dones, infos = venv.step(np.stack([venv.action_space.sample() for _ in range(4)]))
    assert obs.shape == (4, venv.observation_space.shape[0]) and rew.dtype == np.float32
    venv.reset()
    for _ in range(4):
        obs, rew, dones, infos = venv.step(
            np.zeros((4, 2), np.float32)
        )  # standing still until the time limit
    assert dones.all()
    assert all("terminal_observation" in i and i["TimeLimit.truncated"] for i in infos)


def test_device_agnostic_torch_path_passes_check_env(monkeypatch):
    # The torch code is what runs on CUDA; force it on the CPU (no fused numba kernels).
    from urbanverse.sim import kernels

    monkeypatch.setattr(kernels, "available", lambda device: False)
    env = _env(num_envs=4, depth=DepthCameraCfg(height=6, width=6))
    sim.check_env(env, steps=10)


def test_route_waypoint_observation_leads_down_the_geodesic_field():
    env = _env(task=PointNavCfg(route_waypoint_m=1.0), pedestrians=PedestrianCfg(count=0))
    sim.check_env(env)
    assert env.obs_layout["route_b"] == slice(18, 20) and env.num_obs == 16 + 2 + 2 + 3 + 2
    d, world = env.robot.data, env.world
    waypoint = world.route_waypoint(env.scene, env.goal, d.pos_w, 1.0)
    here = world.geodesic_distance(env.scene, env.goal, d.pos_w)
    there = world.geodesic_distance(env.scene, env.goal, waypoint)
    far = (env.goal_xy - d.pos_w).norm(dim=-1) > 1.0
    assert far.any()
    assert torch.allclose((waypoint - d.pos_w).norm(dim=-1)[far], torch.ones(int(far.sum())), atol=1e-5)
    assert (there[far] < here[far]).all()  # one metre along the route is closer to the goal
    # The observation is that waypoint in the body frame: rotated back, it points the same way.
    route_b = env.get_observations()[:, env.obs_layout["route_b"]]
    route_w = rotate_b2w(route_b[:, None, :], d.yaw_w)[:, 0]
    assert torch.allclose(route_w, waypoint - d.pos_w, atol=1e-5)


def test_negative_route_radius_is_refused():
    with pytest.raises(InputError, match="route_waypoint_m"):
        PointNavCfg(route_waypoint_m=-1.0)
