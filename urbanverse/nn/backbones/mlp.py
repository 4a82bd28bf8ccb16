"""Stateless MLP backbone: the feed-forward baseline (state is the empty tuple)."""

from __future__ import annotations

import dataclasses
from typing import Literal

import torch
from torch import nn

from urbanverse.nn.backbones.base import Backbone, State

Activation = Literal["elu", "relu", "silu", "tanh"]
_ACTIVATIONS: dict[str, type[nn.Module]] = {"elu": nn.ELU, "relu": nn.ReLU, "silu": nn.SiLU, "tanh": nn.Tanh}


def make_activation(name: str) -> nn.Module:
    """Activation module by name (one of ``elu, relu, silu, tanh``)."""
    if name not in _ACTIVATIONS:
        raise ValueError(f"unknown activation {name!r}; valid: {sorted(_ACTIVATIONS)}")
    return _ACTIVATIONS[name]()


@dataclasses.dataclass(frozen=True, kw_only=True)
class MLPBackboneCfg:
    """MLP backbone settings."""

    hidden: int = 128
    """Width of every hidden layer; also ``out_dim``."""
    num_layers: int = 2
    """Number of Linear+activation layers (the first maps ``in_dim -> hidden``)."""
    activation: Activation = "elu"
    """Nonlinearity after each Linear."""
    layer_norm: bool = False
    """LayerNorm after each Linear, before the activation."""

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.num_layers < 1:
            raise ValueError(f"MLPBackboneCfg needs hidden >= 1 and num_layers >= 1, got {self}")
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"MLPBackboneCfg.activation must be one of {sorted(_ACTIVATIONS)}")


class MLPBackbone(Backbone):
    """``x (B, in_dim) -> (B, hidden)`` through ``num_layers`` Linear(+LN)+activation layers."""

    def __init__(self, in_dim: int, cfg: MLPBackboneCfg | None = None) -> None:
        super().__init__()
        cfg = cfg or MLPBackboneCfg()
        self.cfg, self.in_dim, self.out_dim = cfg, in_dim, cfg.hidden
        layers: list[nn.Module] = []
        for i in range(cfg.num_layers):
            layers.append(nn.Linear(in_dim if i == 0 else cfg.hidden, cfg.hidden))
            if cfg.layer_norm:
                layers.append(nn.LayerNorm(cfg.hidden))
            layers.append(make_activation(cfg.activation))
        self.net = nn.Sequential(*layers)

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        return ()

    def step(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        return self.net(x), ()

    def forward_sequence(
        self, x: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        return self.net(x), ()
