"""Asset record bounds: every generated asset is within them; a user's asset.json, collision mesh or
UrbanVerse-100K annotation outside them is refused with the file, the field, the value and the range."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
import trimesh

from tests.conftest import EXAMPLE_SCENE
from urbanverse.assets.catalogue import catalogue_entries, iter_records, record_of
from urbanverse.assets.generators import GENERATORS
from urbanverse.assets.record import load_asset, load_collision_parts, validate_asset
from urbanverse.assets.std_record import load_annotation
from urbanverse.errors import InputError


def test_one_asset_of_every_generator_is_within_the_bounds():
    for entry in catalogue_entries(len(GENERATORS)):
        validate_asset(record_of(entry))


@pytest.mark.slow
def test_the_whole_catalogue_is_within_the_bounds():
    entries = catalogue_entries()
    checked = 0
    for chunk in iter_records(entries):
        for asset in chunk:
            validate_asset(asset)
        checked += len(chunk)
    assert checked == len(entries)


@pytest.fixture
def bench(tmp_path):
    dst = tmp_path / "bench"
    shutil.copytree(EXAMPLE_SCENE / "assets" / "bench_wood_a", dst)
    return dst


def _edit(folder, **changes):
    path = folder / "asset.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"mass": 1e30}, "mass: 1e+30 is outside [0.001, 1e+10] kg"),
        ({"height": 0.0}, "height: 0 is outside [0.001, 1000] m"),
        ({"friction_coefficient": -0.1}, "friction_coefficient: -0.1 is outside [0, 5]"),
        ({"center_of_mass": [0, 0, 1e6]}, "center_of_mass: 1e+06 is outside ±1000 m"),
        ({"uid": ".."}, "uid: '..' is not an asset uid"),
        (
            {"collision_parts": "../../../scene.json"},
            "collision_parts: '../../../scene.json' is not a file name",
        ),
        ({"schema_version": 7}, "schema_version: this urbanverse reads 1, got 7"),
    ],
)
def test_bad_asset_json_names_file_field_value_and_range(bench, changes, expected):
    _edit(bench, **changes)
    with pytest.raises(InputError) as info:
        load_asset(bench)
    assert str(info.value).startswith(f"{bench / 'asset.json'}: {expected}"), str(info.value)


def test_collision_parts_must_be_solid_and_in_the_asset_frame(bench):
    asset = load_asset(bench)
    assert load_collision_parts(bench, asset)
    for mesh, expected in [
        (trimesh.creation.box((1, 1, 1)).apply_translation((0, 0, 5e3)), "has a vertex 5000.5 m from"),
        (
            trimesh.Trimesh(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]]), [[0, 1, 2], [0, 2, 3]]),
            "flat",
        ),
    ]:
        scene = trimesh.Scene()
        scene.add_geometry(mesh, node_name="part_000", geom_name="part_000")
        (bench / "collision.glb").write_bytes(scene.export(file_type="glb"))
        with pytest.raises(InputError, match=expected):
            load_collision_parts(bench, asset)


def test_annotation_keeps_good_values_skips_missing_ones_and_refuses_bad_ones(tmp_path):
    path = tmp_path / "std_abc.json"
    path.write_text(
        json.dumps(
            {"mass": 0, "bounciness": math.nan, "friction_coefficient": 0.4, "materials": 5, "height": "x"}
        )
    )
    assert load_annotation(path) == {"friction_coefficient": 0.4}  # 0 kg and NaN mean "not annotated"
    path.write_text(json.dumps({"mass": -2}))
    with pytest.raises(InputError, match=r"^std_abc\.json: mass: -2 is outside \[0\.001, 1e\+10\] kg$"):
        load_annotation(path)
    bad = tmp_path / "std_...json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="is not an asset uid"):
        load_annotation(bad)
