"""A `urbanverse gen` killed (SIGKILL) inside a stage resumes on the next run and ends with the scene an
uninterrupted run makes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.gen.table import STAGES as GEN_STAGES

runner = CliRunner()
STAGES = tuple(f"{n + 1:02d}_{stage.name}" for n, stage in enumerate(GEN_STAGES))
#: Stages that may still run beside the camera stage, or are never cached (the candidates' warm-up).
BESIDE = {"02_detect", "03_track", "04_candidates"}


@pytest.fixture(scope="module")
def uninterrupted(walk_video, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("whole") / "scene"
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads((out / "scene.json").read_text())


def _kill_in(stage: str, video: Path, out: Path) -> None:
    """Start gen in a process and SIGKILL it once ``stage``'s work folder appears (the stage runs)."""
    cmd = [str(Path(sys.executable).parent / "urbanverse"), "gen", str(video), "-o", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not (out / "work" / stage).is_dir():
            assert proc.poll() is None, f"gen ended before {stage}: {proc.stderr.read().decode()[-500:]}"
            assert time.monotonic() < deadline, f"{stage} did not start within 120 s"
            time.sleep(0.01)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.parametrize("stage", ["05_camera", "08_ground", "11_scene"])
def test_a_run_killed_in_a_stage_resumes_to_the_same_scene(walk_video, uninterrupted, tmp_path, stage):
    out = tmp_path / "scene"  # the folder's name is the scene's: the same as the uninterrupted run's
    _kill_in(stage, walk_video, out)
    assert not (out / "scene.json").exists()
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    before = STAGES[: STAGES.index(stage)]
    assert set(report["cached_stages"]) >= set(before) - BESIDE
    assert stage not in report["cached_stages"]
    assert json.loads((out / "scene.json").read_text()) == uninterrupted
