"""A trained policy ready to act: the record that evaluation, export and quantisation take.

Both loaders (PPO checkpoints in ``urbanverse.rl.evaluate``, Stable-Baselines3 runs in
``urbanverse.rl.sb3``) return a :class:`LoadedPolicy`; it lives here, below both, so that
neither loader imports the other's module for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from urbanverse.rl.config import TrainCfg

__all__ = ["LoadedPolicy", "actor_act_fn"]


@dataclasses.dataclass
class LoadedPolicy:
    """A deterministic actor and the config it was trained with."""

    cfg: TrainCfg
    act: Callable[[torch.Tensor, tuple], tuple[torch.Tensor, tuple]]
    """``(obs (N, D), state) -> (actions (N, A), next state)``."""
    initial_state: Callable[[int], tuple]
    """Episode-start state for ``N`` environments."""
    actor: torch.nn.Module | None = None
    """The ``DeterministicActor`` (PPO checkpoints; None for SB3 models)."""
    meta: dict = dataclasses.field(default_factory=dict)


def actor_act_fn(actor: torch.nn.Module):
    """``LoadedPolicy.act`` for a deterministic actor: ``(obs, state) -> (actions, next state)``."""

    @torch.no_grad()
    def act(obs: torch.Tensor, st: tuple) -> tuple[torch.Tensor, tuple]:
        out = actor(obs, *st)
        return (out[0], tuple(out[1:])) if isinstance(out, tuple) else (out, ())

    return act
