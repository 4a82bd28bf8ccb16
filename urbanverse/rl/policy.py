"""Gaussian actor-critic over any backbone, with running observation normalisation.

The actor and the critic each own a backbone (``urbanverse.nn.backbones``) built from the
same name and overrides, so a recurrent critic keeps its own memory. The recurrent state of
the whole policy is the flat tuple ``actor_state + critic_state`` (every tensor batch-first),
which rollout storage keeps per environment and :func:`~urbanverse.nn.backbones.reset_rows`
resets row by row. Actions are a diagonal Gaussian with a state-independent, learned
log standard deviation; the environment clamps them to [-1, 1]. With
``PolicyCfg.mup_base_width`` set, the policy trains under muP (``urbanverse.nn.mup``): its
heads start at zero and :meth:`ActorCritic.optimizer_params` gives Adam per-group learning rates.

With ``PolicyCfg.encoder`` set, the camera images inside the flat observation go through an
image encoder (``urbanverse.nn.encoders``) before the core: ``obs (B, D) -> [encoder(images),
normalised vector part] -> backbone -> heads`` (``urbanverse.rl.image_obs``). The observation
interface stays flat ``(B, D)``, so rollout storage and PPO do not change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping

import torch
from torch import nn

from urbanverse.nn.backbones import State, make_backbone, reset_rows
from urbanverse.nn.encoders import ENCODER_NAMES, encoder_config
from urbanverse.nn.mup import MUP_WIDTH_FIELDS, backbone_width, mup_param_groups, with_width
from urbanverse.rl.image_obs import ImageFeatures, ObsLayout, take_ranges


class RunningNorm(nn.Module):
    """Running mean / variance of ``(B, D)`` samples (parallel Welford); ``forward`` standardises and clips.

    Statistics live in buffers, so they are saved with the module's ``state_dict`` and exported.
    """

    def __init__(self, dim: int, clip: float = 10.0, eps: float = 1e-8):
        super().__init__()
        self.clip, self.eps = clip, eps
        self.register_buffer("mean", torch.zeros(dim))
        self.register_buffer("var", torch.ones(dim))
        self.register_buffer("count", torch.tensor(1e-4, dtype=torch.float64))

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Fold a batch ``x`` (B, D) into the statistics."""
        x = x.reshape(-1, self.mean.numel()).float()
        n = x.shape[0]
        if n == 0:
            return
        b_mean, b_var = x.mean(0), x.var(0, unbiased=False)
        total = self.count + n
        delta = b_mean - self.mean
        w = float(n / total)
        self.mean += delta * w
        self.var.copy_((self.var * (1 - w) + b_var * w + delta.square() * w * (1 - w)).clamp_min(0))
        self.count.copy_(total)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ((x - self.mean) / torch.sqrt(self.var + self.eps)).clamp(-self.clip, self.clip)


class VectorNorm(RunningNorm):
    """A :class:`RunningNorm` of the non-image entries of flat observations ``(..., D)``.

    ``update`` and ``forward`` take the whole observation and use only the entries in ``ranges``
    (``[start, stop)`` pairs), so image pixels never enter the statistics; ``forward`` returns
    the normalised ``(..., sum of range lengths)`` vector part.
    """

    def __init__(self, ranges: tuple[tuple[int, int], ...], clip: float = 10.0, eps: float = 1e-8):
        super().__init__(sum(b - a for a, b in ranges), clip, eps)
        self.ranges = tuple(ranges)

    def vector_index(self) -> torch.Tensor:
        """Positions (long) of the normalised entries in the flat observation."""
        return torch.cat([torch.arange(a, b) for a, b in self.ranges] or [torch.zeros(0, dtype=torch.long)])

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        if self.ranges:
            super().update(take_ranges(x, self.ranges))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(take_ranges(x, self.ranges))


