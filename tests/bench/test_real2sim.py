"""Figures of the real-to-sim experiment: intervals over seeds, power laws, and scene statistics."""

from __future__ import annotations

import math

import pytest

from urbanverse.bench.real2sim import aggregate, fits, mean_interval, outcomes, power_law, scene_statistics


def test_mean_interval_is_students_t():
    mean, half = mean_interval([0.2, 0.4, 0.6])
    assert mean == pytest.approx(0.4)
    assert half == pytest.approx(4.303 * 0.2 / math.sqrt(3), rel=1e-3)  # t(0.975, 2) * s / sqrt(n)
    assert math.isnan(mean_interval([0.5])[1])
    assert mean_interval([0.1] * 40)[1] == pytest.approx(0.0)


def test_power_law_recovers_its_parameters():
    ks = [1, 4, 16, 64]
    a, b = power_law(ks, [0.1 * k**0.35 for k in ks])
    assert (a, b) == (pytest.approx(0.1), pytest.approx(0.35))
    assert power_law([1, 4], [0.0, 0.2]) is None  # one usable point
    assert power_law([4, 4], [0.1, 0.2]) is None


def _unit(arm, k, seed, success):
    overall = {
        "success_rate": success,
        "spl": success / 2,
        "collisions_per_episode": 0.1,
        "route_completion": 0.5,
    }
    return {"arm": arm, "k": k, "seed": seed, "overall": overall, "train_minutes": 3.0}


def test_aggregate_groups_by_arm_and_k():
    units = [_unit("video", k, s, 0.1 * k**0.5 + 0.01 * s) for k in (16, 1, 4) for s in (2, 0, 1)]
    units.append(_unit("oracle", 1, 0, 0.3))
    arms = aggregate(units)
    assert [p["k"] for p in arms["video"]] == [1, 4, 16]
    first = arms["video"][0]
    assert first["seeds"] == [0, 1, 2]
    assert first["success_rate"]["values"] == pytest.approx([0.1, 0.11, 0.12])
    assert first["success_rate"]["mean"] == pytest.approx(0.11)
    assert first["spl"]["mean"] == pytest.approx(0.055)
    fitted = fits(arms)
    assert fitted["video"]["b"] == pytest.approx(0.5, abs=0.05)
    assert fitted["oracle"] is None  # a single K


def test_scene_statistics_of_the_example_scene():
    stats = scene_statistics("scenes/example")
    assert stats["walkable_m2"] > 20
    assert 0 < stats["drivable_share"] <= 1
    assert stats["clearance_p50_m"] > 0
    assert stats["extent_m2"] >= stats["walkable_m2"]
    assert stats["goal_reach_m"] >= 2.0


def test_outcomes_split_success_collision_timeout():
    rows = [
        {"status": "ok", "success": True, "collisions": 0},
        {"status": "ok", "success": False, "collisions": 1},
        {"status": "ok", "success": False, "collisions": 0},
        {"status": "ok", "success": False, "collisions": 0},
        {"status": "goal_blocked"},
    ]
    unit = {**_unit("video", 4, 0, 0.25), "episodes": rows}
    shares = outcomes([unit, {**unit, "seed": 1}])["video"][4]
    assert shares == {"success": 0.25, "collision": 0.25, "timeout": 0.5}


def test_experiment_runs_small_and_resumes_from_its_results(tmp_path):
    """The whole tool at toy size (two arms, K=1, one seed, one test street): the JSON and plots are
    written, and a second run reads every kept result instead of training again."""
    import json
    import os
    import subprocess
    import sys

    args = [sys.executable, "tools/exp_real2sim.py", "--arms", "procedural", "oracle", "--ks", "1"]
    args += ["--seeds", "0", "--steps", "8192", "--test-streets", "1", "--episodes-per-street", "3"]
    args += ["--jobs", "1", "--work", str(tmp_path / "work"), "--docs", str(tmp_path / "docs")]
    env = {**os.environ, "URBANVERSE_CACHE": str(tmp_path / "cache")}
    first = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    doc = json.loads((tmp_path / "docs" / "real2sim.json").read_text())
    assert set(doc["arms"]) == {"procedural", "oracle"}
    assert doc["arms"]["oracle"][0]["k"] == 1 and doc["test_episodes"] == 3
    assert doc["cities"]["target"]["sidewalk width"] == "2.6-3.6 m"
    assert (tmp_path / "docs" / "real2sim.png").is_file() and (
        tmp_path / "docs" / "real2sim_cities.png"
    ).is_file()
    again = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "success" not in again.stdout.split("##")[0]  # no unit trained or evaluated again
    assert json.loads((tmp_path / "docs" / "real2sim.json").read_text())["units"] == doc["units"]


def test_without_objects_keeps_the_ground(tmp_path):
    from urbanverse.bench.real2sim import without_objects
    from urbanverse.scene.record import load_scene

    original = load_scene("scenes/example")
    bare = load_scene(without_objects("scenes/example", tmp_path / "bare"))
    assert original.objects and bare.objects == ()
    assert bare.ground == original.ground and bare.sky == original.sky
    assert scene_statistics(tmp_path / "bare")["objects_per_100m2"] == 0.0
