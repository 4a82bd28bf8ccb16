"""Step form vs sequence form (float64, resets mid-sequence, non-zero initial state) and the registry."""

import importlib.util

import pytest
import torch

from urbanverse.nn.backbones import BACKBONE_NAMES, backbone_config, make_backbone, reset_rows
from urbanverse.nn.backbones.base import Backbone

B, L, IN = 3, 7, 5
SMALL = {
    "mlp": {"hidden": 16},
    "gru": {"hidden": 16, "num_layers": 2},
    "lstm": {"hidden": 16, "num_layers": 2},
    "ultramem": {
        "hidden": 16,
        "num_blocks": 2,
        "memory": {"knum": 8, "kdim": 8, "vdim": 8, "pre_vdim": 8, "knn": 4},
    },
}
PART_A_SMALL = {"d_model": 16, "num_heads": 2, "head_k_dim": 8, "head_v_dim": 8}
PART_A = {
    "gla": "urbanverse.nn.backbones.gla",
    "sse": "urbanverse.nn.backbones.sse",
    "sse-h": "urbanverse.nn.backbones.sse",
}


def _stepwise(
    bb: Backbone, x: torch.Tensor, state: tuple, resets: torch.Tensor
) -> tuple[torch.Tensor, tuple]:
    initial = bb.initial_state(x.shape[0])
    outs = []
    for t in range(x.shape[1]):
        state = reset_rows(state, resets[:, t], initial)
        y, state = bb.step(x[:, t], state)
        outs.append(y)
    return torch.stack(outs, dim=1), state


def _rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return ((a - b).norm() / b.norm().clamp_min(1e-300)).item()


def _check_step_equals_sequence(bb: Backbone, strict_state: bool = True) -> None:
    """``strict_state=False`` compares final states by what they do: the outputs of a continuation."""
    torch.manual_seed(1)
    bb = bb.double()
    x = torch.randn(B, L, IN, dtype=torch.float64)
    resets = torch.zeros(B, L, dtype=torch.bool)
    resets[0, 3] = resets[1, 1] = resets[1, 5] = resets[2, 0] = True
    state0 = tuple(torch.randn_like(s) if s.is_floating_point() else s for s in bb.initial_state(B))
    y_step, s_step = _stepwise(bb, x, state0, resets)
    y_seq, s_seq = bb.forward_sequence(x, state0, resets)
    assert y_seq.shape == (B, L, bb.out_dim)
    assert _rel_err(y_seq, y_step) < 1e-6
    assert len(s_seq) == len(s_step)
    for a, b in zip(s_seq, s_step, strict=True):
        assert a.shape[0] == B
        assert not strict_state or _rel_err(a, b) < 1e-6
    x2 = torch.randn(B, 3, IN, dtype=torch.float64)
    no_resets = torch.zeros(B, 3, dtype=torch.bool)
    y2_seq, _ = bb.forward_sequence(x2, s_seq, no_resets)
    y2_step, _ = _stepwise(bb, x2, s_step, no_resets)
    assert _rel_err(y2_seq, y2_step) < 1e-6
    if state0:  # the non-zero initial state must matter for rows without a reset at t=0
        y_zero, _ = bb.forward_sequence(x, bb.initial_state(B), resets)
        assert not torch.allclose(y_zero[0, 0], y_seq[0, 0])


@pytest.mark.parametrize("name", ["mlp", "gru", "lstm", "ultramem"])
def test_step_equals_sequence(name: str) -> None:
    torch.manual_seed(0)
    _check_step_equals_sequence(make_backbone(name, IN, **SMALL[name]))


@pytest.mark.parametrize("name", sorted(PART_A))
def test_part_a_backbones_through_registry(name: str) -> None:
    if importlib.util.find_spec(PART_A[name]) is None:
        pytest.skip(f"{PART_A[name]} not present")
    torch.manual_seed(0)
    bb = make_backbone(name, IN, **PART_A_SMALL)
    assert isinstance(bb, Backbone)
    _check_step_equals_sequence(bb, strict_state=False)


def test_recurrent_reset_restarts_episode() -> None:
    """After a reset, outputs equal a fresh run from the initial state on the same inputs."""
    torch.manual_seed(0)
    bb = make_backbone("gru", IN, hidden=8).double()
    x = torch.randn(1, L, IN, dtype=torch.float64)
    resets = torch.zeros(1, L, dtype=torch.bool)
    resets[0, 4] = True
    state0 = tuple(torch.randn_like(s) for s in bb.initial_state(1))
    y, _ = bb.forward_sequence(x, state0, resets)
    y_fresh, _ = bb.forward_sequence(x[:, 4:], bb.initial_state(1), resets[:, 4:] & False)
    torch.testing.assert_close(y[:, 4:], y_fresh)


def test_registry_errors() -> None:
    with pytest.raises(ValueError, match="valid choices: mlp, gru, lstm, gla, sse, sse-h, ultramem"):
        make_backbone("transformer", IN)
    with pytest.raises(ValueError, match="valid fields: .*hidden"):
        make_backbone("mlp", IN, widht=3)
    with pytest.raises(ValueError, match=r"UltraMemMLPBackboneCfg\.memory; valid fields"):
        make_backbone("ultramem", IN, memory={"slots": 3})
    with pytest.raises(ValueError, match="knn"):
        make_backbone("ultramem", IN, memory={"knum": 2, "key_expand": 1, "knn": 4})


def test_registry_builds_configs() -> None:
    assert BACKBONE_NAMES == ("mlp", "gru", "lstm", "gla", "sse", "sse-h", "ultramem")
    cfg = backbone_config("ultramem", hidden=32, memory={"knum": 8})
    assert cfg.hidden == 32 and cfg.memory.knum == 8 and cfg.memory.kdim == 32
    for name in ("mlp", "gru", "lstm"):
        bb = make_backbone(name, IN)
        assert bb.out_dim == 128 and bb.in_dim == IN
        y, state = bb.step(torch.randn(2, IN), bb.initial_state(2))
        assert y.shape == (2, 128)
        assert all(s.shape[0] == 2 for s in state)
