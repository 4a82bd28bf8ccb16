"""Data-parallel PPO on 2 gloo ranks (CPU): the collectives, the update's parity with one process, the CLI.

Ranks are started with ``urbanverse.rl.distributed.launch`` (torch's elastic launcher), which
returns rank 0's result; the rank functions below compare across ranks with collectives and
return plain numbers the tests assert on. Starting ranks costs seconds (each imports torch and
the simulator), so one launch serves the collective and parity tests.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from tests.rl.conftest import EXAMPLE
from urbanverse.errors import InputError
from urbanverse.rl.config import load_cfg, save_cfg
from urbanverse.rl.distributed import Sync, launch, process_group, rank_scenes
from urbanverse.rl.jobs import resume_training
from urbanverse.rl.policy import ActorCritic, PolicyCfg
from urbanverse.rl.ppo import PPO, PPOCfg, ReturnNormalizer

TINY = ["--num-envs", "8", "--set", "num_steps_per_env=16", "--quiet"]


# ------------------------------------------------------------------------------------- rank functions
def _collectives(sync: Sync) -> dict:
    """Each helper of ``ProcessGroupSync`` on values that differ by rank; returns what rank 0 saw."""
    r = sync.rank
    out = {"world": sync.world_size}
    out["rows"] = sync.gather_rows(torch.full((2, 3), float(r))).tolist()
    out["mean"] = sync.mean(torch.tensor([1.0 + r, 10.0 * r])).tolist()
    out["sum"] = sync.sum(torch.tensor([1.0 + r])).tolist()
    out["max"] = sync.max(0.5 + r)
    x = torch.arange(6.0) + 6 * r  # all ranks together: 0..11
    out["mean_std"] = [float(v) for v in sync.mean_std(x)]
    lin = torch.nn.Linear(3, 2)
    lin.weight.grad = torch.full_like(lin.weight, float(r))
    lin.bias.grad = torch.full_like(lin.bias, 2.0 * r)
    sync.mean_grads(list(lin.parameters()))
    out["grads"] = [lin.weight.grad.unique().tolist(), lin.bias.grad.unique().tolist()]
    torch.manual_seed(r)  # different models on the two ranks
    policy = ActorCritic(5, 2, PolicyCfg())
    policy.obs_norm.update(torch.randn(7, 5))
    try:
        sync.check_identical(policy)
        out["divergence_seen"] = False
    except RuntimeError:
        out["divergence_seen"] = True
    sync.broadcast_module(policy)
    sync.check_identical(policy)  # raises if the broadcast left a difference
    ref = torch.nn.utils.parameters_to_vector(policy.parameters())
    torch.manual_seed(0)
    out["is_rank0_model"] = torch.equal(
        ref, torch.nn.utils.parameters_to_vector(ActorCritic(5, 2, PolicyCfg()).parameters())
    )
    out["object"] = sync.broadcast_object({"from": r})
    out["objects"] = sync.gather_objects(r * 10)
    return out


def _max_diff(xs, ys) -> float:
    """The largest absolute elementwise difference between two sequences of tensors."""
    return max((x - y).abs().max().item() for x, y in zip(xs, ys, strict=True))


def _gather_envs(x: torch.Tensor, dim: int) -> torch.Tensor:
    """``x`` of both ranks concatenated along its environment axis ``dim``."""
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.contiguous())
    return torch.cat(parts, dim)


def _update_parity(sync: Sync, backbone: str, envs: int, steps: int) -> dict:
    """One PPO iteration on 2 ranks x ``envs`` environments against one process over their
    concatenated batch (2 * ``envs`` environments): the normaliser statistics, the stored rewards,
    the gradients and the parameters after the update. Returns the largest differences seen."""
    cfg = PPOCfg(num_learning_epochs=2, num_mini_batches=1, chunk_len=4)
    num_obs, num_actions = 6, 2
    torch.manual_seed(0)
    policy = ActorCritic(num_obs, num_actions, PolicyCfg(backbone=backbone))
    ppo = PPO(policy, cfg, envs, steps, "cpu", torch.Generator().manual_seed(sync.rank), sync)
    data = torch.Generator().manual_seed(123)  # the batch of all 2 * envs environments, on both ranks
    mine = slice(sync.rank * envs, (sync.rank + 1) * envs)
    ref_obs_norm = copy.deepcopy(policy.obs_norm)
    ref_reward_norm = ReturnNormalizer(2 * envs, cfg.gamma)
    state = policy.initial_state(envs)
    resets = torch.ones(envs, dtype=torch.bool)
    ref_rewards = []
    for _ in range(steps):
        obs = 3 * torch.randn(2 * envs, num_obs, generator=data) + 1
        rewards = 50 * torch.randn(2 * envs, generator=data)
        dones = torch.rand(2 * envs, generator=data) < 0.1
        ref_obs_norm.update(obs)
        ref_rewards.append(ref_reward_norm(rewards, dones))
        actions, next_state, pending = ppo.act(obs[mine], state, resets)
        ppo.process_step(pending, rewards[mine], dones[mine], {}, next_state)
        state, resets = next_state, dones[mine]
    ppo.compute_returns(obs[mine], state, resets)
    out = {
        "obs_norm": _max_diff(policy.obs_norm.buffers(), ref_obs_norm.buffers()),
        "reward_scale": abs(ppo.reward_norm.scale - ref_reward_norm.scale),
        "rewards": (_gather_envs(ppo.storage.rewards, 1) - torch.stack(ref_rewards)).abs().max().item(),
    }
    # The one-process reference: the same model over both ranks' rollouts, no collectives.
    ref_policy = copy.deepcopy(policy)
    ref = PPO(ref_policy, cfg, 2 * envs, steps, "cpu", torch.Generator().manual_seed(0), Sync())
    for name in ("obs", "actions", "mean", "std", "log_prob", "values", "rewards", "dones", "resets"):
        getattr(ref.storage, name).copy_(_gather_envs(getattr(ppo.storage, name), 1))
    for buf, mine_buf in zip(ref.storage.chunk_states, ppo.storage.chunk_states, strict=True):
        buf.copy_(_gather_envs(mine_buf, 1))
    ref.storage.step = steps
    ref.storage.advantages.copy_(_gather_envs(ppo.storage.advantages, 1))
    ref.storage.returns = _gather_envs(ppo.storage.returns, 1)
    losses, ref_losses = ppo.update(), ref.update()
    out["grad"] = _max_diff((p.grad for p in policy.parameters()), (p.grad for p in ref_policy.parameters()))
    out["grad_scale"] = max(p.grad.abs().max().item() for p in ref_policy.parameters())
    out["param"] = _max_diff(policy.parameters(), ref_policy.parameters())
    out["lr"] = abs(losses["train/learning_rate"] - ref_losses["train/learning_rate"])
    out["value_loss"] = abs(losses["loss/value"] - ref_losses["loss/value"])
    sync.check_identical(policy)
    return out


def _rank_checks() -> dict:
    """The collectives, then the update parity for a stateless and a recurrent backbone."""
    with process_group("cpu") as sync:
        out = {"collectives": _collectives(sync)}
        for backbone in ("mlp", "gru"):
            out[backbone] = _update_parity(sync, backbone, envs=4, steps=16)
        return out


@pytest.fixture(scope="module")
def rank_checks() -> dict:
    return launch(_rank_checks, 2)


# ---------------------------------------------------------------------------------------------- tests
def test_rank_scenes_split_or_share():
    scenes = ("a", "b", "c", "d", "e")
    assert rank_scenes(scenes, 0, 2) == ("a", "c", "e") and rank_scenes(scenes, 1, 2) == ("b", "d")
    assert rank_scenes(("a",), 1, 2) == ("a",)


def test_collectives_on_two_gloo_ranks(rank_checks):
    out = rank_checks["collectives"]
    assert out["world"] == 2
    assert out["rows"] == [[0.0] * 3] * 2 + [[1.0] * 3] * 2
    assert out["mean"] == [1.5, 5.0] and out["sum"] == [3.0] and out["max"] == 1.5
    ref = torch.arange(12.0)
    assert out["mean_std"] == pytest.approx([ref.mean().item(), ref.std().item()], rel=1e-6)
    assert out["grads"] == [[0.5], [1.0]]
    assert out["divergence_seen"] and out["is_rank0_model"]
    assert out["object"] == {"from": 0} and out["objects"] == [0, 10]


@pytest.mark.parametrize("backbone", ["mlp", "gru"])
def test_two_ranks_update_like_one_process_over_the_concatenated_batch(rank_checks, backbone):
    """The strong form of "2 ranks x E environments learn like 1 rank x 2E": same normaliser
    statistics, same stored (normalised) rewards, same gradient in every minibatch step and so the
    same parameters after an update (two epochs, Adam), up to float32 summation order."""
    out = rank_checks[backbone]
    assert out["obs_norm"] < 1e-5 and out["reward_scale"] < 1e-9 and out["rewards"] < 1e-5
    assert out["grad_scale"] > 1e-3  # a gradient worth comparing
    assert out["grad"] < 1e-5 * max(1.0, out["grad_scale"])
    assert out["param"] < 1e-6 and out["lr"] == 0.0 and out["value_loss"] < 1e-5


def test_a_rank_input_error_reaches_the_caller(tmp_path):
    with pytest.raises(InputError, match="not a run folder"):
        launch(resume_training, 2, tmp_path / "missing")


def _rows(run_dir: Path) -> list[dict]:
    with (run_dir / "progress.csv").open() as f:
        return list(csv.DictReader(f))


def test_cli_nproc_2_trains_one_run_folder_and_resumes(tmp_path):
    from typer.testing import CliRunner

    from urbanverse.cli import app

    runner = CliRunner()
    root = tmp_path / "runs"
    args = ["train", "--scenes", str(EXAMPLE), "--nproc", "2", "--steps", "512", "--runs-dir", str(root)]
    result = runner.invoke(app, args + TINY + ["--json"])
    assert result.exit_code == 0, result.output
    (run_dir,) = root.iterdir()
    assert sorted(p.name for p in run_dir.iterdir() if not p.name.startswith(".")) == [
        "checkpoint.pt",
        "checkpoints",
        "config.json",
        "progress.csv",
        "tb",
    ]
    # 2 ranks x 8 environments x 16 steps = 256 env-steps per iteration
    assert [(r["iteration"], r["env_steps"]) for r in _rows(run_dir)] == [("1", "256"), ("2", "512")]
    assert [p.name for p in (run_dir / "checkpoints").iterdir()] == ["ckpt_000002.pt"]
    state = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    assert state["world_size"] == 2 and len(state["rank_rngs"]) == 1
    assert state["env_steps"] == 512
    # Saving checks that the ranks hold identical models (Sync.check_identical): the run got here.
    cfg = load_cfg(run_dir / "config.json")
    save_cfg(dataclasses.replace(cfg, total_steps=1024), run_dir / "config.json")
    result = runner.invoke(app, ["train", "--resume", str(run_dir), "--nproc", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert [r["env_steps"] for r in _rows(run_dir)] == ["256", "512", "768", "1024"]
    resumed = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    assert resumed["iteration"] == 4
    assert not torch.equal(resumed["alg"]["policy"]["log_std"], state["alg"]["policy"]["log_std"])
