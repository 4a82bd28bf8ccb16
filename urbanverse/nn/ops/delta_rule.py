"""Gated delta rule (GDN, Gated DeltaNet) with a per-head scalar log-decay.

Recurrence per head, state ``S`` of shape ``(Dk, Dv)``::

    S_t = a_t (I - beta_t k_t k_t^T) S_{t-1} + beta_t k_t^T v_t,   a_t = exp(g_t)
    o_t = scale * q_t S_t

Shapes: ``q, k`` ``(B, L, H, Dk)`` (callers usually L2-normalise them), ``v`` ``(B, L, H, Dv)``,
log-decay ``g`` ``(B, L, H)`` (natural log, ``g <= 0``), ``beta`` ``(B, L, H)`` in [0, 1],
state ``(B, H, Dk, Dv)``, ``resets`` ``(B, L)`` bool (True: state set to zero before token t).

Entry points: :func:`naive_recurrent_gated_delta_rule` (reference loop),
:func:`chunk_gated_delta_rule` (chunked WY/UT-transform form) and
:func:`gated_delta_rule` (dispatch to fla on CUDA when installed, else the torch chunk form).
"""

from __future__ import annotations

import torch

from urbanverse.nn.ops._common import (
    acc_dtype,
    check_resets,
    chunk_segment_masks,
    initial_or_zeros,
    to_chunks,
)
from urbanverse.nn.ops.fla_dispatch import Backend, fla_usable, run_fla_varlen


def gated_delta_step(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    state: torch.Tensor,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step. ``q, k``: ``(B, H, Dk)``; ``v``: ``(B, H, Dv)``; ``g, beta``: ``(B, H)``.

    ``state``: ``(B, H, Dk, Dv)``. Returns the output ``(B, H, Dv)`` and the new state.
    """
    dt = state.dtype
    k, beta = k.to(dt), beta.to(dt)
    state = torch.exp(g.to(dt))[..., None, None] * state
    v_old = torch.einsum("bhk,bhkv->bhv", k, state)
    state = state + k[..., None] * (beta[..., None] * (v.to(dt) - v_old))[..., None, :]
    return torch.einsum("bhk,bhkv->bhv", q.to(dt) * scale, state), state


def naive_recurrent_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference gated delta rule: a loop over tokens. Returns ``o`` ``(B, L, H, Dv)`` and the final state."""
    b, length, h, dk = q.shape
    scale = dk**-0.5 if scale is None else scale
    resets = check_resets(resets, b, length, q.device)
    state = initial_or_zeros(initial_state, (b, h, dk, v.shape[-1]), acc_dtype(q.dtype), q.device)
    outs = []
    for t in range(length):
        state = torch.where(resets[:, t, None, None, None], torch.zeros_like(state), state)
        o, state = gated_delta_step(q[:, t], k[:, t], v[:, t], g[:, t], beta[:, t], state, scale)
        outs.append(o)
    return torch.stack(outs, dim=1).to(v.dtype), state


def chunk_gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
    chunk_size: int = 16,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunked gated delta rule via the WY / UT transform, exact.

    Inside a chunk write ``S_j = a_j S_{j-1} + k_j d_j^T`` with the pseudo-values
    ``d_j = beta_j (v_j - a_j S_{j-1}^T k_j)``. With ``G_ij = e^{b_i - b_j}`` (``b`` the in-chunk
    cumulative log-decay, pairs masked to ``j <= i`` in one segment) the ``d`` solve the unit
    lower-triangular system ``(I + A) d = beta v - beta e^{b} K S_0`` with
    ``A_ij = beta_i G_ij k_i.k_j`` (``j < i``), i.e. ``d = U - W S_0`` where
    ``U = T beta V``, ``W = T beta e^{b} K``, ``T = (I + A)^{-1}`` (UT transform, done by a
    triangular solve for all chunks at once). Then per chunk, sequentially over chunks::

        o = (q e^{b}) S_0 + (Q K^T * G) d        S_C = e^{b_C} S_0 + (K * G_C)^T d

    Resets zero the reach of ``S_0`` (``e^{b}`` masked after a reset) and cut ``G``.
    Returns ``o`` ``(B, L, H, Dv)`` and the final state ``(B, H, Dk, Dv)``.
    """
    b, length, h, dk = q.shape
    dv = v.shape[-1]
    scale = dk**-0.5 if scale is None else scale
    dt = acc_dtype(q.dtype)
    resets = check_resets(resets, b, length, q.device)
    state = initial_or_zeros(initial_state, (b, h, dk, dv), dt, q.device)
    c = chunk_size
    qc, kc, vc = (to_chunks(t.to(dt), c).permute(0, 3, 1, 2, 4) for t in (q * scale, k, v))  # (B,H,n,C,D)
    gc, bc = (to_chunks(t.to(dt), c).permute(0, 3, 1, 2) for t in (g, beta))  # (B, H, n, C)
    same, carry = chunk_segment_masks(resets, c)
    same, carry = same[:, None], carry[:, None]  # (B, 1, n, C, C), (B, 1, n, C)
    bcum = torch.cumsum(gc, dim=-1)
    diff = bcum[..., :, None] - bcum[..., None, :]
    gam = torch.exp(torch.where(same, diff, torch.full_like(diff, -torch.inf)))  # (B, H, n, C, C)
    kk = kc @ kc.transpose(-1, -2)
    a_mat = (bc[..., :, None] * gam * kk).tril(-1)
    eye = torch.eye(c, dtype=dt, device=q.device)
    decay_in = torch.exp(bcum) * carry  # reach of the incoming state, (B, H, n, C)
    rhs = torch.cat([bc[..., None] * vc, (bc * decay_in)[..., None] * kc], dim=-1)
    uw = torch.linalg.solve_triangular(eye + a_mat, rhs, upper=False, unitriangular=True)
    u, w = uw[..., :dv], uw[..., dv:]
    qk = (qc @ kc.transpose(-1, -2)) * gam
    q_in = qc * decay_in[..., None]
    k_out = kc * gam[..., -1, :, None]  # (B, H, n, C, Dk): e^{b_C - b_j}, last segment only
    state_decay = decay_in[..., -1]  # (B, H, n)
    outs = []
    for i in range(qc.shape[2]):
        d = u[:, :, i] - w[:, :, i] @ state
        outs.append(q_in[:, :, i] @ state + qk[:, :, i] @ d)
        state = state_decay[:, :, i, None, None] * state + k_out[:, :, i].transpose(-1, -2) @ d
    o = torch.stack(outs, dim=2).permute(0, 2, 3, 1, 4).reshape(b, -1, h, dv)[:, :length]
    return o.to(v.dtype), state


def gated_delta_rule(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    *,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    resets: torch.Tensor | None = None,
    chunk_size: int = 16,
    backend: Backend = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gated delta rule over a sequence; arguments as :func:`chunk_gated_delta_rule`.

    ``backend="auto"`` uses ``fla.ops.gated_delta_rule.chunk_gated_delta_rule`` (no in-kernel
    L2 norm: callers normalise) on CUDA when fla and Triton import, else the torch form.
    """
    if fla_usable(backend, q):
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule as fla_chunk_gdr  # optional, CUDA

        return run_fla_varlen(
            fla_chunk_gdr, (q, k, v, g, beta), scale, initial_state, resets, use_qk_l2norm_in_kernel=False
        )
    return chunk_gated_delta_rule(
        q, k, v, g, beta, scale=scale, initial_state=initial_state, resets=resets, chunk_size=chunk_size
    )
