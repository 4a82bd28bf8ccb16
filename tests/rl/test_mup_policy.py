"""muP in PPO training (``policy.mup_base_width``): off is the standard parameterisation bit for bit;
on, width-dependent matrices learn at ``base / width`` and activations stay flat in width."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from tests.rl.conftest import EXAMPLE
from urbanverse.errors import InputError
from urbanverse.nn.backbones import make_backbone
from urbanverse.nn.mup import coord_check, coord_spread
from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides, from_dict, to_dict
from urbanverse.rl.evaluate import load_policy
from urbanverse.rl.policy import ActorCritic, PolicyCfg, RunningNorm
from urbanverse.rl.ppo import PPO, PPOCfg
from urbanverse.rl.runner import Runner

NUM_OBS, NUM_ACTIONS = 6, 2


def _standard_actor_critic(cfg: PolicyCfg) -> nn.Module:
    """The actor-critic as built before muP existed: same modules, same init calls in the same order."""
    m = nn.Module()
    m.obs_norm = RunningNorm(NUM_OBS, clip=cfg.obs_clip)
    m.actor_backbone = make_backbone(cfg.backbone, NUM_OBS, **cfg.backbone_overrides)
    m.critic_backbone = make_backbone(cfg.backbone, NUM_OBS, **cfg.backbone_overrides)
    m.actor_head = nn.Linear(m.actor_backbone.out_dim, NUM_ACTIONS)
    m.critic_head = nn.Linear(m.critic_backbone.out_dim, 1)
    m.log_std = nn.Parameter(torch.full((NUM_ACTIONS,), float(torch.log(torch.tensor(cfg.init_noise_std)))))
    nn.init.orthogonal_(m.actor_head.weight, gain=0.01)
    nn.init.zeros_(m.actor_head.bias)
    nn.init.orthogonal_(m.critic_head.weight, gain=1.0)
    nn.init.zeros_(m.critic_head.bias)
    return m


def _rollout_and_update(ppo: PPO, seed: int, n: int = 8, t: int = 8) -> dict[str, float]:
    """One synthetic rollout (reward: -|action|^2) and one PPO update, all draws from ``seed``."""
    torch.manual_seed(seed)
    obs, state, resets = torch.randn(n, NUM_OBS), (), torch.ones(n, dtype=torch.bool)
    for _ in range(t):
        actions, state, pending = ppo.act(obs, state, resets)
        ppo.process_step(pending, -actions.square().sum(-1), torch.zeros(n, dtype=torch.bool), {}, state)
        obs, resets = obs + 0.1 * actions.sum(-1, keepdim=True), torch.zeros(n, dtype=torch.bool)
    ppo.compute_returns(obs, state, resets)
    return ppo.update()


def _ppo(policy: ActorCritic, lr: float = 1e-3) -> PPO:
    cfg = PPOCfg(learning_rate=lr, num_mini_batches=2, num_learning_epochs=2)
    return PPO(policy, cfg, 8, 8, "cpu", torch.Generator().manual_seed(7))


def test_without_mup_init_optimizer_and_first_update_are_the_standard_ones_bit_for_bit():
    cfg = PolicyCfg(backbone_overrides={"hidden": 16})
    assert cfg.mup_base_width is None and not cfg.mup
    torch.manual_seed(0)
    policy = ActorCritic(NUM_OBS, NUM_ACTIONS, cfg)
    torch.manual_seed(0)
    reference = _standard_actor_critic(cfg)
    assert policy.state_dict().keys() == reference.state_dict().keys()
    for k, v in reference.state_dict().items():
        assert torch.equal(policy.state_dict()[k], v), k

    standard = copy.deepcopy(policy)
    ppo, ppo_standard = _ppo(policy), _ppo(standard)
    ppo_standard.optimizer = torch.optim.Adam(standard.parameters(), lr=1e-3)  # the one-group optimiser
    assert ppo.optimizer.state_dict()["param_groups"] == ppo_standard.optimizer.state_dict()["param_groups"]
    assert [id(p) for p in ppo.optimizer.param_groups[0]["params"]] == [id(p) for p in policy.parameters()]

    out, out_standard = _rollout_and_update(ppo, 3), _rollout_and_update(ppo_standard, 3)
    assert out == out_standard
    for (name, a), b in zip(policy.named_parameters(), standard.parameters(), strict=True):
        assert torch.equal(a, b), name
    assert [g["lr"] for g in ppo.optimizer.param_groups] == [ppo.learning_rate]


def test_mup_scales_the_learning_rates_of_width_dependent_matrices_and_zeroes_the_heads():
    lr, mult = 1e-3, 32 / 128
    policy = ActorCritic(
        NUM_OBS, NUM_ACTIONS, PolicyCfg(backbone_overrides={"hidden": 128}, mup_base_width=32)
    )
    assert policy.cfg.width_mult == 4.0
    for head in (policy.actor_head, policy.critic_head):
        assert head.weight.abs().max() == 0 and head.bias.abs().max() == 0
    rng = torch.get_rng_state()
    ppo = _ppo(policy, lr)
    assert torch.equal(torch.get_rng_state(), rng)  # building the base-width twin draws nothing

    def lr_of() -> dict[str, float]:
        by_id = {id(p): g["lr"] for g in ppo.optimizer.param_groups for p in g["params"]}
        return {name: by_id[id(p)] for name, p in policy.named_parameters()}

    got = lr_of()
    assert len(got) == len(list(policy.parameters()))
    for side in ("actor", "critic"):
        assert got[f"{side}_backbone.net.0.weight"] == lr  # input weights: fan-in fixed
        assert got[f"{side}_backbone.net.2.weight"] == pytest.approx(lr * mult)  # hidden matrix
        assert got[f"{side}_head.weight"] == pytest.approx(lr * mult)  # readout
        assert got[f"{side}_backbone.net.0.bias"] == got[f"{side}_backbone.net.2.bias"] == lr
        assert got[f"{side}_head.bias"] == lr
    assert got["log_std"] == lr

    _rollout_and_update(ppo, 3)
    assert ppo.learning_rate != lr  # the KL rule moved the base rate; the per-group ratios hold
    for g in ppo.optimizer.param_groups:
        assert g["lr"] == pytest.approx(ppo.learning_rate * g["lr_mult"])
    state = ppo.state_dict()
    resumed = _ppo(ActorCritic(NUM_OBS, NUM_ACTIONS, policy.cfg), lr)
    resumed.load_state_dict(state)
    assert [(g["lr"], g["lr_mult"]) for g in resumed.optimizer.param_groups] == [
        (g["lr"], g["lr_mult"]) for g in ppo.optimizer.param_groups
    ]


class _BothHeads(nn.Module):
    """``obs (B, D) -> (B, A + 1)``: action mean and value, for the coordinate check."""

    def __init__(self, policy: ActorCritic):
        super().__init__()
        self.policy = policy

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean, value, _ = self.policy.step(x, ())
        return torch.cat([mean, value[:, None]], -1)


def _spread(mup: bool) -> dict[str, float]:
    lr = 1e-2

    def build(width: int):
        cfg = PolicyCfg(
            backbone_overrides={"hidden": width}, normalize_obs=False, mup_base_width=32 if mup else None
        )
        policy = ActorCritic(16, NUM_ACTIONS, cfg)
        params = policy.optimizer_params(lr)
        return _BothHeads(policy), params if mup else [{"params": list(params), "lr": lr}]

    torch.manual_seed(1)
    x, y = torch.randn(64, 16), torch.randn(64, NUM_ACTIONS + 1)
    return coord_spread(coord_check(build, (32, 256), x, y, steps=2))


def test_mup_keeps_first_step_activations_of_a_wider_policy_of_the_same_order():
    mup, standard = _spread(True), _spread(False)
    assert len(mup) == 6  # two Linear layers per backbone and the two heads
    assert max(mup.values()) < 1.5, mup
    assert min(standard["policy.actor_head"], standard["policy.critic_head"]) > 3.0, standard


def test_mup_base_width_is_a_set_override_and_round_trips():
    cfg = apply_overrides(
        TrainCfg(), ["policy.mup_base_width=64", 'policy.backbone_overrides={"hidden": 256}']
    )
    assert cfg.policy.mup_base_width == 64 and cfg.policy.width_mult == 4.0
    assert from_dict(TrainCfg, to_dict(cfg)) == cfg
    assert apply_overrides(cfg, ["policy.mup_base_width=null"]).policy.mup_base_width is None
    old = to_dict(TrainCfg())
    del old["policy"]["mup_base_width"]  # a config saved before the option existed
    assert from_dict(TrainCfg, old).policy.mup_base_width is None


@pytest.mark.parametrize(
    "overrides, words",
    [
        (["policy.mup_base_width=0"], ">= 1"),
        (["policy.backbone=gru", "policy.mup_base_width=32"], "muP covers the backbones"),
        (["algo=sb3-ppo", "policy.mup_base_width=32"], "--algo ppo only"),
    ],
)
def test_bad_mup_settings_are_input_errors(overrides, words):
    with pytest.raises(InputError, match=words):
        apply_overrides(TrainCfg(), overrides)


def test_a_mup_run_trains_and_loads_for_evaluation(tmp_path):
    cfg = TrainCfg(
        scenes=(str(EXAMPLE),),
        env=EnvSpec(num_envs=4),
        total_steps=2 * 32,
        num_steps_per_env=8,
        save_interval=2,
    )
    cfg = apply_overrides(cfg, ['policy.backbone_overrides={"hidden": 64}', "policy.mup_base_width=16"])
    runner = Runner.create(cfg, tmp_path, quiet=True)
    row = runner.learn()
    assert row["iteration"] == 2
    mults = sorted({g["lr_mult"] for g in runner.alg.optimizer.param_groups})
    assert mults == [0.25, 1.0]
    loaded = load_policy(runner.run_dir)
    assert loaded.cfg.policy.mup_base_width == 16
    actions, _ = loaded.act(torch.zeros(3, loaded.meta["num_obs"]), ())
    assert actions.shape == (3, loaded.meta["num_actions"])
