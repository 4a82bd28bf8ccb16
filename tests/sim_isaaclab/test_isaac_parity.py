"""The Isaac Lab task against the batched environment, on the same states, without Isaac.

What the task's ``mdp`` computes goes through ``NavState`` and ``sim.terms`` with Isaac Lab's
tensors as inputs (world-frame root pose, (w, x, y, z) quaternions, body velocities, ray-caster
hit points). These tests build those inputs from a ``NavVecEnv``'s state, placed at the
environment origins the task uses, and check that observations and rewards come out equal; the
LiDAR beams are cast against the scan-wall mesh read back from the USD the RayCaster loads.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from pxr import Usd, UsdGeom, UsdLux, UsdPhysics

from tests.conftest import EXAMPLE_SCENE, REPO
from tests.sim.conftest import box, write_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.sim import terms
from urbanverse.sim.env import NavVecEnv
from urbanverse.sim.isaaclab.nav_state import NavState
from urbanverse.sim.isaaclab.scenes import cast_rays, compose_stage, grid_env_origins, read_scan_walls
from urbanverse.sim.isaaclab.spec import PointNavSpec
from urbanverse.sim.sensors.lidar_cfg import LidarCfg
from urbanverse.sim.task import REWARD_TERMS

NUM_ENVS = 12
SENSOR_HEIGHT = 0.2  # m above the base: any height meets the scan walls


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> PointNavSpec:
    second = write_scene(
        tmp_path_factory.mktemp("scenes") / "yard",
        [("p", "plaza", box(0, 0, 12, 8), 0.0), ("s", "sidewalk", box(12, 0, 16, 8), 0.15)],
    )
    return PointNavSpec(
        scene_dirs=(EXAMPLE_SCENE, second), num_envs=NUM_ENVS, lidar=LidarCfg(method="sphere")
    )


@pytest.fixture(scope="module")
def env_scenes(spec, tmp_path_factory):
    return spec.env_scenes(tmp_path_factory.mktemp("isaac"))


@pytest.fixture(scope="module")
def pair(spec, env_scenes):
    """A batched environment a few steps in, and a NavState over the same world at the task's origins."""
    env = NavVecEnv(spec.nav_env_cfg(seed=3))
    gen = torch.Generator().manual_seed(0)
    for _ in range(4):
        env.step(torch.rand(NUM_ENVS, 2, generator=gen) * 2 - 1)
    origins = torch.as_tensor(env_scenes.origins, dtype=torch.float32)
    state = NavState(env.world, env_scenes.centres, origins)
    assert torch.equal(state.scene, env.scene)  # environment i holds scene i % M in both
    state.goal, state.goal_xy = env.goal.clone(), env.goal_xy.clone()
    return env, state


def isaac_pose(env: NavVecEnv, state: NavState) -> tuple[torch.Tensor, torch.Tensor]:
    """Root position (N, 3) and orientation (N, 4) as Isaac Lab reports them for ``env``'s robots."""
    d = env.robot.data
    return state.to_world(d.pos_w, d.height_w), terms.quat_from_yaw(d.yaw_w)


def test_the_observation_layout_is_the_shipped_policys(spec, pair) -> None:
    env, _ = pair
    shipped = json.loads((REPO / "policies" / "wheeled-lidar-mlp" / "policy.onnx.json").read_text())
    layout = spec.observation_layout()
    assert layout == {k: tuple(v) for k, v in shipped["obs_layout"].items()}
    assert layout == {k: (s.start, s.stop) for k, s in env.obs_layout.items()}


def test_observations_equal_the_batched_environments(spec, pair, env_scenes) -> None:
    env, state = pair
    pos_w, quat_w = isaac_pose(env, state)
    d = env.robot.data
    lin_vel_b = torch.cat([d.vel_b[:, :2], torch.zeros(NUM_ENVS, 1)], dim=-1)
    layout = spec.observation_layout()
    expected = {name: env.obs[:, env.obs_layout[name]] for name in layout}
    got = {
        "goal_b": state.goal_b(pos_w, quat_w),
        "route_b": state.route_b(pos_w, quat_w, spec.task.route_waypoint_m),
        "velocity_b": terms.velocity_observation(lin_vel_b, d.vel_b[:, 2]),
        "last_action": d.last_action,
    }
    for name, value in got.items():
        torch.testing.assert_close(value, expected[name], atol=1e-4, rtol=0, msg=name)

    # LiDAR: Isaac's beams (our beam angles about the robot's yaw) cast on the scan walls' USD mesh
    sensor = pos_w.double() + torch.tensor([0.0, 0.0, SENSOR_HEIGHT], dtype=torch.float64)
    angles = terms.yaw_from_quat(quat_w).double()[:, None] + torch.tensor(spec.lidar.beam_angles())
    dirs = torch.stack([angles.cos(), angles.sin(), torch.zeros_like(angles)], dim=-1)
    origins = sensor[:, None].expand_as(dirs)
    hits = cast_rays(read_scan_walls(env_scenes.scan_walls), origins.reshape(-1, 3), dirs.reshape(-1, 3))
    ranges = terms.ranges_from_hits(hits.view(NUM_ENVS, -1, 3), sensor)
    isaac_lidar = terms.lidar_observation(ranges.float(), spec.lidar.max_range)
    error = (isaac_lidar - expected["lidar"]).abs() * spec.lidar.max_range  # metres
    # sphere tracing stops within a grid cell of the wall; the walls lie on the cell boundaries
    assert error.median() < 0.06 and torch.quantile(error, 0.95) < 0.15, error.max()


