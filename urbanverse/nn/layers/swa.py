"""Sliding-window causal softmax attention with a step form and a reset-aware sequence form.

Each token attends to itself and the ``window - 1`` tokens before it, never across an
episode boundary (a reset). There is no positional encoding: in the SSE-H hybrid the
recurrent SSE layers already carry order information.

State (batch-first): ``k_cache`` and ``v_cache`` ``(B, W-1, H, Dh)`` hold the projected keys
and values of the last ``W-1`` tokens (oldest first) and ``valid`` ``(B, W-1)`` bool marks
which cache slots belong to the current episode; invalid slots hold zeros. The initial
state is all zeros, ``valid`` False.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True, kw_only=True)
class SWACfg:
    """Configuration of one :class:`SlidingWindowAttention` layer."""

    d_model: int
    """Input and output width d (features)."""
    num_heads: int = 4
    """Attention heads H."""
    head_dim: int = 32
    """Width per head Dh; scores are scaled by ``Dh ** -0.5``."""
    window: int = 64
    """Keys seen by a query, itself included (tokens); the cache keeps ``window - 1``."""

    def __post_init__(self) -> None:
        for name in ("d_model", "num_heads", "head_dim", "window"):
            if getattr(self, name) < 1:
                raise ValueError(f"SWACfg.{name} must be >= 1, got {getattr(self, name)}")


class SlidingWindowAttention(nn.Module):
    """Causal softmax attention over a sliding window, ``(..., d) -> (..., d)``."""

    def __init__(self, cfg: SWACfg) -> None:
        super().__init__()
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.num_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * cfg.head_dim, cfg.d_model, bias=False)

    def initial_state(self, batch: int, device: torch.device | str | None, dtype: torch.dtype) -> tuple:
        """Empty cache: ``(k_cache, v_cache, valid)`` of shapes ``(B, W-1, H, Dh)`` x2 and ``(B, W-1)``."""
        c = self.cfg
        kv = torch.zeros(batch, c.window - 1, c.num_heads, c.head_dim, device=device, dtype=dtype)
        return kv, kv.clone(), torch.zeros(batch, c.window - 1, dtype=torch.bool, device=device)

    def _qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, k, v = self.qkv(x).unflatten(-1, (3, self.cfg.num_heads, self.cfg.head_dim)).unbind(-3)
        return q * self.cfg.head_dim**-0.5, k, v

    def step(self, x: torch.Tensor, state: tuple) -> tuple[torch.Tensor, tuple]:
        """One token per row: ``x`` ``(B, d)`` -> ``(B, d)`` and the shifted cache."""
        k_cache, v_cache, valid = state
        q, k, v = self._qkv(x)  # (B, H, Dh)
        keys = torch.cat([k_cache, k[:, None]], dim=1)  # (B, W, H, Dh)
        vals = torch.cat([v_cache, v[:, None]], dim=1)
        mask = torch.cat([valid, valid.new_ones(valid.shape[0], 1)], dim=1)  # (B, W)
        scores = torch.einsum("bhd,bwhd->bhw", q, keys).masked_fill(~mask[:, None, :], -torch.inf)
        out = torch.einsum("bhw,bwhd->bhd", torch.softmax(scores, dim=-1), vals)
        return self.o_proj(out.flatten(-2)), (keys[:, 1:], vals[:, 1:], mask[:, 1:])

    def forward_sequence(
        self, x: torch.Tensor, state: tuple, resets: torch.Tensor | None
    ) -> tuple[torch.Tensor, tuple]:
        """``x`` ``(B, L, d)``, ``resets`` ``(B, L)`` bool -> ``(B, L, d)`` and the final cache.

        Queries are processed in blocks of ``C = W`` tokens; block ``n`` looks at the
        ``C + W - 1`` keys ending at its last token (a strided view of cache + sequence), with a
        band mask, the cache validity and a same-episode mask. Memory O(B H L W).
        """
        k_cache, v_cache, valid = state
        b, length, _ = x.shape
        w = self.cfg.window
        q, k, v = self._qkv(x)  # (B, L, H, Dh)
        if resets is None:
            resets = torch.zeros(b, length, dtype=torch.bool, device=x.device)
        seg = torch.cumsum(resets.long(), dim=1)  # episode index within the sequence
        pad = (-length) % w
        keys = torch.cat([k_cache, k, k.new_zeros(b, pad, *k.shape[2:])], dim=1)  # (B, W-1+L+pad, H, Dh)
        vals = torch.cat([v_cache, v, v.new_zeros(b, pad, *v.shape[2:])], dim=1)
        # Key bookkeeping: cache slots are episode 0; padding slots are valid so no row is empty.
        key_seg = torch.cat([seg.new_zeros(b, w - 1), seg, seg[:, -1:].expand(b, pad)], dim=1)
        key_ok = torch.cat([valid, resets.new_ones(b, length + pad)], dim=1)
        q_seg = torch.cat([seg, seg[:, -1:].expand(b, pad)], dim=1)
        qb = torch.cat([q, q.new_zeros(b, pad, *q.shape[2:])], dim=1).unflatten(1, (-1, w))  # (B,n,W,H,Dh)
        span = 2 * w - 1
        kb = keys.unfold(1, span, w)  # (B, n, H, Dh, span)
        vb = vals.unfold(1, span, w)
        kseg_b, kok_b = key_seg.unfold(1, span, w), key_ok.unfold(1, span, w)  # (B, n, span)
        offset = torch.arange(span, device=x.device)[None, :] - torch.arange(w, device=x.device)[:, None]
        band = (offset >= 0) & (offset <= w - 1)  # (W, span): key j is within the window of query i
        mask = band & kok_b[:, :, None, :] & (kseg_b[:, :, None, :] == q_seg.unflatten(1, (-1, w))[..., None])
        scores = torch.einsum("bnihd,bnhdj->bnhij", qb, kb).masked_fill(~mask[:, :, None], -torch.inf)
        out = torch.einsum("bnhij,bnhdj->bnihd", torch.softmax(scores, dim=-1), vb)
        out = self.o_proj(out.flatten(1, 2)[:, :length].flatten(-2))
        last = slice(length, length + w - 1)  # the last W-1 real keys of cache + sequence
        new_valid = key_ok[:, last] & (key_seg[:, last] == seg[:, -1:])
        keep = new_valid[..., None, None].to(keys.dtype)  # invalid slots hold zeros, as in the step form
        return out, (keys[:, last] * keep, vals[:, last] * keep, new_valid)
