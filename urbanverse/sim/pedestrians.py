"""Pedestrians: people walking on the walkable area, batched over environments.

Each pedestrian is a vertical cylinder (``radius`` m, 1.7 m tall); ``pos_w`` is what the sensors
and the robot's collision test read. How they move is ``PedestrianCfg.behaviour``:

- ``random``: straight at its own speed with a little heading noise. Simple collision avoidance: a
  step that would leave the walkable area, come within ``radius`` of an obstacle, or come too close
  to the robot is not taken; the pedestrian stands and turns to a random new heading instead (so
  pedestrians never walk into the robot; the robot can still drive into them, which counts as a
  collision).
- ``replay``: the people seen in the scene's video (``Scene.agents``), looped and time-shifted
  (``urbanverse.sim.crowd``). Recorded people ignore the robot; its collisions with them count.
- ``flow``: spawned where people were seen, walking with the scene's flow field under a
  social-force crowd model (``urbanverse.sim.crowd``).

Environments whose scene has no agents (replay) or no flow field (flow) use ``random``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Literal

import torch

from urbanverse.errors import InputError
from urbanverse.sim import crowd, crowd_kernels, kernels, rules
from urbanverse.sim.crowd import SocialForceCfg
from urbanverse.sim.world_batch import WorldBatch

log = logging.getLogger(__name__)

#: Flow pedestrians stalled for ``SocialForceCfg.respawn_after`` are looked for (and respawned) once
#: every this many simulated seconds, not every step: a respawn needs a handful of tensor operations.
RESPAWN_CHECK_S = 1.0

Behaviour = Literal["random", "replay", "flow"]
BEHAVIOURS: tuple[Behaviour, ...] = ("random", "replay", "flow")


@dataclass(frozen=True, kw_only=True)
class PedestrianCfg:
    """Moving people per environment."""

    behaviour: Behaviour = "random"
    """How they move: ``random`` (straight walks with random turns anywhere walkable), ``replay``
    (the people seen in the scene's video, looped and time-shifted) or ``flow`` (spawned where people
    were seen, walking with the scene's flow field in a social-force crowd). See the module docstring."""
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
    social: SocialForceCfg = field(default_factory=SocialForceCfg)
    """Crowd model of ``flow``."""

    def __post_init__(self) -> None:
        if self.behaviour not in BEHAVIOURS:
            raise InputError(
                f"PedestrianCfg.behaviour: expected one of {', '.join(BEHAVIOURS)}, got {self.behaviour!r}"
            )
        if self.count < 0 or self.radius <= 0 or not 0 <= self.speed[0] <= self.speed[1]:
            raise InputError("PedestrianCfg: need count >= 0, radius > 0, 0 <= min speed <= max speed")


class Pedestrians:
    """Pedestrians of N environments, P each.

    State: ``pos_w`` (N, P, 2) m (what sensors and collisions read); ``heading_w`` (N, P) rad and
    ``speed`` (N, P) m/s (random); ``agent`` (N, P), the replayed agent's index among its scene's, and
    ``clock`` (N, P) float64 s since that agent's first point (replay); ``vel_w`` (N, P, 2) m/s,
    ``direction_w`` (N, P, 2) unit walking direction, ``speed_factor`` (N, P), the pedestrian's
    share of its cell's mean speed, and ``stalled_s`` (N, P) s, how long it has got nowhere (flow).
    ``crowd_scenes`` (M,) bool: the scenes whose environments run ``cfg.behaviour`` (None where none
    does); the others walk randomly.
    """

    def __init__(self, cfg: PedestrianCfg, num_envs: int, world: WorldBatch, device: str):
        self.cfg = cfg
        p = cfg.count
        self.pos_w = torch.zeros(num_envs, p, 2, device=device)
        self.heading_w = torch.zeros(num_envs, p, device=device)
        self.speed = torch.zeros(num_envs, p, device=device)
        self.agent = torch.zeros(num_envs, p, dtype=torch.long, device=device)
        self.clock = torch.zeros(num_envs, p, dtype=torch.float64, device=device)
        self.vel_w = torch.zeros(num_envs, p, 2, device=device)
        self.direction_w = torch.zeros(num_envs, p, 2, device=device)
        self.speed_factor = torch.ones(num_envs, p, device=device)
        self.stalled_s = torch.zeros(num_envs, p, device=device)
        self._since_respawn_s = 0.0
        self.crowd_scenes = self._crowd_scenes(world)
        self._every_scene = self.crowd_scenes is not None and bool(self.crowd_scenes.all())

    def _crowd_scenes(self, world: WorldBatch) -> torch.Tensor | None:
        """Which scenes can run ``cfg.behaviour``; None where every environment walks randomly (the
        ``random`` behaviour, or no scene can run it). Warns once for each scene that cannot."""
        behaviour = self.cfg.behaviour
        if behaviour == "random" or self.cfg.count == 0:
            return None
        people = world.people
        if people is None:
            ok = torch.zeros(world.num_scenes, dtype=torch.bool, device=world.device)
        else:
            ok = people.has_agents if behaviour == "replay" else people.has_flow
        missing = "recorded people (Scene.agents)" if behaviour == "replay" else "flow field (Scene.flow)"
        for name, has in zip(world.names, ok.tolist(), strict=True):
            if not has:
                log.warning(
                    "pedestrians: scene %r has no %s; its environments get random pedestrians instead of %s",
                    name,
                    missing,
                    behaviour,
                )
        return ok if bool(ok.any()) else None

    def reset(self, env_ids, world: WorldBatch, scene, robot_xy: torch.Tensor, generator: torch.Generator):
        """New pedestrians for ``env_ids`` (K,) in scenes ``scene`` (K,) away from the robots at
        ``robot_xy`` (K, 2)."""
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
        if self.crowd_scenes is None:
            return
        active = self.crowd_scenes[scene][:, None]  # (K, 1)
        people = world.people
        if cfg.behaviour == "replay":
            agent, clock = crowd.replay_spawn(people, scene, robot_xy, p, generator)
            self.agent[env_ids], self.clock[env_ids] = agent, clock
            pos = crowd.replay_positions(people, scene, agent, clock)
            self.pos_w[env_ids] = torch.where(active[..., None], pos, self.pos_w[env_ids])
            return
        xy, found = crowd.flow_spawn(
            people, world, scene, robot_xy, p, cfg.radius, cfg.min_spawn_distance, generator
        )
        self.pos_w[env_ids] = torch.where((found & active)[..., None], xy, self.pos_w[env_ids])
        heading = self.heading_w[env_ids]
        self.direction_w[env_ids] = torch.stack([heading.cos(), heading.sin()], -1)
        self.vel_w[env_ids] = 0.0
        self.stalled_s[env_ids] = 0.0
        spread = cfg.social.speed_spread
        factor = torch.rand((len(env_ids), p), generator=generator, device=robot_xy.device)
        self.speed_factor[env_ids] = 1 + spread * (2 * factor - 1)

    def step(
        self,
        dt: float,
        world: WorldBatch,
        scene,
        robot_circles_w: torch.Tensor,
        robot_radius: float,
        generator,
    ):
        """Move one step; ``robot_circles_w`` (N, C, 2) are the robots' footprint circle centres and
        ``robot_radius`` (m) their radius."""
        cfg = self.cfg
        if cfg.count == 0:
            return
        reach = cfg.radius + robot_radius + cfg.robot_clearance
        if self.crowd_scenes is None:
            self._random_step(dt, world, scene, robot_circles_w, reach, generator)
            return
        if cfg.behaviour == "replay":
            pos = self._replay_step(dt, world, scene, generator)
        else:
            pos = self._flow_step(dt, world, scene, robot_circles_w, robot_radius, reach, generator)
        if self._every_scene:
            self.pos_w = pos.contiguous()
            return
        self._random_step(dt, world, scene, robot_circles_w, reach, generator)
        self.pos_w = torch.where(self.crowd_scenes[scene][:, None, None], pos, self.pos_w)

    def _replay_step(self, dt: float, world: WorldBatch, scene, generator) -> torch.Tensor:
        """Advance the replay clocks; returns the replayed positions (N, P, 2)."""
        people = world.people
        if kernels.available(self.pos_w.device):
            u = torch.rand(self.agent.shape, generator=generator)
            pos = torch.empty_like(self.pos_w)
            crowd_kernels.replay_step(
                people.numpy_views(),
                scene.numpy(),
                self.agent.numpy(),
                self.clock.numpy(),
                u.numpy(),
                dt,
                pos.numpy(),
            )
            return pos
        self.agent, self.clock = crowd.replay_advance(people, scene, self.agent, self.clock, dt, generator)
        return crowd.replay_positions(people, scene, self.agent, self.clock)

    def _flow_step(
        self, dt: float, world: WorldBatch, scene, circles, robot_radius: float, reach: float, generator
    ) -> torch.Tensor:
        """One social-force step of the flow state, then stalled pedestrians respawn; returns the new
        positions (N, P, 2)."""
        pos = self._social_force(dt, world, scene, circles, robot_radius, reach)
        self._since_respawn_s += dt
        if self._since_respawn_s < RESPAWN_CHECK_S:
            return pos
        self._since_respawn_s = 0.0
        env, ped = (self.stalled_s >= self.cfg.social.respawn_after).nonzero(as_tuple=True)
        if env.numel():
            # a new person enters where people were seen, away from the robot (its first footprint circle)
            xy, found = crowd.flow_spawn(
                world.people,
                world,
                scene[env],
                circles[env, 0],
                1,
                self.cfg.radius,
                self.cfg.min_spawn_distance,
                generator,
                others=pos[env],
            )
            pos[env, ped] = torch.where(found, xy[:, 0], pos[env, ped])
            self.vel_w[env, ped] = 0.0
            self.stalled_s[env, ped] = 0.0
        return pos

    def _social_force(self, dt: float, world: WorldBatch, scene, circles, robot_radius: float, reach: float):
        """One social-force step (``crowd.flow_step`` or its fused twin); returns the new positions."""
        cfg = self.cfg
        if kernels.available(self.pos_w.device):
            out = crowd_kernels.flow_step(
                world.numpy_views(),
                world.walker_grid(cfg.radius).view(-1).numpy(),
                world.walker_shape,
                world.walker_resolution,
                world.people.numpy_views(),
                scene.numpy(),
                self.pos_w.numpy(),
                self.vel_w.numpy(),
                self.direction_w.numpy(),
                self.speed_factor.numpy(),
                circles.contiguous().numpy(),
                crowd.flow_kernel_params(cfg.social, cfg.radius, robot_radius, reach, dt),
                self.stalled_s.numpy(),
            )
            pos, self.vel_w, self.direction_w = (torch.from_numpy(a) for a in out)
            return pos
        state = (self.pos_w, self.vel_w, self.direction_w, self.speed_factor)
        pos, self.vel_w, self.direction_w = crowd.flow_step(
            cfg.social, world, scene, state, cfg.radius, circles, robot_radius, reach, dt
        )
        self.stalled_s = crowd.stall_time(self.stalled_s, self.vel_w, dt)
        return pos

    def _random_step(self, dt, world: WorldBatch, scene, robot_circles_w, reach: float, generator) -> None:
        """One step of the ``random`` walk of every environment."""
        cfg, n, p = self.cfg, self.pos_w.shape[0], self.cfg.count
        device = self.pos_w.device
        noise = torch.randn((n, p), generator=generator, device=device)
        turn = torch.rand((n, p), generator=generator, device=device)
        scale = cfg.heading_noise * math.sqrt(dt)
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
