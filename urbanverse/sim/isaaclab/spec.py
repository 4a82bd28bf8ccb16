"""What the Isaac Lab task is made of, in plain Python (no Isaac imports): testable anywhere.

``PointNavSpec`` carries the scene USD, the spawn/goal points and the episode and reward
values. The values are read from the batched environment's defaults (``PointNavCfg``,
``RewardsCfg``, ``NavEnvCfg.dt``), so both trainers optimise the same objective:
+2000 on arrival, -200 per collision, ``1 - tanh(d / 5 m)`` weight 10, ``1 - tanh(d / 1 m)``
weight 50, speed towards the goal weight 10, success within 1 m, 300 steps of 0.1 s.

Isaac Lab's reward manager multiplies every term by the step duration; ``isaac_weight``
divides it back out so that a step's reward equals the batched environment's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import shapely
import shapely.affinity

from urbanverse.errors import InputError
from urbanverse.scene.ground import footprint, top_height_at
from urbanverse.scene.record import Scene, load_scene
from urbanverse.sim.env_cfg import NavEnvCfg
from urbanverse.sim.task import PointNavCfg, RewardsCfg

#: Environment variable naming the scene folder the registered task loads.
SCENE_ENV_VAR = "URBANVERSE_ISAAC_SCENE"
#: Ground types a robot may start on or drive to when the scene has no walkable area.
WALKABLE_TYPES = ("sidewalk", "crosswalk", "ramp", "plaza")
_DEFAULT_DT = NavEnvCfg.__dataclass_fields__["dt"].default


def default_scene_dir() -> Path:
    """``$URBANVERSE_ISAAC_SCENE``, else the repository's ``scenes/example``."""
    if os.environ.get(SCENE_ENV_VAR):
        return Path(os.environ[SCENE_ENV_VAR])
    return Path(__file__).resolve().parents[3] / "scenes" / "example"


def scene_usd(scene_dir: Path, write: bool = True) -> Path:
    """The scene's USD (``scene.usda``, else ``scene.usdc``); written from ``scene.json`` when missing
    and ``write`` is true."""
    scene_dir = Path(scene_dir)
    for name in ("scene.usda", "scene.usdc"):
        if (scene_dir / name).is_file():
            return (scene_dir / name).resolve()
    if not write:
        raise InputError(f"{scene_dir}: no scene.usda or scene.usdc (run `urbanverse usd {scene_dir}`)")
    from urbanverse.scene.usd_writer import write_usd

    return Path(write_usd(load_scene(scene_dir), scene_dir, "usda")).resolve()


def spawn_points(scene: Scene, clearance: float, spacing: float = 0.5) -> np.ndarray:
    """Points ``(P, 3)`` on a ``spacing`` grid inside the walkable area (or the walkable ground types),
    at least ``clearance`` metres from every object footprint; z is the ground top there."""
    if scene.walkable_area:
        area = shapely.union_all([shapely.Polygon(p) for p in scene.walkable_area])
    else:
        area = shapely.union_all(
            [shapely.Polygon(r.polygon) for r in scene.ground if r.type in WALKABLE_TYPES]
        )
    blocked = shapely.union_all([footprint(o.position, o.yaw, o.size) for o in scene.objects])
    free = area.buffer(-clearance).difference(blocked.buffer(clearance))
    if free.is_empty:
        raise InputError(f"scene {scene.name}: no free walkable ground {clearance} m away from objects")
    x0, y0, x1, y1 = free.bounds
    xs, ys = np.meshgrid(np.arange(x0, x1 + 1e-9, spacing), np.arange(y0, y1 + 1e-9, spacing))
    xy = np.column_stack([xs.ravel(), ys.ravel()])
    xy = xy[shapely.contains_xy(free, xy[:, 0], xy[:, 1])]
    if len(xy) < 2:
        raise InputError(f"scene {scene.name}: fewer than two spawn points; the walkable area is too small")
    z = top_height_at(scene.ground, xy)
    return np.column_stack([xy, z])


@dataclass(frozen=True, kw_only=True)
class PointNavSpec:
    """The Isaac Lab point-goal task, independent of Isaac: scene, robot, episode and reward values."""

    scene_dir: Path = field(default_factory=default_scene_dir)
    robot: Literal["wheeled"] = "wheeled"
    """Robot preset; the registered task drives a differential-drive Jetbot."""
    num_envs: int = 64
    dt: float = _DEFAULT_DT
    """Control period (s), as in the batched environment."""
    physics_dt: float = 0.02
    """Physics step (s); ``dt / physics_dt`` physics steps per control step."""
    task: PointNavCfg = field(default_factory=PointNavCfg)
    rewards: RewardsCfg = field(default_factory=RewardsCfg)
    robot_clearance: float = 0.35
    """Spawn and goal points keep this far from objects and the walkable area's edge (m)."""
    camera_shape: tuple[int, int] = (135, 240)
    """RGB camera image (height, width), as in UrbanVerse's policy input."""
    collision_force: float = 1.0
    """Contact force (N) on the chassis that counts as a collision."""

    def __post_init__(self) -> None:
        if self.num_envs < 1:
            raise InputError("PointNavSpec.num_envs: need at least 1")
        ratio = self.dt / self.physics_dt
        if self.physics_dt <= 0 or abs(ratio - round(ratio)) > 1e-6:
            raise InputError("PointNavSpec: dt must be a whole multiple of physics_dt")

    @property
    def decimation(self) -> int:
        """Physics steps per control step."""
        return round(self.dt / self.physics_dt)

    @property
    def episode_length_s(self) -> float:
        """Time-out (s): ``max_episode_steps`` control steps."""
        return self.task.max_episode_steps * self.dt

    def isaac_weight(self, term: str) -> float:
        """A reward weight for Isaac Lab (which scales terms by ``dt``), so per-step rewards match."""
        return getattr(self.rewards, term) / self.dt

    def usd_path(self) -> Path:
        """The scene USD the task loads (written from ``scene.json`` when missing)."""
        return scene_usd(self.scene_dir)

    def points(self) -> np.ndarray:
        """Spawn and goal candidates ``(P, 3)`` in the scene (world frame, m)."""
        return spawn_points(load_scene(self.scene_dir), self.robot_clearance)
