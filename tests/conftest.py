"""Shared fixtures: a private copy of the example scene that a test may modify."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SCENE = REPO / "scenes" / "example"


@pytest.fixture(scope="session", autouse=True)
def private_default_library(tmp_path_factory):
    """The default asset library of every test is a private one (``$URBANVERSE_LIBRARY``), filled as
    gen fills a fresh machine's: tests never write into the user's library."""
    with pytest.MonkeyPatch.context() as mp:
        path = tmp_path_factory.mktemp("default_library")
        mp.setenv("URBANVERSE_LIBRARY", str(path))
        yield path


@pytest.fixture(scope="module")
def ray_session():
    """A local Ray for a test module: 2 CPUs, on loopback, no dashboard (skipped without Ray);
    ``urbanverse.parallel`` uses it rather than starting its own."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    yield
    ray.shutdown()


@pytest.fixture
def example_dir(tmp_path: Path) -> Path:
    """A copy of ``scenes/example`` in a temporary folder."""
    dst = tmp_path / "example"
    shutil.copytree(EXAMPLE_SCENE, dst, ignore=shutil.ignore_patterns("physics_check.json"))
    return dst


def edit_scene_json(scene_dir: Path, edit) -> None:
    """Apply ``edit(data)`` to ``scene_dir/scene.json`` in place (raw JSON, bypassing validation)."""
    path = scene_dir / "scene.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
