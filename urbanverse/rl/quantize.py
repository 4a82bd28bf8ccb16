"""Post-training quantisation of a trained actor (int8 or int4 weights, int8 activations).

Every Linear of the deterministic actor (backbone and action head) becomes a
``urbanverse.nn.qat.QATLinear``: per-output-channel symmetric weights and a per-tensor int8 grid
for its input. The input grids are calibrated (running min/max) while the quantised actor drives
``calibration_steps`` steps of rollouts in the given scenes, with other seeds than the
evaluation's. The result is rebuilt from the int8 export (``export_int8`` -> ``load_int8``), so
what is evaluated is exactly what a deployment would load. The observation normalisation stays
in float (it is a per-feature affine map that folds into the first layer's input grid), and so
do the convolutions of an image encoder (its projection Linear is quantised like the others).
"""

from __future__ import annotations

import copy
import dataclasses
import io

import torch

from urbanverse.nn.qat import QATCfg, export_int8, load_int8, prepare_qat
from urbanverse.rl.loaded_policy import LoadedPolicy, actor_act_fn
from urbanverse.rl.policy import DeterministicActor
from urbanverse.rl.runner import build_policy
from urbanverse.rl.schedule import qat_enabled
from urbanverse.sim import NavVecEnv

#: Seed offset of the calibration rollouts from the evaluation seed.
CALIBRATION_SEED_OFFSET = 7919


def _calibrate(actor, loaded: LoadedPolicy, scenes: tuple[str, ...], steps: int, seed: int, device: str):
    """Drive rollouts with ``actor`` in training mode so its activation observers see real inputs."""
    env = NavVecEnv(loaded.cfg.env.env_cfg(scenes, seed, device, num_envs=8 * len(scenes)))
    try:
        act = actor_act_fn(actor)
        obs, state = env.get_observations(), actor.initial_state(env.num_envs, device)
        actor.train()
        for _ in range(steps):
            actions, state = act(obs, state)
            obs, _, dones, _ = env.step(actions)
            if state and bool(dones.any()):
                fresh = actor.initial_state(env.num_envs, device)
                state = tuple(
                    torch.where(dones.reshape(-1, *[1] * (s.dim() - 1)), s0, s)
                    for s, s0 in zip(state, fresh, strict=True)
                )
    finally:
        actor.eval()
        env.close()


def float_actor(loaded: LoadedPolicy) -> DeterministicActor:
    """A fresh float actor of ``loaded``'s architecture (plain Linears, the target of ``load_int8``)."""
    cfg = dataclasses.replace(loaded.cfg, schedule=dataclasses.replace(loaded.cfg.schedule, qat_fraction=0.0))
    meta = loaded.meta
    policy = build_policy(
        cfg, meta["num_obs"], meta["num_actions"], meta.get("obs_layout"), meta.get("image_shapes")
    )
    return DeterministicActor(policy)


def quantize_policy(
    loaded: LoadedPolicy,
    scenes: tuple[str, ...],
    bits: int = 8,
    calibration_steps: int = 200,
    seed: int = 1,
    device: str = "cpu",
) -> tuple[LoadedPolicy, dict]:
    """The quantised twin of ``loaded`` (a PPO checkpoint) and a summary: bits, calibration steps,
    quantised layers, and the size of the int8 state dict against the float one (bytes).

    A policy trained with QAT (``schedule.qat_fraction``) is exported as trained: its weight
    bits and its learned activation grids, no calibration. Any other policy is quantised after
    training (PTQ) with ``bits`` and grids calibrated on ``calibration_steps`` rollout steps.
    """
    if loaded.actor is None:
        raise ValueError("quantize_policy: needs a PPO checkpoint (SB3 models are not supported)")
    if bits not in (4, 8):
        raise ValueError(f"quantize_policy: bits must be 8 or 4, got {bits}")
    qat_trained = qat_enabled(loaded.actor)
    if qat_trained:
        trained_bits = loaded.cfg.schedule.qat_weight_bits
        if bits != trained_bits:
            raise ValueError(
                f"quantize_policy: the policy was trained with int{trained_bits} QAT, not int{bits}"
            )
        state, calibration_steps = export_int8(loaded.actor), 0
    else:
        cfg = QATCfg(weight_bits=bits, observer="minmax", keep_float=("obs_norm",))
        calibrating = prepare_qat(copy.deepcopy(loaded.actor), cfg, enabled=True)
        _calibrate(calibrating, loaded, scenes, calibration_steps, seed + CALIBRATION_SEED_OFFSET, device)
        state = export_int8(calibrating)
    actor = load_int8(float_actor(loaded).to(device), state).eval()

    def size(sd: dict) -> int:
        buf = io.BytesIO()
        torch.save(sd, buf)
        return buf.tell()

    summary = {
        "weight_bits": bits,
        "method": "qat" if qat_trained else "ptq",
        "activation_bits": 8,
        "calibration_steps": calibration_steps,
        "quantized_layers": sum(k.endswith(".weight_int8") for k in state),
        "state_bytes_float": size(loaded.actor.state_dict()),
        "state_bytes_int8": size(state),
    }
    quantized = dataclasses.replace(
        loaded,
        act=actor_act_fn(actor),
        initial_state=lambda n: actor.initial_state(n, device),
        actor=actor,
        meta=dict(loaded.meta, quantization=summary),
    )
    return quantized, summary
