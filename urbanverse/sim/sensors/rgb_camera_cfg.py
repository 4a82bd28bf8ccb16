"""Configuration of the RGB camera."""

from __future__ import annotations

import math
from dataclasses import dataclass

from urbanverse.errors import InputError


@dataclass(frozen=True, kw_only=True)
class RgbCameraCfg:
    """A forward-looking pinhole colour camera on the robot, square pixels, tilted down by ``pitch``.

    Images come from the scene's textured meshes through the renderer (``urbanverse.render``:
    MuJoCo's OpenGL on Mesa's CPU rasterizer), one rasterizer per scene; pedestrians are drawn as
    capsules. Rendering happens on the CPU, one environment after another, so this sensor costs
    milliseconds per environment and step (``tools/bench_env.py``); on a CUDA device the images
    are copied there.
    """

    height: int = 32
    """Image rows (pixels)."""
    width: int = 32
    """Image columns (pixels)."""
    hfov: float = math.radians(90.0)
    """Horizontal field of view (rad); the vertical one follows from square pixels."""
    mount_height: float = 0.6
    """Optical centre above the ground under the robot base (m)."""
    mount_forward: float = 0.3
    """Optical centre ahead of the robot base along body +x (m)."""
    pitch: float = math.radians(10.0)
    """Downward tilt of the optical axis (rad)."""
    shadows: bool = False
    """Sun shadows (about twice the cost per image)."""

    def __post_init__(self) -> None:
        if self.height < 1 or self.width < 1 or not 0 < self.hfov < math.pi:
            raise InputError("RgbCameraCfg: need height, width >= 1 and 0 < hfov < pi")
        if not -math.pi / 2 < self.pitch < math.pi / 2:
            raise InputError("RgbCameraCfg.pitch: need -pi/2 < pitch < pi/2")
