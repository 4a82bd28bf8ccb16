"""The CLI end to end: help, version, usd -> validate -> check, and exit codes on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tests.conftest import edit_scene_json
from urbanverse import __version__
from urbanverse.cli import app

runner = CliRunner()
COMMANDS = ["usd", "validate", "check"]


def test_help_lists_commands_without_heavy_imports():
    code = (
        "import sys; from urbanverse.cli import app; from typer.testing import CliRunner;"
        "r = CliRunner().invoke(app, ['--help']); assert r.exit_code == 0, r.output;"
        "heavy = [m for m in ('pxr', 'mujoco', 'torch', 'trimesh') if m in sys.modules];"
        "assert not heavy, heavy; print(r.output)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for command in COMMANDS:
        assert command in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command):
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0
    assert "SCENE_DIR" in result.output


def test_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_usd_validate_check_on_the_example(example_dir):
    (example_dir / "scene.usda").unlink()
    result = runner.invoke(app, ["usd", str(example_dir)])
    assert result.exit_code == 0, result.output
    assert (example_dir / "scene.usda").is_file()
    result = runner.invoke(app, ["validate", str(example_dir)])
    assert result.exit_code == 0, result.output
    assert "0 errors" in result.output
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 0, result.output
    report = json.loads((example_dir / "physics_check.json").read_text())
    assert report["ok"] and len(report["objects"]) == 11


def test_check_fails_then_fix_repairs_and_rewrites_usd(example_dir):
    def sink_bin(data):
        obj = next(o for o in data["objects"] if o["id"] == "bin_1")
        obj["position"][2] -= 0.06

    edit_scene_json(example_dir, sink_bin)
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 1
    assert json.loads((example_dir / "physics_check.json").read_text())["failed"] == ["bin_1"]
    usd_before = (example_dir / "scene.usda").read_text()
    result = runner.invoke(app, ["check", str(example_dir), "--fix"])
    assert result.exit_code == 0, result.output
    assert "fixed bin_1" in result.output
    assert (example_dir / "scene.usda").read_text() != usd_before


def test_validate_exits_1_on_usd_errors(example_dir):
    (example_dir / "assets" / "car_sedan_a" / "asset.usda").unlink()
    result = runner.invoke(app, ["validate", str(example_dir)])
    assert result.exit_code == 1
    assert "MissingReference" in result.output or "CompositionError" in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_bad_scene_exits_2_with_one_line_and_writes_nothing(example_dir, command):
    edit_scene_json(example_dir, lambda d: d["objects"][3].__setitem__("position", [1.0, 2.0]))
    before = sorted(p.name for p in example_dir.iterdir())
    result = runner.invoke(app, [command, str(example_dir)])
    assert result.exit_code == 2
    assert "objects[3].position: expected 3 numbers, got 2" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in example_dir.iterdir()) == before


def test_missing_folder_and_bad_option_exit_2(tmp_path, example_dir):
    assert runner.invoke(app, ["check", str(tmp_path / "nope")]).exit_code == 2
    assert runner.invoke(app, ["usd", str(example_dir), "--format", "obj"]).exit_code == 2
    assert runner.invoke(app, ["check", str(example_dir), "--duration", "-1"]).exit_code == 2


def test_truncated_mesh_is_a_clear_error(example_dir):
    glb = example_dir / "assets" / "tree_round_a" / "collision.glb"
    glb.write_bytes(glb.read_bytes()[:200])
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 2
    assert "collision.glb" in result.output


def test_internal_error_exits_1(example_dir, monkeypatch):
    from urbanverse.scene import checks

    def boom(*_args, **_kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(checks, "run_physics_check", boom)
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 1
    assert "internal error" in result.output and "kaboom" in result.output


def test_json_puts_one_document_on_stdout(example_dir):
    result = runner.invoke(app, ["usd", str(example_dir), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["objects"] == 11
    result = runner.invoke(app, ["validate", str(example_dir), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["errors"] == 0 and report["objects"] == 11 and report["validators"] > 0
    result = runner.invoke(app, ["check", str(example_dir), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["fixed"] == [] and len(report["objects"]) == 11
    assert report["objects"] == json.loads((example_dir / "physics_check.json").read_text())["objects"]


def test_failing_check_and_validate_still_print_json_and_exit_1(example_dir):
    edit_scene_json(example_dir, lambda d: d["objects"][1]["position"].__setitem__(2, -0.5))
    result = runner.invoke(app, ["check", str(example_dir), "--json", "--duration", "0.5"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["failed"]
    (example_dir / "assets" / "car_sedan_a" / "asset.usda").unlink()
    result = runner.invoke(app, ["validate", str(example_dir), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["errors"] > 0
