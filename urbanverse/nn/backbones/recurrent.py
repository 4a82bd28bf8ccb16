"""GRU and LSTM backbones over ``torch.nn.GRU`` / ``torch.nn.LSTM`` with per-row resets.

State layout (batch-first): GRU ``(h,)`` with ``h`` ``(B, num_layers, hidden)``; LSTM
``(h, c)``, both ``(B, num_layers, hidden)``. ``forward_sequence`` cuts the sequence at every
time index where any row resets, runs cuDNN/ATen over each segment for the whole batch and
resets the affected rows at segment starts, so it equals repeated ``step`` calls.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from urbanverse.nn.backbones.base import Backbone, State, reset_rows


@dataclasses.dataclass(frozen=True, kw_only=True)
class RecurrentBackboneCfg:
    """GRU/LSTM backbone settings."""

    hidden: int = 128
    """Hidden size of each recurrent layer; also ``out_dim``."""
    num_layers: int = 1
    """Stacked recurrent layers."""

    def __post_init__(self) -> None:
        if self.hidden < 1 or self.num_layers < 1:
            raise ValueError(f"RecurrentBackboneCfg needs hidden >= 1 and num_layers >= 1, got {self}")


class _RecurrentBackbone(Backbone):
    """Shared logic; subclasses set ``self.rnn`` and ``num_states``."""

    rnn: nn.RNNBase
    num_states: int

    def __init__(self, in_dim: int, cfg: RecurrentBackboneCfg | None) -> None:
        super().__init__()
        self.cfg = cfg or RecurrentBackboneCfg()
        self.in_dim, self.out_dim = in_dim, self.cfg.hidden

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        dtype = next(self.parameters()).dtype
        shape = (batch, self.cfg.num_layers, self.cfg.hidden)
        return tuple(torch.zeros(shape, device=device, dtype=dtype) for _ in range(self.num_states))

    def _run(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """``x`` ``(B, L, in_dim)`` through the RNN from batch-first ``state`` (no resets)."""
        hx = tuple(s.transpose(0, 1).contiguous() for s in state)
        y, hn = self.rnn(x, hx[0] if self.num_states == 1 else hx)
        hn = (hn,) if self.num_states == 1 else hn
        return y, tuple(h.transpose(0, 1) for h in hn)

    def step(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        y, state = self._run(x[:, None], state)
        return y[:, 0], state

    def forward_sequence(
        self, x: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        length = x.shape[1]
        initial = self.initial_state(x.shape[0], x.device)
        cuts = torch.nonzero(resets.any(0)).flatten().tolist()
        bounds = sorted({0, *cuts, length})
        outs = []
        for t0, t1 in zip(bounds[:-1], bounds[1:], strict=True):
            state = reset_rows(state, resets[:, t0], initial)
            y, state = self._run(x[:, t0:t1], state)
            outs.append(y)
        return torch.cat(outs, dim=1), state


class GRUBackbone(_RecurrentBackbone):
    """``nn.GRU`` backbone, state ``(h,)``."""

    num_states = 1

    def __init__(self, in_dim: int, cfg: RecurrentBackboneCfg | None = None) -> None:
        super().__init__(in_dim, cfg)
        self.rnn = nn.GRU(in_dim, self.cfg.hidden, self.cfg.num_layers, batch_first=True)


class LSTMBackbone(_RecurrentBackbone):
    """``nn.LSTM`` backbone, state ``(h, c)``."""

    num_states = 2

    def __init__(self, in_dim: int, cfg: RecurrentBackboneCfg | None = None) -> None:
        super().__init__(in_dim, cfg)
        self.rnn = nn.LSTM(in_dim, self.cfg.hidden, self.cfg.num_layers, batch_first=True)
