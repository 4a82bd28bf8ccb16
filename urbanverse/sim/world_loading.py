"""Scene folders to the ``WorldBatch`` a robot navigates: compiled grids, goal fields and the people
seen in each scene."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from urbanverse.scene.record import load_scene
from urbanverse.sim.geodesic import GoalFieldsSpec, compute_goal_fields
from urbanverse.sim.robots import RobotCfg
from urbanverse.sim.task import PointNavCfg
from urbanverse.sim.world import WorldCfg, compile_world
from urbanverse.sim.world_batch import ScenePeople, WorldBatch


def load_world_batch(
    scene_dirs: Sequence[Path | str], world_cfg: WorldCfg, task: PointNavCfg, robot: RobotCfg, device: str
) -> WorldBatch:
    """Compile ``scene_dirs`` and their goal fields for ``robot`` under ``task``'s goal rules (both
    cached on disk) into one ``WorldBatch`` on ``device``, with the people seen in each scene
    (``ScenePeople``): what the batched environment and the Isaac Lab task step, sample and observe on."""
    worlds = [compile_world(d, world_cfg) for d in scene_dirs]
    spec = goal_spec(task, robot)
    goals = [compute_goal_fields(w, spec, cache=world_cfg.cache) for w in worlds]
    people = ScenePeople([load_scene(Path(d)) for d in scene_dirs], device)
    return WorldBatch(worlds, goals, device, people)


def goal_spec(task: PointNavCfg, robot: RobotCfg) -> GoalFieldsSpec:
    """The ``GoalFieldsSpec`` of ``robot`` under ``task``'s goal rules (what ``load_world_batch`` uses)."""
    return GoalFieldsSpec(
        resolution=task.geodesic_resolution,
        clearance=robot.radius,
        spawn_clearance=robot.circumradius,
        max_step=robot.max_step_height,
        num_goals=task.num_goals,
        min_distance=task.min_goal_distance,
        max_distance=task.max_goal_distance,
    )


def unique_names(names: list[str]) -> list[str]:
    """Scene names made unique by their place in the list where they repeat (``name_<i>``): how
    environments, episode files and evaluation tables name the scenes of one list."""
    return [n if names.count(n) == 1 else f"{n}_{i}" for i, n in enumerate(names)]
