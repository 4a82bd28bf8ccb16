"""Chunked GLA / gated delta rule ops against their recurrent references (float64, grads included)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from urbanverse.nn.ops.delta_rule import (
    chunk_gated_delta_rule,
    gated_delta_rule,
    naive_recurrent_gated_delta_rule,
)
from urbanverse.nn.ops.gla import chunk_gla, gla, naive_recurrent_gla

B, L, H, DK, DV = 2, 13, 2, 4, 3
F64 = torch.float64


def _inputs(seed: int, variant: str) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(B, L, H, DK, generator=gen, dtype=F64)
    k = torch.randn(B, L, H, DK, generator=gen, dtype=F64)
    out = {"q": q, "k": k, "v": torch.randn(B, L, H, DV, generator=gen, dtype=F64)}
    if variant == "gla":
        out["g"] = F.logsigmoid(torch.randn(B, L, H, DK, generator=gen, dtype=F64))
    else:
        out["k"] = F.normalize(k, dim=-1)
        out["g"] = F.logsigmoid(torch.randn(B, L, H, generator=gen, dtype=F64))
        out["beta"] = torch.rand(B, L, H, generator=gen, dtype=F64)
    out["initial_state"] = torch.randn(B, H, DK, DV, generator=gen, dtype=F64)
    return out


def _resets() -> torch.Tensor:
    r = torch.zeros(B, L, dtype=torch.bool)
    r[0, 4] = r[0, 5] = r[0, 11] = True  # consecutive resets and one in the last (padded) chunk
    r[1, 0] = r[1, 8] = True  # reset at t=0 discards the incoming state
    return r


OPS = {
    "gla": (naive_recurrent_gla, chunk_gla),
    "gdn": (naive_recurrent_gated_delta_rule, chunk_gated_delta_rule),
}


def _call(fn: Callable, inp: dict[str, torch.Tensor], **kw: object) -> tuple[torch.Tensor, torch.Tensor]:
    args = [inp[n] for n in ("q", "k", "v", "g", "beta") if n in inp]
    return fn(*args, initial_state=inp["initial_state"], **kw)


@pytest.mark.parametrize("variant", ["gla", "gdn"])
@pytest.mark.parametrize("chunk", [1, 4, 16])
def test_chunk_matches_naive_with_grads(variant: str, chunk: int) -> None:
    naive, chunked = OPS[variant]
    inp = {n: t.requires_grad_() for n, t in _inputs(0, variant).items()}
    resets = _resets()
    o1, s1 = _call(naive, inp, resets=resets)
    o2, s2 = _call(chunked, inp, resets=resets, chunk_size=chunk)
    torch.testing.assert_close(o2, o1, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(s2, s1, rtol=1e-10, atol=1e-12)
    gen = torch.Generator().manual_seed(1)
    wo, ws = torch.randn(o1.shape, generator=gen, dtype=F64), torch.randn(s1.shape, generator=gen, dtype=F64)
    names = list(inp)
    g1 = torch.autograd.grad((o1 * wo).sum() + (s1 * ws).sum(), [inp[n] for n in names])
    g2 = torch.autograd.grad((o2 * wo).sum() + (s2 * ws).sum(), [inp[n] for n in names])
    for name, a, b in zip(names, g1, g2, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-9, atol=1e-11, msg=f"grad of {name}")


@pytest.mark.parametrize("variant", ["gla", "gdn"])
def test_reset_equals_fresh_run(variant: str) -> None:
    """A reset at t gives the same outputs from t on as a fresh run on the tail from a zero state."""
    naive, chunked = OPS[variant]
    inp = _inputs(2, variant)
    resets = torch.zeros(B, L, dtype=torch.bool)
    resets[:, 6] = True
    o, s = _call(chunked, inp, resets=resets, chunk_size=4)
    tail = {n: t[:, 6:] for n, t in inp.items() if n != "initial_state"}
    tail["initial_state"] = torch.zeros_like(inp["initial_state"])
    o_tail, s_tail = _call(naive, tail)
    torch.testing.assert_close(o[:, 6:], o_tail)
    torch.testing.assert_close(s, s_tail)


def test_gla_single_step_by_hand() -> None:
    inp = _inputs(3, "gla")
    one = {n: t[:, :1] for n, t in inp.items() if n != "initial_state"}
    o, s = naive_recurrent_gla(one["q"], one["k"], one["v"], one["g"], initial_state=inp["initial_state"])
    s_ref = (
        inp["initial_state"] * one["g"][:, 0].exp()[..., None]
        + one["k"][:, 0, ..., None] * one["v"][:, 0, :, None, :]
    )
    o_ref = (one["q"][:, 0, ..., None] * s_ref).sum(-2) * DK**-0.5
    torch.testing.assert_close(s, s_ref)
    torch.testing.assert_close(o[:, 0], o_ref)


def test_delta_rule_single_step_by_hand() -> None:
    inp = _inputs(4, "gdn")
    q, k, v, g, beta = (inp[n][0, 0, 0] for n in ("q", "k", "v", "g", "beta"))
    s0 = inp["initial_state"][0, 0]
    s_ref = g.exp() * (torch.eye(DK, dtype=F64) - beta * torch.outer(k, k)) @ s0 + beta * torch.outer(k, v)
    o, s = naive_recurrent_gated_delta_rule(
        *(inp[n][:1, :1] for n in ("q", "k", "v", "g", "beta")), initial_state=inp["initial_state"][:1]
    )
    torch.testing.assert_close(s[0, 0], s_ref)
    torch.testing.assert_close(o[0, 0, 0], s_ref.T @ q * DK**-0.5)


def test_chunk_gla_strong_decay_is_finite_in_float32() -> None:
    inp = {n: t.float() for n, t in _inputs(5, "gla").items()}
    inp["g"] = torch.full_like(inp["g"], -60.0)  # e^{-b} over a chunk would overflow float32
    o, s = _call(chunk_gla, inp, chunk_size=16)
    o_ref, s_ref = _call(naive_recurrent_gla, inp)
    assert torch.isfinite(o).all() and torch.isfinite(s).all()
    torch.testing.assert_close(o, o_ref, rtol=1e-4, atol=1e-5)


def test_dispatch_on_cpu() -> None:
    inp = _inputs(6, "gla")
    o1, _ = _call(gla, inp, backend="torch")
    o2, _ = _call(chunk_gla, inp)
    torch.testing.assert_close(o1, o2)
    with pytest.raises(RuntimeError, match="flash-linear-attention"):
        _call(gla, inp, backend="fla")
    dinp = _inputs(6, "gdn")
    torch.testing.assert_close(_call(gated_delta_rule, dinp)[0], _call(chunk_gated_delta_rule, dinp)[0])
