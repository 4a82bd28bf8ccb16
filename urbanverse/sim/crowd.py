"""Crowds from the people seen in a scene: replayed trajectories and a social-force flow model.

Both are batched in torch over (N environments, P pedestrians) and read a scene's people from
``WorldBatch.people`` (``ScenePeople``), indexed by each environment's scene:

- **replay** (:func:`replay_positions`, :func:`replay_advance`, :func:`replay_spawn`): each
  pedestrian follows one of its scene's recorded agents at a clock of its own, linearly
  interpolated in time; at the end of that trajectory it continues with another agent of the same
  scene (a person leaves the view and another enters).
- **flow** (:func:`flow_step`, :func:`flow_spawn`): pedestrians spawn where people were seen
  (cells drawn by density) and walk under the social-force model of Helbing & Molnár (1995): a
  driving term towards the preferred velocity the flow field gives at their position (relaxation
  time ``SocialForceCfg.relaxation_time``), exponential repulsion from the other pedestrians of
  their environment (weaker from behind) and from the robot's footprint circles, and repulsion from
  walls along the gradient of the world's signed distance grid.

The crowd model is written here rather than taken from a library: pysocialforce and Python-RVO2
step one crowd at a time in Python or C++ loops, while here every environment of the batch (1024
and more) steps together in a handful of tensor operations, on the CPU or the GPU. On the CPU,
``Pedestrians`` runs the fused numba twins ``crowd_kernels.replay_step`` and ``flow_step`` (same
arithmetic, one pass per environment); these torch functions are the reference the tests compare
them with, and the path on other devices.

:func:`synthetic_agents` and :func:`add_synthetic_people` give a scene straight walks along its
walkable ground, for benchmarks and tests of scenes that have no video.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from urbanverse.errors import InputError
from urbanverse.scene.agents import flow_field, make_agent
from urbanverse.scene.record import Agent, Scene, load_scene, save_scene
from urbanverse.sim.world import CompiledWorld, WorldCfg, compile_world
from urbanverse.sim.world_batch import ScenePeople, WorldBatch, walker_free, walker_sdf

#: Pushes (from people, the robot, walls) vanish beyond contact plus this many decay lengths, where
#: they are below 1 % of their strength: most pairs of a batch are far apart and cost nothing then.
PUSH_CUTOFF_DECAYS = 5.0

#: Below this speed (m/s) a flow pedestrian counts as getting nowhere (``SocialForceCfg.respawn_after``).
MIN_PROGRESS_SPEED = 0.1

#: Slowest preferred speed (m/s) of a flow pedestrian: where the people seen mostly stood, the
#: pedestrians still stroll through instead of stopping for good.
MIN_PREFERRED_SPEED = 0.3


@dataclass(frozen=True, kw_only=True)
class SocialForceCfg:
    """The social-force crowd model of the ``flow`` pedestrians (accelerations in m/s², lengths in m)."""

    relaxation_time: float = 0.5
    """Time (s) a pedestrian takes to bring its velocity to the preferred one (the driving term)."""
    repulsion: float = 5.0
    """Push between two pedestrians whose bodies touch (m/s²; 0 turns it off)."""
    repulsion_range: float = 0.3
    """Decay length of the push between pedestrians and from the robot (m)."""
    robot_repulsion: float = 8.0
    """Push from a robot footprint circle the pedestrian's body touches (m/s²)."""
    wall_repulsion: float = 5.0
    """Push from an obstacle the pedestrian's body touches, along the sdf gradient (m/s²)."""
    wall_range: float = 0.2
    """Decay length of the push from obstacles (m)."""
    rear_weight: float = 0.5
    """Weight of the push from people straight behind (1 ahead; Helbing's anisotropy lambda)."""
    one_way_ratio: float = 0.5
    """A flow cell is one-way where its mean velocity is at least this share of its mean speed; in
    other cells people went both ways and a pedestrian keeps its own direction along the cell's axis."""
    speed_spread: float = 0.15
    """Each pedestrian walks at its cell's mean speed times a factor drawn in ``1 +- speed_spread``."""
    max_speed_factor: float = 1.3
    """Speed limit, as a multiple of the preferred speed."""
    respawn_after: float = 3.0
    """A pedestrian that got nowhere for this long (s; a dead end of the flow, the edge of the scene)
    leaves, and another enters at a seen cell drawn by density, as people come and go in a video."""

    def __post_init__(self) -> None:
        if self.relaxation_time <= 0 or self.repulsion_range <= 0 or self.wall_range <= 0:
            raise InputError("SocialForceCfg: relaxation_time, repulsion_range and wall_range must be > 0")
        if min(self.repulsion, self.robot_repulsion, self.wall_repulsion) < 0:
            raise InputError("SocialForceCfg: repulsion strengths must be >= 0")
        if self.respawn_after <= 0:
            raise InputError(f"SocialForceCfg.respawn_after: need > 0 s, got {self.respawn_after}")
        if not (0 <= self.rear_weight <= 1 and 0 <= self.speed_spread < 1 and self.max_speed_factor >= 1):
            raise InputError(
                "SocialForceCfg: need 0 <= rear_weight <= 1, 0 <= speed_spread < 1, max_speed_factor >= 1"
            )


