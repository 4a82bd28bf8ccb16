"""``train`` stopped at seeded random points (SIGKILL, or Ctrl-C to its process group) resumes from its
latest checkpoint: each iteration logged once, the history up to the checkpoint that of an
uninterrupted run. Ctrl-C exits 130 with one line saying how to resume; while a run trains, a second
``train --resume`` of its folder is refused naming it."""

from __future__ import annotations

import csv
import json
import random
import signal
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE
from tests.longjobs.helpers import error_lines, run_until, start, stop
from urbanverse.cli import app

runner = CliRunner()
TINY = ["--num-envs", "8", "--set", "num_steps_per_env=16", "--set", "torch_threads=1", "--quiet"]
STEPS_PER_ITERATION = 8 * 16
#: Columns that depend on the machine's speed, not on the training.
TIMING = {"wall_s", "steps_per_s", "collect_s", "update_s"}


@pytest.fixture(autouse=True, scope="module")
def _one_thread_and_a_shared_cache(tmp_path_factory):
    """One thread per run; the compiled kernels cached once for the module (out of the user's cache)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("OMP_NUM_THREADS", "1")
    mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("train_cache")))
    yield
    mp.undo()


def _args(root: Path, steps: int) -> list[str]:
    return ["train", "--scenes", str(EXAMPLE_SCENE), "--steps", str(steps), "--runs-dir", str(root),
            "--seed", "5", "--set", "save_interval=1", *TINY]  # fmt: skip


def _rows(run_dir: Path) -> list[dict[str, str]]:
    with (run_dir / "progress.csv").open(newline="") as f:
        return [{k: v for k, v in row.items() if k not in TIMING} for row in csv.DictReader(f)]


def _one_run(root: Path) -> Path:
    (run_dir,) = root.iterdir()
    return run_dir


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list[dict[str, str]]:
    """The log rows (timing columns left out) of an uninterrupted 40-iteration run."""
    root = tmp_path_factory.mktemp("runs")
    result = runner.invoke(app, _args(root, 40 * STEPS_PER_ITERATION))
    assert result.exit_code == 0, result.output
    return _rows(_one_run(root))


def _stop_and_resume(tmp_path: Path, reference: list, sig: signal.Signals, delay: float) -> None:
    root = tmp_path / "runs"
    stopped = run_until(_args(root, 10**6), lambda: any(root.glob("*/checkpoint.pt")), sig, delay)
    assert stopped.interrupted
    run_dir = _one_run(root)
    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr[-800:]
        assert "Traceback" not in stopped.stderr
        assert error_lines(stopped.stderr) == [
            f"error: interrupted (Ctrl-C); the latest checkpoint is kept: urbanverse train --resume {run_dir}"
        ]
    else:
        assert stopped.returncode == -signal.SIGKILL
    _resumes_from_the_last_checkpoint(run_dir, reference)


def _resumes_from_the_last_checkpoint(run_dir: Path, reference: list | None) -> None:
    """Resume ``run_dir`` for a few iterations: it starts at its checkpoint's iteration, logs each
    iteration once, and (given the ``reference`` rows) its history matches an uninterrupted run's."""
    killed_at = torch.load(run_dir / "checkpoint.pt", weights_only=False)["iteration"]
    assert killed_at >= 1
    end = max(killed_at + 1, 3)
    config = json.loads((run_dir / "config.json").read_text())
    config["total_steps"] = end * STEPS_PER_ITERATION  # the resumed run ends shortly after
    (run_dir / "config.json").write_text(json.dumps(config))
    result = runner.invoke(app, ["train", "--resume", str(run_dir), "--quiet"])
    assert result.exit_code == 0, result.output
    assert f"at iteration {killed_at}/{end}" in result.output
    rows = _rows(run_dir)
    assert [int(r["iteration"]) for r in rows] == list(range(1, end + 1))
    if reference is not None:  # the history it resumed from is an uninterrupted run's
        assert killed_at <= len(reference)
        assert rows[:killed_at] == reference[:killed_at]
    final = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    assert final["iteration"] == end and final["env_steps"] == end * STEPS_PER_ITERATION


def test_ctrl_c_exits_130_naming_the_resume_and_a_second_trainer_is_refused(tmp_path):
    root = tmp_path / "runs"
    job = start(_args(root, 10**6))
    try:
        while not any(root.glob("*/checkpoint.pt")):
            assert job.poll() is None, job.stderr.read().decode()[-800:]
        run_dir = _one_run(root)
        second = runner.invoke(app, ["train", "--resume", str(run_dir), "--quiet"])
    finally:
        stopped = stop(job, signal.SIGINT)
    assert second.exit_code == 2
    (line,) = second.stderr.strip().splitlines()
    assert line.startswith(
        f"error: {run_dir}: another training run is writing here: pid {job.pid} (urbanverse"
    )
    assert stopped.interrupted and stopped.returncode == 130, stopped.stderr[-800:]
    assert error_lines(stopped.stderr) == [
        f"error: interrupted (Ctrl-C); the latest checkpoint is kept: urbanverse train --resume {run_dir}"
    ]
    _resumes_from_the_last_checkpoint(run_dir, None)


@pytest.mark.slow
@pytest.mark.parametrize(
    "sig, delay",
    [
        pytest.param(sig, random.Random(f"train-{i}").uniform(0.0, 2.0), id=f"{sig.name}-{i}")
        for i, sig in enumerate([signal.SIGKILL, signal.SIGINT] * 10)
    ],
)
def test_a_run_stopped_at_a_random_point_resumes_from_its_last_checkpoint(tmp_path, reference, sig, delay):
    _stop_and_resume(tmp_path, reference, sig, delay)
