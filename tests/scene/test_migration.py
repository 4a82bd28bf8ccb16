"""scene.json of schemas 1 (no ``inferred_share`` on ground regions) and 2 (no ``agents``, no ``flow``)
load as the current schema, 3."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from urbanverse.errors import InputError
from urbanverse.scene.record import SCENE_SCHEMA_VERSION, load_scene, save_scene

EXAMPLE = Path(__file__).resolve().parents[2] / "scenes" / "example"


def _copy_with_version(tmp_path: Path, version) -> Path:
    folder = tmp_path / "scene"
    shutil.copytree(EXAMPLE, folder)
    data = json.loads((folder / "scene.json").read_text())
    data["schema_version"] = version
    for region in data["ground"]:
        region.pop("inferred_share", None)
    (folder / "scene.json").write_text(json.dumps(data))
    return folder


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_scene_loads_as_the_current_version_and_saves_as_it(tmp_path, version):
    folder = _copy_with_version(tmp_path, version)
    scene = load_scene(folder)
    assert scene.schema_version == SCENE_SCHEMA_VERSION == 3
    assert all(region.inferred_share == 0.0 for region in scene.ground)
    assert scene.agents == () and scene.flow is None
    save_scene(scene, folder)
    assert json.loads((folder / "scene.json").read_text())["schema_version"] == 3


def test_a_version_from_the_future_is_refused_by_name(tmp_path):
    with pytest.raises(InputError, match="schema_version: this urbanverse reads 3, got 4"):
        load_scene(_copy_with_version(tmp_path, 4))


def test_an_inferred_share_outside_0_1_is_refused(tmp_path):
    folder = _copy_with_version(tmp_path, 2)
    data = json.loads((folder / "scene.json").read_text())
    data["ground"][0]["inferred_share"] = 1.5
    (folder / "scene.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"ground\[0\].inferred_share"):
        load_scene(folder)
