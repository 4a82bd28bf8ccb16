"""The Isaac Lab task's navigation state in plain torch (no Isaac imports): testable anywhere.

``NavState`` holds, on the simulation device, the same ``WorldBatch`` the batched environment
steps on (navigation grids and geodesic goal fields of the M scenes), each environment's scene
and goal, and the last geodesic distance. ``mdp`` feeds it Isaac Lab's tensors (root pose and
velocity, ray-caster hits, contact forces) and reads back observations, reward-term inputs and
new episodes, all computed by the functions the batched environment uses (``sim.terms``,
``sim.task``). Positions in the world frame are the scene frame moved by ``offset``: the
environment's origin minus the centre of its scene's grid (``scenes.EnvScenes``).
"""

from __future__ import annotations

import numpy as np
import torch

from urbanverse.sim import terms
from urbanverse.sim.task import RewardsCfg, TaskState
from urbanverse.sim.world_batch import WorldBatch

#: Observation terms of the task in the order the policy reads them (``NavVecEnv.obs_layout``
#: without depth and RGB images), each with its width; ``route_b`` only with a route waypoint.
OBSERVATION_TERMS = ("lidar", "goal_b", "route_b", "velocity_b", "last_action")


class NavState:
    """Scenes, goals and geodesic progress of ``num_envs`` environments (see the module docstring)."""

    def __init__(self, world: WorldBatch, centres: np.ndarray, env_origins: torch.Tensor):
        """``centres`` (M, 2) m: grid centre of each scene; ``env_origins`` (N, 3) m on the device."""
        self.world = world
        self.device = env_origins.device
        n = env_origins.shape[0]
        self.num_envs = n
        self.scene = torch.arange(n, device=self.device) % world.num_scenes
        centre = torch.as_tensor(centres, dtype=torch.float32, device=self.device)
        self.offset = env_origins[:, :2].float() - centre[self.scene]
        self.origin_z = env_origins[:, 2].float()
        self.goal = torch.zeros(n, dtype=torch.long, device=self.device)
        self.goal_xy = torch.zeros(n, 2, device=self.device)
        self.prev_geodesic = torch.zeros(n, device=self.device)

    def scene_xy(self, pos_w: torch.Tensor, env_ids: torch.Tensor | slice = slice(None)) -> torch.Tensor:
        """World positions (K, 3 or 2) of environments ``env_ids`` in their scene's frame (K, 2)."""
        return pos_w[:, :2] - self.offset[env_ids]

    def new_episodes(
        self, env_ids: torch.Tensor, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Draw a goal and a spawn point for ``env_ids`` (K,) as the batched environment does
        (``WorldBatch.sample_goal_and_spawn``) and a uniform yaw; returns the spawn position (K, 3) m
        in the world, z on the ground, and yaw (K,) rad."""
        scene = self.scene[env_ids]
        goal, goal_xy, spawn = self.world.sample_goal_and_spawn(scene, generator)
        yaw = (torch.rand(len(env_ids), generator=generator, device=self.device) * 2 - 1) * torch.pi
        self.goal[env_ids], self.goal_xy[env_ids] = goal, goal_xy
        self.prev_geodesic[env_ids] = self.world.geodesic_distance(scene, goal, spawn)
        ground = self.world.lookup(self.world.ground_height, scene, spawn)
        return self.to_world(spawn, ground, env_ids), yaw

    def to_world(
        self, xy: torch.Tensor, z: torch.Tensor, env_ids: torch.Tensor | slice = slice(None)
    ) -> torch.Tensor:
        """Points (K, 3) m in the world of environments ``env_ids`` from their scene frame: ``xy``
        (K, 2) and height ``z`` (K,)."""
        return torch.cat([xy + self.offset[env_ids], (z + self.origin_z[env_ids])[:, None]], dim=-1)

    def geodesic(self, pos_w: torch.Tensor) -> torch.Tensor:
        """Geodesic distance (N,) m from every robot to its goal (inf where unreachable)."""
        return self.world.geodesic_distance(self.scene, self.goal, self.scene_xy(pos_w))

    def goal_distance(self, pos_w: torch.Tensor) -> torch.Tensor:
        """Horizontal distance (N,) m from every robot to its goal."""
        return (self.goal_xy - self.scene_xy(pos_w)).norm(dim=-1)

    def task_state(
        self,
        pos_w: torch.Tensor,
        lin_vel_w: torch.Tensor,
        success_radius: float,
        collision: torch.Tensor,
        rewards: RewardsCfg,
    ) -> TaskState:
        """What the shared reward terms read, from the robots' world position (N, 3) and velocity (N, 3)."""
        to_goal = self.goal_xy - self.scene_xy(pos_w)
        dist = to_goal.norm(dim=-1)
        geo = self.geodesic(pos_w)
        known = torch.isfinite(geo) & torch.isfinite(self.prev_geodesic)
        return TaskState(
            goal_distance=dist,
            goal_dir_w=to_goal / dist.clamp_min(1e-6)[:, None],
            vel_w=lin_vel_w[:, :2],
            geodesic_delta=torch.where(known, self.prev_geodesic - geo, torch.zeros_like(geo)),
            success=dist < success_radius,
            collision=collision,
            cfg=rewards,
        )

    def advance(self, pos_w: torch.Tensor) -> None:
        """End of a control step: the geodesic distance now is the next step's reference."""
        geo = self.geodesic(pos_w)
        self.prev_geodesic = torch.where(torch.isfinite(geo), geo, self.prev_geodesic)

    def goal_b(self, pos_w: torch.Tensor, quat_w: torch.Tensor) -> torch.Tensor:
        """Goal vector (N, 2) m in each robot's yaw frame."""
        return terms.target_in_body_frame(self.goal_xy, self.scene_xy(pos_w), terms.yaw_from_quat(quat_w))

    def route_b(self, pos_w: torch.Tensor, quat_w: torch.Tensor, radius: float) -> torch.Tensor:
        """Next waypoint (N, 2) m, ``radius`` ahead on the shortest walkable route, in the yaw frame."""
        xy = self.scene_xy(pos_w)
        waypoint = self.world.route_waypoint(self.scene, self.goal, xy, radius)
        return terms.target_in_body_frame(waypoint, xy, terms.yaw_from_quat(quat_w))
