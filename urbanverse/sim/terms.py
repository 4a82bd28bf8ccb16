"""Observation and action maths shared by the batched environment and the Isaac Lab task.

Pure torch functions of batch-first tensors over N environments, with no simulator state:
``NavVecEnv`` calls them on its kinematic state and ``sim.isaaclab`` on Isaac Lab's articulation
and ray-caster data, so a policy reads the same numbers in both. The reward terms are shared the
same way (``task.REWARD_TERMS``, functions of a ``TaskState``). Angles in radians, lengths in
metres, quaternions (w, x, y, z) as in Isaac Lab.
"""

from __future__ import annotations

import torch


def rotate_b2w(v: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Rotate body-frame vectors ``v`` (K, ..., 2) by ``yaw`` (K,) into the world frame."""
    extra = (1,) * (v.dim() - 2)
    c, s = torch.cos(yaw).view(-1, *extra), torch.sin(yaw).view(-1, *extra)
    return torch.stack([c * v[..., 0] - s * v[..., 1], s * v[..., 0] + c * v[..., 1]], dim=-1)


def to_body_frame(vec_w: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """World-frame horizontal vectors (K, 2) expressed in the body frame of heading ``yaw`` (K,)."""
    return rotate_b2w(vec_w[:, None, :], -yaw)[:, 0]


def target_in_body_frame(target_xy: torch.Tensor, pos_xy: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """The vector from the base at ``pos_xy`` (K, 2) to ``target_xy`` (K, 2), body frame (K, 2) m:
    the goal and route-waypoint observations."""
    return to_body_frame(target_xy - pos_xy, yaw)


def yaw_from_quat(quat_wxyz: torch.Tensor) -> torch.Tensor:
    """Heading about +z (K,) in (-pi, pi] of orientations (K, 4), (w, x, y, z)."""
    w, x, y, z = quat_wxyz.unbind(-1)
    return torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def quat_from_yaw(yaw: torch.Tensor) -> torch.Tensor:
    """Orientations (K, 4), (w, x, y, z), of a pure rotation ``yaw`` (K,) about +z."""
    half = 0.5 * yaw
    zero = torch.zeros_like(yaw)
    return torch.stack([half.cos(), zero, zero, half.sin()], dim=-1)


def ranges_from_hits(hits_w: torch.Tensor, sensor_w: torch.Tensor) -> torch.Tensor:
    """Horizontal range (K, B) m from the sensor at ``sensor_w`` (K, 3) to its beams' hit points
    ``hits_w`` (K, B, 3); a beam that hit nothing (inf or NaN coordinates) reads inf."""
    ranges = (hits_w[..., :2] - sensor_w[:, None, :2]).norm(dim=-1)
    return torch.where(torch.isfinite(ranges), ranges, torch.full_like(ranges, torch.inf))


def lidar_observation(ranges: torch.Tensor, max_range: float) -> torch.Tensor:
    """LiDAR ranges (K, B) m as the policy reads them: clipped to [0, max_range], free beams (inf)
    at max_range, then divided by max_range."""
    clean = torch.nan_to_num(ranges, nan=max_range, posinf=max_range).clamp(0.0, max_range)
    return clean / max_range


def velocity_observation(lin_vel_b: torch.Tensor, yaw_rate: torch.Tensor) -> torch.Tensor:
    """Body velocity observation (K, 3): forward and left speed (m/s) and yaw rate (rad/s)."""
    return torch.cat([lin_vel_b[:, :2], yaw_rate[:, None]], dim=-1)


def clamp_actions(actions: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Actions (K, A) with NaN/inf replaced by 0 and clamped to [-1, 1], and the number of
    non-finite entries replaced."""
    finite = torch.isfinite(actions)
    bad = int((~finite).sum()) if not bool(finite.all()) else 0
    return torch.where(finite, actions, torch.zeros_like(actions)).clamp(-1.0, 1.0), bad


def velocity_command(actions: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """Clamped actions (K, A) in [-1, 1] to velocity commands (K, A): [0, 1] maps linearly to
    [0, high] and [-1, 0] to [low, 0] per component (``low`` <= 0 <= ``high``, (A,)), so a zero
    action is a standstill."""
    return torch.where(actions >= 0, actions * high, -actions * low)


def wheel_speeds(vx: torch.Tensor, wz: torch.Tensor, wheel_radius: float, wheel_base: float) -> torch.Tensor:
    """Differential drive: forward speed ``vx`` (K,) m/s and yaw rate ``wz`` (K,) rad/s to the
    (left, right) wheel angular speeds (K, 2) rad/s of wheels of ``wheel_radius`` m, ``wheel_base``
    m apart."""
    half = 0.5 * wheel_base * wz
    return torch.stack([vx - half, vx + half], dim=-1) / wheel_radius
