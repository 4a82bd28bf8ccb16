"""Scene record: round trip, and bad input reported with the JSON path of the first bad value."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.conftest import edit_scene_json
from urbanverse.errors import InputError
from urbanverse.records import record_to_dict
from urbanverse.scene.record import SCENE_FILE, load_scene, save_scene


def test_round_trip_is_lossless(example_dir):
    scene = load_scene(example_dir)
    save_scene(scene, example_dir)
    again = load_scene(example_dir)
    assert again == scene
    assert record_to_dict(again) == json.loads((example_dir / SCENE_FILE).read_text())


def test_example_has_curbs_ramps_and_crosswalk(example_dir):
    scene = load_scene(example_dir)
    types = {r.type for r in scene.ground}
    assert {"road", "sidewalk", "crosswalk", "ramp"} <= types
    sidewalk = next(r for r in scene.ground if r.type == "sidewalk")
    assert sidewalk.elevation == pytest.approx(0.15)
    ramp = next(r for r in scene.ground if r.type == "ramp")
    assert min(ramp.vertex_elevation) == 0.0 and max(ramp.vertex_elevation) == pytest.approx(0.15)


BAD_EDITS = [
    (
        lambda d: d["objects"][3].__setitem__("position", [1.0, 2.0]),
        "objects[3].position: expected 3 numbers, got 2",
    ),
    (lambda d: d["objects"][0].pop("mass"), "objects[0].mass: missing field"),
    (lambda d: d["objects"][1].__setitem__("yaw", "north"), "objects[1].yaw"),
    (lambda d: d["ground"][0].__setitem__("type", "motorway"), "ground[0].type"),
    (lambda d: d["ground"][2].__setitem__("colour", "red"), "ground[2].colour: unknown field"),
    (lambda d: d["objects"][2]["asset"].__setitem__("path", "assets/missing"), "objects[2].asset.path"),
    (lambda d: d["objects"][2]["asset"].__setitem__("path", "../../etc/passwd"), "escapes the scene folder"),
    (lambda d: d["objects"][2]["asset"].__setitem__("path", "/etc"), "must be relative"),
    (lambda d: d["ground"][0]["material"].__setitem__("texture", "../x.png"), "ground[0].material.texture"),
    (lambda d: d["ground"][1].__setitem__("polygon", [[0, 0], [1, 1], [0, 1], [1, 0]]), "self-intersecting"),
    (lambda d: d["objects"][0].__setitem__("mass", -3.0), "objects[0].mass: -3 is outside [0.001, 1e+10] kg"),
    (lambda d: d["objects"][4].__setitem__("id", d["objects"][0]["id"]), "objects[4].id: duplicate id"),
    (lambda d: d.__setitem__("schema_version", 99), "schema_version"),
]


@pytest.mark.parametrize(("edit", "expected"), BAD_EDITS)
def test_bad_fields_name_their_json_path(example_dir, edit, expected):
    edit_scene_json(example_dir, edit)
    with pytest.raises(InputError) as info:
        load_scene(example_dir)
    message = str(info.value)
    assert expected in message
    assert str(example_dir / SCENE_FILE) in message
    assert "\n" not in message


def test_nan_is_rejected(example_dir):
    text = (example_dir / SCENE_FILE).read_text()
    data = json.loads(text)
    data["objects"][5]["yaw"] = float("nan")
    (example_dir / SCENE_FILE).write_text(json.dumps(data))  # json writes a NaN literal
    with pytest.raises(InputError, match=r"objects\[5\]\.yaw"):
        load_scene(example_dir)


def test_truncated_json_is_a_clear_error(example_dir):
    path = example_dir / SCENE_FILE
    path.write_text(path.read_text()[:500])
    with pytest.raises(InputError, match="not valid JSON"):
        load_scene(example_dir)


def test_invalid_scene_is_not_saved(example_dir):
    scene = load_scene(example_dir)
    before = (example_dir / SCENE_FILE).read_bytes()
    bad = dataclasses.replace(
        scene, objects=(dataclasses.replace(scene.objects[0], mass=0.0), *scene.objects[1:])
    )
    with pytest.raises(InputError, match=r"objects\[0\]\.mass"):
        save_scene(bad, example_dir)
    assert (example_dir / SCENE_FILE).read_bytes() == before
    assert not list(example_dir.glob(".*tmp*"))
