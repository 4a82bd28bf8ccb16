"""``urbanverse train / eval / export`` end to end on tiny budgets (scenes/example, 8 environments)."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from tests.rl.conftest import EXAMPLE
from urbanverse.cli import app

runner = CliRunner()
TINY = ["--num-envs", "8", "--set", "num_steps_per_env=16", "--set", "torch_threads=1", "--quiet"]


def _iterations(run_dir: Path) -> list[int]:
    with (run_dir / "progress.csv").open() as f:
        return [int(r["iteration"]) for r in csv.DictReader(f)]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory) -> Path:
    """A 6-iteration run (768 env-steps) with a checkpoint every 2 iterations."""
    root = tmp_path_factory.mktemp("runs")
    args = ["train", "--scenes", str(EXAMPLE), "--steps", "768", "--runs-dir", str(root), "--seed", "3"]
    result = runner.invoke(app, args + TINY + ["--set", "save_interval=2"])
    assert result.exit_code == 0, result.output
    (run_dir,) = root.iterdir()
    return run_dir


def test_train_writes_a_named_run_with_config_csv_tensorboard_and_checkpoints(trained_run):
    task, exp, seed, stamp = trained_run.name.split("__")
    assert (task, exp, seed) == ("pointnav-wheeled-lidar", "mlp", "3") and len(stamp) == 15
    config = json.loads((trained_run / "config.json").read_text())
    assert config["env"]["num_envs"] == 8 and config["num_steps_per_env"] == 16
    assert _iterations(trained_run) == [1, 2, 3, 4, 5, 6]
    assert sorted(p.name for p in (trained_run / "checkpoints").iterdir()) == [
        "ckpt_000002.pt",
        "ckpt_000004.pt",
        "ckpt_000006.pt",
    ]
    assert (trained_run / "checkpoint.pt").is_file()
    assert any((trained_run / "tb").iterdir())


def test_eval_json_has_per_scene_and_overall_figures(trained_run, tmp_path):
    out = tmp_path / "eval"
    result = runner.invoke(
        app, ["eval", str(trained_run), "--episodes", "4", "--json", "-o", str(out), "--animate", "1"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    keys = {"success_rate", "spl", "collisions_per_episode", "route_completion", "episodes"}
    assert set(data["overall"]) == keys
    assert set(data["scenes"]) == {"example"}
    assert data["overall"]["episodes"] == 4 and data["scenes"]["example"]["episodes"] == 4
    assert 0.0 <= data["overall"]["success_rate"] <= 1.0
    assert 0.0 <= data["overall"]["spl"] <= data["overall"]["success_rate"] + 1e-9
    assert data["trained"]["iteration"] == 6
    assert json.loads((out / "results.json").read_text())["overall"] == data["overall"]
    assert "| **overall** | 4 |" in (out / "results.md").read_text()
    assert (out / "episodes.gif").stat().st_size > 1000
    assert (out / "learning_curve.png").stat().st_size > 1000


@pytest.mark.parametrize("fmt", ["onnx", "torchscript"])
def test_export_matches_pytorch(trained_run, tmp_path, fmt):
    out = tmp_path / ("policy.onnx" if fmt == "onnx" else "policy.pt")
    result = runner.invoke(app, ["export", str(trained_run), "--format", fmt, "-o", str(out)])
    assert result.exit_code == 0, result.output
    card = json.loads(Path(str(out) + ".json").read_text())
    assert card["check"]["max_abs_action_diff"] < 1e-5
    assert card["inputs"]["obs"][1] == 64 + 2 + 3 + 2  # lidar, goal, velocity, last action
    assert "rollouts in the training scenes" in card["check"]["observations"]


def test_kill_and_resume_loses_nothing_past_the_checkpoint(tmp_path, cli_env):
    """A run killed with SIGKILL continues from its latest checkpoint; the CSV has each iteration once."""
    root = tmp_path / "runs"
    cmd = [
        str(Path(sys.executable).parent / "urbanverse"),
        "train",
        "--scenes",
        str(EXAMPLE),
        "--steps",
        "100000",
    ]
    cmd += ["--runs-dir", str(root), "--set", "save_interval=1"] + TINY
    proc = subprocess.Popen(cmd, env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        ckpt_dir = None
        while time.monotonic() < deadline:
            # ckpt_<n> is written before checkpoint.pt: once ckpt_4 exists, checkpoint.pt holds >= 3.
            found = list(root.glob("*/checkpoints/ckpt_00000[4-9].pt"))
            if found:
                ckpt_dir = found[0].parent
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
        assert ckpt_dir is not None, "no checkpoint within 120 s"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    run_dir = ckpt_dir.parent
    import torch

    killed_at = torch.load(run_dir / "checkpoint.pt", weights_only=False)["iteration"]
    assert killed_at >= 3
    # Shorten the remaining budget so the resumed run ends two iterations later.
    config = json.loads((run_dir / "config.json").read_text())
    config["total_steps"] = (killed_at + 2) * 8 * 16
    (run_dir / "config.json").write_text(json.dumps(config))
    result = runner.invoke(app, ["train", "--resume", str(run_dir), "--quiet"])
    assert result.exit_code == 0, result.output
    assert f"at iteration {killed_at}/" in result.output
    assert _iterations(run_dir) == list(range(1, killed_at + 3))
    final = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    assert final["iteration"] == killed_at + 2 and final["env_steps"] == (killed_at + 2) * 128


def test_sb3_ppo_trains_a_few_iterations_and_evaluates(tmp_path):
    pytest.importorskip("stable_baselines3")
    root = tmp_path / "runs"
    args = ["train", "--algo", "sb3-ppo", "--scenes", str(EXAMPLE), "--steps", "384", "--runs-dir", str(root)]
    result = runner.invoke(app, args + TINY)
    assert result.exit_code == 0, result.output
    (run_dir,) = root.iterdir()
    assert (run_dir / "model.zip").is_file() and (run_dir / "vecnormalize.pkl").is_file()
    assert _iterations(run_dir) == [1, 2, 3]
    result = runner.invoke(app, ["eval", str(run_dir), "--episodes", "2", "--json", "--animate", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["overall"]["episodes"] == 2


def test_eval_quantize_int8_reports_the_quantised_actor(trained_run, tmp_path):
    from urbanverse.rl.evaluate import load_policy
    from urbanverse.rl.quantize import quantize_policy
    from urbanverse.sim import NavVecEnv

    loaded = load_policy(trained_run)
    quantized, summary = quantize_policy(loaded, (str(EXAMPLE),), bits=8, calibration_steps=20)
    assert summary["quantized_layers"] == 3  # two hidden layers and the action head
    assert summary["state_bytes_int8"] < summary["state_bytes_float"]
    env = NavVecEnv(loaded.cfg.env.env_cfg((str(EXAMPLE),), seed=5, device="cpu", num_envs=16))
    obs = torch.cat([env.step(torch.rand(16, 2) * 2 - 1)[0] for _ in range(4)])  # real observations
    fp, _ = loaded.act(obs, ())
    q, _ = quantized.act(obs, ())
    assert 0 < float((fp - q).abs().max()) < 0.1  # on the int8 grid, yet close
    args = ["eval", str(trained_run), "--episodes", "2", "--json", "--animate", "0", "-o", str(tmp_path)]
    result = runner.invoke(app, args + ["--quantize", "int8", "--calibration-steps", "10"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["quantization"]["weight_bits"] == 8 and report["overall"]["episodes"] == 2
    result = runner.invoke(app, ["eval", str(trained_run), "--quantize", "int3"])
    assert result.exit_code == 2 and "--quantize" in result.output


def test_rgb_camera_policy_trains_and_evaluates(tmp_path):
    args = ["train", "--scenes", str(EXAMPLE), "--sensor", "rgb", "--steps", "256"]
    small = ["--runs-dir", str(tmp_path), "--set", "env.rgb.height=12", "--set", "env.rgb.width=16"]
    result = runner.invoke(app, args + TINY + small)
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    assert run_dir.name.startswith("pointnav-wheeled-rgb__") and _iterations(run_dir) == [1, 2]
    result = runner.invoke(app, ["eval", str(run_dir), "--episodes", "1", "--json", "--animate", "0"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["overall"]["episodes"] == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["train", "--scenes", str(EXAMPLE), "--sensor", "sonar"], "--sensor"),
        (["train", "--scenes", str(EXAMPLE), "--backbone", "transformer"], "--backbone"),
        (["train"], "--scenes"),
        (["train", "--scenes", str(EXAMPLE), "--set", "ppo.nope=1"], "nope"),
        (["eval", "/nonexistent/run"], "no checkpoint"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, words):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words in result.output


def test_recurrent_backbone_trains_evaluates_and_exports_with_state(tmp_path):
    """GRU: chunked sequence updates, per-episode state resets in eval, state inputs in the ONNX graph."""
    root = tmp_path / "runs"
    args = ["train", "--scenes", str(EXAMPLE), "--backbone", "gru", "--steps", "256", "--runs-dir", str(root)]
    result = runner.invoke(app, args + TINY + ["--set", "ppo.chunk_len=8"])
    assert result.exit_code == 0, result.output
    (run_dir,) = root.iterdir()
    assert json.loads((run_dir / "config.json").read_text())["policy"]["backbone"] == "gru"
    result = runner.invoke(app, ["eval", str(run_dir), "--episodes", "2", "--json", "--animate", "0"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "gru.onnx"
    result = runner.invoke(app, ["export", str(run_dir), "--format", "onnx", "-o", str(out)])
    assert result.exit_code == 0, result.output
    card = json.loads(Path(str(out) + ".json").read_text())
    assert "state_0" in card["inputs"]
    assert card["check"]["max_abs_action_diff"] < 1e-5


def test_slim_checkpoint_acts_like_the_full_one(trained_run, tmp_path):
    import torch

    from urbanverse.rl.evaluate import load_policy
    from urbanverse.rl.export import slim_checkpoint

    slim = slim_checkpoint(trained_run, tmp_path / "policy.pt")
    assert slim.stat().st_size < (trained_run / "checkpoint.pt").stat().st_size
    full, small = load_policy(trained_run), load_policy(slim)
    obs = torch.randn(5, full.meta["num_obs"])
    torch.testing.assert_close(full.act(obs, ())[0], small.act(obs, ())[0])


def test_eval_writes_an_mp4_animation(trained_run, tmp_path):
    pytest.importorskip("av")
    out = tmp_path / "eval"
    args = [
        "eval",
        str(trained_run),
        "--episodes",
        "1",
        "--animate",
        "1",
        "--video-format",
        "mp4",
        "-o",
        str(out),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    import av

    with av.open(str(out / "episodes.mp4")) as container:
        assert sum(1 for _ in container.decode(video=0)) >= 2


def test_late_batch_switch_under_the_adaptive_rate_warns_and_under_a_fixed_rate_does_not(tmp_path):
    args = ["train", "--scenes", str(EXAMPLE), "--steps", "256"]
    switch = ["--set", "schedule.batch_large_mult=2"]
    adaptive = runner.invoke(app, args + ["--runs-dir", str(tmp_path / "a")] + TINY + switch)
    fixed = runner.invoke(
        app, args + ["--runs-dir", str(tmp_path / "b")] + TINY + switch + ["--set", "ppo.schedule=fixed"]
    )
    assert adaptive.exit_code == 0 and fixed.exit_code == 0, adaptive.output + fixed.output
    assert "consider --set ppo.schedule=fixed" in adaptive.output
    assert "consider --set ppo.schedule=fixed" not in fixed.output
