"""PPO pieces against hand-computed cases: GAE, time-out bootstrapping, recurrent chunks, normalisers."""

from __future__ import annotations

import pytest
import torch

from urbanverse.rl.policy import ActorCritic, PolicyCfg, RunningNorm
from urbanverse.rl.ppo import PPO, PPOCfg
from urbanverse.rl.storage import RolloutStorage


def _fill(storage: RolloutStorage, rewards, values, dones) -> None:
    for t in range(storage.T):
        n = storage.N
        storage.add(
            obs=torch.zeros(n, 1),
            resets=torch.zeros(n, dtype=torch.bool),
            state=(),
            actions=torch.zeros(n, 1),
            mean=torch.zeros(n, 1),
            std=torch.ones(n, 1),
            log_prob=torch.zeros(n),
            values=torch.tensor(values[t]),
            rewards=torch.tensor(rewards[t]),
            dones=torch.tensor(dones[t]),
        )


def test_gae_matches_hand_computed_case():
    # One environment, three steps; the episode ends after step 1.
    st = RolloutStorage(3, 1, 1, 1, (), 1, "cpu")
    _fill(st, [[1.0], [2.0], [3.0]], [[0.5], [0.4], [0.3]], [[False], [True], [False]])
    st.compute_returns(torch.tensor([0.2]), gamma=0.9, lam=0.8)
    # t=2: 3 + 0.9*0.2 - 0.3 = 2.88; t=1 (done): 2 - 0.4 = 1.6; t=0: (1 + 0.9*0.4 - 0.5) + 0.72*1.6 = 2.012
    assert st.advantages[:, 0].tolist() == pytest.approx([2.012, 1.6, 2.88])
    assert st.returns[:, 0].tolist() == pytest.approx([2.512, 2.0, 3.18])


def test_time_out_bootstraps_from_final_observation_value():
    torch.manual_seed(0)
    policy = ActorCritic(4, 2, PolicyCfg(normalize_obs=False))
    cfg = PPOCfg(normalize_rewards=False, gamma=0.9)
    ppo = PPO(policy, cfg, num_envs=3, num_steps=1, device="cpu")
    obs = torch.randn(3, 4)
    _, next_state, pending = ppo.act(obs, (), torch.ones(3, dtype=torch.bool))
    final_obs = torch.randn(2, 4)
    extras = {
        "time_outs": torch.tensor([False, True, False]),
        "final_env_ids": torch.tensor([0, 1]),  # env 0 terminated (collision), env 1 timed out
        "final_obs": final_obs,
    }
    rewards = torch.tensor([1.0, 2.0, 3.0])
    ppo.process_step(pending, rewards, torch.tensor([True, True, False]), extras, next_state)
    with torch.no_grad():
        v_final = policy.value_step(final_obs[1:], ())
    stored = ppo.storage.rewards[0]
    assert stored[0] == pytest.approx(1.0)  # terminated: no bootstrap
    assert stored[1] == pytest.approx(2.0 + 0.9 * float(v_final[0]))
    assert stored[2] == pytest.approx(3.0)
    # GAE over the single step: the time-out does not bootstrap from the next (new) episode.
    ppo.storage.compute_returns(torch.tensor([100.0, 100.0, 100.0]), 0.9, 0.95)
    v = ppo.storage.values[0]
    assert ppo.storage.advantages[0, 1] == pytest.approx(float(stored[1] - v[1]), abs=1e-6)
    assert ppo.storage.advantages[0, 2] == pytest.approx(float(3.0 + 90.0 - v[2]), abs=1e-5)


@pytest.mark.parametrize("backbone", ["gru", "mlp"])
def test_recurrent_chunks_replay_the_rollout(backbone):
    """Minibatch sequences (stored chunk-start state + resets) reproduce the rollout's outputs exactly."""
    torch.manual_seed(1)
    n, t, d = 5, 12, 6
    # normalize_obs=False: rollouts update the running statistics, replays would see newer ones
    cfg = PolicyCfg(backbone=backbone, backbone_overrides={"hidden": 16}, normalize_obs=False)
    policy = ActorCritic(d, 2, cfg)
    ppo = PPO(policy, PPOCfg(chunk_len=4, normalize_rewards=False), n, t, "cpu")
    assert ppo.chunk_len == (4 if backbone == "gru" else 1)
    state = policy.initial_state(n)
    resets = torch.ones(n, dtype=torch.bool)
    gen = torch.Generator().manual_seed(2)
    for _ in range(t):
        obs = torch.randn(n, d, generator=gen)
        _, next_state, pending = ppo.act(obs, state, resets)
        dones = torch.rand(n, generator=gen) < 0.2  # episodes end inside chunks
        ppo.process_step(
            pending, torch.zeros(n), dones, {"time_outs": torch.zeros(n, dtype=torch.bool)}, next_state
        )
        state, resets = next_state, dones
    assert ppo.storage.resets[1:].any()
    count = 0
    with torch.no_grad():
        for mb in ppo.storage.minibatches(num_minibatches=3, num_epochs=1):
            mean, value = policy.forward_sequence(mb.obs, mb.state, mb.resets)
            torch.testing.assert_close(mean, mb.old_mean, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(value, mb.old_values, atol=1e-5, rtol=1e-5)
            count += mb.obs.shape[0] * mb.obs.shape[1]
    assert count == n * t


def test_recurrent_state_is_reset_at_episode_starts():
    torch.manual_seed(3)
    policy = ActorCritic(
        3, 2, PolicyCfg(backbone="gru", backbone_overrides={"hidden": 8}, normalize_obs=False)
    )
    obs = torch.randn(2, 3)
    warm = policy.step(obs, policy.initial_state(2))[2]
    fresh = policy.reset_state(warm, torch.tensor([True, False]))
    torch.testing.assert_close(fresh[0][0], policy.initial_state(1)[0][0])
    torch.testing.assert_close(fresh[0][1], warm[0][1])


def test_update_runs_and_adapts_learning_rate():
    torch.manual_seed(4)
    n, t = 8, 8
    policy = ActorCritic(4, 2, PolicyCfg())
    ppo = PPO(policy, PPOCfg(learning_rate=1e-3, num_mini_batches=2, num_learning_epochs=2), n, t, "cpu")
    obs, state, resets = torch.randn(n, 4), (), torch.ones(n, dtype=torch.bool)
    for _ in range(t):
        actions, state, pending = ppo.act(obs, state, resets)
        rewards = -actions.square().sum(-1)
        ppo.process_step(pending, rewards, torch.zeros(n, dtype=torch.bool), {}, state)
        resets = torch.zeros(n, dtype=torch.bool)
    ppo.compute_returns(obs, state, resets)
    before = [p.clone() for p in policy.parameters()]
    out = ppo.update()
    assert ppo.storage.step == 0
    assert out["train/learning_rate"] != 1e-3  # the KL rule moved it one way or the other
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters(), strict=True))


def test_running_norm_matches_batch_statistics():
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(300, 3, generator=gen) * torch.tensor([1.0, 5.0, 0.1]) + torch.tensor([2.0, -1.0, 0.0])
    norm = RunningNorm(3)
    for chunk in x.split(37):
        norm.update(chunk)
    torch.testing.assert_close(norm.mean, x.mean(0), atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(norm.var, x.var(0, unbiased=False), atol=1e-3, rtol=1e-3)
    y = norm(x)
    torch.testing.assert_close(y.mean(0), torch.zeros(3), atol=1e-3, rtol=0)
