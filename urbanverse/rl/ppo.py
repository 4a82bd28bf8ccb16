"""Proximal Policy Optimisation (Schulman et al. 2017), rsl_rl-sized.

Clipped surrogate, clipped value loss, entropy bonus, GAE with bootstrapping on time-outs
(the reward of a truncated step gets ``gamma * V(final_obs)``), an adaptive learning rate
that keeps the policy KL near ``desired_kl``, optional reward scaling by the running
standard deviation of the discounted return (the paper's +2000 / -200 rewards otherwise give
value targets in the thousands), and bf16 autocast for the update on CUDA. Recurrent
backbones are trained on stored sequences (see ``storage``). Data-parallel over ranks through a
``Sync`` (``urbanverse.rl.distributed``): normaliser statistics, advantage moments, the KL and the
gradients are taken over all ranks; with the default one-process ``Sync`` they are the local ones.
"""

from __future__ import annotations

import dataclasses
import math

import torch
from torch import nn

from urbanverse.nn.backbones import State
from urbanverse.rl.distributed import Sync
from urbanverse.rl.policy import ActorCritic
from urbanverse.rl.storage import RolloutStorage


@dataclasses.dataclass(frozen=True, kw_only=True)
class PPOCfg:
    """PPO hyper-parameters.

    Defaults follow the paper: lr 1e-4, gamma 0.99, lambda 0.95, clip 0.2, entropy 0.002.
    """

    learning_rate: float = 1e-4
    """Initial Adam step size (adapted when ``schedule == "adaptive"``); under muP
    (``policy.mup_base_width``) the rate of width-independent parameters, scaled per group."""
    schedule: str = "adaptive"
    """``adaptive`` (KL-controlled learning rate) or ``fixed``."""
    desired_kl: float = 0.01
    """Target KL between the rollout policy and the updated one (adaptive schedule)."""
    min_lr: float = 1e-5
    max_lr: float = 1e-2
    gamma: float = 0.99
    lam: float = 0.95
    clip_param: float = 0.2
    value_loss_coef: float = 1.0
    use_clipped_value_loss: bool = True
    entropy_coef: float = 0.002
    aux_loss_coef: float = 1.0
    """Weight of the backbones' auxiliary loss (e.g. SSE load balancing)."""
    num_learning_epochs: int = 5
    num_mini_batches: int = 4
    max_grad_norm: float = 1.0
    chunk_len: int = 16
    """Sequence length of recurrent minibatches (steps); stateless policies use 1."""
    normalize_rewards: bool = True
    """Scale rewards by the running std of the discounted return."""
    reward_scale: float = 1.0
    """Constant factor applied to rewards before normalisation."""
    amp: str = "auto"
    """Mixed precision for updates: ``auto`` (bf16 on CUDA), ``bf16`` or ``off``."""

    def __post_init__(self) -> None:
        if self.schedule not in ("adaptive", "fixed"):
            raise ValueError(f"PPOCfg.schedule must be adaptive or fixed, got {self.schedule!r}")
        if self.amp not in ("auto", "bf16", "off"):
            raise ValueError(f"PPOCfg.amp must be auto, bf16 or off, got {self.amp!r}")
        if not (0 < self.gamma <= 1 and 0 <= self.lam <= 1 and self.learning_rate > 0):
            raise ValueError("PPOCfg: need 0 < gamma <= 1, 0 <= lam <= 1, learning_rate > 0")
        if self.num_learning_epochs < 1 or self.num_mini_batches < 1 or self.chunk_len < 1:
            raise ValueError("PPOCfg: epochs, minibatches and chunk_len must be >= 1")


