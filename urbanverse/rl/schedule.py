"""Late-training schedules of a PPO run: QAT fused with a learning-rate cooldown, late batch switch.

Both act on ``progress``, the fraction of the run's budget spent, in ``[0, 1]``: environment
steps over ``total_steps``, or training minutes over ``max_minutes`` when that budget is the
one that ends the run first.

* QAT (``shared/reference/backbones.md`` section 3): from ``1 - qat_fraction`` on, every Linear
  of the actor (backbone and action head) trains with fake int8 activations and int8 / int4
  weights, and the learning rate falls linearly from its value at the switch to 0 at the end
  (the cooldown is the QAT phase; ``urbanverse.nn.qat.QATSchedule``). The KL-adaptive schedule
  is suspended meanwhile. The critic stays float: it is not deployed.
* Late batch switch (section 4, ``urbanverse.rl.batch_schedule``): from ``batch_switch_at`` on,
  PPO minibatches are ``batch_large_mult`` times larger (fewer per epoch).
"""

from __future__ import annotations

import dataclasses

from torch import nn

from urbanverse.nn.qat import QATCfg, QATLinear, QATSchedule, prepare_qat, set_qat_enabled
from urbanverse.rl.batch_schedule import BatchScheduleCfg

#: Resolution of the QAT cooldown: the schedule runs on progress in thousandths of the budget.
PROGRESS_STEPS = 1000
#: Modules of ``ActorCritic`` kept in float under QAT (the critic is only used in training).
CRITIC_MODULES = ("critic_encoder", "critic_backbone", "critic_head")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScheduleCfg:
    """Late-training schedules (both off by default)."""

    qat_fraction: float = 0.0
    """Last fraction of the budget trained with fake quantisation of the actor and a linear LR
    cooldown to 0 (0: off; 1: the whole run, e.g. a QAT fine-tune with ``init_from``)."""
    qat_weight_bits: int = 8
    """Weight grid under QAT: 8 (int8) or 4 (int4); activations are int8."""
    batch_large_mult: int = 1
    """From ``batch_switch_at`` on, PPO minibatches are this many times larger (1: off). Must
    divide ``ppo.num_mini_batches``."""
    batch_switch_at: float = 0.8
    """Fraction of the budget at which the minibatch grows."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.qat_fraction <= 1.0:
            raise ValueError(f"ScheduleCfg.qat_fraction must be in [0, 1], got {self.qat_fraction}")
        if self.qat_weight_bits not in (4, 8):
            raise ValueError(f"ScheduleCfg.qat_weight_bits must be 8 or 4, got {self.qat_weight_bits}")
        BatchScheduleCfg(large_mult=self.batch_large_mult, switch_at=self.batch_switch_at)  # validates

    @property
    def qat(self) -> bool:
        """Whether the run trains with QAT at some point."""
        return self.qat_fraction > 0


def prepare_actor_qat(policy: nn.Module, cfg: ScheduleCfg) -> nn.Module:
    """Give ``policy`` (an ``ActorCritic``) QAT Linears in its actor, switched off; returns it."""
    return prepare_qat(policy, QATCfg(weight_bits=cfg.qat_weight_bits, keep_float=CRITIC_MODULES))


def qat_enabled(policy: nn.Module) -> bool:
    """Whether fake quantisation is on in ``policy``."""
    return any(m.enabled for m in policy.modules() if isinstance(m, QATLinear))


class LateSchedule:
    """Applies :class:`ScheduleCfg` to a PPO learner at each iteration.

    ``apply(progress)`` switches QAT on once (and holds the learning rate at the switch as
    the cooldown's peak), sets the cooldown learning rate, and returns the number of PPO
    minibatches for the update. Its state (whether QAT is on, the peak) goes in checkpoints.
    """

    def __init__(self, cfg: ScheduleCfg, policy: nn.Module, alg, num_mini_batches: int, rollout_size: int):
        self.cfg, self.policy, self.alg = cfg, policy, alg
        self.qat_peak_lr: float | None = None
        self.qat = QATSchedule(total_steps=PROGRESS_STEPS, qat_fraction=cfg.qat_fraction) if cfg.qat else None
        self.batches = BatchScheduleCfg(
            small=rollout_size // num_mini_batches,
            large_mult=cfg.batch_large_mult,
            switch_at=cfg.batch_switch_at,
        )
        self.rollout_size = rollout_size

    def apply(self, progress: float) -> int:
        """Set QAT and the learning rate for ``progress`` in ``[0, 1]``; returns PPO minibatches per epoch."""
        progress = min(max(progress, 0.0), 1.0)
        step = min(int(progress * PROGRESS_STEPS), PROGRESS_STEPS - 1)
        if self.qat is not None and self.qat.qat_active(step):
            if self.qat_peak_lr is None:
                self.qat_peak_lr = self.alg.learning_rate
                set_qat_enabled(self.policy, True)
            self.alg.fixed_lr = self.qat_peak_lr * self.qat.lr_scale(step)
        return self.batches.num_minibatches_at(progress, self.rollout_size)

    def state_dict(self) -> dict:
        return {"qat_active": self.qat_peak_lr is not None, "qat_peak_lr": self.qat_peak_lr}

    def load_state_dict(self, state: dict) -> None:
        """Restore the schedule; call before loading the policy weights (switching QAT on resets
        the activation grids, which the weights' state then restores)."""
        self.qat_peak_lr = state.get("qat_peak_lr")
        if state.get("qat_active"):
            set_qat_enabled(self.policy, True)
