"""Start the standalone Isaac Sim application (``app``) on a scene, in a child Python process.

Isaac Sim must create its ``SimulationApp`` before any other Omniverse import, so the app runs
as its own process (``python -m urbanverse.sim.isaaclab.app``) with this interpreter.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from urbanverse.errors import MissingDependencyError
from urbanverse.scene.record import load_scene
from urbanverse.sim.isaaclab import INSTALL_HINT, isaacsim_available
from urbanverse.sim.isaaclab.spec import scene_usd, spawn_points

#: Robot footprint clearance (m) used to choose the spawn point.
SPAWN_CLEARANCE = 0.5


def isaac_app_command(scene_dir: Path, robot: str | None, headless: bool) -> list[str]:
    """The command line that runs the app on ``scene_dir`` (its USD is written first when missing)."""
    scene = load_scene(scene_dir)
    cmd = [sys.executable, "-m", "urbanverse.sim.isaaclab.app", str(scene_usd(scene_dir))]
    if robot is not None:
        points = spawn_points(scene, SPAWN_CLEARANCE)
        centre = points[:, :2].mean(axis=0)
        spawn = points[((points[:, :2] - centre) ** 2).sum(axis=1).argmin()]
        cmd += ["--robot", robot, "--spawn", ",".join(f"{v:.3f}" for v in spawn)]
    if headless:
        cmd.append("--headless")
    return cmd


def run_isaac_app(scene_dir: Path, robot: str | None = None, headless: bool = False) -> int:
    """Run the app and return its exit code; ``MissingDependencyError`` (exit 2) without Isaac Sim."""
    if not isaacsim_available():
        raise MissingDependencyError(INSTALL_HINT)
    return subprocess.call(isaac_app_command(Path(scene_dir), robot, headless))