@dataclasses.dataclass(frozen=True, kw_only=True)
class PolicyCfg:
    """Actor-critic settings."""

    backbone: str = "mlp"
    """Backbone name (``urbanverse.nn.backbones.BACKBONE_NAMES``)."""
    backbone_overrides: dict = dataclasses.field(default_factory=dict)
    """Fields of the backbone's config, e.g. ``{"hidden": 256}``."""
    init_noise_std: float = 1.0
    """Initial action standard deviation (actions are in [-1, 1])."""
    normalize_obs: bool = True
    """Standardise observations with running statistics gathered during rollouts."""
    obs_clip: float = 10.0
    """Clip normalised observations to +- this."""
    mup_base_width: int | None = None
    """Train under the maximal-update parameterisation (muP) relative to this backbone width (its
    ``hidden`` or ``d_model``), so learning rates tuned at the base width carry over to wider
    backbones; None (default): standard parameterisation. Under muP every Linear weight whose
    fan-in grows with the width (hidden matrices and both heads) gets Adam learning rate
    ``learning_rate * base / width``, the rest ``learning_rate``; both heads start at zero; the
    backbones keep their init (its variance is already ``1 / fan_in``). Backbones: mlp,
    ultramem, gla, sse, sse-h. ``--set policy.mup_base_width=64``. With an ``encoder`` the
    encoder keeps its width and learning rate (its fan-ins do not grow with the core's width)."""
    encoder: str | None = None
    """Image encoder (``urbanverse.nn.encoders.ENCODER_NAMES``: ``cnn``, ``nature``, ``impala``) that
    turns the camera images of the observation into features for the core; None (or ``"none"``):
    the images enter the core flattened, as every other entry. The image pixels are only centred
    (``pixel - 0.5``); the running normalisation covers the other entries alone."""
    encoder_overrides: dict = dataclasses.field(default_factory=dict)
    """Fields of the encoder's config, e.g. ``{"out_dim": 256}``."""
    share_encoder: bool = True
    """With an ``encoder``: the actor and the critic use one encoder, trained by both losses (the
    critic's through ``ppo.value_loss_coef``); False gives the critic its own, which doubles the
    encoder's cost (the largest part of a camera policy's compute on CPUs)."""

    def __post_init__(self) -> None:
        if self.init_noise_std <= 0 or self.obs_clip <= 0:
            raise ValueError("PolicyCfg: need init_noise_std > 0 and obs_clip > 0")
        if self.encoder == "none":
            object.__setattr__(self, "encoder", None)
        if self.encoder is not None:
            if self.encoder not in ENCODER_NAMES:
                raise ValueError(
                    f"PolicyCfg.encoder: unknown encoder {self.encoder!r}; valid choices: "
                    f"{', '.join(ENCODER_NAMES)} or none"
                )
            encoder_config(self.encoder, **self.encoder_overrides)  # validates the fields
        elif self.encoder_overrides:
            raise ValueError("PolicyCfg.encoder_overrides: set without an encoder")
        if self.mup_base_width is not None:
            if self.mup_base_width < 1:
                raise ValueError(f"PolicyCfg.mup_base_width must be >= 1 or null, got {self.mup_base_width}")
            if self.backbone not in MUP_WIDTH_FIELDS:
                raise ValueError(
                    f"PolicyCfg.mup_base_width: muP covers the backbones {', '.join(MUP_WIDTH_FIELDS)}, "
                    f"not {self.backbone!r}"
                )

    @property
    def mup(self) -> bool:
        """Whether the policy trains under muP."""
        return self.mup_base_width is not None

    def at_base_width(self) -> PolicyCfg:
        """This config with the backbone at ``mup_base_width`` (the muP base model's shapes)."""
        overrides = with_width(self.backbone, self.backbone_overrides, self.mup_base_width)
        return dataclasses.replace(self, backbone_overrides=overrides)

    @property
    def width_mult(self) -> float:
        """Backbone width over ``mup_base_width`` (1 without muP)."""
        if not self.mup:
            return 1.0
        return backbone_width(self.backbone, self.backbone_overrides) / self.mup_base_width


