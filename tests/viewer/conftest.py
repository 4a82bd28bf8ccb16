"""Fixtures for the viewer tests: a scenes folder with two modified copies of the example scene."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_SCENE, edit_scene_json

#: Object given a cousin in ``scenes_dir`` (the bin's asset) and the cousin's uid.
COUSIN_OBJECT, COUSIN_UID = "bench_1", "bin_round_a"
#: The scenes of ``scenes_dir``: the example with the cousin and an episode, and a plain second copy.
SCENES = ("example", "example_b")


@pytest.fixture(scope="session")
def scenes_dir(tmp_path_factory) -> Path:
    """``<tmp>/scenes/example``: the example scene plus a cousin on ``bench_1`` and a recorded episode;
    ``<tmp>/scenes/example_b``: the example scene named ``example_b``."""
    root = tmp_path_factory.mktemp("scenes")
    scene = root / "example"
    shutil.copytree(EXAMPLE_SCENE, scene, ignore=shutil.ignore_patterns("physics_check.json"))

    def add_cousin(data: dict) -> None:
        obj = next(o for o in data["objects"] if o["id"] == COUSIN_OBJECT)
        obj["cousins"] = [{"uid": COUSIN_UID, "path": f"assets/{COUSIN_UID}"}]

    edit_scene_json(scene, add_cousin)
    (scene / "episodes").mkdir()
    episode = {"positions": [[-15.0, 5.0], [-8.0, 5.0], [0.0, 0.0], [8.0, -5.0]], "goal": [8.0, -5.0]}
    (scene / "episodes" / "ep_000.json").write_text(json.dumps({**episode, "success": True}))
    second = root / SCENES[1]
    shutil.copytree(EXAMPLE_SCENE, second, ignore=shutil.ignore_patterns("physics_check.json"))
    edit_scene_json(second, lambda data: data.update(name=SCENES[1]))
    return root
