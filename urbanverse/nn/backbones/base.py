"""The interface every policy backbone implements; the RL code uses only this.

A backbone maps per-step feature vectors ``x`` of shape ``(B, in_dim)`` to features of
shape ``(B, out_dim)``, carrying an optional recurrent state between steps. The state is a
flat tuple of tensors, each batch-first ``(B, ...)``, so that rollout storage can keep it
per environment and reset it row by row. Stateless backbones use the empty tuple.

Two forms must agree exactly (up to float rounding):

* ``step(x, state)``: one step for ``B`` environments (rollouts).
* ``forward_sequence(x, state, resets)``: ``L`` steps at once (PPO updates), with
  ``resets[b, t] = True`` meaning the state of row ``b`` is set back to the initial state
  *before* ``x[b, t]`` is consumed (an episode started at ``t``).
"""

from __future__ import annotations

import abc

import torch
from torch import nn

State = tuple[torch.Tensor, ...]


class Backbone(nn.Module, abc.ABC):
    """Abstract base: a sequence model with a step form and a sequence form."""

    in_dim: int
    out_dim: int

    @abc.abstractmethod
    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        """State at an episode start for ``batch`` rows (float32 unless the layer needs otherwise)."""

    @abc.abstractmethod
    def step(self, x: torch.Tensor, state: State) -> tuple[torch.Tensor, State]:
        """One step. ``x``: ``(B, in_dim)`` -> features ``(B, out_dim)`` and the next state."""

    @abc.abstractmethod
    def forward_sequence(
        self, x: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, State]:
        """``x``: ``(B, L, in_dim)``, ``resets``: ``(B, L)`` bool -> ``(B, L, out_dim)``, final state."""

    def aux_loss(self) -> torch.Tensor:
        """Auxiliary loss from the last forward call (e.g. SSE load balancing); zero by default."""
        return torch.zeros((), device=next(self.parameters()).device)


def reset_rows(state: State, reset: torch.Tensor, initial: State) -> State:
    """Replace the rows of ``state`` where ``reset`` (``(B,)`` bool) is True by ``initial``'s rows."""
    out = []
    for s, s0 in zip(state, initial, strict=True):
        mask = reset.reshape((-1,) + (1,) * (s.dim() - 1))
        out.append(torch.where(mask, s0.to(s.dtype), s))
    return tuple(out)
