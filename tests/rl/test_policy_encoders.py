"""Image encoders composed with policy cores: observation split, vector-only normalisation, step vs
sequence, PPO updates, muP, ONNX export, and a training run's checkpoint rebuilt, evaluated and quantised."""

from __future__ import annotations

import pytest
import torch

from tests.rl.conftest import EXAMPLE
from urbanverse.nn.qat import QATLinear
from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides
from urbanverse.rl.export import check_export, export_policy
from urbanverse.rl.image_obs import ObsLayout
from urbanverse.rl.loaded_policy import LoadedPolicy, actor_act_fn
from urbanverse.rl.policy import ActorCritic, DeterministicActor, PolicyCfg
from urbanverse.rl.ppo import PPO, PPOCfg
from urbanverse.rl.schedule import ScheduleCfg, prepare_actor_qat

VECTOR = {"goal_b": 2, "velocity_b": 3, "last_action": 2}
SMALL_CORES = {
    "mlp": {"hidden": 16},
    "gru": {"hidden": 16},
    "sse": {"d_model": 16, "num_heads": 2, "head_k_dim": 8, "head_v_dim": 8},
    "ultramem": {"hidden": 16, "memory": {"knum": 8, "kdim": 8, "vdim": 8, "pre_vdim": 8, "knn": 4}},
}
SMALL_CNN = {"channels": [4, 8, 8], "out_dim": 16}


def layout(**images: tuple[int, int, int]) -> tuple[int, dict[str, slice], dict]:
    """``num_obs``, ``obs_layout`` and ``image_shapes`` of the env's order: images, then the vector."""
    obs_layout, start = {}, 0
    for name, size in [*((n, h * w * c) for n, (h, w, c) in images.items()), *VECTOR.items()]:
        obs_layout[name] = slice(start, start + size)
        start += size
    return start, obs_layout, images


def policy(core: str = "mlp", encoder: str = "cnn", **cfg) -> ActorCritic:
    num_obs, obs_layout, shapes = layout(depth=(16, 16, 1))
    overrides = SMALL_CNN if encoder == "cnn" else {}
    pcfg = PolicyCfg(
        backbone=core,
        backbone_overrides=SMALL_CORES[core],
        encoder=encoder,
        encoder_overrides=overrides,
        **cfg,
    )
    return ActorCritic(num_obs, 2, pcfg, obs_layout, shapes)


def test_layout_stacks_images_of_one_size_and_keeps_the_rest_as_the_vector():
    num_obs, obs_layout, shapes = layout(rgb=(8, 8, 3), depth=(8, 8, 1))
    split = ObsLayout(num_obs, obs_layout, shapes)
    (group,) = split.groups
    assert (
        group.names == ("rgb", "depth") and group.channels == (3, 1) and (group.height, group.width) == (8, 8)
    )
    assert split.vector_ranges == ((256, 263),) and split.vector_dim == 7

    num_obs, obs_layout, shapes = layout(rgb=(8, 8, 3), depth=(6, 4, 1))
    assert [g.names for g in ObsLayout(num_obs, obs_layout, shapes).groups] == [("rgb",), ("depth",)]

    with pytest.raises(ValueError, match="8x8x1 needs 64 entries"):
        ObsLayout(num_obs, obs_layout, {"rgb": (8, 8, 1)})
    with pytest.raises(ValueError, match="not in the observation layout"):
        ObsLayout(num_obs, obs_layout, {"camera": (2, 2, 1)})
    with pytest.raises(ValueError, match="needs image observations"):
        ObsLayout(num_obs, obs_layout, {})


def test_images_reach_the_encoder_channels_first_and_centred():
    num_obs, obs_layout, shapes = layout(rgb=(4, 6, 3), depth=(4, 6, 1))
    p = ActorCritic(num_obs, 2, PolicyCfg(encoder="impala"), obs_layout, shapes)
    obs = torch.rand(5, num_obs)
    images = p.encoder.images(obs, p.encoder.layout.groups[0])
    rgb = obs[:, obs_layout["rgb"]].reshape(5, 4, 6, 3).permute(0, 3, 1, 2)
    depth = obs[:, obs_layout["depth"]].reshape(5, 1, 4, 6)
    assert torch.equal(images, torch.cat([rgb, depth], 1) - 0.5)


