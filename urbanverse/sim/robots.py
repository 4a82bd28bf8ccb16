"""Kinematic robots: velocity commands, acceleration limits, collision with the compiled world.

The footprint (``length`` x ``width`` m, centred on the base, front along body +x) is covered
by ``n`` circles of radius ``width / 2`` spaced along the body axis. A move is blocked when a
circle overlaps an obstacle (world sdf below the radius: ``rules.clearance_blocks``) or a
pedestrian, or when the ground height under any probe point (circle centres plus front and
rear bumper) changes during the step by a step the robot cannot climb (``rules.step_blocks``
with ``max_step_height``: a curb higher than the robot can climb; a step of exactly the limit
passes, as do ramps, which change height gradually). The LiDAR's step walls and the goal and
spawn fields apply the same rules, so a robot is blocked exactly where they see a wall.
Blocked moves fall back, in order, to a slide along the obstacle (``collision_response="slide"``,
sdf-gradient projection), a turn in place, and standing still. Every blocked full move counts as one contact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import torch

from urbanverse.errors import InputError
from urbanverse.sim import kernels, rules
from urbanverse.sim.terms import clamp_actions, rotate_b2w, velocity_command
from urbanverse.sim.world_batch import WorldBatch


@dataclass(frozen=True, kw_only=True)
class RobotCfg:
    """A kinematic ground robot. Velocities in the body frame (x forward, y left)."""

    kind: Literal["wheeled", "legged"]
    """Family of the robot, a label: the motion model is set by the fields below."""
    length: float
    """Footprint length along body x (m)."""
    width: float
    """Footprint width along body y (m)."""
    holonomic: bool
    """True: actions (vx, vy, wz); False (differential drive): actions (vx, wz)."""
    lin_vel_x: tuple[float, float]
    """Forward velocity range (m/s), (min, max) with min <= 0 <= max."""
    lin_vel_y: tuple[float, float] = (0.0, 0.0)
    """Lateral velocity range (m/s); holonomic robots only."""
    ang_vel: tuple[float, float]
    """Yaw rate range (rad/s)."""
    lin_acc: float
    """Largest change of linear velocity (m/s^2)."""
    ang_acc: float
    """Largest change of yaw rate (rad/s^2)."""
    max_step_height: float
    """Highest ground step the robot climbs up or down (m)."""
    collision_response: Literal["stop", "slide"] = "slide"
    """What a blocked move becomes: slide along the obstacle, or stop."""

    def __post_init__(self) -> None:
        if self.length <= 0 or self.width <= 0 or self.width > self.length:
            raise InputError(f"RobotCfg: need 0 < width <= length, got {self.length} x {self.width}")
        for name in ("lin_vel_x", "lin_vel_y", "ang_vel"):
            lo, hi = getattr(self, name)
            if not lo <= 0.0 <= hi:
                raise InputError(f"RobotCfg.{name}: need min <= 0 <= max, got {(lo, hi)}")

    @property
    def action_dim(self) -> int:
        """Number of action components."""
        return 3 if self.holonomic else 2

    @property
    def radius(self) -> float:
        """Radius of the footprint circles (m)."""
        return 0.5 * self.width

    @property
    def circumradius(self) -> float:
        """Half the footprint diagonal (m): clearance needed to turn in place."""
        return 0.5 * math.hypot(self.length, self.width)

    def circle_offsets(self) -> list[float]:
        """Body-x positions (m) of the footprint circle centres."""
        n = max(1, math.ceil(self.length / self.width))
        half = 0.5 * self.length - self.radius
        return [0.0] if n == 1 else [-half + 2 * half * i / (n - 1) for i in range(n)]


#: Delivery robot like the paper's COCO: differential drive, climbs only 5 cm (ramps, not curbs).
WHEELED = RobotCfg(
    kind="wheeled",
    length=0.7,
    width=0.5,
    holonomic=False,
    lin_vel_x=(-0.5, 2.0),
    ang_vel=(-1.5, 1.5),
    lin_acc=2.0,
    ang_acc=3.0,
    max_step_height=0.05,
)
#: Quadruped like Unitree Go2: holonomic, steps up curbs up to 20 cm.
LEGGED = RobotCfg(
    kind="legged",
    length=0.7,
    width=0.3,
    holonomic=True,
    lin_vel_x=(-1.0, 1.5),
    lin_vel_y=(-0.6, 0.6),
    ang_vel=(-2.0, 2.0),
    lin_acc=3.0,
    ang_acc=6.0,
    max_step_height=0.20,
)
ROBOTS = {"wheeled": WHEELED, "legged": LEGGED}


@dataclass
class RobotData:
    """Robot state, batch-first over environments (N)."""

    pos_w: torch.Tensor
    """Base position in the world, (N, 2) m."""
    yaw_w: torch.Tensor
    """Heading about +z, (N,) rad in [-pi, pi)."""
    height_w: torch.Tensor
    """Ground height under the base, (N,) m."""
    vel_b: torch.Tensor
    """Body velocity (vx, vy, wz), (N, 3) m/s and rad/s."""
    last_action: torch.Tensor
    """Last clamped action, (N, A) in [-1, 1]."""
    contact: torch.Tensor
    """Whether the last step's move was blocked, (N,) bool."""
    contact_count: torch.Tensor
    """Blocked moves this episode, (N,) int64."""
    path_length: torch.Tensor
    """Distance travelled this episode, (N,) m."""
    nonfinite_actions: int = field(default=0)
    """Action entries that were NaN or infinite in the last step (replaced by 0)."""


