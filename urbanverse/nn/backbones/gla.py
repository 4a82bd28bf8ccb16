"""Dense gated-linear-attention baseline backbone.

Each block's mixer is :class:`urbanverse.nn.layers.sse.SSELayer` with ``num_partitions = 0``:
the SSE layer's shared branch alone (softmax keys, silu queries and values, low-rank
log-decay, gated RMSNorm output). This makes GLA vs SSE an ablation of the sparse
partitions only. State: one ``(B, H, Dk, Dv)`` tensor per layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from urbanverse.nn.backbones.sse import MixerStack
from urbanverse.nn.layers.sse import SSECfg, SSELayer
from urbanverse.nn.ops.fla_dispatch import Backend


@dataclass(frozen=True, kw_only=True)
class GLABackboneCfg:
    """Configuration of :class:`GLABackbone` (small RL-policy defaults)."""

    d_model: int = 128
    """Residual width d; also ``out_dim``."""
    num_layers: int = 2
    """Residual blocks."""
    num_heads: int = 4
    """Heads H."""
    head_k_dim: int = 32
    """Key width per head Dk."""
    head_v_dim: int = 32
    """Value width per head Dv."""
    variant: Literal["gla", "gdn"] = "gla"
    """'gla' (default) or 'gdn' for a dense gated delta rule."""
    mlp_ratio: int = 2
    """MLP hidden width as a multiple of d."""
    chunk_size: int = 16
    """Chunk length of the torch chunked op (speed/memory only)."""
    backend: Backend = "auto"
    """Sequence kernels: 'auto', 'torch' or 'fla'."""

    def __post_init__(self) -> None:
        if self.num_layers < 1 or self.mlp_ratio < 1:
            raise ValueError("GLABackboneCfg.num_layers and mlp_ratio must be >= 1")


class GLABackbone(MixerStack):
    """Stack of dense GLA layers; ``aux_loss()`` is always zero."""

    def __init__(self, in_dim: int, cfg: GLABackboneCfg | None = None) -> None:
        cfg = GLABackboneCfg() if cfg is None else cfg
        layer_cfg = SSECfg(
            d_model=cfg.d_model,
            num_heads=cfg.num_heads,
            head_k_dim=cfg.head_k_dim,
            head_v_dim=cfg.head_v_dim,
            num_partitions=0,
            top_k=0,
            variant=cfg.variant,
            chunk_size=cfg.chunk_size,
            backend=cfg.backend,
        )
        mixers = [SSELayer(layer_cfg) for _ in range(cfg.num_layers)]
        super().__init__(in_dim, mixers, cfg.d_model, cfg.mlp_ratio, aux_coef=0.0)
        self.cfg = cfg
