"""Evaluation counts exactly N episodes per scene and reads per-episode metrics from the environment."""

from __future__ import annotations

import torch

from tests.rl.conftest import EXAMPLE
from urbanverse.rl.config import EnvSpec, TrainCfg
from urbanverse.rl.evaluate import evaluate, markdown_table
from urbanverse.rl.loaded_policy import LoadedPolicy
from urbanverse.sim import NavVecEnv
from urbanverse.sim.metrics import METRIC_NAMES


def test_episode_metrics_agree_with_the_episode_log():
    env = NavVecEnv(EnvSpec(num_envs=8).env_cfg((str(EXAMPLE),), 0, "cpu"))
    gen = torch.Generator().manual_seed(0)
    seen = 0
    for _ in range(200):
        _, _, _, extras = env.step(torch.rand(8, env.num_actions, generator=gen) * 2 - 1)
        if "episode_metrics" in extras:
            values = extras["episode_metrics"]
            assert values.shape == (extras["final_env_ids"].numel(), len(METRIC_NAMES))
            assert extras["episode_scene"].shape == extras["final_env_ids"].shape
            for j, name in enumerate(METRIC_NAMES):
                assert abs(float(values[:, j].mean()) - extras["log"][f"metrics/{name}"]) < 1e-6
            seen += values.shape[0]
    assert seen > 0


def test_evaluate_runs_exactly_n_episodes_per_scene():
    cfg = TrainCfg(scenes=(str(EXAMPLE),), env=EnvSpec(num_envs=4))
    gen = torch.Generator().manual_seed(1)

    def act(obs, state):
        return torch.rand(obs.shape[0], 2, generator=gen) * 2 - 1, state

    loaded = LoadedPolicy(cfg, act, lambda n: (), None, {})
    results, trajs, _ = evaluate(loaded, (str(EXAMPLE), str(EXAMPLE)), episodes=6, record=2)
    assert set(results["scenes"]) == {"example_0", "example_1"}
    assert [r["episodes"] for r in results["scenes"].values()] == [6, 6]
    assert results["overall"]["episodes"] == 12
    assert len(trajs) == 2 and all(len(t.poses) >= 2 for t in trajs)
    assert all(t.outcome in ("success", "collision", "time-out") for t in trajs)
    assert "| **overall** | 12 |" in markdown_table(results)