def test_running_normalisation_covers_the_vector_part_only():
    p = policy()
    num_obs = p.num_obs
    assert p.obs_norm.mean.numel() == sum(VECTOR.values())
    obs = torch.rand(64, num_obs) * 5
    p.obs_norm.update(obs)  # PPO feeds it whole observations
    vector = obs[:, -7:]
    assert torch.allclose(p.obs_norm.mean, vector.mean(0), atol=1e-5)
    assert torch.allclose(p.obs_norm(obs), p.obs_norm.forward(torch.cat([obs[:, :-7] * 0, vector], 1)))
    # The pixels change the features only through the encoder; the vector part reaches the core normalised.
    feats = p.encoder(obs, p.obs_norm)
    assert feats.shape == (64, 16 + 7)
    assert torch.allclose(feats[:, 16:], (vector - p.obs_norm.mean) / (p.obs_norm.var + 1e-8).sqrt())


@pytest.mark.parametrize("core", sorted(SMALL_CORES))
def test_step_equals_forward_sequence_with_resets(core):
    torch.manual_seed(0)
    p = policy(core).double()
    p.obs_norm.update(torch.rand(32, p.num_obs, dtype=torch.float64) * 3)
    b, length = 3, 6
    obs = torch.rand(b, length, p.num_obs, dtype=torch.float64)
    resets = torch.zeros(b, length, dtype=torch.bool)
    resets[0, 2] = resets[2, 4] = True
    state0 = p.initial_state(b)
    mean_seq, value_seq = p.forward_sequence(obs, state0, resets)
    state, means, values = state0, [], []
    for t in range(length):
        state_before = p.reset_state(state, resets[:, t])
        mean, value, state = p.step(obs[:, t], state_before)
        means.append(mean)
        values.append(value)
        assert torch.allclose(p.value_step(obs[:, t], state_before), value, atol=1e-12)
    assert torch.allclose(mean_seq, torch.stack(means, 1), atol=1e-9)
    assert torch.allclose(value_seq, torch.stack(values, 1), atol=1e-9)
    actor = DeterministicActor(p)
    out = actor(obs[:, 0], *actor.initial_state(b))
    action = out[0] if isinstance(out, tuple) else out
    assert torch.allclose(action, means[0].clamp(-1, 1), atol=1e-12)


def test_shared_encoder_learns_from_both_losses_and_a_separate_one_stays_float_under_qat():
    p = policy()
    assert p.critic_encoder is None
    _, value, _ = p.step(torch.rand(4, p.num_obs), ())
    value.sum().backward()
    assert p.encoder.encoders[0].trunk[0].weight.grad.abs().sum() > 0  # the critic's gradient reaches it

    p = prepare_actor_qat(policy(share_encoder=False), ScheduleCfg(qat_fraction=0.5))
    assert isinstance(p.encoder.encoders[0].proj[0], QATLinear)
    assert type(p.critic_encoder.encoders[0].proj[0]) is torch.nn.Linear
    mean, value, _ = p.step(torch.rand(4, p.num_obs), ())
    assert mean.shape == (4, 2) and value.shape == (4,)


@pytest.mark.parametrize("core", ["mlp", "gru"])
def test_a_ppo_update_trains_the_encoder(core):
    torch.manual_seed(0)
    p = policy(core)
    n, t = 6, 8
    ppo = PPO(p, PPOCfg(chunk_len=4, num_mini_batches=2, num_learning_epochs=1), n, t, "cpu")
    before = p.encoder.encoders[0].trunk[0].weight.detach().clone()
    obs, state, resets = torch.rand(n, p.num_obs), p.initial_state(n), torch.ones(n, dtype=torch.bool)
    for _ in range(t):
        actions, state, pending = ppo.act(obs, state, resets)
        ppo.process_step(pending, -actions.square().sum(-1), torch.zeros(n, dtype=torch.bool), {}, state)
        obs, resets = torch.rand(n, p.num_obs), torch.zeros(n, dtype=torch.bool)
    ppo.compute_returns(obs, state, resets)
    losses = ppo.update()
    assert all(torch.isfinite(torch.tensor(v)) for v in losses.values())
    assert not torch.equal(before, p.encoder.encoders[0].trunk[0].weight)


