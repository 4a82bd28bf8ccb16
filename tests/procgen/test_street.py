"""Procedural streets: every style is valid, physically stable, deterministic, and furnished by the rules."""

from __future__ import annotations

import json

import pytest
import shapely

from urbanverse.errors import InputError
from urbanverse.procgen.people import PeopleCfg
from urbanverse.procgen.street import STYLES, StreetCfg, generate_street
from urbanverse.scene.physics_check import PhysicsCheckCfg, run_physics_check
from urbanverse.scene.record import load_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.scene.usd_writer import write_usd


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path_factory.getbasetemp() / "procgen_cache"))


# Two styles in the default run (each takes a while on 2 cores); all four with `pytest -m slow`.
@pytest.mark.parametrize(
    "style",
    [s if s in ("plaza", "intersection") else pytest.param(s, marks=pytest.mark.slow) for s in STYLES],
)
def test_style_is_valid_stable_and_walkable(tmp_path, style):
    scene = generate_street(StreetCfg(style=style, seed=5, length=40.0), tmp_path / style)
    assert load_scene(tmp_path / style) == scene
    types = {r.type for r in scene.ground}
    assert {"road", "sidewalk", "crosswalk", "ramp"} <= types
    assert all(r.elevation == pytest.approx(0.15) for r in scene.ground if r.type == "sidewalk")
    assert len(scene.objects) >= 15
    assert 4 <= len(scene.agents) <= 8 and scene.flow is not None  # people walk it
    # Nothing stands on the road but vehicles; nothing overlaps another object's base.
    roads = shapely.union_all([shapely.Polygon(r.polygon) for r in scene.ground if r.type == "road"])
    vehicles = {
        "sedan",
        "hatchback",
        "suv",
        "station_wagon",
        "coupe",
        "minivan",
        "taxi",
        "van",
        "pickup_truck",
    }
    for obj in scene.objects:
        if obj.category not in vehicles:
            assert not roads.contains(shapely.Point(obj.position[:2])), obj.id
    issues, _ = validate_usd(write_usd(scene, tmp_path / style))
    assert not [i for i in issues if i.severity == "error"]
    report = run_physics_check(scene, tmp_path / style, PhysicsCheckCfg(duration_s=1.0))
    failed = [o for o in report.objects if o.problems]
    assert len(failed) <= 0.05 * len(report.objects), [(o.id, o.problems) for o in failed]


def test_same_seed_same_scene(tmp_path):
    cfg = StreetCfg(style="residential", seed=11, length=40.0)
    generate_street(cfg, tmp_path / "a")
    generate_street(cfg, tmp_path / "b")
    a = json.loads((tmp_path / "a" / "scene.json").read_text())
    b = json.loads((tmp_path / "b" / "scene.json").read_text())
    a.pop("name"), b.pop("name")
    assert a == b
    generate_street(StreetCfg(style="residential", seed=12, length=40.0), tmp_path / "c")
    assert json.loads((tmp_path / "c" / "scene.json").read_text())["objects"] != a["objects"]
    # People come from a stream of their own: without them, the street is the same.
    generate_street(
        StreetCfg(style="residential", seed=11, length=40.0, people=PeopleCfg(count=(0, 0))), tmp_path / "d"
    )
    d = json.loads((tmp_path / "d" / "scene.json").read_text())
    assert d["objects"] == a["objects"] and d["agents"] == [] and a["agents"]


def test_bad_config_and_non_empty_output(tmp_path):
    with pytest.raises(InputError, match="style"):
        StreetCfg(style="suburb")
    with pytest.raises(InputError, match="lanes"):
        StreetCfg(lanes=9)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("user data")
    with pytest.raises(InputError, match="not empty"):
        generate_street(StreetCfg(), tmp_path / "x")
