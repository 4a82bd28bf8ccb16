"""Late-training schedules in real PPO runs: QAT fused with an LR cooldown, the late batch switch,
fine-tuning from a checkpoint, and the int8 export of a QAT-trained policy."""

from __future__ import annotations

import csv

import pytest
import torch

from tests.rl.conftest import EXAMPLE
from urbanverse.errors import InputError
from urbanverse.nn.qat import QATLinear
from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides
from urbanverse.rl.evaluate import load_policy
from urbanverse.rl.export import check_export, export_policy
from urbanverse.rl.quantize import quantize_policy
from urbanverse.rl.runner import CHECKPOINT, Runner
from urbanverse.rl.schedule import qat_enabled

ITERATIONS = 8


def small_cfg(*overrides: str) -> TrainCfg:
    """Eight PPO iterations of 4 environments x 8 steps on the example scene."""
    cfg = TrainCfg(
        scenes=(str(EXAMPLE),),
        env=EnvSpec(num_envs=4),
        total_steps=ITERATIONS * 32,
        num_steps_per_env=8,
        save_interval=2,
    )
    return apply_overrides(cfg, list(overrides))


def train(tmp_path, *overrides: str) -> tuple[Runner, list[dict]]:
    """A finished run and its ``progress.csv`` rows (one per iteration)."""
    runner = Runner.create(small_cfg(*overrides), tmp_path, quiet=True)
    runner.learn()
    with (runner.run_dir / "progress.csv").open() as f:
        rows = [{k: float(v or "nan") for k, v in row.items()} for row in csv.DictReader(f)]
    assert len(rows) == ITERATIONS
    return runner, rows


def test_qat_switches_on_at_the_cooldown_and_the_lr_falls_linearly_to_zero(tmp_path):
    runner, rows = train(
        tmp_path, "schedule.qat_fraction=0.5", "ppo.schedule=fixed", "ppo.learning_rate=1e-3"
    )
    qat = [r["train/qat"] for r in rows]
    lr = [r["train/learning_rate"] for r in rows]
    assert qat == [0.0] * 4 + [1.0] * 4
    assert lr[:4] == [1e-3] * 4
    # Progress at the updates of iterations 5..8 is 4/8 .. 7/8 of the budget: LR = peak * (1 - t).
    expected = [1e-3 * (1 - (i / 8 - 0.5) / (0.999 - 0.5)) for i in range(4, 8)]
    assert lr[4:] == pytest.approx(expected, rel=1e-2)
    actor_linears = [
        m for n, m in runner.policy.named_modules() if n.startswith("actor") and isinstance(m, QATLinear)
    ]
    assert actor_linears and all(m.enabled and torch.isfinite(m.act_scale) for m in actor_linears)
    critic = [
        m for n, m in runner.policy.named_modules() if n.startswith("critic") and isinstance(m, QATLinear)
    ]
    assert critic == []


def test_a_qat_run_resumes_quantised_and_exports_int8_equal_to_its_fake_quant(tmp_path):
    runner, _ = train(tmp_path, "schedule.qat_fraction=0.5")
    resumed = Runner.resume(runner.run_dir, quiet=True)
    assert qat_enabled(resumed.policy)
    assert resumed.schedule.qat_peak_lr == runner.schedule.qat_peak_lr
    for a, b in zip(resumed.policy.state_dict().values(), runner.policy.state_dict().values(), strict=True):
        assert torch.equal(a, b)

    loaded = load_policy(runner.run_dir / CHECKPOINT)
    assert qat_enabled(loaded.actor)
    int8, summary = quantize_policy(loaded, (str(EXAMPLE),), bits=8)
    assert summary["method"] == "qat" and summary["calibration_steps"] == 0
    obs = torch.randn(64, loaded.meta["num_obs"]) * 3
    fake, _ = loaded.act(obs, ())
    real, _ = int8.act(obs, ())
    assert torch.allclose(fake, real, atol=1e-5)
    with pytest.raises(ValueError, match="int8 QAT, not int4"):
        quantize_policy(loaded, (str(EXAMPLE),), bits=4)

    # Exported as its int8 inference graph (constant grids), which torch.export / ONNX take.
    path = export_policy(loaded, "onnx", tmp_path / "policy.onnx")
    assert check_export(loaded, path, "onnx", batch=8, steps=4)["max_abs_action_diff"] < 1e-5


def test_late_batch_switch_uses_fewer_larger_minibatches(tmp_path, monkeypatch):
    seen = []
    from urbanverse.rl.storage import RolloutStorage

    original = RolloutStorage.minibatches

    def spy(self, num_mini_batches, *args, **kwargs):
        seen.append(num_mini_batches)
        return original(self, num_mini_batches, *args, **kwargs)

    monkeypatch.setattr(RolloutStorage, "minibatches", spy)
    train(tmp_path, "schedule.batch_large_mult=4", "schedule.batch_switch_at=0.75")
    assert seen == [4] * 6 + [1] * 2


def test_init_from_starts_a_fine_tune_at_the_checkpoint_weights(tmp_path):
    source, _ = train(tmp_path / "a")
    cfg = small_cfg(f"init_from={source.run_dir / CHECKPOINT}", "schedule.qat_fraction=1.0")
    tuned = Runner.create(cfg, tmp_path / "b", quiet=True)
    src = source.policy.state_dict()
    for key, value in tuned.policy.state_dict().items():
        if key.rsplit(".", 1)[-1].startswith("act_"):
            assert torch.isnan(value)  # the grids come from the QAT batches
        else:
            assert torch.equal(value, src[key]), key
    assert tuned.iteration == 0

    lidar_only = small_cfg(f"init_from={source.run_dir / CHECKPOINT}", "env.task.route_waypoint_m=1.0")
    with pytest.raises(InputError, match="observations"):
        Runner.create(lidar_only, tmp_path / "c", quiet=True)
    wider = small_cfg(f"init_from={source.run_dir / CHECKPOINT}", 'policy.backbone_overrides={"hidden": 24}')
    with pytest.raises(InputError, match="different policy architecture"):
        Runner.create(wider, tmp_path / "d", quiet=True)


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("schedule.qat_fraction=1.5", "qat_fraction"),
        ("schedule.qat_weight_bits=2", "qat_weight_bits"),
        ("schedule.batch_large_mult=3", "must divide ppo.num_mini_batches"),
        ("schedule.batch_switch_at=2", "switch_at"),
    ],
)
def test_bad_schedule_settings_are_input_errors(override, words):
    with pytest.raises(InputError, match=words):
        small_cfg(override)


def test_a_run_that_cannot_start_leaves_no_folder(tmp_path):
    with pytest.raises(InputError, match="no checkpoint here"):
        Runner.create(small_cfg(f"init_from={tmp_path / 'missing.pt'}"), tmp_path / "runs", quiet=True)
    assert list((tmp_path / "runs").iterdir()) == []


def test_two_runs_started_in_the_same_second_get_their_own_folders(tmp_path, monkeypatch):
    import urbanverse.rl.runner as runner_module

    monkeypatch.setattr(
        runner_module, "run_name", lambda cfg: "pointnav-wheeled-lidar__mlp__0__20261203-134223"
    )
    first = Runner.create(small_cfg(), tmp_path, quiet=True)
    second = Runner.create(small_cfg(), tmp_path, quiet=True)
    assert first.run_dir.name == "pointnav-wheeled-lidar__mlp__0__20261203-134223"
    assert second.run_dir.name == first.run_dir.name + "-2"
    assert (second.run_dir / "config.json").is_file()
