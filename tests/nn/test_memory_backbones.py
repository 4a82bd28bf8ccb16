"""SSE, SSE-H and GLA backbones: sequence form vs step form, aux loss, config checks."""

from __future__ import annotations

import pytest
import torch

from urbanverse.nn.backbones.base import reset_rows
from urbanverse.nn.backbones.gla import GLABackbone, GLABackboneCfg
from urbanverse.nn.backbones.sse import SSEBackbone, SSEBackboneCfg, SSEHBackbone

F64 = torch.float64
SMALL = dict(d_model=16, num_heads=2, head_k_dim=4, head_v_dim=6, chunk_size=4, backend="torch")

CASES = {
    "sse-gla": lambda: SSEBackbone(5, SSEBackboneCfg(top_k=2, **SMALL)),
    "sse-gdn": lambda: SSEBackbone(5, SSEBackboneCfg(top_k=1, variant="gdn", **SMALL)),
    "sse-h": lambda: SSEHBackbone(5, SSEBackboneCfg(num_layers=3, window=3, **SMALL)),
    "gla": lambda: GLABackbone(5, GLABackboneCfg(**SMALL)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_sequence_equals_steps(name: str) -> None:
    torch.manual_seed(0)
    model = CASES[name]().double()
    b, length = 3, 12
    no_reset = torch.zeros(b, 7, dtype=torch.bool)
    _, state0 = model.forward_sequence(torch.randn(b, 7, 5, dtype=F64), model.initial_state(b), no_reset)
    x = torch.randn(b, length, 5, dtype=F64)
    resets = torch.rand(b, length) < 0.2
    resets[0, 4] = resets[1, 0] = True
    y_seq, s_seq = model.forward_sequence(x, state0, resets)
    init, state, ys = model.initial_state(b), state0, []
    for t in range(length):
        state = reset_rows(state, resets[:, t], init)
        y, state = model.step(x[:, t], state)
        ys.append(y)
    y_step = torch.stack(ys, 1)
    assert y_seq.shape == (b, length, model.out_dim)
    assert ((y_seq - y_step).norm() / y_step.norm()).item() < 1e-6
    for a, c in zip(s_seq, state, strict=True):
        assert a.shape[0] == b and a.dtype == c.dtype
        assert ((a.double() - c.double()).norm() / max(c.double().norm().item(), 1e-30)).item() < 1e-6


def test_aux_loss_uniform_router() -> None:
    torch.manual_seed(0)
    model = SSEHBackbone(5, SSEBackboneCfg(num_layers=3, **SMALL))  # SSE, SWA, SSE
    for blk in model.blocks:
        if hasattr(blk.mixer, "router"):
            torch.nn.init.zeros_(blk.mixer.router.weight)
    model.forward_sequence(torch.randn(2, 6, 5), model.initial_state(2), torch.zeros(2, 6, dtype=torch.bool))
    assert model.aux_loss().item() == pytest.approx(0.01 * 2)  # two SSE layers, each loss 1
    assert GLABackbone(5, GLABackboneCfg(**SMALL)).aux_loss().item() == 0.0


def test_defaults_and_training_step() -> None:
    torch.manual_seed(0)
    model = SSEBackbone(7)
    assert model.out_dim == 128
    y, state = model.forward_sequence(
        torch.randn(2, 20, 7), model.initial_state(2), torch.zeros(2, 20, dtype=torch.bool)
    )
    (y.square().mean() + model.aux_loss()).backward()
    assert all(p.grad is not None for p in model.parameters())
    assert all(s.dtype == torch.float32 or s.dtype == torch.bool for s in state)


def test_cfg_validation() -> None:
    with pytest.raises(ValueError, match="attn_layers"):
        SSEBackboneCfg(num_layers=2, attn_layers=(2,))
    with pytest.raises(ValueError, match="num_layers >= 2"):
        SSEHBackbone(4, SSEBackboneCfg(num_layers=1))
    with pytest.raises(ValueError, match="num_partitions"):
        SSEBackboneCfg(num_partitions=0)
