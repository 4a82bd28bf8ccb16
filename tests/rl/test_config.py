"""Training config: --set overrides reach nested fields, bad keys and values are one-line InputErrors."""

from __future__ import annotations

import pytest

from urbanverse.errors import InputError
from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides, from_dict, load_cfg, save_cfg, to_dict


def test_overrides_reach_nested_fields_and_round_trip(tmp_path):
    cfg = TrainCfg(scenes=("a", "b"))
    cfg = apply_overrides(
        cfg,
        [
            "ppo.learning_rate=3e-4",
            "env.task.max_goal_distance=12",
            "env.num_envs=16",
            "policy.backbone_overrides.hidden=256",
            "env.pedestrians.speed=[0.5, 1.0]",
            "experiment=bench",
        ],
    )
    assert cfg.ppo.learning_rate == 3e-4
    assert cfg.env.task.max_goal_distance == 12.0
    assert cfg.env.num_envs == 16
    assert cfg.policy.backbone_overrides == {"hidden": 256}
    assert cfg.env.pedestrians.speed == (0.5, 1.0)
    assert cfg.experiment == "bench"
    save_cfg(cfg, tmp_path / "config.json")
    assert load_cfg(tmp_path / "config.json") == cfg
    assert from_dict(TrainCfg, to_dict(cfg)) == cfg


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ("ppo.learnig_rate=1", "learnig_rate"),
        ("ppo=1", "ppo"),
        ("env.num_envs=many", "env.num_envs"),
        ("no_equals_sign", "key=value"),
        ("env.sensor=sonar", "--sensor"),
    ],
)
def test_bad_overrides_name_the_field(item, words):
    with pytest.raises(InputError, match=words):
        apply_overrides(TrainCfg(scenes=("a",)), [item])


def test_rgb_sensor_builds_an_env_with_the_camera_only():
    cfg = EnvSpec(sensor="rgb").env_cfg(("a",), seed=0, device="cpu")
    assert cfg.rgb is not None and cfg.lidar is None and cfg.depth is None
