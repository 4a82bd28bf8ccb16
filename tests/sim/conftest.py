"""Sim fixtures: a session-wide compile cache, synthetic scenes, and small environments."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from urbanverse.scene.record import GroundRegion, Material, Scene, SceneSource, save_scene
from urbanverse.sim import kernels
from urbanverse.sim.geodesic import GoalFieldsSpec, compute_goal_fields
from urbanverse.sim.world import WorldCfg, compile_world
from urbanverse.sim.world_batch import WorldBatch

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "scenes" / "example"
MAT = Material(name="m", base_color=(0.5, 0.5, 0.5))


@pytest.fixture(autouse=True, scope="session")
def _sim_session(tmp_path_factory):
    """One compile cache for the whole session (kept out of the user's cache), one thread each for
    torch and numba (these tests step a handful of environments; threads only add wake-up latency)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("cache")))
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    numba_threads = kernels.numba.get_num_threads() if kernels.numba else None
    if kernels.numba:
        kernels.numba.set_num_threads(1)
    yield
    torch.set_num_threads(torch_threads)
    if kernels.numba:
        kernels.numba.set_num_threads(numba_threads)
    mp.undo()


def write_scene(folder: Path, regions: list[tuple[str, str, tuple, float]]) -> Path:
    """A scene without objects from ``(id, type, polygon, elevation)`` regions."""
    folder.mkdir(parents=True, exist_ok=True)
    ground = tuple(GroundRegion(id=i, type=t, polygon=p, elevation=e, material=MAT) for i, t, p, e in regions)
    scene = Scene(name=folder.name, source=SceneSource(kind="hand-made"), ground=ground, objects=())
    save_scene(scene, folder)
    return folder


def box(x0, y0, x1, y1) -> tuple:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


@pytest.fixture(scope="session")
def plaza_dir(tmp_path_factory) -> Path:
    """A 10 m x 10 m plaza at z = 0 spanning [0, 10]^2; its edges are walls."""
    return write_scene(tmp_path_factory.mktemp("scenes") / "plaza", [("p", "plaza", box(0, 0, 10, 10), 0.0)])


def world_batch(scene_dir: Path, robot_clearance=0.25, max_step=0.05, **spec) -> WorldBatch:
    world = compile_world(scene_dir, WorldCfg())
    goals = compute_goal_fields(
        world,
        GoalFieldsSpec(clearance=robot_clearance, spawn_clearance=robot_clearance, max_step=max_step, **spec),
    )
    return WorldBatch([world], [goals])
