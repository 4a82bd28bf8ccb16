"""The Isaac Sim / Isaac Lab integration, as far as it can be checked without Isaac installed.

Checked here: the task's values are the shipped wheeled policy's, the USD it loads exists and
passes the validators, spawn points are free walkable ground, gymnasium registration, the
``train`` / ``play`` entry points and the ``isaac`` command without Isaac Sim, and that nothing
else imports Isaac. ``test_isaac_parity`` holds the task's terms against the batched environment.
Tests marked ``isaacsim`` build the real configuration where Isaac Lab is installed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import shapely
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE, REPO
from urbanverse.cli import app
from urbanverse.errors import InputError
from urbanverse.scene.record import load_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.sim import isaaclab as isaac_pkg
from urbanverse.sim.isaaclab import launcher
from urbanverse.sim.isaaclab.launch import isaac_app_command
from urbanverse.sim.isaaclab.spec import (
    NUM_ENVS_ENV_VAR,
    SCENES_ENV_VAR,
    PointNavSpec,
    scene_usd,
    spawn_points,
)
from urbanverse.sim.task import PointNavCfg

runner = CliRunner()


def test_task_values_are_the_shipped_wheeled_policys() -> None:
    spec = PointNavSpec(scene_dirs=(EXAMPLE_SCENE,))
    shipped = PointNavSpec.from_train_config(
        REPO / "policies" / "wheeled-lidar-mlp" / "config.json", scene_dirs=(EXAMPLE_SCENE,)
    )
    assert (spec.lidar, spec.task, spec.rewards, spec.dt) == (
        shipped.lidar,
        shipped.task,
        shipped.rewards,
        shipped.dt,
    )
    assert spec.rewards.weights() == {"arrival": 2000.0, "collision": -200.0, "progress": 100.0}
    assert spec.task.success_radius == 1.0 and spec.task.max_episode_steps == 300
    assert spec.task.route_waypoint_m == 1.0
    assert spec.dt == pytest.approx(0.1) and spec.decimation == 5
    assert spec.episode_length_s == pytest.approx(30.0)
    # Isaac Lab multiplies each term by the step time; the weights undo that
    assert spec.isaac_weight("arrival") * spec.dt == pytest.approx(2000.0)


def test_spec_round_trips_through_json_and_reads_the_environment(monkeypatch, tmp_path) -> None:
    spec = PointNavSpec(scene_dirs=(EXAMPLE_SCENE,), num_envs=7)
    assert PointNavSpec.from_json(spec.to_json()) == spec
    monkeypatch.setenv(SCENES_ENV_VAR, str(EXAMPLE_SCENE.parent))  # a folder of scene folders
    monkeypatch.setenv(NUM_ENVS_ENV_VAR, "9")
    from_env = PointNavSpec.from_environment()
    assert from_env.num_envs == 9 and EXAMPLE_SCENE in from_env.scene_dirs
    monkeypatch.setenv(NUM_ENVS_ENV_VAR, "many")
    with pytest.raises(InputError, match=NUM_ENVS_ENV_VAR):
        PointNavSpec.from_environment()


def test_a_legged_or_camera_training_config_is_refused(tmp_path) -> None:
    config = json.loads((REPO / "policies" / "legged-lidar-mlp" / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(InputError, match="wheeled with a LiDAR"):
        PointNavSpec.from_train_config(tmp_path / "config.json", scene_dirs=(EXAMPLE_SCENE,))
    (tmp_path / "broken.json").write_text("{}")
    with pytest.raises(InputError, match="not a training config.json"):
        PointNavSpec.from_train_config(tmp_path / "broken.json")


def test_spec_rejects_a_period_that_is_not_a_multiple_of_the_physics_step() -> None:
    with pytest.raises(ValueError):
        PointNavSpec(scene_dirs=(EXAMPLE_SCENE,), dt=0.05, physics_dt=0.03)


def test_the_usd_the_task_loads_exists_and_validates(example_dir) -> None:
    usd = scene_usd(EXAMPLE_SCENE)
    assert usd == (EXAMPLE_SCENE / "scene.usda").resolve() and usd.is_file()
    issues, n_validators = validate_usd(usd)
    assert n_validators > 0 and not [i for i in issues if i.severity == "error"]
    (example_dir / "scene.usda").unlink()
    written = scene_usd(example_dir)
    assert written.is_file() and not [i for i in validate_usd(written)[0] if i.severity == "error"]


def test_spawn_points_are_free_walkable_ground() -> None:
    scene = load_scene(EXAMPLE_SCENE)
    points = spawn_points(scene, clearance=0.35)
    assert len(points) > 50
    walkable = shapely.union_all([shapely.Polygon(p) for p in scene.walkable_area])
    assert shapely.contains_xy(walkable, points[:, 0], points[:, 1]).all()
    for obj in scene.objects:
        dist = np.linalg.norm(points[:, :2] - np.array(obj.position[:2]), axis=1)
        assert dist.min() > 0.35
    assert points[:, 2].min() >= 0.0 and points[:, 2].max() == pytest.approx(0.15)
    on_ramps = (points[:, 2] > 1e-6) & (points[:, 2] < 0.15 - 1e-6)
    assert on_ramps.any()  # the curb ramps slope between road and sidewalk


def test_importing_tasks_registers_them_with_gymnasium_alone() -> None:
    import gymnasium as gym

    from urbanverse.sim.isaaclab import tasks

    assert isaac_pkg.TASK_ID in gym.registry
    spec = gym.spec(isaac_pkg.TASK_ID)
    assert spec.entry_point == "isaaclab.envs:ManagerBasedRLEnv"
    for key in ("env_cfg_entry_point", "rsl_rl_cfg_entry_point"):
        module, attr = spec.kwargs[key].split(":")
        path = REPO / (module.replace(".", "/") + ".py")
        classes = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)}
        assert attr in classes, (key, module, attr)  # the string Isaac Lab will import resolves
    tasks.register()  # idempotent
    assert "isaaclab" not in sys.modules


@pytest.mark.parametrize("entry", ["train", "play"])
def test_entry_points_explain_themselves(entry) -> None:
    run = subprocess.run(
        [sys.executable, "-m", f"urbanverse.sim.isaaclab.{entry}", "--help"], capture_output=True, text=True
    )
    assert run.returncode == 0 and "--scenes" in run.stdout and isaac_pkg.TASK_ID in run.stdout
    assert "Hydra overrides" in run.stdout


@pytest.mark.skipif(isaac_pkg.isaaclab_available(), reason="Isaac Lab is installed here")
def test_entry_points_without_isaac_lab_exit_2_with_the_install_hint() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "urbanverse.sim.isaaclab.train", "--num_envs", "4"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and "Isaac Sim is not installed" in run.stderr and "pip install" in run.stderr


def test_runner_arguments_reach_the_agent_config() -> None:
    parser = launcher.build_parser("x", with_app_args=False)
    args = parser.parse_args(
        ["--seed", "7", "--resume", "--load_run", "2026.*", "--checkpoint", "model_9.pt"]
    )
    agent = SimpleNamespace(seed=42, resume=False, load_run=".*", load_checkpoint="model_.*.pt", logger="tb")
    launcher.apply_runner_args(agent, args)
    assert (agent.seed, agent.resume, agent.load_run, agent.load_checkpoint) == (
        7,
        True,
        "2026.*",
        "model_9.pt",
    )
    assert agent.logger == "tb"  # not given: left alone
    env = launcher.task_environment(parser.parse_args(["--scenes", "a", "b", "--num_envs", "8"]))
    assert env == {SCENES_ENV_VAR: os.pathsep.join(["a", "b"]), NUM_ENVS_ENV_VAR: "8"}


def test_the_shipped_policy_plays_in_the_task_and_a_mismatch_is_refused(tmp_path) -> None:
    card = REPO / "policies" / "wheeled-lidar-mlp" / "policy.onnx.json"
    launcher.check_policy_layout(card, PointNavSpec(scene_dirs=(EXAMPLE_SCENE,)))
    no_route = PointNavSpec(scene_dirs=(EXAMPLE_SCENE,), task=PointNavCfg(route_waypoint_m=0.0))
    with pytest.raises(InputError, match="--config"):
        launcher.check_policy_layout(card, no_route)


def test_preparing_in_a_child_keeps_usd_core_out_of_the_isaac_process(tmp_path) -> None:
    env = {
        **os.environ,
        "URBANVERSE_CACHE": str(tmp_path),
        SCENES_ENV_VAR: str(EXAMPLE_SCENE),
        NUM_ENVS_ENV_VAR: "4",
    }
    prepare = [sys.executable, "-m", "urbanverse.sim.isaaclab.launcher"]
    done = subprocess.run(prepare, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "4 environments over 1 scene(s)" in done.stdout, done.stderr
    # what the task's configuration does inside Isaac Sim's process: read back, no pxr loaded
    probe = (
        "import sys; from urbanverse.sim.isaaclab.spec import PointNavSpec; "
        "e = PointNavSpec.from_environment().env_scenes(); "
        "assert e.scan_walls.is_file() and len(e.origins) == 4; assert 'pxr' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", probe], env=env).returncode == 0
    bad = subprocess.run(
        prepare, env={**env, SCENES_ENV_VAR: str(tmp_path / "missing")}, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "is not a folder" in bad.stderr


def test_app_command_puts_the_robot_on_a_spawn_point() -> None:
    cmd = isaac_app_command(EXAMPLE_SCENE, "wheeled", headless=True)
    assert cmd[:3] == [sys.executable, "-m", "urbanverse.sim.isaaclab.app"]
    assert cmd[cmd.index("--robot") + 1] == "wheeled" and cmd[-1] == "--headless"
    x, y, z = (float(v) for v in cmd[cmd.index("--spawn") + 1].split(","))
    assert z in (0.0, 0.15)


@pytest.mark.skipif(isaac_pkg.isaacsim_available(), reason="Isaac Sim is installed here")
def test_isaac_command_without_isaac_sim_explains_and_exits_2() -> None:
    result = runner.invoke(app, ["isaac", str(EXAMPLE_SCENE), "--robot", "wheeled", "--headless"])
    assert result.exit_code == 2
    assert "Isaac Sim is not installed" in result.output and "pip install" in result.output


def test_isaac_command_rejects_an_unknown_robot() -> None:
    result = runner.invoke(app, ["isaac", str(EXAMPLE_SCENE), "--robot", "tank"])
    assert result.exit_code == 2 and "--robot" in result.output


def test_view_command_rejects_a_missing_folder(tmp_path) -> None:
    result = runner.invoke(app, ["view", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "not a folder" in result.output


def test_only_the_isaaclab_package_imports_isaac() -> None:
    pattern = re.compile(r"^\s*(from|import)\s+(isaacsim|isaaclab|omni)\b", re.MULTILINE)
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "urbanverse").rglob("*.py")
        if "isaaclab" not in path.relative_to(REPO / "urbanverse").parts[:2]
        and pattern.search(path.read_text())
    ]
    assert offenders == []


def test_importing_the_package_does_not_import_isaac() -> None:
    assert "isaaclab" not in sys.modules and "isaacsim" not in sys.modules


@pytest.mark.isaacsim
def test_isaac_lab_config_builds() -> None:
    pytest.importorskip("isaaclab")
    from urbanverse.sim.isaaclab.pointnav_env_cfg import UrbanVersePointNavWheeledEnvCfg

    cfg = UrbanVersePointNavWheeledEnvCfg()
    assert cfg.decimation == 5 and cfg.episode_length_s == pytest.approx(30.0)
    assert cfg.rewards.arrival.weight * cfg.sim.dt * cfg.decimation == pytest.approx(2000.0)
    assert cfg.rewards.position_fine is None and cfg.scene.replicate_physics is False
    assert len(cfg.scene.lidar.pattern_cfg.angles) == 64
