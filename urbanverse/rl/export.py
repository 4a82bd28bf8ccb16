"""Export a trained actor for deployment (ONNX or TorchScript) and check it against PyTorch.

The exported graph is ``DeterministicActor``: raw observations ``obs`` (B, D) (normalisation and
any image encoder inside) and, for recurrent backbones, the backbone state tensors ``state_<i>``
in, the action ``action`` (B, A) clamped to [-1, 1] and ``next_state_<i>`` out; the batch
dimension is dynamic. The check runs the exported file and the PyTorch actor on the same
observations (real ones from rollouts in the training scenes when those folders exist, else
draws from the observation normaliser's statistics, uniform pixels for images), feeding the
state back for ``steps`` steps, and reports the largest absolute action difference. A ``.json``
card next to the file records the observation layout, shapes and the check.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from urbanverse.errors import InputError, require
from urbanverse.nn.qat import freeze_qat
from urbanverse.rl.loaded_policy import LoadedPolicy
from urbanverse.threads import torch_threads

FORMATS = ("onnx", "torchscript")


def _example_inputs(loaded: LoadedPolicy, batch: int) -> tuple[torch.Tensor, ...]:
    obs = torch.zeros(batch, loaded.meta["num_obs"])
    return (obs, *loaded.initial_state(batch))


def export_policy(loaded: LoadedPolicy, fmt: str, out: Path) -> Path:
    """Write the actor of ``loaded`` as ``fmt`` (``onnx`` or ``torchscript``) to ``out``."""
    if fmt not in FORMATS:
        raise InputError(f"--format: expected onnx or torchscript, got {fmt!r}")
    if loaded.actor is None:
        raise InputError("export needs a checkpoint of --algo ppo (SB3 models export through SB3 itself)")
    # A QAT-trained actor is exported as its int8 inference graph (constant grids, plain ops).
    actor = freeze_qat(loaded.actor.cpu()).eval()
    inputs = _example_inputs(loaded, 2)
    n_state = len(inputs) - 1
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "torchscript":
        with torch.no_grad():
            traced = torch.jit.trace(actor, inputs, check_trace=False)
        traced.save(str(out))
    else:
        require("onnx", "train")
        names_in = ["obs"] + [f"state_{i}" for i in range(n_state)]
        names_out = ["action"] + [f"next_state_{i}" for i in range(n_state)]
        batch = torch.export.Dim("batch", min=1, max=1 << 16)
        # forward(obs, *state): torch.export sees the state as one tuple argument
        shapes = ({0: batch}, tuple({0: batch} for _ in range(n_state))) if n_state else ({0: batch},)
        torch.onnx.export(
            actor,
            inputs,
            str(out),
            input_names=names_in,
            output_names=names_out,
            dynamic_shapes=shapes,
            dynamo=True,
            external_data=False,
        )
    return out


class _Runner:
    """Calls an exported file like the PyTorch actor: ``(obs, *state) -> (action, *state)``."""

    def __init__(self, path: Path, fmt: str):
        self.fmt = fmt
        if fmt == "torchscript":
            self.module = torch.jit.load(str(path))
        else:
            ort = require("onnxruntime", "train")
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
            self.names = [i.name for i in self.session.get_inputs()]

    def __call__(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.fmt == "torchscript":
            with torch.no_grad():
                out = self.module(*inputs)
        else:
            feed = {n: x.numpy() for n, x in zip(self.names, inputs, strict=True)}
            out = tuple(torch.from_numpy(o) for o in self.session.run(None, feed))
        return out if isinstance(out, tuple) else (out,)


def _check_observations(loaded: LoadedPolicy, batch: int, steps: int, seed: int) -> tuple[torch.Tensor, str]:
    """(steps, batch, D) observations: rollouts in the training scenes, else normaliser draws."""
    cfg = loaded.cfg
    if cfg.scenes and all((Path(s) / "scene.json").is_file() for s in cfg.scenes):
        from urbanverse.sim import NavVecEnv

        env = NavVecEnv(cfg.env.env_cfg(cfg.scenes, seed, "cpu", num_envs=batch))
        obs, state, seq = env.get_observations(), loaded.initial_state(batch), []
        for _ in range(steps):
            seq.append(obs.clone())
            actions, state = loaded.act(obs, state)
            obs, _, _, _ = env.step(actions)
        return torch.stack(seq), "rollouts in the training scenes"
    norm = loaded.actor.obs_norm
    g = torch.Generator().manual_seed(seed)
    if getattr(loaded.actor, "encoder", None) is None:
        noise = torch.randn(steps, batch, loaded.meta["num_obs"], generator=g)
        return norm.mean + noise * norm.var.sqrt(), "draws from the observation statistics"
    # An image encoder: uniform pixels in [0, 1], the other entries from their statistics.
    obs = torch.rand(steps, batch, loaded.meta["num_obs"], generator=g)
    noise = torch.randn(steps, batch, norm.mean.numel(), generator=g)
    obs[..., norm.vector_index()] = norm.mean + noise * norm.var.sqrt()
    return obs, "draws from the observation statistics (uniform pixels)"


def check_export(
    loaded: LoadedPolicy, path: Path, fmt: str, batch: int = 64, steps: int = 16, seed: int = 0
) -> dict:
    """Run ``path`` and the PyTorch actor on the same observations; returns the comparison figures."""
    obs_seq, source = _check_observations(loaded, batch, steps, seed)
    with torch_threads(1):  # like the ONNX Runtime session: one thread each, a fair timing
        return _compare(loaded, _Runner(path, fmt), obs_seq, source, path, fmt, batch, steps)


def _compare(loaded, runner, obs_seq, source, path, fmt, batch, steps) -> dict:
    actor = loaded.actor.cpu().eval()
    state_t = tuple(loaded.initial_state(batch))
    state_x = state_t
    with torch.no_grad():  # warm-up: first calls allocate and (TorchScript) optimise
        for _ in range(2):
            actor(obs_seq[0], *state_t)
            runner(obs_seq[0], *state_x)
    max_diff, t_torch, t_export = 0.0, 0.0, 0.0
    for obs in obs_seq:
        t0 = time.perf_counter()
        with torch.no_grad():
            ref = actor(obs, *state_t)
        ref = ref if isinstance(ref, tuple) else (ref,)
        t1 = time.perf_counter()
        got = runner(obs, *state_x)
        t2 = time.perf_counter()
        t_torch, t_export = t_torch + t1 - t0, t_export + t2 - t1
        max_diff = max(max_diff, float((ref[0] - got[0]).abs().max()))
        state_t, state_x = tuple(ref[1:]), tuple(got[1:])
    return {
        "format": fmt,
        "file": str(path),
        "bytes": Path(path).stat().st_size,
        "observations": f"{steps} steps x {batch} environments ({source})",
        "max_abs_action_diff": max_diff,
        "ms_per_batch_torch": 1e3 * t_torch / steps,
        "ms_per_batch_export": 1e3 * t_export / steps,
    }


def slim_checkpoint(checkpoint: Path, out: Path) -> Path:
    """Copy of a run's checkpoint with the policy weights, config and metadata only (no optimiser).

    ``urbanverse eval`` and ``urbanverse export`` read it like a full checkpoint; ``--resume`` cannot.
    """
    from urbanverse.rl.runner import atomic_save, load_checkpoint

    state = load_checkpoint(checkpoint)
    slim = {k: v for k, v in state.items() if k not in ("alg", "torch_rng", "generator")}
    slim["alg"] = {"policy": state["alg"]["policy"]}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_save(slim, out)
    return out


def write_card(loaded: LoadedPolicy, path: Path, check: dict) -> Path:
    """``<file>.json``: inputs, outputs, observation layout (images: ``image_shapes`` name -> H, W, C,
    channels-last pixels in [0, 1]), action meaning and the check."""
    n_state = len(loaded.initial_state(1))
    card = {
        "inputs": {
            "obs": ["batch", loaded.meta["num_obs"]],
            **{f"state_{i}": "backbone state" for i in range(n_state)},
        },
        "outputs": {"action": ["batch", loaded.meta["num_actions"]]},
        "obs_layout": loaded.meta.get("obs_layout"),
        "actions": "normalised velocity commands in [-1, 1] (wheeled: vx, wz; legged: vx, vy, wz)",
        "robot": loaded.cfg.env.robot,
        "sensor": loaded.cfg.env.sensor,
        "backbone": loaded.cfg.policy.backbone,
        "encoder": loaded.cfg.policy.encoder,
        "image_shapes": loaded.meta.get("image_shapes") or {},
        "check": check,
    }
    out = Path(str(path) + ".json")
    out.write_text(json.dumps(card, indent=2) + "\n")
    return out