def test_mup_scales_the_core_and_leaves_the_encoder_at_the_base_rate():
    p = policy(mup_base_width=8)
    groups = p.optimizer_params(1e-3)
    mult = {id(q): g["lr_mult"] for g in groups for q in g["params"]}
    assert {mult[id(q)] for q in p.encoder.parameters()} == {1.0}
    assert mult[id(p.actor_backbone.net[2].weight)] == pytest.approx(0.5)  # hidden 16 over base 8


def test_policy_cfg_validates_the_encoder():
    assert PolicyCfg(encoder="none").encoder is None
    with pytest.raises(ValueError, match="valid choices: cnn, nature, impala or none"):
        PolicyCfg(encoder="vit")
    with pytest.raises(ValueError, match="valid fields"):
        PolicyCfg(encoder="cnn", encoder_overrides={"depth": 3})
    with pytest.raises(ValueError, match="without an encoder"):
        PolicyCfg(encoder_overrides={"out_dim": 3})
    with pytest.raises(ValueError, match="observation layout"):
        ActorCritic(10, 2, PolicyCfg(encoder="cnn"))


def test_onnx_export_of_an_encoder_policy_matches_pytorch(tmp_path):
    torch.manual_seed(0)
    p = policy("gru")
    p.obs_norm.update(torch.rand(32, p.num_obs) * 4)
    actor = DeterministicActor(p).eval()
    cfg = TrainCfg(env=EnvSpec(sensor="depth"), policy=p.cfg)
    meta = {"num_obs": p.num_obs, "num_actions": 2, "obs_layout": None, "image_shapes": p.image_shapes}
    loaded = LoadedPolicy(cfg, actor_act_fn(actor), actor.initial_state, actor, meta)
    path = export_policy(loaded, "onnx", tmp_path / "policy.onnx")
    check = check_export(loaded, path, "onnx", batch=8, steps=4)
    assert check["max_abs_action_diff"] < 1e-5
    assert "uniform pixels" in check["observations"]


def test_a_depth_run_checkpoint_rebuilds_evaluates_and_quantises(tmp_path):
    from urbanverse.rl.evaluate import load_policy
    from urbanverse.rl.quantize import quantize_policy
    from urbanverse.rl.runner import CHECKPOINT, Runner, load_checkpoint

    cfg = TrainCfg(
        scenes=(str(EXAMPLE),),
        env=EnvSpec(sensor="depth", num_envs=4),
        policy=PolicyCfg(encoder="cnn", encoder_overrides=SMALL_CNN),
        total_steps=32,
        num_steps_per_env=8,
    )
    cfg = apply_overrides(cfg, ["env.depth.height=16", "env.depth.width=24"])
    runner = Runner.create(cfg, tmp_path, quiet=True)
    runner.learn()
    assert runner.run_dir.name.split("__")[1] == "cnn-mlp"
    state = load_checkpoint(runner.run_dir / CHECKPOINT)
    assert state["image_shapes"] == {"depth": [16, 24, 1]}

    loaded = load_policy(runner.run_dir)
    trained = DeterministicActor(runner.policy).state_dict()
    assert loaded.actor.state_dict().keys() == trained.keys()
    assert all(torch.equal(v, trained[k]) for k, v in loaded.actor.state_dict().items())
    obs = runner.env.get_observations()
    actions, _ = loaded.act(obs, ())
    assert torch.equal(actions, DeterministicActor(runner.policy).eval()(obs))

    int8, summary = quantize_policy(loaded, (str(EXAMPLE),), bits=8, calibration_steps=8)
    assert summary["quantized_layers"] == 1 + 2 + 1  # encoder projection, two MLP layers, action head
    q_actions, _ = int8.act(obs, ())
    assert (q_actions - actions).abs().max() < 0.05
