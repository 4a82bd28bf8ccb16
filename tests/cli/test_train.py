"""``urbanverse train / eval / export`` with --json, and evaluation without matplotlib."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE
from urbanverse.cli import app

runner = CliRunner()
TINY = ["--num-envs", "8", "--set", "num_steps_per_env=16", "--set", "torch_threads=1", "--quiet"]


@pytest.fixture(scope="module")
def one_iteration_run(tmp_path_factory) -> tuple[Path, dict]:
    """A one-iteration PPO run (128 env-steps) and the JSON summary ``train --json`` printed."""
    mp = pytest.MonkeyPatch()
    mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("cache")))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("runs")
    args = ["train", "--scenes", str(EXAMPLE_SCENE), "--steps", "128", "--runs-dir", str(root), "--json"]
    result = runner.invoke(app, args + TINY)
    assert result.exit_code == 0, result.output
    (run_dir,) = root.iterdir()
    yield run_dir, json.loads(result.stdout)
    torch.set_num_threads(threads)
    mp.undo()


def test_train_json_summary(one_iteration_run):
    run_dir, summary = one_iteration_run
    assert summary["run_dir"] == str(run_dir) and summary["algo"] == "ppo"
    assert summary["iterations"] == 1 and summary["env_steps"] == 128
    assert summary["last_iteration"]["steps_per_s"] > 0
    assert summary["last_iteration"]["success_rate"] is None  # no episode ended: NaN becomes null


def test_eval_needs_no_matplotlib(one_iteration_run, tmp_path, monkeypatch):
    from urbanverse.rl.jobs import EvalCfg, matplotlib_available, run_evaluation

    run_dir, _ = one_iteration_run
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    assert not matplotlib_available()
    outcome = run_evaluation(EvalCfg(checkpoint=run_dir, episodes=1, out=tmp_path / "lib"))
    assert outcome.results["overall"]["episodes"] == 1
    assert sorted(p.name for p in (tmp_path / "lib").iterdir()) == ["results.json", "results.md"]
    args = ["eval", str(run_dir), "--episodes", "1", "--json", "-o", str(tmp_path / "cli")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["overall"] == outcome.results["overall"]
    # An animation asked for by name says what to install.
    result = runner.invoke(app, ["eval", str(run_dir), "--episodes", "1", "--animate", "1"])
    assert result.exit_code == 2 and "pip install" in result.output


def test_export_json(one_iteration_run, tmp_path):
    run_dir, _ = one_iteration_run
    out = tmp_path / "policy.pt"
    result = runner.invoke(app, ["export", str(run_dir), "--format", "torchscript", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] and report["policy"] == str(out) and report["max_abs_action_diff"] < 1e-5
