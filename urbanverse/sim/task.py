"""Point-goal navigation: spawn/goal ranges, terminations and reward terms.

Reward terms are named functions of a ``TaskState`` returning (N,) per-step values; the
environment multiplies each by its weight in ``RewardsCfg``, sums them, and logs episode sums
as ``reward/<term>``. Defaults follow UrbanVerse (arXiv 2510.15018): +2000 on arrival, -200
on collision, coarse and fine position tracking ``1 - tanh(d / std)`` with std 5 m (weight 10)
and 1 m (weight 50), and a velocity term (weight 10). Terms with weight 0 are not computed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from urbanverse.errors import InputError


@dataclass(frozen=True, kw_only=True)
class PointNavCfg:
    """Episode rules of point-goal navigation."""

    success_radius: float = 1.0
    """An episode succeeds when the base is this close to the goal (m, Euclidean)."""
    max_episode_steps: int = 300
    """Steps before a time-out (truncation, not termination)."""
    terminate_on_collision: bool = True
    """End the episode (terminated) at the first blocked move or pedestrian hit."""
    min_goal_distance: float = 2.0
    """Shortest geodesic spawn-to-goal distance (m)."""
    max_goal_distance: float = 30.0
    """Longest geodesic spawn-to-goal distance (m)."""
    num_goals: int = 32
    """Goal candidates per scene (each with a precomputed geodesic field)."""
    geodesic_resolution: float = 0.2
    """Cell size of the geodesic fields (m)."""
    episodes_per_scene: int = 4
    """An environment moves to the next scene after this many episodes."""
    route_waypoint_m: float = 0.0
    """When > 0, observations also carry ``route_b``: the next waypoint of the shortest walkable route
    (``WorldBatch.route_waypoint`` at this radius, m, body frame), what a global planner on the scene
    map gives a robot that has a map. It shows detours a range sensor cannot see (a curb ramp far
    ahead). 0: the straight-line goal vector only, as in the UrbanVerse paper."""

    def __post_init__(self) -> None:
        if self.success_radius <= 0 or self.max_episode_steps < 1:
            raise InputError("PointNavCfg: need success_radius > 0 and max_episode_steps >= 1")
        if not 0 <= self.min_goal_distance < self.max_goal_distance:
            raise InputError("PointNavCfg: need 0 <= min_goal_distance < max_goal_distance")
        if self.num_goals < 1 or self.episodes_per_scene < 1:
            raise InputError("PointNavCfg: need num_goals >= 1 and episodes_per_scene >= 1")
        if self.route_waypoint_m < 0:
            raise InputError("PointNavCfg: need route_waypoint_m >= 0 (0 turns the route observation off)")


@dataclass(frozen=True, kw_only=True)
class RewardsCfg:
    """Weights of the named reward terms (0 disables a term) and tracking widths (m)."""

    arrival: float = 2000.0
    """Paid once, on the step the goal is reached."""
    collision: float = -200.0
    """Paid on every step with a blocked move or a pedestrian hit (negative: a penalty)."""
    position_coarse: float = 10.0
    """Per step, times ``1 - tanh(d / coarse_std)``: pulls towards the goal from far away."""
    position_fine: float = 50.0
    """Per step, times ``1 - tanh(d / fine_std)``: sharpens the pull within a few metres of the goal."""
    velocity: float = 10.0
    """Per step, times the speed towards the goal (m/s)."""
    progress: float = 0.0
    """Per step, times the geodesic distance gained (m): rewards detours around obstacles that the
    straight-line terms punish. Off by default, as in the UrbanVerse paper."""
    coarse_std: float = 5.0
    """Width of the coarse tracking term (m)."""
    fine_std: float = 1.0
    """Width of the fine tracking term (m)."""

    def weights(self) -> dict[str, float]:
        """Non-zero term weights by name."""
        return {name: w for name in REWARD_TERMS if (w := getattr(self, name)) != 0.0}


@dataclass
class TaskState:
    """What reward terms read, batch-first over environments (N)."""

    goal_distance: torch.Tensor
    """Euclidean distance base to goal, (N,) m."""
    goal_dir_w: torch.Tensor
    """Unit vector from base to goal, (N, 2)."""
    vel_w: torch.Tensor
    """Base linear velocity in the world, (N, 2) m/s."""
    geodesic_delta: torch.Tensor
    """Decrease of the geodesic goal distance this step, (N,) m (0 where unknown)."""
    success: torch.Tensor
    """Reached the goal this step, (N,) bool."""
    collision: torch.Tensor
    """Blocked move or pedestrian hit this step, (N,) bool."""
    cfg: RewardsCfg


def arrival(s: TaskState) -> torch.Tensor:
    """1 on the step the goal is reached."""
    return s.success.float()


def collision(s: TaskState) -> torch.Tensor:
    """1 on every step with a collision."""
    return s.collision.float()


def position_coarse(s: TaskState) -> torch.Tensor:
    """Coarse tracking ``1 - tanh(d / coarse_std)``, in (0, 1]."""
    return 1.0 - torch.tanh(s.goal_distance / s.cfg.coarse_std)


def position_fine(s: TaskState) -> torch.Tensor:
    """Fine tracking ``1 - tanh(d / fine_std)``, in (0, 1]."""
    return 1.0 - torch.tanh(s.goal_distance / s.cfg.fine_std)


def velocity(s: TaskState) -> torch.Tensor:
    """Speed towards the goal (m/s): world velocity projected on the goal direction."""
    return (s.vel_w * s.goal_dir_w).sum(-1)


def progress(s: TaskState) -> torch.Tensor:
    """Geodesic distance gained this step (m)."""
    return s.geodesic_delta


REWARD_TERMS: dict[str, Callable[[TaskState], torch.Tensor]] = {
    "arrival": arrival,
    "collision": collision,
    "position_coarse": position_coarse,
    "position_fine": position_fine,
    "velocity": velocity,
    "progress": progress,
}
