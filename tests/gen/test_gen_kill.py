"""A `urbanverse gen` stopped inside a stage (SIGKILL, or Ctrl-C: SIGINT to its process group) resumes on
the next run and ends with the scene an uninterrupted run makes, byte for byte; Ctrl-C exits 130 with
one line. A second gen into the folder of a running one is refused and leaves the first's result as a
clean run's. COLMAP's own log goes to the camera stage's work folder, not the terminal."""

from __future__ import annotations

import json
import random
import re
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.longjobs.helpers import error_lines, locked_by_a_command, run_until, start, stop
from urbanverse.cli import app
from urbanverse.gen.table import STAGES as GEN_STAGES

runner = CliRunner()
STAGES = tuple(f"{n + 1:02d}_{stage.name}" for n, stage in enumerate(GEN_STAGES))
#: Stages that may still run beside the camera stage, or are never cached (the candidates' warm-up).
BESIDE = {"02_detect", "03_track", "04_candidates"}
#: Stages with a work folder (the candidates' warm-up keeps nothing).
STORED = tuple(s for s, stage in zip(STAGES, GEN_STAGES, strict=True) if stage.store is not None)
#: A line of COLMAP's own log (glog: severity letter, date, time).
GLOG_LINE = re.compile(r"^[IWEF]\d{8} \d\d:\d\d:\d\d", re.MULTILINE)
FINAL = ("scene.json", "scene.usda")


@pytest.fixture(scope="module")
def uninterrupted(walk_video, tmp_path_factory) -> dict:
    """The final files and report of a clean run into a folder named ``scene``."""
    out = tmp_path_factory.mktemp("whole") / "scene"
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return {
        **{name: (out / name).read_bytes() for name in FINAL},
        "report": json.loads((out / "report.json").read_text()),
        "colmap_log": (out / "work" / "05_camera" / "colmap.log").read_text(),
    }


def _stop_in(stage: str, video: Path, out: Path, sig: signal.Signals, delay: float = 0.0):
    """Start gen in its own process and send ``sig`` once ``stage``'s work folder appears (the stage
    runs) and ``delay`` seconds more."""
    return run_until(["gen", str(video), "-o", str(out)], (out / "work" / stage).is_dir, sig, delay)


def _check_stopped(stopped, sig: signal.Signals) -> None:
    assert stopped.interrupted, "gen finished before the signal"
    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr[-800:]
        assert "Traceback" not in stopped.stderr
        assert error_lines(stopped.stderr) == [
            "error: interrupted (Ctrl-C); what finished is kept; run the same command again to resume"
        ]
    else:
        assert stopped.returncode == -signal.SIGKILL


def _resumes_to_the_same_scene(video: Path, out: Path, uninterrupted: dict) -> dict:
    result = runner.invoke(app, ["gen", str(video), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    for name in FINAL:
        assert (out / name).read_bytes() == uninterrupted[name], name
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "stage, sig",
    [("05_camera", signal.SIGKILL), ("08_ground", signal.SIGINT), ("13_scene", signal.SIGKILL)],
    ids=["camera-kill", "ground-ctrl-c", "scene-kill"],
)
def test_a_run_stopped_in_a_stage_resumes_to_the_same_scene(walk_video, uninterrupted, tmp_path, stage, sig):
    out = tmp_path / "scene"  # the folder's name is the scene's: the same as the uninterrupted run's
    _check_stopped(_stop_in(stage, walk_video, out, sig), sig)
    assert not (out / "scene.json").exists()
    # A short stage may store its output between its folder appearing and the signal landing: then,
    # and only then, the resumed run takes it from the cache.
    finished = stage in json.loads((out / "work" / "manifest.json").read_text())
    report = _resumes_to_the_same_scene(walk_video, out, uninterrupted)
    before = STAGES[: STAGES.index(stage)]
    assert set(report["cached_stages"]) >= set(before) - BESIDE
    assert (stage in report["cached_stages"]) == finished


def test_a_second_gen_into_the_folder_is_refused_and_the_first_ends_as_a_clean_run(
    walk_video, uninterrupted, tmp_path
):
    out = tmp_path / "scene"
    first = start(["gen", str(walk_video), "-o", str(out)])
    try:
        ready = locked_by_a_command(out)
        while not ready():
            assert first.poll() is None, first.stderr.read().decode()[-800:]
        second = runner.invoke(app, ["gen", str(walk_video), "-o", str(out)])
        assert first.wait(timeout=600) == 0, first.stderr.read().decode()[-800:]
    finally:
        ended = stop(first, signal.SIGKILL)
    assert second.exit_code == 2
    (line,) = second.stderr.strip().splitlines()
    assert line.startswith(f"error: {out}: another gen is writing here: pid {first.pid} (urbanverse gen ")
    for name in FINAL:
        assert (out / name).read_bytes() == uninterrupted[name], name
    # COLMAP's log went to the camera stage's folder, none of it to the terminal.
    assert not GLOG_LINE.search(ended.stderr), ended.stderr[-2000:]
    log = (out / "work" / "05_camera" / "colmap.log").read_text()
    assert GLOG_LINE.search(log) and "Feature extraction" in log


def test_colmaps_log_of_the_clean_run_is_in_its_camera_folder(uninterrupted):
    assert len(GLOG_LINE.findall(uninterrupted["colmap_log"])) > 10


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
@pytest.mark.parametrize("stage", STORED)
def test_a_run_stopped_at_a_random_point_of_any_stage_resumes_to_the_same_scene(
    walk_video, uninterrupted, tmp_path, stage, sig
):
    """Every stored stage x {SIGKILL, Ctrl-C}, each at a seeded random point of the stage (20 stops)."""
    seconds = uninterrupted["report"]["seconds"].get(stage, 0.0)
    delay = random.Random(f"{stage}-{sig.name}").uniform(0.0, 0.6 * seconds)
    out = tmp_path / "scene"
    _check_stopped(_stop_in(stage, walk_video, out, sig, delay), sig)
    _resumes_to_the_same_scene(walk_video, out, uninterrupted)
