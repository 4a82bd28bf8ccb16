"""MuJoCo physics check: the example is stable; sunk, floating, toppling and overlapping objects fail;
``fix_penetrations`` resolves overlaps; ``drop_entangled`` removes what it could not separate."""

from __future__ import annotations

import dataclasses

import pytest

from urbanverse.scene.physics_check import (
    PhysicsCheckCfg,
    drop_entangled,
    fix_penetrations,
    run_physics_check,
)
from urbanverse.scene.record import load_scene


def _moved(scene, object_id, **changes):
    objects = tuple(dataclasses.replace(o, **changes) if o.id == object_id else o for o in scene.objects)
    return dataclasses.replace(scene, objects=objects)


def _by_id(report):
    return {o.id: o for o in report.objects}


def test_example_scene_is_stable(example_dir):
    report = run_physics_check(load_scene(example_dir), example_dir)
    assert report.ok, [o for o in report.objects if o.problems]
    assert report.to_dict()["failed"] == []


def test_sunk_object_is_reported_and_fixed(example_dir):
    scene = load_scene(example_dir)
    bin_ = next(o for o in scene.objects if o.id == "bin_1")
    sunk = _moved(scene, "bin_1", position=(bin_.position[0], bin_.position[1], bin_.position[2] - 0.05))
    result = _by_id(run_physics_check(sunk, example_dir))["bin_1"]
    assert result.penetration_m == pytest.approx(0.05, abs=0.005)
    assert any("interpenetrates" in p for p in result.problems)

    fixed, notes = fix_penetrations(sunk, example_dir)
    assert [n.split(":")[0] for n in notes] == ["bin_1"]
    assert next(o for o in fixed.objects if o.id == "bin_1").position[2] == pytest.approx(
        bin_.position[2], abs=0.003
    )
    assert run_physics_check(fixed, example_dir).ok


def test_overlapping_objects_are_pushed_apart(example_dir):
    scene = load_scene(example_dir)
    bench = next(o for o in scene.objects if o.id == "bench_1")
    # Put the bin 0.5 m into the bench's seat end: a 10+ cm overlap.
    overlapping = _moved(
        scene, "bin_1", position=(bench.position[0] + 0.7, bench.position[1], bench.position[2])
    )
    report = _by_id(run_physics_check(overlapping, example_dir))
    assert report["bin_1"].penetrating == "bench_1" and report["bin_1"].problems
    fixed, notes = fix_penetrations(overlapping, example_dir)
    assert notes
    assert run_physics_check(fixed, example_dir, PhysicsCheckCfg(duration_s=0.5)).ok


def test_the_less_confident_of_two_entangled_objects_is_removed(example_dir):
    scene = load_scene(example_dir)
    bench = next(o for o in scene.objects if o.id == "bench_1")
    # Two benches in one place (a duplicate detection); the copy is the less confident.
    copy = dataclasses.replace(bench, id="bench_copy", confidence=bench.confidence / 2)
    doubled = dataclasses.replace(scene, objects=(*scene.objects, copy))
    assert _by_id(run_physics_check(doubled, example_dir))["bench_copy"].penetrating == "bench_1"

    cleared, notes = drop_entangled(doubled, example_dir)
    assert [n.split(":")[0] for n in notes] == ["bench_copy"]
    assert [o.id for o in cleared.objects] == [o.id for o in scene.objects]
    assert drop_entangled(scene, example_dir) == (scene, [])  # nothing entangled: nothing removed


def test_floating_object_drifts(example_dir):
    scene = load_scene(example_dir)
    car = next(o for o in scene.objects if o.id == "car_1")
    floating = _moved(scene, "car_1", position=(car.position[0], car.position[1], 0.3))
    result = _by_id(run_physics_check(floating, example_dir))["car_1"]
    assert result.drift_m == pytest.approx(0.3, abs=0.02)
    assert any("drifts" in p for p in result.problems)


def test_object_on_the_curb_edge_falls_over(example_dir):
    scene = load_scene(example_dir)
    lamp = next(o for o in scene.objects if o.id == "lamp_1")
    # Base centre 12 cm outside the curb line, at sidewalk height: most of the base hangs over the road.
    edge = _moved(scene, "lamp_1", position=(lamp.position[0], 3.5 - 0.12, 0.15))
    result = _by_id(run_physics_check(edge, example_dir))["lamp_1"]
    assert result.tilt_deg > 20
    assert any("falls over" in p for p in result.problems)


