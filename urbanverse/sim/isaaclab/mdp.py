"""Isaac Lab MDP terms of the UrbanVerse point-goal task (imports isaaclab: load only inside Isaac).

Mirrors ``urbanverse.sim.task``: a goal drawn from the scene's free walkable points at a
distance in [min, max], success within ``success_radius``, collision = a horizontal contact
force on the chassis (driving into a curb face or an object; the ground's support is vertical).
"""

from __future__ import annotations

from dataclasses import MISSING

import torch
from isaaclab.assets import Articulation
from isaaclab.envs import ManagerBasedRLEnv
from isaaclab.managers import CommandTerm, CommandTermCfg, SceneEntityCfg
from isaaclab.sensors import ContactSensor, TiledCamera
from isaaclab.utils import configclass
from isaaclab.utils.math import quat_apply_inverse, quat_from_euler_xyz, yaw_quat


class PointGoalCommand(CommandTerm):
    """Goal position per environment: ``goal_w`` (N, 3) in the world; the command is the goal vector in
    the robot's yaw frame, (N, 2) m. Resampled only at reset (the resampling time is the time-out)."""

    cfg: PointGoalCommandCfg

    def __init__(self, cfg: PointGoalCommandCfg, env: ManagerBasedRLEnv):
        super().__init__(cfg, env)
        self.robot: Articulation = env.scene[cfg.asset_name]
        self.points = torch.tensor(cfg.points, dtype=torch.float32, device=self.device)
        self.goal_w = torch.zeros(self.num_envs, 3, device=self.device)
        self.goal_b = torch.zeros(self.num_envs, 2, device=self.device)
        self.metrics["goal_distance"] = torch.zeros(self.num_envs, device=self.device)

    @property
    def command(self) -> torch.Tensor:
        return self.goal_b

    def distance(self) -> torch.Tensor:
        """Horizontal distance base to goal, (N,) m."""
        return torch.linalg.norm(self.goal_w[:, :2] - self.robot.data.root_pos_w[:, :2], dim=1)

    def _update_metrics(self) -> None:
        self.metrics["goal_distance"] = self.distance()

    def _resample_command(self, env_ids) -> None:
        env_ids = torch.as_tensor(env_ids, device=self.device, dtype=torch.long)
        start = self.robot.data.root_pos_w[env_ids, :2]
        idx = torch.randint(len(self.points), (len(env_ids), self.cfg.candidates), device=self.device)
        cand = self.points[idx]
        dist = torch.linalg.norm(cand[..., :2] - start[:, None], dim=-1)
        ok = (dist >= self.cfg.min_distance) & (dist <= self.cfg.max_distance)
        middle = 0.5 * (self.cfg.min_distance + self.cfg.max_distance)
        pick = torch.where(ok.any(dim=1), ok.float().argmax(dim=1), (dist - middle).abs().argmin(dim=1))
        self.goal_w[env_ids] = cand[torch.arange(len(env_ids), device=self.device), pick]

    def _update_command(self) -> None:
        delta = self.goal_w - self.robot.data.root_pos_w
        self.goal_b[:] = quat_apply_inverse(yaw_quat(self.robot.data.root_quat_w), delta)[:, :2]


@configclass
class PointGoalCommandCfg(CommandTermCfg):
    """Goals from ``points`` (a list of [x, y, z], world frame) at ``min_distance``..``max_distance`` m."""

    class_type: type = PointGoalCommand
    asset_name: str = MISSING
    points: list = MISSING
    min_distance: float = 2.0
    max_distance: float = 30.0
    candidates: int = 16
    """Random candidates tried per reset; the first in range wins (else the closest to mid-range)."""


def reset_at_points(env: ManagerBasedRLEnv, env_ids, points: list, asset_cfg: SceneEntityCfg) -> None:
    """Reset event: put the robot on a random point from ``points`` with a random yaw, at rest."""
    robot: Articulation = env.scene[asset_cfg.name]
    table = torch.tensor(points, dtype=torch.float32, device=env.device)
    pick = table[torch.randint(len(table), (len(env_ids),), device=env.device)]
    pos = pick + robot.data.default_root_state[env_ids, :3]
    yaw = (torch.rand(len(env_ids), device=env.device) * 2 - 1) * torch.pi
    zero = torch.zeros_like(yaw)
    quat = quat_from_euler_xyz(zero, zero, yaw)
    robot.write_root_pose_to_sim(torch.cat([pos, quat], dim=-1), env_ids=env_ids)
    robot.write_root_velocity_to_sim(torch.zeros(len(env_ids), 6, device=env.device), env_ids=env_ids)


def _goal(env: ManagerBasedRLEnv, command_name: str) -> PointGoalCommand:
    return env.command_manager.get_term(command_name)


def goal_reached(env: ManagerBasedRLEnv, command_name: str, radius: float) -> torch.Tensor:
    """Termination (bool) and arrival reward (as float): base within ``radius`` m of the goal."""
    return _goal(env, command_name).distance() < radius


def arrival(env: ManagerBasedRLEnv, command_name: str, radius: float) -> torch.Tensor:
    """1 on steps where the goal is reached."""
    return goal_reached(env, command_name, radius).float()


def collided(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, threshold: float) -> torch.Tensor:
    """Horizontal contact force on the chosen bodies above ``threshold`` N, (N,) bool."""
    sensor: ContactSensor = env.scene.sensors[sensor_cfg.name]
    force_xy = torch.linalg.norm(sensor.data.net_forces_w[:, sensor_cfg.body_ids, :2], dim=-1)
    return (force_xy > threshold).any(dim=1)


def collision(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg, threshold: float) -> torch.Tensor:
    """1 on steps with a collision."""
    return collided(env, sensor_cfg, threshold).float()


def position_tracking(env: ManagerBasedRLEnv, command_name: str, std: float) -> torch.Tensor:
    """``1 - tanh(d / std)``, in (0, 1]."""
    return 1.0 - torch.tanh(_goal(env, command_name).distance() / std)


def velocity_to_goal(env: ManagerBasedRLEnv, command_name: str, asset_cfg: SceneEntityCfg) -> torch.Tensor:
    """Speed towards the goal (m/s): world velocity projected on the direction to the goal."""
    term = _goal(env, command_name)
    robot: Articulation = env.scene[asset_cfg.name]
    direction = term.goal_w[:, :2] - robot.data.root_pos_w[:, :2]
    direction = direction / direction.norm(dim=1, keepdim=True).clamp_min(1e-6)
    return (robot.data.root_lin_vel_w[:, :2] * direction).sum(dim=1)


def camera_rgb_flat(env: ManagerBasedRLEnv, sensor_cfg: SceneEntityCfg) -> torch.Tensor:
    """The camera's RGB image in [0, 1], flattened to (N, H * W * 3) for MLP policies."""
    camera: TiledCamera = env.scene.sensors[sensor_cfg.name]
    return camera.data.output["rgb"][..., :3].float().flatten(start_dim=1) / 255.0
