"""Configuration of the planar LiDAR."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from urbanverse.errors import InputError


@dataclass(frozen=True, kw_only=True)
class LidarCfg:
    """A planar LiDAR at the robot base, beams evenly spread over ``fov`` centred on body +x.

    It sees the world's obstacle occupancy (parts in the robot's height band, scene edges),
    pedestrians (vertical cylinders) and, with ``sees_steps``, the ground steps the robot cannot
    climb.
    """

    num_beams: int = 64
    """Beams per scan."""
    fov: float = 2 * math.pi
    """Angular field of view (rad); a full circle places no beam twice."""
    max_range: float = 10.0
    """Largest reported range (m); free beams read this."""
    noise_std: float = 0.0
    """Standard deviation of additive Gaussian range noise (m)."""
    sees_steps: bool = True
    """Ground steps higher than the robot climbs (``RobotCfg.max_step_height``, e.g. curbs for the
    wheeled robot) read as walls, as in the 2D scan a navigation stack derives from a 3D LiDAR or
    an elevation map (pointcloud-to-laserscan with the band starting at the climbable height).
    False: a single-plane LiDAR above curb height that sees obstacles only."""
    method: Literal["lut", "sphere"] = "lut"
    """``lut``: precomputed per-cell range table (fast); ``sphere``: sphere tracing on the sdf (reference)."""
    lut_resolution: float = 0.1
    """Cell size of the range table (m)."""
    lut_directions: int = 128
    """Directions in the range table (the beam angle snaps to the nearest; 128 gives 2.8 deg)."""
    sphere_iterations: int = 64
    """Sphere-tracing iterations (reference method and table construction)."""

    def __post_init__(self) -> None:
        if self.num_beams < 1 or not 0 < self.fov <= 2 * math.pi or self.max_range <= 0:
            raise InputError("LidarCfg: need num_beams >= 1, 0 < fov <= 2 pi, max_range > 0")
        if self.max_range * 100 > 32767:
            raise InputError("LidarCfg.max_range: at most 327 m (table stores centimetres in int16)")
        if self.noise_std < 0 or self.lut_resolution <= 0 or self.lut_directions < 4:
            raise InputError("LidarCfg: need noise_std >= 0, lut_resolution > 0, lut_directions >= 4")

    def beam_angles(self) -> list[float]:
        """Beam angles in the body frame (rad), counter-clockwise from -fov/2."""
        n = self.num_beams
        if math.isclose(self.fov, 2 * math.pi):
            return [-math.pi + 2 * math.pi * i / n for i in range(n)]
        return [-0.5 * self.fov + self.fov * i / max(n - 1, 1) for i in range(n)] if n > 1 else [0.0]
