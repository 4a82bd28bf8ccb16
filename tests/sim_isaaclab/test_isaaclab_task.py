"""The Isaac Sim / Isaac Lab integration, as far as it can be checked without Isaac installed.

Checked here: the task's values equal the batched environment's, the USD it loads exists and
passes the validators, spawn points are free walkable ground, gymnasium registration, the
``isaac`` command's behaviour without Isaac Sim, and that nothing else imports Isaac.
Tests marked ``isaacsim`` build the real configuration where Isaac Lab is installed.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import shapely
from typer.testing import CliRunner

from tests.conftest import EXAMPLE_SCENE, REPO
from urbanverse.cli import app
from urbanverse.scene.record import load_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.sim import isaaclab as isaac_pkg
from urbanverse.sim.isaaclab.launch import isaac_app_command
from urbanverse.sim.isaaclab.spec import PointNavSpec, scene_usd, spawn_points

runner = CliRunner()


def test_task_values_mirror_the_batched_environment() -> None:
    spec = PointNavSpec(scene_dir=EXAMPLE_SCENE)
    r = spec.rewards
    assert (r.arrival, r.collision, r.position_coarse, r.position_fine, r.velocity) == (
        2000,
        -200,
        10,
        50,
        10,
    )
    assert (r.coarse_std, r.fine_std) == (5.0, 1.0)
    assert spec.task.success_radius == 1.0 and spec.task.max_episode_steps == 300
    assert spec.dt == pytest.approx(0.1) and spec.decimation == 5
    assert spec.episode_length_s == pytest.approx(30.0)
    # Isaac Lab multiplies each term by the step time; the weights undo that
    assert spec.isaac_weight("arrival") * spec.dt == pytest.approx(2000.0)
    assert spec.camera_shape == (135, 240)


def test_spec_rejects_a_period_that_is_not_a_multiple_of_the_physics_step() -> None:
    with pytest.raises(ValueError):
        PointNavSpec(scene_dir=EXAMPLE_SCENE, dt=0.05, physics_dt=0.03)


def test_the_usd_the_task_loads_exists_and_validates(example_dir) -> None:
    usd = PointNavSpec(scene_dir=EXAMPLE_SCENE).usd_path()
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


def test_registration_needs_isaaclab(monkeypatch) -> None:
    import gymnasium as gym

    if not isaac_pkg.isaaclab_available():
        assert isaac_pkg.register_tasks() is False
        assert isaac_pkg.TASK_ID not in gym.registry
    monkeypatch.setattr(isaac_pkg, "isaaclab_available", lambda: True)
    try:
        assert isaac_pkg.register_tasks() is True
        spec = gym.spec(isaac_pkg.TASK_ID)
        assert spec.entry_point == "isaaclab.envs:ManagerBasedRLEnv"
        assert spec.kwargs["env_cfg_entry_point"].endswith("pointnav_env_cfg:UrbanVersePointNavWheeledEnvCfg")
        assert spec.kwargs["rsl_rl_cfg_entry_point"].endswith("agents:UrbanVersePointNavPPORunnerCfg")
    finally:
        gym.registry.pop(isaac_pkg.TASK_ID, None)


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
