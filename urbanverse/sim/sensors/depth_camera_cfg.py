"""Configuration of the 2.5D depth camera."""

from __future__ import annotations

import math
from dataclasses import dataclass

from urbanverse.errors import InputError


@dataclass(frozen=True, kw_only=True)
class DepthCameraCfg:
    """A forward-looking pinhole depth camera, level (no pitch or roll), square pixels.

    Depth comes from marching each image column over the world's 2.5D surface height map
    (ground, curbs, obstacle tops) and from pedestrians as vertical cylinders.
    """

    height: int = 32
    """Image rows (pixels)."""
    width: int = 32
    """Image columns (pixels)."""
    hfov: float = math.radians(90.0)
    """Horizontal field of view (rad); the vertical one follows from square pixels."""
    max_range: float = 10.0
    """Largest depth (m); pixels that hit nothing read this."""
    step: float = 0.1
    """Marching step along each column's ground track (m): the depth resolution."""
    mount_height: float = 0.5
    """Optical centre above the ground under the robot base (m)."""
    mount_forward: float = 0.3
    """Optical centre ahead of the robot base along body +x (m)."""

    def __post_init__(self) -> None:
        if self.height < 1 or self.width < 1 or not 0 < self.hfov < math.pi:
            raise InputError("DepthCameraCfg: need height, width >= 1 and 0 < hfov < pi")
        if self.max_range <= 0 or not 0 < self.step <= self.max_range:
            raise InputError("DepthCameraCfg: need max_range > 0 and 0 < step <= max_range")
