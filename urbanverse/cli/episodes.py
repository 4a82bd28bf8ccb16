"""``urbanverse episodes make``: fixed evaluation episodes for ``urbanverse eval --episodes-file``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, cli_command, print_json
from urbanverse.cli.train import ScenesOpt
from urbanverse.errors import InputError

episodes_app = typer.Typer(
    help="Fixed evaluation episodes (Habitat PointNav style JSON lines) for urbanverse eval --episodes-file.",
    no_args_is_help=True,
)


def _settings(overrides: list[str]):
    """The task and world configs with ``task.<field>=v`` / ``world.<field>=v`` overrides applied."""
    from urbanverse.config import apply_overrides
    from urbanverse.sim import PointNavCfg, WorldCfg

    parts: dict[str, list[str]] = {"task": [], "world": []}
    for item in overrides:
        section, dot, rest = item.partition(".")
        if not dot or section not in parts:
            raise InputError(f"--set {item[:60]}: expected task.<field>=value or world.<field>=value")
        parts[section].append(rest)
    return apply_overrides(PointNavCfg(), parts["task"]), apply_overrides(WorldCfg(), parts["world"])


@episodes_app.command("make")
@cli_command
def make_command(
    out: Annotated[Path, typer.Option("-o", "--out", help="Episode file to write (JSON lines).")],
    scenes: ScenesOpt = None,
    per_scene: Annotated[int, typer.Option("--per-scene", help="Episodes per scene.")] = 20,
    seed: Annotated[
        int, typer.Option(help="Seed of the draws (>= 0); the same seed gives the same file.")
    ] = 0,
    robot: Annotated[
        str, typer.Option(help="wheeled or legged: whose clearance and climb limit decide free cells.")
    ] = "wheeled",
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="Task or world setting: task.min_goal_distance=5, task.max_goal_distance=20, "
            "world.resolution=0.05, ... (repeatable).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Draw fixed point-goal episodes in each scene, as training draws them, and write them to --out.

    Per scene: a goal among the scene's goal candidates, a start cell whose walkable (geodesic)
    distance to it lies between task.min_goal_distance and task.max_goal_distance (2 and 30 m in
    the default point-nav task), and a uniform yaw. Each line of the file is one episode: id,
    scene (relative to the file's folder where it is near), start (x, y, yaw), goal (x, y),
    max_steps (null: the policy's time limit) and geodesic_m. Evaluate a policy on them with
    urbanverse eval CHECKPOINT --episodes-file FILE.
    """
    from urbanverse.scene.record import find_scene_dirs
    from urbanverse.sim.episodes import make_episodes, save_episodes
    from urbanverse.sim.robots import ROBOTS

    if not scenes:
        raise InputError("--scenes: give at least one scene folder (e.g. --scenes scenes/example)")
    if robot not in ROBOTS:
        raise InputError(f"--robot: expected one of {', '.join(sorted(ROBOTS))}, got {robot!r}")
    task, world = _settings(overrides or [])
    scene_dirs = find_scene_dirs(scenes, "--scenes")
    episodes = make_episodes(scene_dirs, per_scene, seed, ROBOTS[robot], task, world)
    save_episodes(out, episodes)
    geo = [e.geodesic_m for e in episodes if e.geodesic_m is not None]
    summary = {
        "file": str(out),
        "episodes": len(episodes),
        "scenes": len(scene_dirs),
        "robot": robot,
        "seed": seed,
        "geodesic_m": {"min": min(geo), "max": max(geo), "mean": sum(geo) / len(geo)},
    }
    if as_json:
        print_json(summary)
        return
    typer.echo(
        f"wrote {len(episodes)} episodes in {len(scene_dirs)} scene(s) to {out}; geodesic distance "
        f"{min(geo):.1f}-{max(geo):.1f} m (mean {summary['geodesic_m']['mean']:.1f} m)"
    )
