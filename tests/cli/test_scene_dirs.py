"""``--scenes`` on a folder of ``urbanverse gen`` outputs: failed inputs (``error.json``) are skipped with
a warning naming each, and training runs on the others."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE
from urbanverse.cli import app
from urbanverse.errors import InputError
from urbanverse.scene.record import find_scene_dirs

runner = CliRunner()


@pytest.fixture
def gen_outputs(tmp_path: Path) -> Path:
    """What ``gen`` leaves for three inputs: one scene, one failed input, one failed without a message."""
    root = tmp_path / "gen_out"
    shutil.copytree(EXAMPLE_SCENE, root / "walk_a", ignore=shutil.ignore_patterns("physics_check.json"))
    (root / "walk_b").mkdir()
    (root / "walk_b" / "error.json").write_text(
        json.dumps({"error": "no camera pose for 80 % of the frames\nsecond line", "stage": "recon"})
    )
    (root / "walk_c").mkdir()
    (root / "walk_c" / "error.json").write_text("{}")
    (root / "notes").mkdir()  # neither: ignored silently, as before
    return root


def test_failed_gen_outputs_are_skipped_with_a_warning_each(gen_outputs, caplog):
    with caplog.at_level(logging.WARNING, logger="urbanverse.scene.record"):
        found = find_scene_dirs([gen_outputs], "--scenes")
    assert found == (str(gen_outputs / "walk_a"),)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert "walk_b" in lines[0] and "no camera pose for 80 % of the frames" in lines[0]
    assert "second line" not in lines[0]
    assert "walk_c" in lines[1] and "error.json" in lines[1]
    with pytest.raises(InputError, match="failed gen output .*no camera pose"):
        find_scene_dirs([gen_outputs / "walk_b"], "--scenes")
    shutil.rmtree(gen_outputs / "walk_a")
    with pytest.raises(InputError, match="no scene.json"):
        find_scene_dirs([gen_outputs], "--scenes")


def test_train_on_a_folder_of_gen_outputs_skips_the_failed_ones(gen_outputs, tmp_path, monkeypatch):
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path / "cache"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    runs = tmp_path / "runs"
    args = ["train", "--scenes", str(gen_outputs), "--steps", "64", "--runs-dir", str(runs), "--json"]
    tiny = ["--num-envs", "4", "--set", "num_steps_per_env=16", "--set", "torch_threads=1", "--quiet"]
    try:
        result = runner.invoke(app, args + tiny)
    finally:
        torch.set_num_threads(threads)
    assert result.exit_code == 0, result.output
    assert "skipping" in result.output and "walk_b" in result.output and "no camera pose" in result.output
    (run_dir,) = runs.iterdir()
    assert json.loads((run_dir / "config.json").read_text())["scenes"] == [str(gen_outputs / "walk_a")]
