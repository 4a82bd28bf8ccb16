"""Evaluation sweeps: (checkpoint, scene) units give the same results in one process, on worker
processes (``--jobs``) and on Ray, and a scene's figures do not depend on the other scenes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rl.conftest import EXAMPLE, REPO
from urbanverse.cli import app
from urbanverse.errors import InputError
from urbanverse.rl.jobs import EvalCfg, eval_executor, eval_out_dirs, run_evaluation

runner = CliRunner()
POLICY = REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt"
EPISODES = 2


@pytest.fixture(scope="module")
def scenes() -> tuple[str, str]:
    """scenes/example twice: two units (``example_0``, ``example_1``) with seeds of their own."""
    return str(EXAMPLE), str(EXAMPLE)


def _cfg(scenes, out: Path, checkpoint: Path = POLICY) -> EvalCfg:
    return EvalCfg(checkpoint=checkpoint, scenes=scenes, episodes=EPISODES, out=out, animate=0)


@pytest.fixture(scope="module")
def single_process(scenes, tmp_path_factory) -> dict:
    """The results of the shipped wheeled policy in both scenes, evaluated in this process."""
    return run_evaluation(_cfg(scenes, tmp_path_factory.mktemp("single"))).results


def test_two_worker_processes_give_the_single_process_results(scenes, single_process, tmp_path) -> None:
    assert single_process["overall"]["episodes"] == 2 * EPISODES
    assert run_evaluation(_cfg(scenes, tmp_path), eval_executor(jobs=2)).results == single_process
    assert json.loads((tmp_path / "results.json").read_text())["scenes"] == single_process["scenes"]


def test_ray_gives_the_single_process_results(scenes, single_process, ray_session, tmp_path) -> None:
    executor = eval_executor(jobs=2, ray=True)
    assert executor.cpus_per_task == 1.0
    assert run_evaluation(_cfg(scenes, tmp_path), executor).results == single_process


def test_two_checkpoints_in_one_call_write_a_folder_each(scenes, single_process, tmp_path) -> None:
    other = tmp_path / "other" / "late.pt"
    other.parent.mkdir()
    shutil.copy(POLICY, other)
    args = ["eval", str(POLICY), str(other), "--scenes", scenes[0], "--scenes", scenes[1]]
    out = tmp_path / "out"
    result = runner.invoke(
        app, [*args, "--episodes", str(EPISODES), "--animate", "0", "--jobs", "2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("episodes per scene") == 2 and "overall" in result.output
    for checkpoint, folder in ((POLICY, out / "wheeled-lidar-mlp"), (other, out / "other")):
        written = json.loads((folder / "results.json").read_text())
        assert written["checkpoint"] == str(checkpoint)
        assert {k: v for k, v in written.items() if k != "checkpoint"} == {
            k: v for k, v in single_process.items() if k != "checkpoint"
        }


def test_a_scene_does_not_depend_on_the_scenes_after_it(scenes, single_process, tmp_path) -> None:
    alone = run_evaluation(_cfg(scenes[:1], tmp_path)).results
    assert alone["scenes"]["example"] == single_process["scenes"]["example_0"]
    assert single_process["scenes"]["example_0"] != single_process["scenes"]["example_1"]  # own seeds


def test_output_folders_of_several_checkpoints(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "r1"
    (run / "checkpoints").mkdir(parents=True)
    (run / "progress.csv").write_text("iteration\n0\n")
    (run / "checkpoints" / "ckpt_000010.pt").write_text("")
    late = run / "checkpoints" / "ckpt_000010.pt"
    assert eval_out_dirs([run]) == [run / "eval"]
    assert eval_out_dirs([run, late]) == [
        run.resolve() / "eval" / "latest",
        run.resolve() / "eval" / "ckpt_000010",
    ]
    assert eval_out_dirs([run, late], tmp_path / "o") == [
        tmp_path / "o" / "r1" / "latest",
        tmp_path / "o" / "r1" / "ckpt_000010",
    ]
    with pytest.raises(InputError, match="more than once"):
        eval_out_dirs([run, run / "."])


def test_bad_sweep_options_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["eval", str(POLICY), "--scenes", str(EXAMPLE), "--jobs", "0"])
    assert result.exit_code == 2 and "--jobs" in result.output