def test_rewards_equal_the_batched_environments(spec, pair) -> None:
    env, state = pair
    state.prev_geodesic = env.prev_geodesic.clone()
    gen = torch.Generator().manual_seed(1)
    _, rewards, dones, _ = env.step(torch.rand(NUM_ENVS, 2, generator=gen) * 2 - 1)
    pos_w, _ = isaac_pose(env, state)
    d = env.robot.data
    vel_w = terms.rotate_b2w(d.vel_b[:, None, :2], d.yaw_w)[:, 0]
    task = state.task_state(pos_w, vel_w, spec.task.success_radius, d.contact, spec.rewards)
    isaac = sum(w * REWARD_TERMS[name](task) for name, w in spec.rewards.weights().items())
    live = ~dones  # finished environments were reset inside step
    assert live.sum() >= NUM_ENVS // 2
    torch.testing.assert_close(isaac[live], rewards[live], atol=1e-3, rtol=1e-5)
    state.advance(pos_w)
    assert torch.allclose(state.prev_geodesic[live], env.prev_geodesic[live])


def test_new_episodes_start_on_free_ground_with_a_reachable_goal(spec, pair) -> None:
    env, state = pair
    ids = torch.arange(NUM_ENVS)
    spawn_w, yaw = state.new_episodes(ids, torch.Generator().manual_seed(5))
    xy = state.scene_xy(spawn_w)
    world = state.world
    assert world.lookup(world.walkable, state.scene, xy).all()
    torch.testing.assert_close(spawn_w[:, 2], world.lookup(world.ground_height, state.scene, xy))
    geo = world.geodesic_distance(state.scene, state.goal, xy)
    assert ((geo >= spec.task.min_goal_distance) & (geo <= spec.task.max_goal_distance)).all()
    torch.testing.assert_close(state.prev_geodesic, geo)
    assert (yaw.abs() <= torch.pi).all()


def test_each_environment_holds_its_own_scene_copy(spec, env_scenes, tmp_path) -> None:
    stage_path = compose_stage(env_scenes, tmp_path / "envs.usda")
    issues, _ = validate_usd(stage_path)
    assert not [i for i in issues if i.severity == "error"], issues
    stage = Usd.Stage.Open(str(stage_path))
    envs = stage.GetPrimAtPath("/World/envs").GetChildren()
    assert len(envs) == NUM_ENVS
    bbox = UsdGeom.BBoxCache(Usd.TimeCode.Default(), [UsdGeom.Tokens.default_, UsdGeom.Tokens.render])
    half = env_scenes.env_spacing / 2
    for i, env in enumerate(envs):
        prims = list(Usd.PrimRange(env))
        # the task's simulation context owns the physics scene and the lights: none comes with a scene
        assert not [p for p in prims if p.IsA(UsdPhysics.Scene) or p.HasAPI(UsdLux.LightAPI)]
        bodies = [p for p in prims if p.HasAPI(UsdPhysics.RigidBodyAPI)]
        assert len(bodies) == (len(spec_objects(spec, i)))  # pushed objects are this env's own
        box_ = bbox.ComputeWorldBound(env).ComputeAlignedRange()
        lo, hi = np.array(box_.GetMin())[:2], np.array(box_.GetMax())[:2]
        origin = env_scenes.origins[i, :2]
        assert (lo >= origin - half).all() and (hi <= origin + half).all()  # no overlap with a neighbour
    walls = Usd.Stage.Open(str(env_scenes.scan_walls))
    assert walls.GetDefaultPrim().GetAttribute("visibility").Get() == UsdGeom.Tokens.invisible
    assert not walls.GetDefaultPrim().HasAPI(UsdPhysics.CollisionAPI)  # the robot never touches it


def spec_objects(spec: PointNavSpec, env_index: int) -> tuple:
    from urbanverse.scene.record import load_scene

    return load_scene(spec.scene_dirs[env_index % len(spec.scene_dirs)]).objects


def test_grid_origins_follow_isaac_labs_cloner_layout() -> None:
    # GridCloner.get_clone_transforms: int(sqrt(N)) per row, rows along -x, columns along +y
    np.testing.assert_allclose(grid_env_origins(4, 2.0)[:, :2], [[1, -1], [1, 1], [-1, -1], [-1, 1]])
    np.testing.assert_allclose(
        grid_env_origins(6, 10.0)[:, :2], [[10, -5], [10, 5], [0, -5], [0, 5], [-10, -5], [-10, 5]]
    )
    assert np.allclose(grid_env_origins(64, 3.0).mean(axis=0), 0.0)


def test_wheel_speeds_drive_the_commanded_motion() -> None:
    vx, wz = torch.tensor([1.0, 0.0, 0.5]), torch.tensor([0.0, 2.0, -1.0])
    wheels = terms.wheel_speeds(vx, wz, wheel_radius=0.05, wheel_base=0.2)
    radius, base = 0.05, 0.2
    torch.testing.assert_close((wheels[:, 0] + wheels[:, 1]) * radius / 2, vx)
    torch.testing.assert_close((wheels[:, 1] - wheels[:, 0]) * radius / base, wz)


def test_quaternion_yaw_round_trip() -> None:
    yaw = torch.linspace(-3.1, 3.1, 9)
    torch.testing.assert_close(terms.yaw_from_quat(terms.quat_from_yaw(yaw)), yaw)
