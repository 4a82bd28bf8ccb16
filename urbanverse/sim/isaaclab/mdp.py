"""Isaac Lab MDP terms of the UrbanVerse point-goal task (imports isaaclab: load only inside Isaac).

Thin adapters: each term takes Isaac Lab's tensors (articulation root state, ray-caster hits,
contact forces) and hands them to ``NavState`` and ``sim.terms``, the code the batched
environment runs, so observations, rewards and episode starts are computed once for both
(``tests/sim_isaaclab/test_isaac_parity.py`` checks them against ``NavVecEnv`` on the same states).

- ``UrbanNavCommand``: the goal of each environment; at reset it draws the goal and the spawn
  point from the scene's geodesic goal fields and puts the robot there.
- ``VelocityCommandAction``: the policy's normalised (forward speed, yaw rate) in [-1, 1], mapped
  to the wheeled robot's speed limits and then to the Jetbot's wheel speeds (differential drive).
- observation, reward and termination functions named as in the batched environment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING

import torch
from isaaclab.assets import Articulation
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import ActionTerm, ActionTermCfg, CommandTerm, CommandTermCfg, SceneEntityCfg
from isaaclab.sensors import ContactSensor, RayCaster
from isaaclab.sensors.ray_caster.patterns import PatternBaseCfg
from isaaclab.utils import configclass

from urbanverse.errors import InputError
from urbanverse.sim import terms
from urbanverse.sim.isaaclab.nav_state import NavState
from urbanverse.sim.isaaclab.spec import PointNavSpec
from urbanverse.sim.robots import WHEELED
from urbanverse.sim.task import REWARD_TERMS, TaskState


class UrbanNavCommand(CommandTerm):
    """Goal of every environment; the command is the goal vector in the robot's yaw frame (N, 2) m.
    Resampled only at reset (the resampling time is the episode's time-out), together with the
    robot's start pose."""

    cfg: UrbanNavCommandCfg

    def __init__(self, cfg: UrbanNavCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.spec = PointNavSpec.from_json(cfg.spec_json)
        self.robot: Articulation = env.scene[cfg.asset_name]
        origins = env.scene.env_origins
        expected = torch.tensor(cfg.origins, dtype=origins.dtype, device=origins.device)
        if origins.shape != expected.shape or not torch.allclose(origins, expected, atol=1e-3):
            raise InputError(
                "UrbanVerse task: the environment origins differ from those the scan walls were built for "
                "(change the number of environments with --num_envs or URBANVERSE_ISAAC_NUM_ENVS, not a "
                "Hydra override of env.scene.num_envs / env_spacing, and add no terrain)"
            )
        self.nav = NavState(self.spec.world_batch(str(self.device)), cfg.centres, origins)
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(int(env.cfg.seed or 0))
        self._state: TaskState | None = None
        self._state_step = -1
        self.metrics["goal_distance"] = torch.zeros(self.num_envs, device=self.device)
        self.metrics["geodesic_distance"] = torch.zeros(self.num_envs, device=self.device)

    @property
    def command(self) -> torch.Tensor:
        d = self.robot.data
        return self.nav.goal_b(d.root_pos_w, d.root_quat_w)

    def task_state(self, collision: torch.Tensor) -> TaskState:
        """The shared reward terms' inputs this step (computed once per step)."""
        if self._state_step != self._env.common_step_counter:
            d = self.robot.data
            self._state = self.nav.task_state(
                d.root_pos_w, d.root_lin_vel_w, self.spec.task.success_radius, collision, self.spec.rewards
            )
            self._state_step = self._env.common_step_counter
        return self._state

    def _update_metrics(self) -> None:
        pos = self.robot.data.root_pos_w
        self.metrics["goal_distance"] = self.nav.goal_distance(pos)
        self.metrics["geodesic_distance"] = self.nav.geodesic(pos)

    def _resample_command(self, env_ids: Sequence[int]) -> None:
        ids = torch.as_tensor(env_ids, dtype=torch.long, device=self.device)
        pos, yaw = self.nav.new_episodes(ids, self.generator)
        pos = pos + self.robot.data.default_root_state[ids, :3]  # base height above the ground
        self.robot.write_root_pose_to_sim(torch.cat([pos, terms.quat_from_yaw(yaw)], dim=-1), env_ids=ids)
        self.robot.write_root_velocity_to_sim(torch.zeros(len(ids), 6, device=self.device), env_ids=ids)

    def _update_command(self) -> None:
        self.nav.advance(self.robot.data.root_pos_w)  # after the rewards: the next step's reference


@configclass
class UrbanNavCommandCfg(CommandTermCfg):
    """Goals and episode starts from the scenes of ``spec_json`` (``PointNavSpec.to_json``)."""

    class_type: type = UrbanNavCommand
    asset_name: str = MISSING
    spec_json: str = MISSING
    centres: list = MISSING
    """Grid centre of each scene (M x 2, m): placed at its environments' origins."""
    origins: list = MISSING
    """Environment origins (N x 3, m) the scan walls were built for; checked against the scene's."""


class VelocityCommandAction(ActionTerm):
    """Normalised (forward speed, yaw rate) actions in [-1, 1] to the Jetbot's wheel speeds: clamped
    and scaled to the wheeled robot's limits as in the batched environment, then differential drive."""

    cfg: VelocityCommandActionCfg

    def __init__(self, cfg: VelocityCommandActionCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self._joint_ids, _ = self._asset.find_joints(cfg.joint_names, preserve_order=True)
        self._low = torch.tensor([WHEELED.lin_vel_x[0], WHEELED.ang_vel[0]], device=self.device)
        self._high = torch.tensor([WHEELED.lin_vel_x[1], WHEELED.ang_vel[1]], device=self.device)
        self._raw = torch.zeros(self.num_envs, 2, device=self.device)
        self._clamped = torch.zeros_like(self._raw)
        self._wheels = torch.zeros_like(self._raw)

    @property
    def action_dim(self) -> int:
        return 2

    @property
    def raw_actions(self) -> torch.Tensor:
        return self._raw

    @property
    def processed_actions(self) -> torch.Tensor:
        return self._wheels

    @property
    def clamped_actions(self) -> torch.Tensor:
        """The last actions clamped to [-1, 1] (N, 2): the policy's ``last_action`` observation."""
        return self._clamped

    def process_actions(self, actions: torch.Tensor) -> None:
        self._raw[:] = actions
        self._clamped[:], _ = terms.clamp_actions(actions)
        cmd = terms.velocity_command(self._clamped, self._low, self._high)
        self._wheels[:] = terms.wheel_speeds(cmd[:, 0], cmd[:, 1], self.cfg.wheel_radius, self.cfg.wheel_base)

    def apply_actions(self) -> None:
        self._asset.set_joint_velocity_target(self._wheels, joint_ids=self._joint_ids)

    def reset(self, env_ids: Sequence[int] | None = None) -> None:
        self._raw[env_ids] = 0.0
        self._clamped[env_ids] = 0.0


@configclass
class VelocityCommandActionCfg(ActionTermCfg):
    """Differential drive over the wheel joints ``joint_names`` (left, right)."""

    class_type: type = VelocityCommandAction
    joint_names: list = MISSING
    wheel_radius: float = MISSING
    """Wheel radius (m)."""
    wheel_base: float = MISSING
    """Distance between the wheels (m)."""


def beam_pattern(cfg: BeamPatternCfg, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Horizontal beams at ``cfg.angles`` (rad, body frame), from the sensor origin: (B, 3) each."""
    angles = torch.tensor(cfg.angles, dtype=torch.float32, device=device)
    dirs = torch.stack([angles.cos(), angles.sin(), torch.zeros_like(angles)], dim=-1)
    return torch.zeros_like(dirs), dirs


@configclass
class BeamPatternCfg(PatternBaseCfg):
    """The batched LiDAR's beams in its order (``LidarCfg.beam_angles``)."""

    func: Callable = beam_pattern
    angles: list = MISSING


def _nav(env: ManagerBasedRLEnv, command_name: str) -> UrbanNavCommand:
    return env.command_manager.get_term(command_name)


def lidar(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, max_range: float) -> torch.Tensor:
    """Ranges / max range (N, B), free beams 1."""
    sensor: RayCaster = env.scene.sensors[sensor_cfg.name]
    return terms.lidar_observation(
        terms.ranges_from_hits(sensor.data.ray_hits_w, sensor.data.pos_w), max_range
    )


def goal_b(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """Goal vector in the yaw frame (N, 2) m."""
    return _nav(env, command_name).command


def route_b(env: ManagerBasedRLEnv, command_name: str, radius: float) -> torch.Tensor:
    """Route waypoint ``radius`` m ahead on the shortest walkable route, in the yaw frame (N, 2) m."""
    term = _nav(env, command_name)
    return term.nav.route_b(term.robot.data.root_pos_w, term.robot.data.root_quat_w, radius)


def velocity_b(env: ManagerBasedRLEnv, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Body velocity (vx, vy, wz) (N, 3)."""
    d = env.scene[asset_cfg.name].data
    return terms.velocity_observation(d.root_lin_vel_b, d.root_ang_vel_b[:, 2])


def last_action(env: ManagerBasedRLEnv, action_name: str) -> torch.Tensor:
    """The last action clamped to [-1, 1] (N, 2)."""
    return env.action_manager.get_term(action_name).clamped_actions


def collided(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, threshold: float) -> torch.Tensor:
    """Horizontal contact force on the chosen bodies above ``threshold`` N (N,) bool: driving into a
    curb face or an object (the ground's support is vertical)."""
    sensor: ContactSensor = env.scene.sensors[sensor_cfg.name]
    force_xy = torch.linalg.norm(sensor.data.net_forces_w[:, sensor_cfg.body_ids, :2], dim=-1)
    return (force_xy > threshold).any(dim=1)


def goal_reached(env: ManagerBasedRLEnv, command_name: str) -> torch.Tensor:
    """Base within the success radius of the goal (N,) bool."""
    term = _nav(env, command_name)
    return term.nav.goal_distance(term.robot.data.root_pos_w) < term.spec.task.success_radius


def task_reward(
    env: ManagerBasedRLEnv, command_name: str, term: str, sensor_cfg: SceneEntityCfg, threshold: float
) -> torch.Tensor:
    """The batched environment's reward term ``term`` (``task.REWARD_TERMS``), unweighted (N,)."""
    state = _nav(env, command_name).task_state(collided(env, sensor_cfg, threshold))
    return REWARD_TERMS[term](state)
