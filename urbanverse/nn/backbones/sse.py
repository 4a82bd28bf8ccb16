"""SSE policy backbones: :class:`SSEBackbone` (SSE layers only) and :class:`SSEHBackbone`
(SSE layers interleaved with sliding-window softmax attention), plus the shared
:class:`MixerStack` that :mod:`urbanverse.nn.backbones.gla` reuses.

Layout: ``x (B, in_dim) -> Linear -> [pre-norm residual block] * num_layers -> RMSNorm``,
each block ``h = h + mixer(norm(h)); h = h + MLP(norm(h))``. The backbone state is the
concatenation of the mixers' state tuples, in layer order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import torch
from torch import nn

from urbanverse.nn.backbones.base import Backbone, State
from urbanverse.nn.layers.sse import SSECfg, SSELayer
from urbanverse.nn.layers.swa import SlidingWindowAttention, SWACfg
from urbanverse.nn.ops.fla_dispatch import Backend


class _Block(nn.Module):
    """Pre-norm residual block: token mixer + two-layer GELU MLP, ``(..., d) -> (..., d)``."""

    def __init__(self, mixer: nn.Module, d_model: int, mlp_ratio: int) -> None:
        super().__init__()
        self.mixer = mixer
        self.norm1, self.norm2 = nn.RMSNorm(d_model), nn.RMSNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, mlp_ratio * d_model), nn.GELU(), nn.Linear(mlp_ratio * d_model, d_model)
        )

    def forward(self, x: torch.Tensor, state: tuple, resets: torch.Tensor | None, seq: bool) -> tuple:
        if seq:
            h, state = self.mixer.forward_sequence(self.norm1(x), state, resets)
        else:
            h, state = self.mixer.step(self.norm1(x), state)
        x = x + h
        return x + self.mlp(self.norm2(x)), state


class MixerStack(Backbone):
    """A backbone made of pre-norm residual blocks around the given token mixers.

    Each mixer implements ``initial_state(batch, device, dtype)``, ``step`` and
    ``forward_sequence`` on ``(B, d)`` / ``(B, L, d)`` tensors. ``aux_loss()`` returns
    ``aux_loss_coef`` times the summed ``last_aux_loss`` of the mixers that have one.
    """

    def __init__(self, in_dim: int, mixers: list[nn.Module], d_model: int, mlp_ratio: int, aux_coef: float):
        super().__init__()
        self.in_dim, self.out_dim, self.aux_loss_coef = in_dim, d_model, aux_coef
        self.in_proj = nn.Linear(in_dim, d_model)
        self.blocks = nn.ModuleList(_Block(m, d_model, mlp_ratio) for m in mixers)
        self.norm = nn.RMSNorm(d_model)
        self._sizes = [len(m.initial_state(1, "cpu", torch.float32)) for m in mixers]

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        """Zero states of every mixer, flattened (float32 or the parameters' wider dtype)."""
        dtype = self.in_proj.weight.dtype
        device = self.in_proj.weight.device if device is None else device
        return tuple(t for blk in self.blocks for t in blk.mixer.initial_state(batch, device, dtype))

    def _run(self, x: torch.Tensor, state: State, resets: torch.Tensor | None, seq: bool) -> tuple:
        if len(state) != sum(self._sizes):
            raise ValueError(f"expected a state of {sum(self._sizes)} tensors, got {len(state)}")
        h, out_state, i = self.in_proj(x), [], 0
        for blk, n in zip(self.blocks, self._sizes, strict=True):
            h, s = blk(h, tuple(state[i : i + n]), resets, seq)
            out_state.extend(s)
            i += n
        return self.norm(h), tuple(out_state)

    def step(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """``x`` ``(B, in_dim)`` -> ``(B, d_model)`` and the next state."""
        return self._run(x, state, None, seq=False)

    def forward_sequence(
        self, x: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        """``x`` ``(B, L, in_dim)``, ``resets`` ``(B, L)`` bool -> ``(B, L, d_model)`` and the final state."""
        return self._run(x, state, resets, seq=True)

    def aux_loss(self) -> torch.Tensor:
        """``aux_loss_coef * sum`` of the mixers' load-balancing losses from the last call."""
        total = torch.zeros((), device=self.in_proj.weight.device, dtype=self.in_proj.weight.dtype)
        for blk in self.blocks:
            loss = getattr(blk.mixer, "last_aux_loss", None)
            if loss is not None:
                total = total + loss
        return self.aux_loss_coef * total


@dataclass(frozen=True, kw_only=True)
class SSEBackboneCfg:
    """Configuration of :class:`SSEBackbone` / :class:`SSEHBackbone` (small RL-policy defaults)."""

    d_model: int = 128
    """Residual width d; also ``out_dim``."""
    num_layers: int = 2
    """Residual blocks."""
    num_heads: int = 4
    """Heads H of every mixer."""
    head_k_dim: int = 32
    """SSE key width per head Dk (attention layers use it as head width)."""
    head_v_dim: int = 32
    """SSE value width per head Dv."""
    num_partitions: int = 4
    """SSE partitions N per head (>= 1)."""
    top_k: int = 1
    """Partitions written and read per token."""
    variant: Literal["gla", "gdn"] = "gla"
    """SSE state update (see :class:`urbanverse.nn.layers.sse.SSECfg`)."""
    mlp_ratio: int = 2
    """MLP hidden width as a multiple of d."""
    attn_layers: tuple[int, ...] = ()
    """Indices of blocks that use sliding-window attention instead of SSE (SSE-H)."""
    window: int = 64
    """Sliding-window length in tokens (steps) for attention blocks."""
    aux_loss_coef: float = 0.01
    """Weight of the summed load-balancing loss returned by ``aux_loss()``."""
    chunk_size: int = 16
    """Chunk length of the torch chunked ops (speed/memory only)."""
    backend: Backend = "auto"
    """Sequence kernels: 'auto', 'torch' or 'fla'."""

    def __post_init__(self) -> None:
        if self.num_layers < 1 or self.mlp_ratio < 1:
            raise ValueError("SSEBackboneCfg.num_layers and mlp_ratio must be >= 1")
        if self.num_partitions < 1:
            raise ValueError("SSEBackboneCfg.num_partitions must be >= 1 (use GLABackbone for dense)")
        bad = [i for i in self.attn_layers if not 0 <= i < self.num_layers]
        if bad or len(set(self.attn_layers)) != len(self.attn_layers):
            raise ValueError(f"SSEBackboneCfg.attn_layers must be distinct indices < num_layers, got {bad}")
        if self.aux_loss_coef < 0:
            raise ValueError("SSEBackboneCfg.aux_loss_coef must be >= 0")

    def sse_cfg(self) -> SSECfg:
        """The per-layer SSE config (validated there)."""
        return SSECfg(
            d_model=self.d_model,
            num_heads=self.num_heads,
            head_k_dim=self.head_k_dim,
            head_v_dim=self.head_v_dim,
            num_partitions=self.num_partitions,
            top_k=self.top_k,
            variant=self.variant,
            chunk_size=self.chunk_size,
            backend=self.backend,
        )

    def swa_cfg(self) -> SWACfg:
        """The per-layer sliding-window attention config."""
        return SWACfg(
            d_model=self.d_model, num_heads=self.num_heads, head_dim=self.head_k_dim, window=self.window
        )


class SSEBackbone(MixerStack):
    """Stack of SSE layers (plus attention at ``cfg.attn_layers``, empty by default)."""

    def __init__(self, in_dim: int, cfg: SSEBackboneCfg | None = None) -> None:
        cfg = SSEBackboneCfg() if cfg is None else cfg
        mixers = [
            SlidingWindowAttention(cfg.swa_cfg()) if i in cfg.attn_layers else SSELayer(cfg.sse_cfg())
            for i in range(cfg.num_layers)
        ]
        super().__init__(in_dim, mixers, cfg.d_model, cfg.mlp_ratio, cfg.aux_loss_coef)
        self.cfg = cfg


class SSEHBackbone(SSEBackbone):
    """SSE-H: SSE layers interleaved with sliding-window attention.

    When ``cfg.attn_layers`` is empty every second block (indices 1, 3, ...) is attention;
    ``num_layers`` must then be >= 2.
    """

    def __init__(self, in_dim: int, cfg: SSEBackboneCfg | None = None) -> None:
        cfg = SSEBackboneCfg() if cfg is None else cfg
        if not cfg.attn_layers:
            if cfg.num_layers < 2:
                raise ValueError("SSEHBackbone needs num_layers >= 2 to interleave attention")
            cfg = replace(cfg, attn_layers=tuple(range(1, cfg.num_layers, 2)))
        super().__init__(in_dim, cfg)
