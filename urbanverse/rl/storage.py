"""Rollout storage for PPO: transitions of ``T`` steps x ``N`` environments, GAE, minibatches.

Tensors are time-major ``(T, N, ...)``. ``resets[t, n]`` is True when environment ``n``
started a new episode at step ``t`` (its backbone state was set back to the initial state
*before* ``obs[t, n]`` was consumed): that is the ``resets`` convention of
``Backbone.forward_sequence``. For recurrent backbones the storage keeps the (pre-reset)
backbone state at the start of every chunk of ``chunk_len`` steps, so PPO updates replay
stored sequences ``(B, chunk_len)`` from their stored start state ("stored state", R2D2) with
the state reset inside the chunk wherever an episode began. A stateless backbone uses
``chunk_len = 1``: every transition is its own sequence and minibatches are shuffled
transitions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import torch

from urbanverse.nn.backbones import State


@dataclass
class Minibatch:
    """One PPO minibatch of ``B`` sequences of ``L`` steps (``L = 1`` for stateless policies)."""

    obs: torch.Tensor  # (B, L, D)
    resets: torch.Tensor  # (B, L) bool
    state: State  # each (B, ...): backbone state before the first step of each sequence
    actions: torch.Tensor  # (B, L, A)
    old_log_prob: torch.Tensor  # (B, L)
    old_mean: torch.Tensor  # (B, L, A)
    old_std: torch.Tensor  # (B, L, A)
    old_values: torch.Tensor  # (B, L)
    advantages: torch.Tensor  # (B, L)
    returns: torch.Tensor  # (B, L)


class RolloutStorage:
    """Fixed-size buffer filled step by step, then turned into returns and minibatches."""

    def __init__(
        self,
        num_steps: int,
        num_envs: int,
        num_obs: int,
        num_actions: int,
        state_template: State,
        chunk_len: int,
        device: torch.device | str,
    ):
        if chunk_len < 1 or num_steps % chunk_len:
            raise ValueError(f"chunk_len {chunk_len} must divide the rollout length {num_steps}")
        self.T, self.N, self.L = num_steps, num_envs, chunk_len
        t, n = num_steps, num_envs
        kw = {"device": device}
        self.obs = torch.zeros(t, n, num_obs, **kw)
        self.actions = torch.zeros(t, n, num_actions, **kw)
        self.mean = torch.zeros(t, n, num_actions, **kw)
        self.std = torch.zeros(t, n, num_actions, **kw)
        self.log_prob = torch.zeros(t, n, **kw)
        self.values = torch.zeros(t, n, **kw)
        self.rewards = torch.zeros(t, n, **kw)
        self.dones = torch.zeros(t, n, dtype=torch.bool, **kw)
        self.resets = torch.zeros(t, n, dtype=torch.bool, **kw)
        self.advantages = torch.zeros(t, n, **kw)
        self.returns = torch.zeros(t, n, **kw)
        self.chunk_states = tuple(
            torch.zeros((t // chunk_len, *s.shape), dtype=s.dtype, **kw) for s in state_template
        )
        self.step = 0

    def add(
        self,
        obs: torch.Tensor,
        resets: torch.Tensor,
        state: State,
        actions: torch.Tensor,
        mean: torch.Tensor,
        std: torch.Tensor,
        log_prob: torch.Tensor,
        values: torch.Tensor,
        rewards: torch.Tensor,
        dones: torch.Tensor,
    ) -> None:
        """Store step ``self.step``; ``state`` is the pre-reset backbone state before ``obs``."""
        if self.step >= self.T:
            raise RuntimeError("rollout storage is full; call clear() after the update")
        t = self.step
        if t % self.L == 0:
            for buf, s in zip(self.chunk_states, state, strict=True):
                buf[t // self.L].copy_(s)
        self.obs[t].copy_(obs)
        self.resets[t].copy_(resets)
        self.actions[t].copy_(actions)
        self.mean[t].copy_(mean)
        self.std[t].copy_(std)
        self.log_prob[t].copy_(log_prob)
        self.values[t].copy_(values)
        self.rewards[t].copy_(rewards)
        self.dones[t].copy_(dones)
        self.step += 1

    def clear(self) -> None:
        """Start filling from step 0 again."""
        self.step = 0

    @torch.no_grad()
    def compute_returns(self, last_values: torch.Tensor, gamma: float, lam: float) -> None:
        """GAE(gamma, lambda) advantages and value targets (T, N).

        ``last_values`` (N,) is the value of the observation after the last stored step. Done
        steps do not bootstrap from the next step; time-outs are handled by the caller adding
        ``gamma * V(final_obs)`` to their reward, so truncated episodes still bootstrap.
        """
        adv = torch.zeros_like(last_values)
        next_values = last_values
        for t in reversed(range(self.T)):
            not_done = (~self.dones[t]).float()
            delta = self.rewards[t] + gamma * next_values * not_done - self.values[t]
            adv = delta + gamma * lam * not_done * adv
            self.advantages[t] = adv
            next_values = self.values[t]
        self.returns = self.advantages + self.values

    def minibatches(
        self,
        num_minibatches: int,
        num_epochs: int,
        generator: torch.Generator | None = None,
        adv_stats: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> Iterator[Minibatch]:
        """``num_epochs`` passes over the rollout in ``num_minibatches`` shuffled sequence batches.

        Advantages are standardised with ``adv_stats`` (mean, std): in data-parallel training the
        moments of all ranks' rollouts; by default those of this storage's.
        """
        num_chunks = self.T // self.L
        num_seq = num_chunks * self.N
        if num_minibatches < 1 or num_seq < num_minibatches:
            raise ValueError(f"cannot split {num_seq} sequences into {num_minibatches} minibatches")
        adv = self.advantages
        adv_mean, adv_std = adv_stats or (adv.mean(), adv.std())
        adv = (adv - adv_mean) / (adv_std + 1e-8)

        def seq(x: torch.Tensor) -> torch.Tensor:  # (T, N, ...) -> (num_chunks * N, L, ...)
            x = x.reshape(num_chunks, self.L, self.N, *x.shape[2:]).transpose(1, 2)
            return x.reshape(num_seq, self.L, *x.shape[3:])

        fields = {
            "obs": seq(self.obs),
            "resets": seq(self.resets),
            "actions": seq(self.actions),
            "old_log_prob": seq(self.log_prob),
            "old_mean": seq(self.mean),
            "old_std": seq(self.std),
            "old_values": seq(self.values),
            "advantages": seq(adv),
            "returns": seq(self.returns),
        }
        states = tuple(s.reshape(num_seq, *s.shape[2:]) for s in self.chunk_states)
        size = num_seq // num_minibatches
        for _ in range(num_epochs):
            perm = torch.randperm(num_seq, generator=generator, device="cpu").to(self.obs.device)
            for i in range(num_minibatches):
                idx = perm[i * size : (i + 1) * size]
                yield Minibatch(state=tuple(s[idx] for s in states), **{k: v[idx] for k, v in fields.items()})