class ReturnNormalizer(nn.Module):
    """Divides rewards by the running std of a per-environment discounted return (Engstrom et al. 2020).

    The statistics fold in the returns of the environments of all ranks of ``sync`` (each rank keeps
    the returns of its own ``num_envs``), so every rank divides by the same scale.
    """

    def __init__(self, num_envs: int, gamma: float, sync: Sync | None = None):
        super().__init__()
        self.gamma = gamma
        self.sync = sync or Sync()
        self.register_buffer("ret", torch.zeros(num_envs))
        self.register_buffer("var", torch.ones((), dtype=torch.float64))
        self.register_buffer("mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    @torch.no_grad()
    def __call__(self, rewards: torch.Tensor, dones: torch.Tensor) -> torch.Tensor:
        self.ret.mul_(self.gamma).add_(rewards)
        x = self.sync.gather_rows(self.ret.double())
        n = x.numel()
        total = self.count + n
        delta = x.mean() - self.mean
        w = n / total
        self.mean += delta * w
        self.var.copy_(self.var * (1 - w) + x.var(unbiased=False) * w + delta.square() * w * (1 - w))
        self.count.copy_(total)
        self.ret.masked_fill_(dones, 0.0)
        return rewards / float(torch.sqrt(self.var + 1e-8))

    @property
    def scale(self) -> float:
        """Current divisor of the rewards."""
        return float(torch.sqrt(self.var + 1e-8))


class PPO:
    """Acting, storing and updating for one ``ActorCritic`` over ``num_envs`` environments."""

    def __init__(
        self,
        policy: ActorCritic,
        cfg: PPOCfg,
        num_envs: int,
        num_steps: int,
        device: torch.device | str,
        generator: torch.Generator | None = None,
        sync: Sync | None = None,
    ):
        """``num_envs`` environments of this rank; ``sync`` the ranks' collectives (default: one process)."""
        self.policy, self.cfg, self.device = policy, cfg, torch.device(device)
        self.sync = sync or Sync()
        self.learning_rate = cfg.learning_rate
        self.fixed_lr: float | None = None
        """The learning rate when set (by a late schedule: the QAT cooldown), overriding ``cfg.schedule``."""
        self.optimizer = torch.optim.Adam(policy.optimizer_params(cfg.learning_rate), lr=cfg.learning_rate)
        self.chunk_len = cfg.chunk_len if policy.is_recurrent else 1
        self.storage = RolloutStorage(
            num_steps,
            num_envs,
            policy.num_obs,
            policy.num_actions,
            policy.initial_state(num_envs, device),
            self.chunk_len,
            device,
        )
        self.reward_norm = ReturnNormalizer(num_envs, cfg.gamma, self.sync).to(device)
        self.generator = generator
        amp = cfg.amp == "bf16" or (cfg.amp == "auto" and self.device.type == "cuda")
        self.autocast = torch.autocast(self.device.type, dtype=torch.bfloat16) if amp else _NullContext()

    # ------------------------------------------------------------------ rollouts
    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: State, resets: torch.Tensor) -> tuple[torch.Tensor, State, dict]:
        """Sample actions (N, A) for ``obs`` (N, D); ``resets`` (N,) marks episode starts.

        Returns the actions, the next state and what ``process_step`` needs to store.
        """
        p = self.policy
        if p.cfg.normalize_obs:
            p.obs_norm.update(self.sync.gather_rows(obs))
        cur = p.reset_state(state, resets)
        mean, value, next_state = p.step(obs, cur)
        dist = p.distribution(mean)
        actions = dist.sample()
        pending = {
            "obs": obs,
            "resets": resets,
            "state": state,
            "actions": actions,
            "mean": mean,
            "std": dist.stddev,
            "log_prob": dist.log_prob(actions).sum(-1),
            "values": value,
        }
        return actions, next_state, pending

    @torch.no_grad()
    def process_step(
        self, pending: dict, rewards: torch.Tensor, dones: torch.Tensor, extras: dict, next_state: State
    ) -> None:
        """Store the transition; time-outs bootstrap from ``V(final_obs)`` under ``next_state``."""
        cfg = self.cfg
        rewards = rewards.to(self.device).float() * cfg.reward_scale
        dones = dones.to(self.device)
        if cfg.normalize_rewards:
            rewards = self.reward_norm(rewards, dones)
        time_outs = extras.get("time_outs")
        if time_outs is not None and bool(time_outs.any()) and "final_env_ids" in extras:
            ids = extras["final_env_ids"].to(self.device)
            final_obs = extras["final_obs"].to(self.device)
            keep = time_outs.to(self.device)[ids]
            if bool(keep.any()):
                ids, final_obs = ids[keep], final_obs[keep]
                state = tuple(s[ids] for s in next_state)
                rewards = rewards.clone()
                rewards[ids] += cfg.gamma * self.policy.value_step(final_obs, state)
        self.storage.add(rewards=rewards, dones=dones, **pending)

    @torch.no_grad()
    def compute_returns(self, last_obs: torch.Tensor, state: State, resets: torch.Tensor) -> None:
        """GAE over the filled storage, bootstrapping from ``V(last_obs)``."""
        last_values = self.policy.value_step(last_obs, self.policy.reset_state(state, resets))
        self.storage.compute_returns(last_values, self.cfg.gamma, self.cfg.lam)

    # ------------------------------------------------------------------ update
    def update(self, num_mini_batches: int | None = None) -> dict[str, float]:
        """PPO epochs over the storage; returns mean losses, KL, learning rate and clip fraction.

        ``num_mini_batches`` overrides ``cfg.num_mini_batches`` (the late batch switch).
        """
        cfg, p = self.cfg, self.policy
        if self.fixed_lr is not None:
            self.learning_rate = self.fixed_lr
            self._apply_learning_rate()
        sums = {"loss/value": 0.0, "loss/surrogate": 0.0, "loss/entropy": 0.0, "loss/aux": 0.0}
        kls, clips, n = [], [], 0
        params = list(p.parameters())
        for mb in self.storage.minibatches(
            num_mini_batches or cfg.num_mini_batches,
            cfg.num_learning_epochs,
            self.generator,
            self.sync.mean_std(self.storage.advantages),
        ):
            with self.autocast:
                mean, value = p.forward_sequence(mb.obs, mb.state, mb.resets)
            mean, value = mean.float(), value.float()
            dist = p.distribution(mean)
            log_prob = dist.log_prob(mb.actions).sum(-1)
            entropy = dist.entropy().sum(-1).mean()
            with torch.no_grad():
                std = dist.stddev
                kl = (
                    (
                        torch.log(std / mb.old_std)
                        + (mb.old_std.square() + (mb.old_mean - mean).square()) / (2 * std.square())
                        - 0.5
                    )
                    .sum(-1)
                    .mean()
                )
                kls.append(float(self.sync.mean(kl)))
            if cfg.schedule == "adaptive" and self.fixed_lr is None:
                if kls[-1] > 2 * cfg.desired_kl:
                    self.learning_rate = max(cfg.min_lr, self.learning_rate / 1.5)
                elif 0 < kls[-1] < cfg.desired_kl / 2:
                    self.learning_rate = min(cfg.max_lr, self.learning_rate * 1.5)
                self._apply_learning_rate()
            ratio = torch.exp(log_prob - mb.old_log_prob)
            surr = -torch.min(
                mb.advantages * ratio,
                mb.advantages * ratio.clamp(1 - cfg.clip_param, 1 + cfg.clip_param),
            ).mean()
            if cfg.use_clipped_value_loss:
                clipped = mb.old_values + (value - mb.old_values).clamp(-cfg.clip_param, cfg.clip_param)
                value_loss = torch.max((value - mb.returns).square(), (clipped - mb.returns).square()).mean()
            else:
                value_loss = (value - mb.returns).square().mean()
            aux = p.aux_loss()
            loss = (
                surr + cfg.value_loss_coef * value_loss - cfg.entropy_coef * entropy + cfg.aux_loss_coef * aux
            )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.sync.mean_grads(params)
            nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            self.optimizer.step()
            with torch.no_grad():
                clips.append(float(((ratio - 1).abs() > cfg.clip_param).float().mean()))
            sums["loss/value"] += value_loss.item()
            sums["loss/surrogate"] += surr.item()
            sums["loss/entropy"] += entropy.item()
            sums["loss/aux"] += aux.item()
            n += 1
        self.storage.clear()
        out = {k: v / n for k, v in sums.items()}
        out["train/clip_fraction"] = sum(clips) / len(clips)
        # Losses and clip fraction averaged over ranks (the KLs already are); float64 keeps them exact.
        means = self.sync.mean(torch.tensor(list(out.values()), dtype=torch.float64, device=self.device))
        out = dict(zip(out, means.tolist(), strict=True))
        out["train/kl"] = sum(kls) / len(kls)
        out["train/learning_rate"] = self.learning_rate
        out["train/action_std"] = p.log_std.detach().exp().mean().item()
        out["train/reward_scale"] = self.reward_norm.scale if cfg.normalize_rewards else 1.0
        if not all(math.isfinite(v) for v in out.values()):
            raise FloatingPointError(f"PPO update produced non-finite values: {out}")
        return out

    # ------------------------------------------------------------------ checkpoint state
    def state_dict(self) -> dict:
        """Everything needed to continue training (policy, optimiser, normalisers, lr)."""
        return {
            "policy": self.policy.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "reward_norm": self.reward_norm.state_dict(),
            "learning_rate": self.learning_rate,
        }

    def load_state_dict(self, state: dict) -> None:
        self.policy.load_state_dict(state["policy"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.reward_norm.load_state_dict(state["reward_norm"])
        self.learning_rate = state["learning_rate"]
        self._apply_learning_rate()

    def _apply_learning_rate(self) -> None:
        """Set every param group's rate to ``learning_rate`` times its muP ``lr_mult`` (1 without muP)."""
        for group in self.optimizer.param_groups:
            group["lr"] = self.learning_rate * group.get("lr_mult", 1.0)


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
