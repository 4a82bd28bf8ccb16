"""Configuration of the RGB camera."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from urbanverse.errors import InputError

RENDERERS = ("columns", "mujoco")


@dataclass(frozen=True, kw_only=True)
class RgbAugmentCfg:
    """Random changes to every rendered image, drawn anew per image and step, for policies that must
    transfer to real cameras (exposure, white balance, sensor noise, focus). All off by default."""

    brightness: float = 0.0
    """Gain drawn uniformly from [1 - b, 1 + b] per image."""
    contrast: float = 0.0
    """Contrast about the image mean, drawn uniformly from [1 - c, 1 + c] per image."""
    colour: float = 0.0
    """Per-channel gain drawn uniformly from [1 - c, 1 + c] (white balance)."""
    noise_std: float = 0.0
    """Standard deviation of additive Gaussian pixel noise (8-bit levels)."""
    blur: float = 0.0
    """Probability that an image is blurred by a 3 x 3 box filter."""

    def __post_init__(self) -> None:
        if min(self.brightness, self.contrast, self.colour, self.noise_std, self.blur) < 0 or self.blur > 1:
            raise InputError("RgbAugmentCfg: need non-negative values and blur <= 1")

    @property
    def active(self) -> bool:
        """Whether any change is switched on."""
        return any((self.brightness, self.contrast, self.colour, self.noise_std, self.blur))


@dataclass(frozen=True, kw_only=True)
class RgbCameraCfg:
    """A forward-looking pinhole colour camera on the robot, square pixels, tilted down by ``pitch``.

    Two renderers draw the same scene from the same pose:

    - ``"columns"`` (default): every environment in one multi-threaded call, from the scene's
      appearance grid (``urbanverse.sim.appearance``: ground textures and colours, objects in their
      parts' colours with overhead parts such as tree crowns, sun shading, sky gradient) by column
      marching (``urbanverse.sim.camera_kernels``); pedestrians are coloured cylinders. Tens of
      microseconds per 64 x 64 image; gives depth and semantic ids from the same pass.
    - ``"mujoco"``: the scene's textured meshes through ``urbanverse.render`` (MuJoCo's OpenGL on
      Mesa's CPU rasterizer), one environment after another, milliseconds per image; pedestrians are
      capsules. The reference the column renderer is checked against.

    Both render on the CPU; on a CUDA device the images are copied there.
    """

    height: int = 64
    """Image rows (pixels); the UrbanVerse paper's policies see 135 x 240."""
    width: int = 64
    """Image columns (pixels)."""
    hfov: float = math.radians(90.0)
    """Horizontal field of view (rad); the vertical one follows from square pixels."""
    mount_height: float = 0.6
    """Optical centre above the ground under the robot base (m)."""
    mount_forward: float = 0.3
    """Optical centre ahead of the robot base along body +x (m)."""
    pitch: float = math.radians(10.0)
    """Downward tilt of the optical axis (rad)."""
    renderer: Literal["columns", "mujoco"] = "columns"
    """``"columns"`` (batched, fast) or ``"mujoco"`` (mesh rasterizer, slow reference)."""
    max_range: float = 40.0
    """Columns renderer: farthest surface drawn (m); beyond it the sky shows. Depth reads this where
    nothing was hit."""
    observe_depth: bool = False
    """Columns renderer: also put the z-depth image from the same pass in the observation (entry
    ``"depth"``, divided by ``max_range``), for RGB-D policies."""
    augment: RgbAugmentCfg = field(default_factory=RgbAugmentCfg)
    """Random colour jitter, noise and blur of the images (sim-to-real; off by default)."""
    shadows: bool = False
    """MuJoCo renderer: sun shadows (about twice the cost per image)."""

    def __post_init__(self) -> None:
        if self.height < 1 or self.width < 1 or not 0 < self.hfov < math.pi:
            raise InputError("RgbCameraCfg: need height, width >= 1 and 0 < hfov < pi")
        if not -math.pi / 2 < self.pitch < math.pi / 2:
            raise InputError("RgbCameraCfg.pitch: need -pi/2 < pitch < pi/2")
        if self.renderer not in RENDERERS:
            raise InputError(
                f"RgbCameraCfg.renderer: expected one of {', '.join(RENDERERS)}, got {self.renderer!r}"
            )
        if self.max_range <= 0.1:
            raise InputError(f"RgbCameraCfg.max_range: need > 0.1 m, got {self.max_range}")
        if self.observe_depth and self.renderer != "columns":
            raise InputError("RgbCameraCfg.observe_depth: only the columns renderer gives depth")
        vfov = 2 * math.atan(math.tan(0.5 * self.hfov) * self.height / self.width)
        if self.renderer == "columns" and abs(self.pitch) + 0.5 * vfov >= math.radians(85):
            raise InputError(
                "RgbCameraCfg: the columns renderer needs |pitch| + vfov / 2 < 85 deg "
                f"(got {math.degrees(abs(self.pitch) + 0.5 * vfov):.0f} deg); use renderer='mujoco'"
            )