class ActorCritic(nn.Module):
    """``obs (B, D) -> action distribution (B, A), value (B,)`` with backbone state carried along.

    ``obs_layout`` (name -> slice of the flat observation, the environment's) and ``image_shapes``
    (name -> ``(H, W, C)`` of its image entries) are needed with ``cfg.encoder`` only; they are
    kept on the policy (and in checkpoints) to rebuild it. With an encoder the actor and critic
    share it by default (``cfg.share_encoder``): one encoder pass per step and minibatch serves
    both, half the cost of one each on CPUs, and the critic's value loss trains it too.
    """

    def __init__(
        self,
        num_obs: int,
        num_actions: int,
        cfg: PolicyCfg,
        obs_layout: Mapping[str, object] | None = None,
        image_shapes: Mapping[str, tuple[int, ...]] | None = None,
    ):
        super().__init__()
        self.cfg, self.num_obs, self.num_actions = cfg, num_obs, num_actions
        self.obs_layout = dict(obs_layout) if obs_layout is not None else None
        self.image_shapes = {k: tuple(int(v) for v in s) for k, s in (image_shapes or {}).items()}
        self.encoder: ImageFeatures | None = None
        self.critic_encoder: ImageFeatures | None = None
        if cfg.encoder is None:
            self.obs_norm = RunningNorm(num_obs, clip=cfg.obs_clip)
            in_dim = num_obs
        else:
            if obs_layout is None:
                raise ValueError(f"encoder {cfg.encoder!r}: the policy needs the observation layout")
            layout = ObsLayout(num_obs, obs_layout, self.image_shapes)
            self.obs_norm = VectorNorm(layout.vector_ranges, clip=cfg.obs_clip)
            self.encoder = ImageFeatures(layout, cfg.encoder, cfg.encoder_overrides)
            if not cfg.share_encoder:
                self.critic_encoder = ImageFeatures(layout, cfg.encoder, cfg.encoder_overrides)
            in_dim = self.encoder.out_dim
        self.actor_backbone = make_backbone(cfg.backbone, in_dim, **cfg.backbone_overrides)
        self.critic_backbone = make_backbone(cfg.backbone, in_dim, **cfg.backbone_overrides)
        self.actor_head = nn.Linear(self.actor_backbone.out_dim, num_actions)
        self.critic_head = nn.Linear(self.critic_backbone.out_dim, 1)
        self.log_std = nn.Parameter(
            torch.full((num_actions,), float(torch.log(torch.tensor(cfg.init_noise_std))))
        )
        if cfg.mup:  # muP readouts start at zero
            for head in (self.actor_head, self.critic_head):
                nn.init.zeros_(head.weight)
                nn.init.zeros_(head.bias)
        else:
            nn.init.orthogonal_(self.actor_head.weight, gain=0.01)
            nn.init.zeros_(self.actor_head.bias)
            nn.init.orthogonal_(self.critic_head.weight, gain=1.0)
            nn.init.zeros_(self.critic_head.bias)
        self._n_actor_state = len(self.actor_backbone.initial_state(1, "cpu"))

    def _inputs(self, obs: torch.Tensor, critic_only: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Core inputs of the actor and the critic from raw ``obs`` (..., D) (the same tensor when shared)."""
        norm = self.obs_norm if self.cfg.normalize_obs else None
        if self.encoder is None:
            x = norm(obs) if norm is not None else obs
            return x, x
        if self.critic_encoder is None:
            x = self.encoder(obs, norm)
            return x, x
        xc = self.critic_encoder(obs, norm)
        return (xc if critic_only else self.encoder(obs, norm)), xc

    def optimizer_params(self, lr: float) -> Iterator[nn.Parameter] | list[dict]:
        """What Adam trains: all parameters at ``lr``, or under muP param groups with ``lr_mult``.

        The muP groups compare every Linear's fan-in with a twin of this policy built at the
        base width (under a forked RNG, so building it draws nothing from the run's stream).
        """
        if not self.cfg.mup:
            return self.parameters()
        with torch.random.fork_rng(devices=[]):
            base = ActorCritic(
                self.num_obs, self.num_actions, self.cfg.at_base_width(), self.obs_layout, self.image_shapes
            )
        return mup_param_groups(self, base, lr)

    # ------------------------------------------------------------------ state
    @property
    def is_recurrent(self) -> bool:
        """True when the backbone carries state between steps."""
        return self._n_actor_state > 0 or len(self.critic_backbone.initial_state(1, "cpu")) > 0

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        """Episode-start state for ``batch`` rows: actor tensors then critic tensors."""
        return self.actor_backbone.initial_state(batch, device) + self.critic_backbone.initial_state(
            batch, device
        )

    def _split(self, state: State) -> tuple[State, State]:
        return tuple(state[: self._n_actor_state]), tuple(state[self._n_actor_state :])

    def reset_state(self, state: State, resets: torch.Tensor) -> State:
        """Rows of ``state`` where ``resets`` (B,) is True set back to the episode start."""
        if not state:
            return state
        return reset_rows(state, resets, self.initial_state(resets.shape[0], resets.device))

    # ------------------------------------------------------------------ per step (rollouts)
    def step(self, obs: torch.Tensor, state: State) -> tuple[torch.Tensor, torch.Tensor, State]:
        """One step: ``obs`` (B, D) raw -> action mean (B, A), value (B,), next state."""
        xa, xc = self._inputs(obs)
        sa, sc = self._split(state)
        ya, sa = self.actor_backbone.step(xa, sa)
        yc, sc = self.critic_backbone.step(xc, sc)
        return self.actor_head(ya), self.critic_head(yc).squeeze(-1), sa + sc

    def value_step(self, obs: torch.Tensor, state: State) -> torch.Tensor:
        """Critic value (B,) of ``obs`` (B, D) from ``state`` (the actor part is ignored)."""
        _, xc = self._inputs(obs, critic_only=True)
        yc, _ = self.critic_backbone.step(xc, self._split(state)[1])
        return self.critic_head(yc).squeeze(-1)

    # ------------------------------------------------------------------ sequences (updates)
    def forward_sequence(
        self, obs: torch.Tensor, state: State, resets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs`` (B, L, D), ``state`` at the chunk start, ``resets`` (B, L) -> mean (B, L, A), value (B, L).

        ``resets[b, t]`` sets row ``b`` back to the initial state before ``obs[b, t]``. An image
        encoder sees the ``B * L`` observations as one batch.
        """
        xa, xc = self._inputs(obs)
        sa, sc = self._split(state)
        ya, _ = self.actor_backbone.forward_sequence(xa, sa, resets)
        yc, _ = self.critic_backbone.forward_sequence(xc, sc, resets)
        return self.actor_head(ya), self.critic_head(yc).squeeze(-1)

    def distribution(self, mean: torch.Tensor) -> torch.distributions.Normal:
        """Diagonal Gaussian around ``mean`` (..., A) with the learned standard deviation."""
        return torch.distributions.Normal(mean, self.log_std.exp().expand_as(mean))

    def aux_loss(self) -> torch.Tensor:
        """Sum of the backbones' auxiliary losses from the last forward call."""
        return self.actor_backbone.aux_loss() + self.critic_backbone.aux_loss()


class DeterministicActor(nn.Module):
    """Deployment view: ``(obs, *state) -> (action mean clamped to [-1, 1], *next_state)``.

    Only the actor backbone's state is carried (the critic is not needed to act). Used by
    ``urbanverse export`` and ``urbanverse eval``. With an image encoder it holds the actor's
    (``encoder``) as well.
    """

    def __init__(self, policy: ActorCritic):
        super().__init__()
        self.obs_norm = policy.obs_norm
        self.encoder = policy.encoder
        self.backbone = policy.actor_backbone
        self.head = policy.actor_head
        self.normalize = policy.cfg.normalize_obs

    def initial_state(self, batch: int, device: torch.device | str | None = None) -> State:
        """Actor state at an episode start."""
        return self.backbone.initial_state(batch, device)

    def forward(self, obs: torch.Tensor, *state: torch.Tensor):
        if self.encoder is not None:
            x = self.encoder(obs, self.obs_norm if self.normalize else None)
        else:
            x = self.obs_norm(obs) if self.normalize else obs
        y, next_state = self.backbone.step(x, tuple(state))
        action = self.head(y).clamp(-1.0, 1.0)
        return (action, *next_state) if next_state else action
