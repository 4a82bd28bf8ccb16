"""Optional dispatch to flash-linear-attention (``fla``) Triton kernels.

fla is imported lazily and only on CUDA tensors; nothing here is needed on CPU. Our resets
(``(B, L)`` bool, state zeroed before token t) are turned into fla's variable-length form:
the batch is flattened to one row of ``B * L`` tokens, cut at every row start and every
reset (``cu_seqlens``), and each segment gets its initial state (the caller's state for the
first segment of a row that does not start with a reset, zeros otherwise).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Literal

import torch

Backend = Literal["auto", "torch", "fla"]

_INSTALL_HINT = "backend='fla' needs CUDA tensors and `pip install flash-linear-attention triton`"


def fla_usable(backend: Backend, q: torch.Tensor) -> bool:
    """Whether to call fla: ``"auto"`` picks it on CUDA when fla and Triton are importable."""
    if backend == "torch":
        return False
    ok = q.is_cuda and all(importlib.util.find_spec(m) is not None for m in ("fla", "triton"))
    if backend == "fla" and not ok:
        raise RuntimeError(_INSTALL_HINT)
    if backend not in ("auto", "fla"):
        raise ValueError(f"backend must be 'auto', 'torch' or 'fla', got {backend!r}")
    return ok


def run_fla_varlen(
    kernel: Callable[..., tuple[torch.Tensor, torch.Tensor]],
    inputs: tuple[torch.Tensor, ...],
    scale: float | None,
    initial_state: torch.Tensor | None,
    resets: torch.Tensor | None,
    **kwargs: object,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Call an fla chunk kernel on ``inputs`` (each ``(B, L, ...)``) with resets as varlen segments.

    Returns ``o`` ``(B, L, H, Dv)`` and the final state ``(B, H, Dk, Dv)`` (float32).
    """
    q, v = inputs[0], inputs[2]
    b, length, h, dk = q.shape
    dv = v.shape[-1]
    starts = torch.zeros(b, length, dtype=torch.bool, device=q.device)
    if resets is not None:
        starts |= resets.to(q.device, torch.bool)
    first_is_reset = starts[:, 0].clone()
    starts[:, 0] = True
    start_idx = torch.nonzero(starts.reshape(-1)).squeeze(1)
    cu_seqlens = torch.cat([start_idx, start_idx.new_tensor([b * length])])
    init = torch.zeros(start_idx.numel(), h, dk, dv, dtype=torch.float32, device=q.device)
    if initial_state is not None:
        row_first = torch.cumsum(starts.sum(1), 0) - starts.sum(1)  # segment index of each row start
        keep = ~first_is_reset
        init[row_first[keep]] = initial_state[keep].float()
    flat = tuple(t.reshape((1, b * length) + tuple(t.shape[2:])) for t in inputs)
    o, final = kernel(
        *flat, scale=scale, initial_state=init, output_final_state=True, cu_seqlens=cu_seqlens, **kwargs
    )
    row_last = torch.cumsum(starts.sum(1), 0) - 1  # segment index of each row's last segment
    return o.reshape(b, length, h, dv), final[row_last]
