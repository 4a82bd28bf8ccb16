"""Shared helpers of the linear-attention ops: argument checks, chunk layout, segment masks.

Resets follow :mod:`urbanverse.nn.backbones.base`: ``resets[b, t] = True`` zeroes the state
of row ``b`` *before* token ``t`` is consumed. Inside a chunk a reset is expressed as masks:
``seg`` counts the resets seen so far in the chunk (0 = still in the segment that entered the
chunk), ``carry`` says whether the incoming state still reaches a position, and ``same`` says
whether two positions share a segment (so information may flow between them).
"""

from __future__ import annotations

import torch


def acc_dtype(dtype: torch.dtype) -> torch.dtype:
    """Accumulation dtype of the state: float32 for half types, else the input dtype."""
    return torch.promote_types(dtype, torch.float32)


def check_resets(resets: torch.Tensor | None, batch: int, length: int, device: torch.device) -> torch.Tensor:
    """Return ``resets`` as a ``(B, L)`` bool tensor (all False when None)."""
    if resets is None:
        return torch.zeros(batch, length, dtype=torch.bool, device=device)
    if resets.shape != (batch, length):
        raise ValueError(f"resets must have shape {(batch, length)}, got {tuple(resets.shape)}")
    return resets.to(device=device, dtype=torch.bool)


def initial_or_zeros(
    initial_state: torch.Tensor | None, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device
) -> torch.Tensor:
    """The incoming state ``(B, H, Dk, Dv)`` in the accumulation dtype (zeros when None)."""
    if initial_state is None:
        return torch.zeros(shape, dtype=dtype, device=device)
    if tuple(initial_state.shape) != shape:
        raise ValueError(f"initial_state must have shape {shape}, got {tuple(initial_state.shape)}")
    return initial_state.to(dtype)


def to_chunks(x: torch.Tensor, chunk: int) -> torch.Tensor:
    """``(B, L, ...)`` -> ``(B, n, C, ...)`` after zero-padding L to a multiple of ``chunk``.

    Zero padding is neutral for every op here: log-decay 0, key 0 and beta 0 leave the state as is.
    """
    length = x.shape[1]
    pad = (-length) % chunk
    if pad:
        x = torch.cat([x, x.new_zeros((x.shape[0], pad) + tuple(x.shape[2:]))], dim=1)
    return x.reshape((x.shape[0], -1, chunk) + tuple(x.shape[2:]))


def chunk_segment_masks(resets: torch.Tensor, chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Masks for resets in chunk layout.

    Args:
        resets: ``(B, L)`` bool.
        chunk: chunk length C.

    Returns:
        ``same`` ``(B, n, C, C)`` bool, True where ``j <= i`` and positions i, j share a segment;
        ``carry`` ``(B, n, C)`` bool, True where no reset occurred in the chunk up to position i.
    """
    seg = torch.cumsum(to_chunks(resets.long(), chunk), dim=-1)  # (B, n, C)
    causal = torch.ones(chunk, chunk, dtype=torch.bool, device=resets.device).tril()
    same = (seg[..., :, None] == seg[..., None, :]) & causal
    return same, seg == 0