# ------------------------------------------------------------------------------------------ replay
def replay_positions(
    people: ScenePeople, scene: torch.Tensor, agent: torch.Tensor, clock: torch.Tensor
) -> torch.Tensor:
    """World xy (N, X, 2) float32 m of agents ``agent`` (N, X) of scenes ``scene`` (N,), ``clock``
    (N, X) float64 s after each agent's first point: linear in time between its points."""
    s = scene[:, None].expand_as(agent)
    key = people.agent_key[s, agent] + clock
    first = people.agent_first[s, agent]
    last = first + people.agent_points[s, agent] - 1
    i = torch.searchsorted(people.knot_key, key.reshape(-1), right=True).view_as(agent) - 1
    i = torch.minimum(torch.maximum(i, first), last - 1)
    k0, k1 = people.knot_key[i], people.knot_key[i + 1]
    frac = ((key - k0) / (k1 - k0)).clamp(0.0, 1.0)[..., None]
    xy0, xy1 = people.knot_xy[i], people.knot_xy[i + 1]
    return (xy0 + frac * (xy1 - xy0)).float()


def replay_advance(
    people: ScenePeople,
    scene: torch.Tensor,
    agent: torch.Tensor,
    clock: torch.Tensor,
    dt: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(agent, clock)`` (N, P) ``dt`` s later: a pedestrian past its agent's last point carries the
    overshoot into another agent of its scene, drawn uniformly among the others."""
    s = scene[:, None].expand_as(agent)
    duration = people.agent_duration[s, agent]
    clock = clock + dt
    ended = clock >= duration
    count = people.agent_count[s].clamp_min(1)
    u = torch.rand(agent.shape, generator=generator, device=agent.device)
    other = (agent + 1 + (u * (count - 1)).long()) % count
    agent = torch.where(ended, other, agent)
    clock = torch.where(ended, clock - duration, clock)
    return agent, torch.minimum(clock, people.agent_duration[s, agent])


def replay_spawn(
    people: ScenePeople,
    scene: torch.Tensor,
    robot_xy: torch.Tensor,
    count: int,
    generator: torch.Generator,
    tries: int = 4,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(agent, clock)`` (K, count) for environments in ``scene`` (K,) whose robots are at ``robot_xy``
    (K, 2): of ``tries`` uniform draws of an agent and a time along it, the one farthest from the robot."""
    k = scene.numel()
    u = torch.rand((k, count * tries, 2), generator=generator, device=robot_xy.device)
    n = people.agent_count[scene][:, None]
    agent = (u[..., 0] * n).long().clamp_max(n - 1).clamp_min(0)  # 0: a scene without agents
    clock = u[..., 1].double() * people.agent_duration[scene[:, None].expand_as(agent), agent]
    pos = replay_positions(people, scene, agent, clock).view(k, count, tries, 2)
    best = (pos - robot_xy[:, None, None, :]).norm(dim=-1).argmax(dim=-1, keepdim=True)
    pick = agent.view(k, count, tries).gather(2, best)[..., 0]
    return pick, clock.view(k, count, tries).gather(2, best)[..., 0]


# -------------------------------------------------------------------------------------------- flow
def flow_lookup(people: ScenePeople, scene: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
    """The ``ScenePeople.flow_table`` rows (N, X, FLOW_CHANNELS) of the flow cells under ``xy``
    (N, X, 2) in scenes ``scene`` (N,); points off a scene's grid read its nearest edge cell."""
    cell = people.flow_cell[scene][:, None, None]
    ij = ((xy - people.flow_origin[scene][:, None, :]) / cell).floor().long()
    size = people.flow_size[scene][:, None, :]
    ij = torch.minimum(ij.clamp_min(0), size - 1)
    rows, cols = people.flow_table.shape[1:3]
    idx = (scene[:, None] * rows + ij[..., 1]) * cols + ij[..., 0]
    return people.flow_table.view(-1, ScenePeople.FLOW_CHANNELS)[idx]


def preferred_velocity(
    people: ScenePeople,
    cfg: SocialForceCfg,
    scene: torch.Tensor,
    pos: torch.Tensor,
    own_dir: torch.Tensor,
    speed_factor: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Preferred velocity (N, P, 2) m/s and walking direction (N, P, 2) unit of pedestrians at ``pos``
    whose own direction is ``own_dir`` (N, P, 2): in a one-way cell the people's mean direction, in a
    two-way cell the cell's axis the way the pedestrian already goes, off the seen cells straight to
    the nearest seen one; at the cell's (or that nearest cell's) mean speed times ``speed_factor``."""
    t = flow_lookup(people, scene, pos)
    c = ScenePeople
    axis = t[..., c.FLOW_AXIS : c.FLOW_AXIS + 2]
    along = torch.where((own_dir * axis).sum(-1, keepdim=True) < 0, -axis, axis)
    one_way = t[..., c.FLOW_COHERENCE, None] >= cfg.one_way_ratio
    walk = torch.where(one_way, t[..., c.FLOW_DIR : c.FLOW_DIR + 2], along)
    home = t[..., c.FLOW_HOME : c.FLOW_HOME + 2] - pos
    home = home / home.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    direction = torch.where(t[..., c.FLOW_SEEN, None] > 0, walk, home)
    speed = t[..., c.FLOW_SPEED].clamp_min(MIN_PREFERRED_SPEED) * speed_factor
    return direction * speed[..., None], direction


def _free(world: WorldBatch, scene: torch.Tensor, xy: torch.Tensor, radius: float) -> torch.Tensor:
    """Whether points ``xy`` (K, ..., 2) of scenes ``scene`` (K,) are on free cells of
    ``WorldBatch.walker_grid(radius)`` (walkable with ``radius`` m of clearance; the rule every flow
    pedestrian's step obeys): shape ``xy.shape[:-1]``."""
    return walker_free(world.walker_lookup(radius, scene, xy))


def _repulsion(diff: torch.Tensor, contact: float, strength: float, decay: float) -> torch.Tensor:
    """Exponential push ``strength * exp((contact - d) / decay)`` along ``diff`` (..., 2) (away from
    the other body, at centre distance ``d = |diff|``), none from ``PUSH_CUTOFF_DECAYS`` decay lengths
    past contact on: (..., 2) m/s²."""
    dist = diff.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    push = (strength * torch.exp((contact - dist) / decay)) * (diff / dist)
    return torch.where(dist < contact + PUSH_CUTOFF_DECAYS * decay, push, 0.0)


def flow_step(
    cfg: SocialForceCfg,
    world: WorldBatch,
    scene: torch.Tensor,
    state: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    radius: float,
    robot_circles_w: torch.Tensor,
    robot_radius: float,
    robot_reach: float,
    dt: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One social-force step of ``state`` = (pos (N, P, 2) m, vel (N, P, 2) m/s, own direction (N, P, 2)
    unit, speed factor (N, P)) for pedestrians of body ``radius`` m: new (pos, vel, direction).

    Walls are read from ``WorldBatch.walker_grid(radius)`` (the sdf at the pedestrian and one walker
    cell +x and +y of it). A step is taken only where it ends on a free walker cell (walkable with
    ``radius`` clearance) and does not bring the pedestrian within ``robot_reach`` m of a robot circle
    (or nearer than it was); otherwise the pedestrian slides along x or y alone where that is
    allowed, else stands. Its velocity becomes the step it took over ``dt``."""
    pos, vel, own_dir, speed_factor = state
    n, p = pos.shape[:2]
    desired, direction = preferred_velocity(world.people, cfg, scene, pos, own_dir, speed_factor)
    force = (desired - vel) / cfg.relaxation_time
    if cfg.repulsion > 0 and p > 1:
        diff = pos[:, :, None, :] - pos[:, None, :, :]  # (N, P, P, 2): from j to i
        push = _repulsion(diff, 2 * radius, cfg.repulsion, cfg.repulsion_range)
        facing = -(direction[:, :, None, :] * diff).sum(-1, keepdim=True) / diff.norm(
            dim=-1, keepdim=True
        ).clamp_min(1e-6)
        weight = cfg.rear_weight + (1 - cfg.rear_weight) * (1 + facing) / 2
        force = force + (push * weight).sum(2)  # i = j contributes 0: its diff is 0
    force = force + _repulsion(
        pos[:, :, None, :] - robot_circles_w[:, None, :, :],
        radius + robot_radius,
        cfg.robot_repulsion,
        cfg.repulsion_range,
    ).sum(2)
    e = world.walker_resolution
    probes = torch.tensor([[0.0, 0.0], [e, 0.0], [0.0, e]], device=pos.device)  # here, one cell +x, +y
    sdf = walker_sdf(world.walker_lookup(radius, scene, pos[:, :, None, :] + probes))
    grad = sdf[..., 1:] - sdf[..., :1]
    grad = grad / grad.norm(dim=-1, keepdim=True).clamp_min(1e-6)
    wall = cfg.wall_repulsion * torch.exp((radius - sdf[..., :1]) / cfg.wall_range)
    near = sdf[..., :1] < radius + PUSH_CUTOFF_DECAYS * cfg.wall_range
    force = force + torch.where(near, wall, 0.0) * grad
    vel = vel + dt * force
    limit = cfg.max_speed_factor * desired.norm(dim=-1, keepdim=True)
    vel = vel * (limit / vel.norm(dim=-1, keepdim=True).clamp_min(1e-6)).clamp_max(1.0)
    new = pos + vel * dt
    candidates = torch.stack(  # (N, P, 3, 2): the whole step, its x part, its y part
        [new, torch.stack([new[..., 0], pos[..., 1]], -1), torch.stack([pos[..., 0], new[..., 1]], -1)], 2
    )
    ok = _free(world, scene, candidates, radius)
    gap_now = (pos[:, :, None, :] - robot_circles_w[:, None, :, :]).norm(dim=-1).amin(-1)  # (N, P)
    gap = (candidates[:, :, :, None, :] - robot_circles_w[:, None, None, :, :]).norm(dim=-1).amin(-1)
    ok &= (gap > robot_reach) | (gap >= gap_now[..., None])
    first = torch.cat([ok, torch.ones_like(ok[..., :1])], -1).int().argmax(-1)  # 3: none allowed
    options = torch.cat([candidates, pos[:, :, None, :]], 2)
    chosen = options.gather(2, first[..., None, None].expand(n, p, 1, 2))[:, :, 0]
    return chosen, (chosen - pos) / dt, direction


def stall_time(stalled: torch.Tensor, vel: torch.Tensor, dt: float) -> torch.Tensor:
    """How long (s) each pedestrian has got nowhere after a step at velocity ``vel`` (N, P, 2): 0 where
    it made progress (``MIN_PROGRESS_SPEED``), else ``stalled`` (N, P) + ``dt``."""
    return torch.where(vel.norm(dim=-1) >= MIN_PROGRESS_SPEED, 0.0, stalled + dt)


def flow_kernel_params(
    cfg: SocialForceCfg, radius: float, robot_radius: float, robot_reach: float, dt: float
) -> np.ndarray:
    """The ``params`` of ``crowd_kernels.flow_step``, the fused CPU twin of :func:`flow_step`."""
    terms = (
        cfg.relaxation_time,
        cfg.repulsion,
        cfg.repulsion_range,
        cfg.robot_repulsion,
        cfg.wall_repulsion,
        cfg.wall_range,
        cfg.rear_weight,
        cfg.one_way_ratio,
        cfg.max_speed_factor,
    )
    rest = (radius, robot_radius, robot_reach, dt)
    rest += (MIN_PREFERRED_SPEED, PUSH_CUTOFF_DECAYS, MIN_PROGRESS_SPEED)
    return np.array(terms + rest, dtype=np.float64)


def flow_spawn(
    people: ScenePeople,
    world: WorldBatch,
    scene: torch.Tensor,
    robot_xy: torch.Tensor,
    count: int,
    radius: float,
    min_robot_distance: float,
    generator: torch.Generator,
    tries: int = 4,
    others: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Spawn points (K, count, 2) m in seen flow cells drawn by density (uniform inside the cell) for
    environments in ``scene`` (K,), and (K, count) whether one of ``tries`` draws was on walkable
    ground with ``radius`` clearance at least ``min_robot_distance`` m from the robot at ``robot_xy``
    (and clear of the bodies of ``others`` (K, Q, 2), the pedestrians already there, when given)."""
    k = scene.numel()
    u = torch.rand((k, count * tries, 3), generator=generator, device=robot_xy.device)
    slot = torch.searchsorted(people.spawn_cdf[scene], u[..., 0].double().contiguous(), right=True)
    slot = torch.minimum(slot, (people.spawn_count[scene][:, None] - 1).clamp_min(0))
    corner = people.spawn_corner[scene[:, None].expand_as(slot), slot]
    xy = (corner + u[..., 1:] * people.flow_cell[scene][:, None, None]).view(k, count, tries, 2)
    ok = _free(world, scene, xy, radius)
    ok &= (xy - robot_xy[:, None, None, :]).norm(dim=-1) >= min_robot_distance
    if others is not None:
        gap = (xy.view(k, -1, 1, 2) - others[:, None, :, :]).norm(dim=-1).amin(-1)
        ok &= gap.view(k, count, tries) > 2 * radius
    first = ok.int().argmax(-1, keepdim=True)
    return xy.gather(2, first[..., None].expand(k, count, 1, 2))[:, :, 0], ok.any(-1)


# ------------------------------------------------------------------------------- synthetic people
def synthetic_agents(
    world: CompiledWorld,
    count: int,
    seed: int = 0,
    *,
    one_way: bool = False,
    heading: float = 0.0,
    duration_s: float = 20.0,
    clearance: float = 0.5,
) -> list[Agent]:
    """``count`` people walking straight along ``heading`` (rad; with ``one_way`` False, half of them
    the opposite way) across ``world``'s walkable ground at 1.0 to 1.4 m/s, one point every 0.5 s,
    each starting at a random walkable spot with ``clearance`` m free around it at a random time in
    [0, 10) s and stopping before leaving such ground or after ``duration_s`` s (at least 1 s of
    walking). Deterministic in ``seed``; raises ``InputError`` where the ground has no room for them."""
    rng = np.random.default_rng(seed)
    free = world.walkable & (world.sdf > clearance)
    rows, cols = np.nonzero(free)
    if not rows.size:
        raise InputError(f"{world.name}: no walkable ground {clearance} m clear of obstacles for people")
    step_s = 0.5
    agents: list[Agent] = []
    for _ in range(50 * count):
        if len(agents) == count:
            break
        i = rng.integers(rows.size)
        xy = np.asarray(world.origin) + (np.array([cols[i], rows[i]]) + 0.5) * world.resolution
        sign = 1.0 if one_way or rng.random() < 0.5 else -1.0
        step = sign * rng.uniform(1.0, 1.4) * step_s * np.array([math.cos(heading), math.sin(heading)])
        points = [xy]
        while len(points) * step_s <= duration_s:
            nxt = points[-1] + step
            iy, ix = world.cell_of(nxt)
            if not free[iy, ix] or not free[world.cell_of(points[-1] + step / 2)]:
                break
            points.append(nxt)
        if len(points) < 3:
            continue
        t0 = rng.uniform(0.0, 10.0)
        traj = np.array([(t0 + j * step_s, x, y) for j, (x, y) in enumerate(points)])
        agents.append(make_agent(f"synthetic-{len(agents)}", traj, np.full(len(traj), 0.9)))
    if len(agents) < count:
        raise InputError(f"{world.name}: room for only {len(agents)} of {count} synthetic people")
    return agents


def add_synthetic_people(scene_dir: Path | str, count: int, seed: int = 0, *, one_way: bool = False) -> Scene:
    """Write ``count`` :func:`synthetic_agents` (along x) and their flow field into ``scene_dir``'s
    ``scene.json``, replacing any people it had; returns the new scene."""
    scene = load_scene(Path(scene_dir))
    world = compile_world(scene_dir, WorldCfg(cache=False))
    agents = tuple(synthetic_agents(world, count, seed, one_way=one_way))
    scene = dataclasses.replace(scene, agents=agents, flow=flow_field(agents))
    save_scene(scene, Path(scene_dir))
    return scene