def wrap_angle(a: torch.Tensor) -> torch.Tensor:
    """Angles wrapped to [-pi, pi)."""
    return torch.remainder(a + math.pi, 2 * math.pi) - math.pi


class Robot:
    """Batched kinematic robot of one kind over ``num_envs`` environments."""

    def __init__(self, cfg: RobotCfg, num_envs: int, device: str):
        self.cfg = cfg
        self.num_envs = num_envs
        self.device = device
        circles = torch.tensor([[x, 0.0] for x in cfg.circle_offsets()], device=device)
        bumpers = torch.tensor([[0.5 * cfg.length, 0.0], [-0.5 * cfg.length, 0.0]], device=device)
        self.circles_b = circles
        self.probes_b = torch.cat([circles, bumpers])
        lo = torch.tensor([cfg.lin_vel_x[0], cfg.lin_vel_y[0], cfg.ang_vel[0]], device=device)
        hi = torch.tensor([cfg.lin_vel_x[1], cfg.lin_vel_y[1], cfg.ang_vel[1]], device=device)
        cols = [0, 1, 2] if cfg.holonomic else [0, 2]
        self._lo, self._hi, self._cols = lo[cols], hi[cols], cols
        self._acc = torch.tensor([cfg.lin_acc, cfg.lin_acc, cfg.ang_acc], device=device)
        z = torch.zeros(num_envs, device=device)
        self.data = RobotData(
            pos_w=torch.zeros(num_envs, 2, device=device),
            yaw_w=z.clone(),
            height_w=z.clone(),
            vel_b=torch.zeros(num_envs, 3, device=device),
            last_action=torch.zeros(num_envs, cfg.action_dim, device=device),
            contact=torch.zeros(num_envs, dtype=torch.bool, device=device),
            contact_count=torch.zeros(num_envs, dtype=torch.long, device=device),
            path_length=z.clone(),
        )

    def reset(
        self,
        env_ids: torch.Tensor,
        world: WorldBatch,
        scene: torch.Tensor,
        pos: torch.Tensor,
        yaw: torch.Tensor,
    ):
        """Place robots ``env_ids`` (K,) of ``scene`` (K,) at ``pos`` (K, 2) m, ``yaw`` (K,) rad, at rest."""
        d = self.data
        d.pos_w[env_ids] = pos
        d.yaw_w[env_ids] = wrap_angle(yaw)
        d.height_w[env_ids] = world.lookup(world.ground_height, scene, pos)
        d.vel_b[env_ids] = 0.0
        d.last_action[env_ids] = 0.0
        d.contact[env_ids] = False
        d.contact_count[env_ids] = 0
        d.path_length[env_ids] = 0.0

    def command(self, actions: torch.Tensor) -> torch.Tensor:
        """Actions (N, A) -> velocity command (N, 3); NaN/inf become 0, values are clamped to [-1, 1].

        Each component maps linearly from [0, 1] to [0, max] and from [-1, 0] to [min, 0], so a
        zero action is a standstill.
        """
        a, self.data.nonfinite_actions = clamp_actions(actions)
        self.data.last_action = a
        cmd = torch.zeros(a.shape[0], 3, device=a.device)
        cmd[:, self._cols] = velocity_command(a, self._lo, self._hi)
        return cmd

    def _blocked(
        self, world, scene, pos, yaw, ref_heights, peds, ped_radius
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Whether poses (K, 2)/(K,) collide; also the probe ground heights (K, Q)."""
        r = self.cfg.radius
        probes = pos[:, None, :] + rotate_b2w(self.probes_b.expand(pos.shape[0], -1, -1), yaw)
        nc = self.circles_b.shape[0]
        idx = world.flat_index(scene, probes)
        heights = world.ground_height.view(-1)[idx]
        hit = rules.clearance_blocks(world.sdf.view(-1)[idx[:, :nc]], rules.clearance_limit(r)).any(dim=1)
        hit |= rules.step_blocks(heights, ref_heights, rules.step_limit(self.cfg.max_step_height)).any(dim=1)
        if peds is not None and peds.shape[1] > 0:
            gap = (probes[:, :nc, None, :] - peds[:, None, :, :]).square().sum(-1)
            hit |= (gap < (r + ped_radius) ** 2).flatten(1).any(dim=1)
        return hit, heights

    def _step_fused(self, cmd, dt, world, scene, peds, ped_radius) -> None:
        """The same step as the torch code below, in one numba pass (CPU only)."""
        d, cfg = self.data, self.cfg
        if peds is None:
            peds = d.pos_w.new_zeros(self.num_envs, 0, 2)
        height, contact, path = kernels.robot_step(
            world.numpy_views(),
            scene.numpy(),
            d.pos_w.numpy(),
            d.yaw_w.numpy(),
            d.vel_b.numpy(),
            cmd.numpy(),
            self._acc.numpy().astype("float64"),
            dt,
            self.probes_b.numpy().astype("float64"),
            self.circles_b.shape[0],
            rules.clearance_limit(cfg.radius),
            rules.step_limit(cfg.max_step_height),
            cfg.collision_response == "slide",
            peds.contiguous().numpy(),
            cfg.radius + ped_radius,
        )
        d.height_w = torch.from_numpy(height)
        d.contact = torch.from_numpy(contact)
        d.contact_count += d.contact.long()
        d.path_length += torch.from_numpy(path)

    def step(
        self,
        actions: torch.Tensor,
        dt: float,
        world: WorldBatch,
        scene: torch.Tensor,
        peds=None,
        ped_radius=0.0,
    ):
        """Integrate one control step of ``dt`` seconds; ``peds`` (N, P, 2) pedestrian positions or None."""
        d, n = self.data, self.num_envs
        cmd = self.command(actions)
        if kernels.available(self.device):
            self._step_fused(cmd, dt, world, scene, peds, ped_radius)
            return
        d.vel_b = d.vel_b + (cmd - d.vel_b).clamp(-self._acc * dt, self._acc * dt)
        yaw_new = wrap_angle(d.yaw_w + d.vel_b[:, 2] * dt)
        delta = rotate_b2w(d.vel_b[:, None, :2], d.yaw_w + 0.5 * d.vel_b[:, 2] * dt)[:, 0] * dt
        probes_old = d.pos_w[:, None, :] + rotate_b2w(self.probes_b.expand(n, -1, -1), d.yaw_w)
        ref = world.lookup(world.ground_height, scene, probes_old)
        cands_pos = [d.pos_w + delta]
        cands_yaw = [yaw_new]
        if self.cfg.collision_response == "slide":
            normal = world.sdf_gradient(scene, d.pos_w)
            into = (delta * normal).sum(-1, keepdim=True).clamp_max(0.0)
            cands_pos.append(d.pos_w + delta - into * normal)
            cands_yaw.append(yaw_new)
        cands_pos.append(d.pos_w)
        cands_yaw.append(yaw_new)
        k = len(cands_pos)
        rep = lambda t: t.repeat((k,) + (1,) * (t.dim() - 1))  # noqa: E731
        blocked, _ = self._blocked(
            world,
            rep(scene),
            torch.cat(cands_pos),
            torch.cat(cands_yaw),
            rep(ref),
            None if peds is None else rep(peds),
            ped_radius,
        )
        blocked = blocked.view(k, n)
        free = torch.cat([~blocked, torch.ones(1, n, dtype=torch.bool, device=blocked.device)])
        choice = free.float().argmax(dim=0)  # first free candidate; the last (stand still) always is
        all_pos = torch.stack([*cands_pos, d.pos_w])
        all_yaw = torch.stack([*cands_yaw, d.yaw_w])
        ar = torch.arange(n, device=choice.device)
        new_pos = all_pos[choice, ar]
        d.contact = blocked[0]
        d.contact_count += d.contact.long()
        d.path_length += (new_pos - d.pos_w).norm(dim=-1)
        slide_idx = 1 if self.cfg.collision_response == "slide" else -1
        keep_lin = ~d.contact | (choice == slide_idx)  # a blocked move kills linear velocity unless it slides
        keep_ang = choice < k  # standing still (turn blocked too) kills the yaw rate as well
        d.vel_b = d.vel_b * torch.stack([keep_lin, keep_lin, keep_ang], dim=-1).float()
        d.pos_w = new_pos
        d.yaw_w = all_yaw[choice, ar]
        d.height_w = world.lookup(world.ground_height, scene, new_pos)
