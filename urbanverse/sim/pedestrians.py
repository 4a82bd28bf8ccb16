"""Pedestrians: people walking on the walkable area, batched over environments.

Each pedestrian is a vertical cylinder (``radius`` m, 1.7 m tall) walking straight at its own
speed with a little heading noise. Simple collision avoidance: a step that would leave the
walkable area, come within ``radius`` of an obstacle, or come too close to the robot is not
taken; the pedestrian stands and turns to a random new heading instead (so pedestrians never
walk into the robot; the robot can still drive into them, which counts as a collision).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from urbanverse.errors import InputError
from urbanverse.sim import kernels, rules
from urbanverse.sim.world_batch import WorldBatch


@dataclass(frozen=True, kw_only=True)
class PedestrianCfg:
    """Moving people per environment."""

    count: int = 4
    """Pedestrians per environment (0: none)."""
    radius: float = 0.3
    """Cylinder radius (m)."""
    speed: tuple[float, float] = (0.8, 1.5)
    """Walking speed range (m/s), drawn per pedestrian at reset."""
    heading_noise: float = 0.2
    """Standard deviation of the heading change per second (rad/sqrt(s))."""
    robot_clearance: float = 0.5
    """Gap kept to the robot's footprint circles (m)."""
    min_spawn_distance: float = 2.0
    """Pedestrians spawn at least this far from the robot (m)."""

    def __post_init__(self) -> None:
        if self.count < 0 or self.radius <= 0 or not 0 <= self.speed[0] <= self.speed[1]:
            raise InputError("PedestrianCfg: need count >= 0, radius > 0, 0 <= min speed <= max speed")


class Pedestrians:
    """State ``pos_w`` (N, P, 2) m, ``heading_w`` (N, P) rad, ``speed`` (N, P) m/s."""

    def __init__(self, cfg: PedestrianCfg, num_envs: int, device: str):
        self.cfg = cfg
        p = cfg.count
        self.pos_w = torch.zeros(num_envs, p, 2, device=device)
        self.heading_w = torch.zeros(num_envs, p, device=device)
        self.speed = torch.zeros(num_envs, p, device=device)

    def reset(self, env_ids, world: WorldBatch, scene, robot_xy: torch.Tensor, generator: torch.Generator):
        """New pedestrians for ``env_ids`` (K,) away from the robots at ``robot_xy`` (K, 2)."""
        cfg, p = self.cfg, self.cfg.count
        if p == 0:
            return
        tries = 4  # candidate spots per pedestrian; the farthest from the robot is kept
        cand = world.sample_walkable(scene, p * tries, generator).view(-1, p, tries, 2)
        gap = (cand - robot_xy[:, None, None, :]).norm(dim=-1)
        best = gap.argmax(dim=-1)
        pos = torch.gather(cand, 2, best[..., None, None].expand(-1, -1, 1, 2))[:, :, 0]
        far = gap.amax(dim=-1) >= cfg.min_spawn_distance
        # Where no candidate is far enough, park the pedestrian out of reach (well off the robot's path).
        self.pos_w[env_ids] = torch.where(far[..., None], pos, robot_xy[:, None, :] + 1e3)
        u = torch.rand((len(env_ids), p, 2), generator=generator, device=robot_xy.device)
        self.heading_w[env_ids] = (u[..., 0] * 2 - 1) * math.pi
        self.speed[env_ids] = cfg.speed[0] + u[..., 1] * (cfg.speed[1] - cfg.speed[0])

    def step(
        self,
        dt: float,
        world: WorldBatch,
        scene,
        robot_circles_w: torch.Tensor,
        robot_radius: float,
        generator,
    ):
        """Walk one step; ``robot_circles_w`` (N, C, 2) are the robots' footprint circle centres."""
        cfg, n, p = self.cfg, self.pos_w.shape[0], self.cfg.count
        if p == 0:
            return
        device = self.pos_w.device
        noise = torch.randn((n, p), generator=generator, device=device)
        turn = torch.rand((n, p), generator=generator, device=device)
        scale = cfg.heading_noise * math.sqrt(dt)
        reach = cfg.radius + robot_radius + cfg.robot_clearance
        if kernels.available(device):
            kernels.pedestrian_step(
                world.numpy_views(),
                scene.numpy(),
                self.pos_w.numpy(),
                self.heading_w.numpy(),
                self.speed.numpy(),
                noise.numpy(),
                turn.numpy(),
                scale,
                dt,
                rules.clearance_limit(cfg.radius),
                robot_circles_w.contiguous().numpy(),
                reach,
            )
            return
        heading = self.heading_w + scale * noise
        step = torch.stack([heading.cos(), heading.sin()], -1) * (self.speed * dt)[..., None]
        new = self.pos_w + step
        idx = world.flat_index(scene, new)
        ok = world.walkable.view(-1)[idx] & rules.has_margin(
            world.sdf.view(-1)[idx], rules.clearance_limit(cfg.radius)
        )
        gap2 = (new[:, :, None, :] - robot_circles_w[:, None, :, :]).square().sum(-1).amin(dim=-1)
        ok &= gap2 > reach**2
        self.pos_w = torch.where(ok[..., None], new, self.pos_w)
        self.heading_w = torch.where(ok, heading, heading + math.pi * (0.5 + turn))
