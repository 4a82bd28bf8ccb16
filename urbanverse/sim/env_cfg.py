"""Configuration of the batched point-goal navigation environment."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.sim.pedestrians import PedestrianCfg
from urbanverse.sim.robots import ROBOTS, RobotCfg
from urbanverse.sim.sensors.depth_camera_cfg import DepthCameraCfg
from urbanverse.sim.sensors.lidar_cfg import LidarCfg
from urbanverse.sim.sensors.rgb_camera_cfg import RgbCameraCfg
from urbanverse.sim.task import PointNavCfg, RewardsCfg
from urbanverse.sim.world import WorldCfg


@dataclass(frozen=True, kw_only=True)
class NavEnvCfg:
    """Everything a ``NavVecEnv`` is built from.

    Observations concatenate, in this order (see ``NavVecEnv.obs_layout``; the images' shapes are in
    ``NavVecEnv.image_shapes``): LiDAR ranges / max range (B), depth pixels / max range (H * W,
    row-major; from the depth camera, or from the RGB camera's pass with ``rgb.observe_depth``), RGB
    pixels / 255 (H * W * 3, row-major, channels last), goal vector in the body frame (2, m), the
    route waypoint in the body frame (2, m; only with ``task.route_waypoint_m > 0``), body velocity
    (vx, vy, wz) (3), and the last clamped action (A).
    """

    scene_dirs: tuple[Path | str, ...]
    """Scene folders; environment ``i`` starts in scene ``i % M`` and rotates every few episodes."""
    num_envs: int = 64
    """Parallel environments (N)."""
    robot: RobotCfg | str = "wheeled"
    """``"wheeled"``, ``"legged"`` or a full ``RobotCfg``."""
    lidar: LidarCfg | None = field(default_factory=LidarCfg)
    """Planar LiDAR, or None."""
    depth: DepthCameraCfg | None = None
    """Depth camera, or None."""
    rgb: RgbCameraCfg | None = None
    """RGB camera (batched column renderer or MuJoCo, see ``RgbCameraCfg``), or None."""
    pedestrians: PedestrianCfg = field(default_factory=PedestrianCfg)
    """Moving pedestrians: how they move (random, replayed from the scene's recorded people, or a
    crowd on its flow field), their number, speed and size."""
    task: PointNavCfg = field(default_factory=PointNavCfg)
    """Episode rules: goals, success radius, time limit."""
    rewards: RewardsCfg = field(default_factory=RewardsCfg)
    """Reward term weights."""
    world: WorldCfg = field(default_factory=WorldCfg)
    """How scenes are compiled into the grids the environments step on."""
    dt: float = 0.1
    """Control period (s)."""
    seed: int = 0
    """Seed of every random draw (spawns, goals, pedestrians, noise)."""
    device: str = "cpu"
    """Torch device of all state and observation tensors (``"cpu"``, ``"cuda"``, ``"cuda:1"``)."""

    def __post_init__(self) -> None:
        if not self.scene_dirs:
            raise InputError("NavEnvCfg.scene_dirs: give at least one scene folder")
        if self.num_envs < 1 or self.dt <= 0:
            raise InputError("NavEnvCfg: need num_envs >= 1 and dt > 0")
        if isinstance(self.robot, str) and self.robot not in ROBOTS:
            raise InputError(f"NavEnvCfg.robot: {self.robot!r} is not one of {sorted(ROBOTS)}")
        if self.lidar is None and self.depth is None and self.rgb is None:
            raise InputError("NavEnvCfg: enable at least one of lidar, depth and rgb")
        if self.depth is not None and self.rgb is not None and self.rgb.observe_depth:
            raise InputError(
                "NavEnvCfg: take depth from the depth camera or from rgb.observe_depth, not both"
            )

    @property
    def robot_cfg(self) -> RobotCfg:
        """The robot configuration (presets resolved)."""
        return ROBOTS[self.robot] if isinstance(self.robot, str) else self.robot