def test_config_rejects_nonsense():
    for duration in (0, -1, float("nan"), float("inf"), 1e9):  # NaN and inf crashed; 1e9 s hung
        with pytest.raises(ValueError, match="duration_s"):
            PhysicsCheckCfg(duration_s=duration)
    with pytest.raises(ValueError, match="timestep_s"):
        PhysicsCheckCfg(timestep_s=1.0)


def _blown_up(example_dir):
    """The example with the issue's bin at x = 1e300 m, built in memory (loading refuses it from a file)."""
    return _moved(load_scene(example_dir), "bin_1", position=(1e300, 0.0, 0.0))


def test_an_unstable_simulation_fails_the_check(example_dir, monkeypatch, tmp_path, capfd, caplog):
    monkeypatch.chdir(tmp_path)  # where MuJoCo would write MUJOCO_LOG.TXT without our handler
    with caplog.at_level("DEBUG", logger="urbanverse.scene.physics_check"):
        report = run_physics_check(_blown_up(example_dir), example_dir, PhysicsCheckCfg(duration_s=0.5))
    # MuJoCo's own warning went to our logger, not to stdout or a log file in the working folder
    assert "MuJoCo: Nan, Inf or huge value in QPOS" in caplog.text
    assert "QPOS" not in capfd.readouterr().out and not (tmp_path / "MUJOCO_LOG.TXT").exists()
    assert not report.ok
    assert "NaN, Inf or huge value in QPOS" in report.unstable
    assert _by_id(report)["bin_1"].problems == [report.unstable]
    assert report.to_dict()["unstable"] == report.unstable
    stable = run_physics_check(load_scene(example_dir), example_dir, PhysicsCheckCfg(duration_s=0.5))
    assert stable.ok and stable.unstable is None


def test_check_command_exits_1_when_mujoco_goes_unstable(example_dir, monkeypatch, tmp_path):
    """What ``urbanverse check`` did with the issue's scene before positions were bounded: MuJoCo
    warned, reset its state, and the check passed (exit 0)."""
    import json

    monkeypatch.chdir(tmp_path)  # where MuJoCo would write MUJOCO_LOG.TXT without our handler
    from typer.testing import CliRunner

    from urbanverse.cli import app
    from urbanverse.scene import checks

    monkeypatch.setattr(checks, "load_scene", lambda _dir: _blown_up(example_dir))
    result = CliRunner().invoke(app, ["check", str(example_dir), "--duration", "0.5"])
    assert result.exit_code == 1, result.output
    assert "unstable" in result.output
    report = json.loads((example_dir / "physics_check.json").read_text())
    assert not report["ok"] and "QPOS" in report["unstable"] and report["failed"] == ["bin_1"]


def test_an_overlap_from_above_slides_the_object_off_rather_than_stacking_it(example_dir):
    """A bin whose bottom sits 3 cm into a bench's seat from above (a crown over a planter, in gen's
    scenes) touches it across a horizontal face: the fix slides one off sideways; nothing goes up."""
    scene = load_scene(example_dir)
    bench = next(o for o in scene.objects if o.id == "bench_1")
    top = bench.position[2] + bench.size[2]
    overlapping = _moved(scene, "bin_1", position=(bench.position[0] + 0.2, bench.position[1], top - 0.03))
    fixed, notes = fix_penetrations(overlapping, example_dir)
    assert notes
    before = {o.id: o.position for o in overlapping.objects}
    for obj in fixed.objects:
        assert obj.position[2] == pytest.approx(before[obj.id][2], abs=1e-6), obj.id  # nothing lifted
    report = _by_id(run_physics_check(fixed, example_dir, PhysicsCheckCfg(duration_s=0.01)))
    assert report["bin_1"].penetration_m < 0.01 and report["bench_1"].penetration_m < 0.01


def test_an_object_reaching_into_a_curb_slides_off_it_and_stays_on_the_ground(example_dir):
    """The bin on the road with its side 5 cm into the north curb's wall: the fix slides it back onto the
    road, at the road's height, instead of lifting it 15 cm into the air."""
    scene = load_scene(example_dir)
    into_curb = _moved(scene, "bin_1", position=(-6.2, 3.5 - 0.28 + 0.05, 0.0))
    fixed, notes = fix_penetrations(into_curb, example_dir)
    assert [n.split(":")[0] for n in notes] == ["bin_1"]
    x, y, z = next(o for o in fixed.objects if o.id == "bin_1").position
    assert z == pytest.approx(0.0, abs=0.003) and y < 3.5 - 0.28 + 0.001
    assert run_physics_check(fixed, example_dir, PhysicsCheckCfg(duration_s=0.5)).ok
