"""MLP backbone with an UltraMemV2 memory layer beside each feed-forward block.

Block (pre-norm, reference ``olmo/model.py``): ``h <- h + FFN(LN h) + Mem(LN h)``, the memory
layer reading the same normed input as the FFN. Input ``x (B, in_dim)`` is first projected to
``hidden``; the output is ``LN(h)`` of width ``hidden``. Stateless (state ``()``): the memory
is a learned table, not an episodic state.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from urbanverse.nn.backbones.base import Backbone, State
from urbanverse.nn.backbones.mlp import Activation, make_activation
from urbanverse.nn.layers.ultramem import UltraMemCfg, UltraMemLayer


@dataclasses.dataclass(frozen=True, kw_only=True)
class UltraMemMLPBackboneCfg:
    """UltraMem-MLP backbone settings."""

    hidden: int = 128
    """Residual width ``d``; also ``out_dim``."""
    num_blocks: int = 2
    """Residual blocks, each with an FFN and a memory layer."""
    ffn_mult: int = 2
    """FFN inner width ``ffn_mult * hidden`` (the memory takes part of the FFN's role)."""
    activation: Activation = "silu"
    """FFN nonlinearity."""
    memory: UltraMemCfg = dataclasses.field(default_factory=UltraMemCfg)
    """Settings of every memory layer."""

    def __post_init__(self) -> None:
        if min(self.hidden, self.num_blocks, self.ffn_mult) < 1:
            raise ValueError(f"UltraMemMLPBackboneCfg needs hidden, num_blocks, ffn_mult >= 1, got {self}")


class _Block(nn.Module):
    def __init__(self, d: int, cfg: UltraMemMLPBackboneCfg) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ffn = nn.Sequential(
            nn.Linear(d, cfg.ffn_mult * d), make_activation(cfg.activation), nn.Linear(cfg.ffn_mult * d, d)
        )
        self.mem = UltraMemLayer(d, cfg.memory)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        z = self.norm(h)
        return h + self.ffn(z) + self.mem(z)


class UltraMemMLPBackbone(Backbone):
    """``x (..., in_dim) -> (..., hidden)`` through residual FFN + UltraMemV2 blocks."""

    def __init__(self, in_dim: int, cfg: UltraMemMLPBackboneCfg | None = None) -> None:
        super().__init__()
        cfg = cfg or UltraMemMLPBackboneCfg()
        self.cfg, self.in_dim, self.out_dim = cfg, in_dim, cfg.hidden
        self.inp = nn.Linear(in_dim, cfg.hidden)
        self.blocks = nn.ModuleList(_Block(cfg.hidden, cfg) for _ in range(cfg.num_blocks))
        self.norm = nn.LayerNorm(cfg.hidden)

    def _forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        for block in self.blocks:
            h = block(h)
        return self.norm(h)

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        return ()

    def step(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        return self._forward(x), ()

    def forward_sequence(
        self, x: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        return self._forward(x), ()
