"""Sliding-window attention: step vs sequence, resets, and a brute-force reference."""

from __future__ import annotations

import torch

from urbanverse.nn.backbones.base import reset_rows
from urbanverse.nn.layers.swa import SlidingWindowAttention, SWACfg

F64 = torch.float64
W = 4


def _layer() -> SlidingWindowAttention:
    torch.manual_seed(0)
    return SlidingWindowAttention(SWACfg(d_model=8, num_heads=2, head_dim=3, window=W)).double()


def _steps(layer: SlidingWindowAttention, x: torch.Tensor, state: tuple, resets: torch.Tensor) -> tuple:
    zero, ys = layer.initial_state(x.shape[0], "cpu", F64), []
    for t in range(x.shape[1]):
        state = reset_rows(state, resets[:, t], zero)
        y, state = layer.step(x[:, t], state)
        ys.append(y)
    return torch.stack(ys, 1), state


def test_sequence_equals_steps_with_incoming_cache() -> None:
    layer = _layer()
    b, length = 3, 11
    _, warm = layer.forward_sequence(
        torch.randn(b, 2, 8, dtype=F64), layer.initial_state(b, "cpu", F64), None
    )
    assert warm[2].any() and not warm[2].all()  # partially filled cache
    x = torch.randn(b, length, 8, dtype=F64)
    resets = torch.zeros(b, length, dtype=torch.bool)
    resets[0, 2] = resets[1, 0] = resets[2, 9] = True
    y_seq, s_seq = layer.forward_sequence(x, warm, resets)
    y_step, s_step = _steps(layer, x, warm, resets)
    torch.testing.assert_close(y_seq, y_step, rtol=1e-9, atol=1e-12)
    for a, c in zip(s_seq, s_step, strict=True):
        torch.testing.assert_close(a, c)


def test_matches_brute_force_attention() -> None:
    layer = _layer()
    b, length = 2, 9
    x = torch.randn(b, length, 8, dtype=F64)
    resets = torch.zeros(b, length, dtype=torch.bool)
    resets[0, 5] = True
    y, _ = layer.forward_sequence(x, layer.initial_state(b, "cpu", F64), resets)
    q, k, v = layer.qkv(x).unflatten(-1, (3, 2, 3)).unbind(-3)
    episode = resets.long().cumsum(1)
    for row in range(b):
        for t in range(length):
            keys = [s for s in range(max(0, t - W + 1), t + 1) if episode[row, s] == episode[row, t]]
            att = torch.softmax((q[row, t][None] * k[row, keys]).sum(-1) / 3**0.5, dim=0)  # (n, H)
            ref = layer.o_proj((att[..., None] * v[row, keys]).sum(0).flatten())
            torch.testing.assert_close(y[row, t], ref)


def test_reset_blocks_attention_across_episodes() -> None:
    layer = _layer()
    x = torch.randn(1, 8, 8, dtype=F64)
    resets = torch.zeros(1, 8, dtype=torch.bool)
    resets[0, 5] = True
    _, full = layer.forward_sequence(
        torch.randn(1, 6, 8, dtype=F64), layer.initial_state(1, "cpu", F64), None
    )
    y, _ = layer.forward_sequence(x, full, resets)
    x2 = x.clone()
    x2[:, :5] = torch.randn(1, 5, 8, dtype=F64)  # change everything before the reset
    y2, _ = layer.forward_sequence(x2, layer.initial_state(1, "cpu", F64), resets)
    torch.testing.assert_close(y[:, 5:], y2[:, 5:])
    assert not torch.allclose(y[:, :5], y2[:, :5])
