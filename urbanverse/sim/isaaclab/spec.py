"""What the Isaac Lab task is made of, in plain Python (no Isaac imports): testable anywhere.

``PointNavSpec`` carries the scenes, the episode, observation and reward values, and prepares
what the task spawns (``scenes.EnvScenes``) and steps on (``WorldBatch``). Its defaults are the
shipped ``wheeled-lidar-mlp`` policy's recipe, so that policy reads the same observation vector in
Isaac Lab as in the batched environment: LiDAR (64 beams, 10 m) / 10 m, goal vector, route waypoint
1 m ahead, body velocity, last action (73 values); rewards +2000 on arrival, -200 per collision,
100 per metre of geodesic progress; success within 1 m; 300 steps of 0.1 s.
``from_train_config`` takes another training run's ``config.json`` instead.

Isaac Lab's reward manager multiplies every term by the step duration; ``isaac_weight``
divides it back out so that a step's reward equals the batched environment's.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import shapely
import shapely.affinity

from urbanverse.errors import InputError
from urbanverse.paths import cache_dir
from urbanverse.scene.ground import footprint, top_height_at
from urbanverse.scene.record import Scene, find_scene_dirs, load_scene
from urbanverse.sim.env_cfg import NavEnvCfg
from urbanverse.sim.isaaclab.nav_state import OBSERVATION_TERMS
from urbanverse.sim.isaaclab.scenes import MANIFEST, EnvScenes, cache_key, prepare_env_scenes
from urbanverse.sim.pedestrians import PedestrianCfg
from urbanverse.sim.robots import WHEELED
from urbanverse.sim.sensors.lidar import scan_occupancy
from urbanverse.sim.sensors.lidar_cfg import LidarCfg
from urbanverse.sim.task import PointNavCfg, RewardsCfg
from urbanverse.sim.world import WorldCfg, compile_world
from urbanverse.sim.world_batch import WorldBatch
from urbanverse.sim.world_loading import load_world_batch

#: Environment variable naming the scene folders the registered task loads (``os.pathsep``-separated;
#: each a scene folder or a folder of scene folders).
SCENES_ENV_VAR = "URBANVERSE_ISAAC_SCENES"
#: Environment variable naming a training run's ``config.json`` whose environment the task takes.
CONFIG_ENV_VAR = "URBANVERSE_ISAAC_CONFIG"
#: Environment variable with the number of environments (the scan walls are built for it).
NUM_ENVS_ENV_VAR = "URBANVERSE_ISAAC_NUM_ENVS"
#: Ground types a robot may start on or drive to when the scene has no walkable area.
WALKABLE_TYPES = ("sidewalk", "crosswalk", "ramp", "plaza")
_DEFAULT_DT = NavEnvCfg.__dataclass_fields__["dt"].default
#: The shipped wheeled policy's rewards (``policies/wheeled-lidar-mlp/config.json``).
SHIPPED_WHEELED_REWARDS = RewardsCfg(position_coarse=0.0, position_fine=0.0, velocity=0.0, progress=100.0)


def default_scene_dirs() -> tuple[Path, ...]:
    """``$URBANVERSE_ISAAC_SCENES``, else the repository's ``scenes/example``."""
    value = os.environ.get(SCENES_ENV_VAR)
    if value:
        return tuple(Path(p) for p in find_scene_dirs(value.split(os.pathsep), SCENES_ENV_VAR))
    return (Path(__file__).resolve().parents[3] / "scenes" / "example",)


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
    """The Isaac Lab point-goal task, independent of Isaac: scenes, robot, episode, observation and
    reward values."""

    scene_dirs: tuple[Path, ...] = field(default_factory=default_scene_dirs)
    """Scene folders; environment ``i`` gets its own copy of scene ``i % M``."""
    robot: Literal["wheeled"] = "wheeled"
    """Robot preset; the registered task drives a differential-drive Jetbot with the wheeled
    robot's speed limits, and goals and spawns follow the wheeled robot's climb rule."""
    num_envs: int = 64
    dt: float = _DEFAULT_DT
    """Control period (s), as in the batched environment."""
    physics_dt: float = 0.02
    """Physics step (s); ``dt / physics_dt`` physics steps per control step."""
    lidar: LidarCfg = field(default_factory=LidarCfg)
    """Beams, field of view and range of the RayCaster LiDAR (as the batched LiDAR's)."""
    task: PointNavCfg = field(default_factory=lambda: PointNavCfg(route_waypoint_m=1.0))
    rewards: RewardsCfg = SHIPPED_WHEELED_REWARDS
    world: WorldCfg = field(default_factory=WorldCfg)
    """Navigation grids the goals, geodesic fields and LiDAR walls come from."""
    collision_force: float = 1.0
    """Horizontal contact force (N) on the chassis that counts as a collision."""

    def __post_init__(self) -> None:
        if not self.scene_dirs:
            raise InputError("PointNavSpec.scene_dirs: give at least one scene folder")
        if self.num_envs < 1:
            raise InputError("PointNavSpec.num_envs: need at least 1")
        ratio = self.dt / self.physics_dt
        if self.physics_dt <= 0 or abs(ratio - round(ratio)) > 1e-6:
            raise InputError("PointNavSpec: dt must be a whole multiple of physics_dt")

    @classmethod
    def from_train_config(cls, path: Path, **changes) -> PointNavSpec:
        """The task of a training run's ``config.json`` (``urbanverse train``): its LiDAR, episode
        rules, rewards and control period. Only wheeled LiDAR runs have an Isaac Lab task."""
        path = Path(path)
        try:
            env = json.loads(path.read_text())["env"]
            values = dict(
                lidar=LidarCfg(**env["lidar"]),
                task=PointNavCfg(**env["task"]),
                rewards=RewardsCfg(**env["rewards"]),
                dt=float(env["dt"]),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}: not a training config.json ({exc})") from None
        kind = (env.get("robot", "wheeled"), env.get("sensor", "lidar"))
        if kind != ("wheeled", "lidar"):
            raise InputError(
                f"{path}: the Isaac Lab task is wheeled with a LiDAR, not {kind[0]} with {kind[1]}"
            )
        return cls(**{**values, **changes})

    @classmethod
    def from_environment(cls, **changes) -> PointNavSpec:
        """The spec the registered task builds: ``$URBANVERSE_ISAAC_CONFIG``'s run (else the defaults)
        over ``$URBANVERSE_ISAAC_SCENES`` with ``$URBANVERSE_ISAAC_NUM_ENVS`` environments."""
        if os.environ.get(NUM_ENVS_ENV_VAR):
            try:
                changes.setdefault("num_envs", int(os.environ[NUM_ENVS_ENV_VAR]))
            except ValueError:
                raise InputError(f"{NUM_ENVS_ENV_VAR}: not a whole number") from None
        config = os.environ.get(CONFIG_ENV_VAR)
        return cls.from_train_config(Path(config), **changes) if config else cls(**changes)

    def to_json(self) -> str:
        """The spec as one JSON string: what the Isaac Lab config hands to its runtime terms (a string
        passes through Hydra's config store unchanged)."""
        values = dataclasses.asdict(self)
        values["scene_dirs"] = [str(p) for p in self.scene_dirs]
        return json.dumps(values)

    @classmethod
    def from_json(cls, text: str) -> PointNavSpec:
        """The spec ``to_json`` wrote."""
        v = json.loads(text)
        return cls(
            **{
                **v,
                "scene_dirs": tuple(Path(p) for p in v["scene_dirs"]),
                "lidar": LidarCfg(**v["lidar"]),
                "task": PointNavCfg(**v["task"]),
                "rewards": RewardsCfg(**v["rewards"]),
                "world": WorldCfg(**{**v["world"], "walkable_types": tuple(v["world"]["walkable_types"])}),
            }
        )

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

    def observation_layout(self) -> dict[str, tuple[int, int]]:
        """Slices of the policy observation, ``name -> (start, stop)``, in ``OBSERVATION_TERMS`` order."""
        sizes = {
            "lidar": self.lidar.num_beams,
            "goal_b": 2,
            "route_b": 2 if self.task.route_waypoint_m > 0 else 0,
            "velocity_b": 3,
            "last_action": WHEELED.action_dim,
        }
        layout, start = {}, 0
        for name in OBSERVATION_TERMS:
            if sizes[name]:
                layout[name] = (start, start + sizes[name])
                start += sizes[name]
        return layout

    def nav_env_cfg(self, **changes) -> NavEnvCfg:
        """The batched environment's twin of this task (same scenes, LiDAR, rules, rewards and
        period; no pedestrians, as in Isaac); ``changes`` replace ``NavEnvCfg`` fields."""
        values = dict(
            scene_dirs=self.scene_dirs,
            num_envs=self.num_envs,
            robot=self.robot,
            lidar=self.lidar,
            pedestrians=PedestrianCfg(count=0),
            task=self.task,
            rewards=self.rewards,
            world=self.world,
            dt=self.dt,
        )
        return NavEnvCfg(**{**values, **changes})

    def world_batch(self, device: str) -> WorldBatch:
        """The scenes' navigation grids and goal fields on ``device`` (as ``NavVecEnv`` builds them)."""
        return load_world_batch(self.scene_dirs, self.world, self.task, WHEELED, device)

    def env_scenes(self, out_dir: Path | None = None) -> EnvScenes:
        """Environment layers, spacing, origins and scan walls for ``num_envs`` environments, written
        under ``out_dir`` (default: the cache's ``isaac/<digest of the scene USDs and settings>``).
        A folder with a manifest is read back without the USD library, so the process that runs
        Isaac Sim (whose own ``pxr`` must be the only one loaded) needs no usd-core once
        ``launcher`` prepared it in a child process."""
        usds = [scene_usd(d) for d in self.scene_dirs]
        step = WHEELED.max_step_height if self.lidar.sees_steps else None
        key = cache_key(usds, self.num_envs, step, self.world.resolution)
        out = Path(out_dir) if out_dir is not None else cache_dir() / "isaac" / key
        if (out / MANIFEST).is_file():
            return EnvScenes.load(out / MANIFEST)
        worlds = [compile_world(d, self.world) for d in self.scene_dirs]
        return prepare_env_scenes(usds, [scan_occupancy(w, step) for w in worlds], worlds, self.num_envs, out)
