"""Add an asset to a MuJoCo model as one free body made of convex mesh geoms.

Shared by the asset verification (one asset dropped on flat ground) and the scene physics
check (every object of a scene). MuJoCo collides mesh geoms as their convex hulls, which is
exact here because every collision part is convex.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import mujoco
import numpy as np

#: Torsional and rolling friction (MuJoCo's 2nd and 3rd friction coefficients).
SPIN_ROLL_FRICTION = (0.005, 0.0001)


def yaw_quat(yaw: float) -> list[float]:
    """Quaternion (w, x, y, z) of a rotation by ``yaw`` radians about +Z."""
    return [math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)]


def add_free_body(
    spec: mujoco.MjSpec,
    name: str,
    parts: Sequence[np.ndarray],
    part_masses: Sequence[float],
    friction: float,
    position: Sequence[float],
    yaw: float = 0.0,
) -> None:
    """A free body ``name`` at ``position`` (m) and ``yaw`` with one mesh geom per part.

    ``parts``: vertex arrays ``(V_i, 3)`` in the body frame (m); ``part_masses`` in kg.
    """
    body = spec.worldbody.add_body(name=name, pos=list(position), quat=yaw_quat(yaw))
    body.add_freejoint()
    for k, (vertices, mass) in enumerate(zip(parts, part_masses, strict=True)):
        geom_name = f"{name}_part_{k}"
        spec.add_mesh(name=geom_name, uservert=np.asarray(vertices, dtype=np.float64).ravel().tolist())
        body.add_geom(
            name=geom_name,
            type=mujoco.mjtGeom.mjGEOM_MESH,
            meshname=geom_name,
            mass=max(float(mass), 1e-3),
            friction=[friction, *SPIN_ROLL_FRICTION],
        )


def new_spec(timestep_s: float, ground_friction: float) -> mujoco.MjSpec:
    """An empty model with gravity -Z 9.81 m/s^2 and a ground plane at z = 0."""
    spec = mujoco.MjSpec()
    spec.option.timestep = timestep_s
    spec.option.gravity = [0.0, 0.0, -9.81]
    spec.worldbody.add_geom(
        name="ground_plane",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[0, 0, 1],
        friction=[ground_friction, *SPIN_ROLL_FRICTION],
    )
    return spec


def tilt_deg(quat_wxyz: np.ndarray) -> float:
    """Angle (degrees) between a body's +Z axis and the world's +Z."""
    _, x, y, _ = quat_wxyz
    return math.degrees(math.acos(float(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0))))
