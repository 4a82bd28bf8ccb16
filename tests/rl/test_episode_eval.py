"""``urbanverse episodes make`` and ``urbanverse eval --episodes-file``: every runnable episode of the file
runs exactly once, the others are reported; the Python entry point gives the CLI's figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.rl.conftest import EXAMPLE, REPO
from urbanverse.cli import app
from urbanverse.rl.episode_eval import evaluate_episodes
from urbanverse.rl.evaluate import load_policy
from urbanverse.sim.episodes import load_episodes

runner = CliRunner()
POLICY = REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt"


@pytest.fixture(scope="module")
def episode_file(tmp_path_factory) -> Path:
    """Three episodes made by the CLI, plus one that starts off the scene and one with a short limit."""
    path = tmp_path_factory.mktemp("episodes") / "eval.jsonl"
    args = ["episodes", "make", "--scenes", str(EXAMPLE), "--per-scene", "3", "--seed", "5", "-o", str(path)]
    result = runner.invoke(app, [*args, "--set", "task.max_goal_distance=15", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (
        summary["episodes"] == 3 and 2.0 <= summary["geodesic_m"]["min"] <= summary["geodesic_m"]["max"] <= 15
    )
    first = json.loads(path.read_text().splitlines()[0])
    extra = [
        first | {"id": "off-scene", "start": [500.0, 500.0, 0.0]},
        first | {"id": "short", "max_steps": 5},
    ]
    with path.open("a") as f:
        f.writelines(json.dumps(e) + "\n" for e in extra)
    return path


@pytest.fixture(scope="module")
def cli_results(episode_file, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("out")
    result = runner.invoke(
        app, ["eval", str(POLICY), "--episodes-file", str(episode_file), "--json", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "off-scene" in result.output and "start_blocked" in result.output  # the warning line
    assert sorted(p.name for p in out.iterdir()) == ["results.json", "results.md"]
    return json.loads(result.stdout)


def test_every_runnable_episode_runs_once(episode_file, cli_results):
    rows = cli_results["episodes"]
    assert [r["id"] for r in rows] == [e.id for e in load_episodes(episode_file)]
    assert [r["status"] for r in rows] == ["ok", "ok", "ok", "start_blocked", "ok"]
    assert cli_results["skipped"] == {"start_blocked": 1, "goal_blocked": 0, "unreachable": 0}
    assert cli_results["overall"]["episodes"] == 4 and cli_results["scenes"]["example"]["episodes"] == 4
    ran = [r for r in rows if r["status"] == "ok"]
    assert all(1 <= r["steps"] <= 300 and 0 <= r["spl"] <= 1 for r in ran)
    assert rows[4]["steps"] <= 5 and "success" not in rows[3]
    mean_spl = sum(r["spl"] for r in ran) / len(ran)
    assert cli_results["overall"]["spl"] == pytest.approx(mean_spl)
    assert cli_results["episodes_file"] == str(episode_file)


def test_python_entry_point_gives_the_cli_figures(episode_file, cli_results):
    results = evaluate_episodes(load_policy(POLICY), load_episodes(episode_file), seed=1)
    assert results["overall"] == cli_results["overall"]
    assert results["episodes"] == cli_results["episodes"]


def test_bad_episode_files_and_mixed_options_exit_2(episode_file, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(episode_file.read_text().splitlines()[0] + "\n" + '{"id": "x", "scene": "s"}\n')
    result = runner.invoke(app, ["eval", str(POLICY), "--episodes-file", str(bad)])
    assert result.exit_code == 2 and f"{bad}:2: field 'start' is missing" in result.output
    for extra in (["--scenes", str(EXAMPLE)], ["--episodes", "3"]):
        result = runner.invoke(app, ["eval", str(POLICY), "--episodes-file", str(episode_file), *extra])
        assert result.exit_code == 2 and "--episodes-file" in result.output
    result = runner.invoke(
        app,
        [
            "episodes",
            "make",
            "--scenes",
            str(EXAMPLE),
            "-o",
            str(tmp_path / "x.jsonl"),
            "--set",
            "task.bogus=1",
        ],
    )
    assert result.exit_code == 2 and "bogus" in result.output


def test_two_scenes_keep_the_file_order_and_a_scene_with_nothing_runnable_is_reported(episode_file, tmp_path):
    copy = tmp_path / "scenes" / "example"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("physics_check.json"))
    first, second = (json.loads(line) for line in episode_file.read_text().splitlines()[:2])
    rows = [
        first | {"id": "copy-blocked", "scene": "scenes/example", "start": [500.0, 500.0, 0.0]},
        second | {"scene": str(EXAMPLE), "max_steps": 3},
        first | {"id": "copy-goal-off", "scene": "scenes/example", "goal": [-500.0, 0.0]},
    ]
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    result = runner.invoke(app, ["eval", str(POLICY), "--episodes-file", str(path), "--json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    results = json.loads(result.stdout)
    assert [r["id"] for r in results["episodes"]] == [r["id"] for r in rows]
    assert [r["status"] for r in results["episodes"]] == ["start_blocked", "ok", "goal_blocked"]
    assert results["scenes"]["example_0"]["episodes"] == 0 and results["scenes"]["example_0"]["spl"] is None
    assert results["scenes"]["example_1"]["episodes"] == 1 and results["overall"]["episodes"] == 1
    saved = json.loads((out / "results.json").read_text())  # strict JSON: no NaN
    assert saved["overall"]["episodes"] == 1 and saved["scenes"]["example_0"]["success_rate"] is None
