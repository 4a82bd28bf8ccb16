"""City profiles: deterministic streets, a target city measurably unlike procgen's own, and the new
street parameters (curb height, clutter, bollard rows, setbacks) reaching the scene."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import shapely

from urbanverse.errors import InputError
from urbanverse.procgen.city import OLD_TOWN, PROCGEN_DEFAULT, CityProfile
from urbanverse.procgen.street import StreetCfg, generate_street


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path_factory.getbasetemp() / "procgen_cache"))


def test_streets_are_a_pure_function_of_the_seed():
    assert OLD_TOWN.street(3) == OLD_TOWN.street(3)
    assert len({OLD_TOWN.street(s) for s in range(20)}) == 20


def test_default_city_is_procgens_own_street():
    for seed in range(8):
        cfg = PROCGEN_DEFAULT.street(seed)
        assert dataclasses.replace(cfg, style="residential") == StreetCfg(seed=seed)


def test_old_town_differs_from_the_default_distribution():
    drawn = [OLD_TOWN.street(s) for s in range(200)]
    assert max(c.sidewalk for c in drawn) < StreetCfg().sidewalk
    assert np.mean([c.lanes == 1 for c in drawn]) == pytest.approx(0.6, abs=0.1)
    assert np.mean([c.curb_bollards > 0 for c in drawn]) == pytest.approx(0.5, abs=0.1)
    assert min(c.clutter for c in drawn) >= 1.5
    assert {c.style for c in drawn} == {"commercial", "plaza", "residential", "intersection"}
    rows = dict(OLD_TOWN.rows())
    assert rows["sidewalk width"] == "2.6-3.6 m" and dict(PROCGEN_DEFAULT.rows())["sidewalk width"] == "4 m"


def test_profile_rejects_bad_ranges():
    with pytest.raises(InputError, match="reversed"):
        dataclasses.replace(OLD_TOWN, sidewalk_m=(3.0, 2.8))
    with pytest.raises(InputError, match="unknown styles"):
        CityProfile(**{**OLD_TOWN.__dict__, "styles": {"boulevard": 1.0}})
    with pytest.raises(InputError, match="curb"):
        StreetCfg(curb=0.5)


def test_street_parameters_reach_the_scene(tmp_path):
    base = dict(style="residential", seed=1, length=40.0, lanes=1, sidewalk=3.0)
    plain = generate_street(StreetCfg(**base), tmp_path / "plain")
    old = generate_street(
        StreetCfg(**base, curb=0.2, clutter=2.5, curb_bollards=4.0, setback=2.5), tmp_path / "old"
    )
    assert all(r.elevation == pytest.approx(0.2) for r in old.ground if r.type == "sidewalk")
    ramps = [r for r in old.ground if r.type == "ramp"]
    assert ramps and all(max(r.vertex_elevation) == pytest.approx(0.2) for r in ramps)

    def bollards(scene):
        return sum(o.category == "bollard" for o in scene.objects)

    assert bollards(old) >= bollards(plain) + 8  # rows along both 40 m curbs, every 4 m
    assert len(old.objects) > len(plain.objects)
    sidewalks = shapely.union_all([shapely.Polygon(r.polygon) for r in old.ground if r.type == "sidewalk"])
    on_walk = [o for o in old.objects if sidewalks.contains(shapely.Point(o.position[:2]))]
    assert all(o.position[2] == pytest.approx(0.2) for o in on_walk)
    back = max(abs(y) for r in old.ground if r.type == "sidewalk" for _, y in r.polygon)

    def front_gap(scene):
        houses = [o for o in scene.objects if o.category in ("house", "residential_building")]
        return min(abs(o.position[1]) - o.size[0] / 2 for o in houses) - back

    assert front_gap(old) == pytest.approx(2.5, abs=0.05)
    assert front_gap(plain) == pytest.approx(0.5, abs=0.05)


def test_procgen_command_draws_a_city_street(tmp_path):
    from typer.testing import CliRunner

    from urbanverse.cli import app
    from urbanverse.scene.record import load_scene

    runner = CliRunner()
    out = tmp_path / "ot"
    args = ["procgen", "--city", "old-town", "--seed", "3", "--length", "40", "--no-usd", "-o", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    drawn = OLD_TOWN.street(3)
    scene = load_scene(out)
    assert all(r.elevation == pytest.approx(drawn.curb) for r in scene.ground if r.type == "sidewalk")
    assert scene.source.generator == f"urbanverse.procgen:{drawn.style}"
    bad = runner.invoke(app, ["procgen", "--city", "atlantis", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "--city" in bad.output
    assert not (tmp_path / "x").exists()
