"""A second writer into a gen folder, an asset library or a training run folder is refused at once:
exit 2, one line naming the holder (pid and command), and nothing of the folder touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE
from tests.longjobs.helpers import held_elsewhere
from urbanverse.cli import app
from urbanverse.rl.config import TrainCfg, save_cfg

runner = CliRunner()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(args: list[str], folder: Path, what: str) -> None:
    """``urbanverse ARGS`` while another process holds ``folder``: exit 2, one line, folder unchanged."""
    with held_elsewhere(folder, what) as holder:
        before = _tree(folder)
        result = runner.invoke(app, args)
        assert _tree(folder) == before
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {folder}: another {what} is writing here: pid {holder.pid} (")


@pytest.mark.parametrize("per_shot", [False, True], ids=["one-scene", "per-shot"])
def test_gen_into_a_folder_another_gen_writes_is_refused(tmp_path, per_shot):
    video, out = tmp_path / "walk.mp4", tmp_path / "scene"
    video.write_bytes(b"not looked at: the folder is checked first")
    (out / "work").mkdir(parents=True)
    (out / "work" / "manifest.json").write_text("{}")
    _refused(["gen", str(video), "-o", str(out), *(["--per-shot"] if per_shot else [])], out, "gen")
    assert (out / "work" / "manifest.json").read_text() == "{}"


@pytest.mark.parametrize(
    "command", [["assets", "build", "--size", "5"], ["assets", "ingest", "MESH"]], ids=["build", "ingest"]
)
def test_a_second_writer_of_the_asset_library_is_refused(tmp_path, command):
    library, mesh = tmp_path / "library", tmp_path / "post.stl"
    mesh.write_bytes(b"solid post\nendsolid post\n")
    library.mkdir()
    args = [str(mesh) if a == "MESH" else a for a in command]
    _refused([*args, "--library", str(library)], library, "asset library writer")


def test_resuming_a_run_that_another_process_trains_is_refused(tmp_path):
    run_dir = tmp_path / "runs" / "pointnav-wheeled-lidar__mlp__0__20261207-000000"
    run_dir.mkdir(parents=True)
    save_cfg(TrainCfg(scenes=(str(EXAMPLE_SCENE),)), run_dir / "config.json")
    _refused(["train", "--resume", str(run_dir), "--quiet"], run_dir, "training run")
    assert json.loads((run_dir / "config.json").read_text())["scenes"] == [str(EXAMPLE_SCENE)]
