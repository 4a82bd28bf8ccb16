"""Where ``urbanverse eval`` writes without ``--out``: beside a training run, never into a shipped policy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE, REPO
from urbanverse.cli import app
from urbanverse.rl.jobs import default_eval_dir

runner = CliRunner()
POLICY = REPO / "policies" / "wheeled-lidar-mlp"


def test_default_eval_dir_is_beside_a_run_and_outside_a_policy_folder(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r1"
    (run / "checkpoints").mkdir(parents=True)
    (run / "progress.csv").write_text("iteration\n0\n")
    assert default_eval_dir(run) == run / "eval"
    assert default_eval_dir(run / "checkpoints" / "ckpt_000010.pt") == run / "eval"
    policy = tmp_path / "policies" / "wheeled"
    policy.mkdir(parents=True)
    (policy / "config.json").write_text("{}")
    assert default_eval_dir(policy / "policy.pt") == Path("eval") / "wheeled"
    assert default_eval_dir(policy) == Path("eval") / "wheeled"


def test_eval_of_a_shipped_policy_writes_under_eval_in_the_working_dir(tmp_path: Path, monkeypatch) -> None:
    policy = tmp_path / "policies" / POLICY.name
    shutil.copytree(POLICY, policy)
    before = sorted(p.name for p in policy.iterdir())
    monkeypatch.chdir(tmp_path)
    args = ["eval", str(policy / "policy.pt"), "--scenes", str(EXAMPLE_SCENE), "--episodes", "1"]
    result = runner.invoke(app, [*args, "--animate", "0", "--json"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in policy.iterdir()) == before
    results = json.loads((tmp_path / "eval" / POLICY.name / "results.json").read_text())
    assert results["checkpoint"] == str(policy / "policy.pt")


def test_a_shipped_policy_folder_names_its_checkpoint(tmp_path: Path) -> None:
    from urbanverse.errors import InputError
    from urbanverse.rl.runner import resolve_checkpoint

    assert resolve_checkpoint(POLICY) == POLICY / "policy.pt"
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoint.pt").write_bytes(b"")
    (run / "policy.pt").write_bytes(b"")
    assert resolve_checkpoint(run) == run / "checkpoint.pt"  # a run folder's own checkpoint first
    with pytest.raises(InputError, match="run folder, a policy folder or a .pt file"):
        resolve_checkpoint(tmp_path)
