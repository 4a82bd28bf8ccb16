"""Gated linear attention (GLA) with a per-key-dimension log-decay.

Recurrence per head, state ``S`` of shape ``(Dk, Dv)``::

    S_t = Diag(exp(g_t)) S_{t-1} + k_t^T v_t        o_t = scale * q_t S_t

Shapes (batch-first, like fla with ``head_first=False``): ``q, k`` ``(B, L, H, Dk)``,
``v`` ``(B, L, H, Dv)``, log-decay ``g`` ``(B, L, H, Dk)`` (natural log, ``g <= 0``),
state ``(B, H, Dk, Dv)``, ``resets`` ``(B, L)`` bool (True: state set to zero before token t).
Outputs ``o`` ``(B, L, H, Dv)`` in ``v``'s dtype; the state is kept in float32 or wider.

Three entry points: :func:`naive_recurrent_gla` (reference, a loop over tokens),
:func:`chunk_gla` (chunked-parallel torch form) and :func:`gla` (dispatch: fla's Triton
kernel on CUDA when ``fla`` is installed, else :func:`chunk_gla`).
"""

from __future__ import annotations

import math

import torch

from urbanverse.nn.ops._common import (
    acc_dtype,
    check_resets,
    chunk_segment_masks,
    initial_or_zeros,
    to_chunks,
)
from urbanverse.nn.ops.fla_dispatch import Backend, fla_usable, run_fla_varlen


def gla_step(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, state: torch.Tensor, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """One recurrent step. ``q, k, g``: ``(B, H, Dk)``; ``v``: ``(B, H, Dv)``; ``state``: ``(B, H, Dk, Dv)``.

    Returns the output ``(B, H, Dv)`` (state dtype) and the new state.
    """
    dt = state.dtype
    state = torch.exp(g.to(dt))[..., None] * state + k.to(dt)[..., None] * v.to(dt)[..., None, :]
    out = torch.einsum("bhk,bhkv->bhv", q.to(dt) * scale, state)
    return out, state


def naive_recurrent_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference GLA: a plain loop over tokens. Returns ``o`` ``(B, L, H, Dv)`` and the final state."""
    b, length, h, dk = q.shape
    scale = dk**-0.5 if scale is None else scale
    resets = check_resets(resets, b, length, q.device)
    state = initial_or_zeros(initial_state, (b, h, dk, v.shape[-1]), acc_dtype(q.dtype), q.device)
    outs = []
    for t in range(length):
        state = torch.where(resets[:, t, None, None, None], torch.zeros_like(state), state)
        o, state = gla_step(q[:, t], k[:, t], v[:, t], g[:, t], state, scale)
        outs.append(o)
    return torch.stack(outs, dim=1).to(v.dtype), state


def chunk_gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
    chunk_size: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunked-parallel GLA, exact (same maths as :func:`naive_recurrent_gla`).

    With ``b`` the in-chunk cumulative log-decay, a chunk of C tokens computes
    ``o = (q * e^b) S_prev + A v`` with ``A[i, j] = sum_d q_id k_jd e^(b_id - b_jd)`` for
    ``j <= i`` in the same segment, and ``S_new = Diag(e^{b_C}) S_prev + (k * e^{b_C - b})^T v``.
    ``A`` is ``((q e^{b}) (k e^{-b})^T)`` (two matmuls) while ``e^{-b}`` stays far below the
    dtype's maximum (in-chunk decay above ``-log(max)/2``: -44 nats in float32); otherwise it is
    formed pairwise over the key dimension (a ``(C, C, Dk)`` tensor per chunk), which never
    forms ``e^{-b}``, so strong decays cannot overflow. Resets become masks:
    the incoming state reaches only positions before the first reset of the chunk and ``A``
    keeps only same-segment pairs. Cost O(L C (Dk + Dv)) per head (O(L C Dk) memory when pairwise).

    Returns ``o`` ``(B, L, H, Dv)`` and the final state ``(B, H, Dk, Dv)``.
    """
    b, length, h, dk = q.shape
    dv = v.shape[-1]
    scale = dk**-0.5 if scale is None else scale
    dt = acc_dtype(q.dtype)
    resets = check_resets(resets, b, length, q.device)
    state = initial_or_zeros(initial_state, (b, h, dk, dv), dt, q.device)
    c = chunk_size
    # (B, n, C, H, D) -> (B, H, n, C, D)
    qc, kc, vc, gc = (to_chunks(t.to(dt), c).permute(0, 3, 1, 2, 4) for t in (q * scale, k, v, g))
    same, carry = chunk_segment_masks(resets, c)  # (B, n, C, C), (B, n, C)
    same, carry = same[:, None], carry[:, None]  # broadcast over heads
    bcum = torch.cumsum(gc, dim=3)  # (B, H, n, C, Dk)
    if bcum.numel() == 0 or bcum.min() > -0.5 * math.log(torch.finfo(dt).max):
        # e^{-b} cannot overflow: factorised form, two matmuls
        attn = ((qc * torch.exp(bcum)) @ (kc * torch.exp(-bcum)).transpose(-1, -2)) * same
    else:  # strong decay: pairwise over Dk, never forms e^{-b}
        diff = bcum[..., :, None, :] - bcum[..., None, :, :]  # (B, H, n, C, C, Dk): b_i - b_j
        decay = torch.exp(torch.where(same[..., None], diff, torch.full_like(diff, -torch.inf)))
        attn = torch.einsum("bhnid,bhnjd,bhnijd->bhnij", qc, kc, decay)
    o_intra = attn @ vc  # (B, H, n, C, Dv)
    q_in = qc * torch.exp(bcum) * carry[..., None]  # reads of the incoming state
    b_last = bcum[..., -1:, :]  # (B, H, n, 1, Dk)
    last_same = same[..., -1, :]  # (B, 1, n, C): same segment as the chunk's last position
    k_out = kc * torch.exp(b_last - bcum) * last_same[..., None]
    state_decay = torch.exp(b_last[..., 0, :]) * carry[..., -1:]  # (B, H, n, Dk)
    o_inter = []
    for i in range(qc.shape[2]):
        o_inter.append(q_in[:, :, i] @ state)
        state = state_decay[:, :, i, :, None] * state + k_out[:, :, i].transpose(-1, -2) @ vc[:, :, i]
    o = o_intra + torch.stack(o_inter, dim=2)  # (B, H, n, C, Dv)
    o = o.permute(0, 2, 3, 1, 4).reshape(b, -1, h, dv)[:, :length]
    return o.to(v.dtype), state


def gla(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
    chunk_size: int = 16,
    backend: Backend = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """GLA over a sequence; arguments as :func:`chunk_gla`.

    ``backend="auto"`` uses ``fla.ops.gla.chunk_gla`` when the tensors are on CUDA and fla and
    Triton import, else :func:`chunk_gla`; ``"torch"`` forces the torch form, ``"fla"`` fla.
    """
    if fla_usable(backend, q):
        from fla.ops.gla import chunk_gla as fla_chunk_gla  # optional dependency, CUDA only

        return run_fla_varlen(fla_chunk_gla, (q, k, v, g), scale, initial_state, resets)
    return chunk_gla(
        q, k, v, g, scale=scale, initial_state=initial_state, resets=resets, chunk_size=chunk_size
    )
