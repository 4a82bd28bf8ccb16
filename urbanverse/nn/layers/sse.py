"""Sparse State Expansion (SSE) layer, GLA and GDN variants (Pan et al., arXiv 2507.16577).

Each head keeps one shared dense state ``S0`` and ``N`` partition states ``S^1..S^N``, all
``(Dk, Dv)`` matrices. A softmax router ``p_t = softmax(W_e x_t)`` over the N partitions picks
the top-k partitions ``T_t``; each selected partition ``i`` is written with the key
``p_{t,i} k2_t`` and read with the query ``p_{t,i} q2_t``; an unselected partition is not
touched at all (no decay, no write, no read). With ``num_partitions = 0`` the layer is dense
gated linear attention (the shared branch only), used as the GLA baseline.

Sequence form (training): every partition is run as its own batch row of the chunked op on
the full sequence with masked inputs, log-decay 0 (and beta 0 for GDN) plus zero key and zero
query where the partition is not selected. Such a token is an exact identity step for that
partition (``e^0 = 1``, nothing added), so this equals the step form exactly; it costs
``(1 + N)`` dense passes instead of the ``(1 + k)`` of fla's sort-by-(sequence, partition)
varlen trick, which we do not need at policy sizes (N = 4) and which would need a varlen op.

GDN variant: q and k are L2-normalised *before* the router weight scales them. fla's kernel
normalises inside, which cancels ``p`` (the router then learns only from the aux loss); here
``p`` survives, so a selected partition is written with strength ``beta p^2`` and read with
``p q``, and the router also learns from the task loss.

State per layer: ``S0`` ``(B, H, Dk, Dv)`` and, when ``N > 0``, ``Sp`` ``(B, N, H, Dk, Dv)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from urbanverse.nn.ops.delta_rule import gated_delta_rule, gated_delta_step
from urbanverse.nn.ops.fla_dispatch import Backend
from urbanverse.nn.ops.gla import gla, gla_step


@dataclass(frozen=True, kw_only=True)
class SSECfg:
    """Configuration of one :class:`SSELayer`."""

    d_model: int
    """Input and output width d (features)."""
    num_heads: int = 4
    """Heads H."""
    head_k_dim: int = 32
    """Key/query width per head Dk; each state is ``Dk x Dv``."""
    head_v_dim: int = 32
    """Value width per head Dv; also the rank of the q/k LoRA and of the output-gate projection."""
    num_partitions: int = 4
    """Sparse partition states N per head; 0 gives dense GLA / GDN (shared state only)."""
    top_k: int = 1
    """Partitions selected (written and read) per token, ``1 <= top_k <= N``; must be 0 when N = 0."""
    variant: Literal["gla", "gdn"] = "gla"
    """State update: gated linear attention (softmax keys) or gated delta rule (L2-normalised q, k)."""
    gate_low_rank: int = 16
    """Rank of the GLA log-decay projection."""
    gate_logit_normalizer: float = 16.0
    """GLA log-decay is ``logsigmoid(W_g x) / gate_logit_normalizer`` (per step, natural log)."""
    chunk_size: int = 16
    """Chunk length of the torch chunked ops (tokens); affects speed and memory, not results."""
    norm_eps: float = 1e-5
    """Epsilon of the gated RMSNorm on the head outputs."""
    backend: Backend = "auto"
    """Sequence-form kernels: 'auto' (fla on CUDA if installed), 'torch' or 'fla'."""

    def __post_init__(self) -> None:
        for name in ("d_model", "num_heads", "head_k_dim", "head_v_dim", "gate_low_rank", "chunk_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"SSECfg.{name} must be >= 1, got {getattr(self, name)}")
        if self.num_partitions < 0:
            raise ValueError(f"SSECfg.num_partitions must be >= 0, got {self.num_partitions}")
        if self.num_partitions == 0 and self.top_k != 0:
            raise ValueError("SSECfg.top_k must be 0 when num_partitions is 0 (dense layer)")
        if self.num_partitions > 0 and not 1 <= self.top_k <= self.num_partitions:
            raise ValueError(f"SSECfg.top_k must be in [1, {self.num_partitions}], got {self.top_k}")
        if self.variant not in ("gla", "gdn"):
            raise ValueError(f"SSECfg.variant must be 'gla' or 'gdn', got {self.variant!r}")
        if self.backend not in ("auto", "torch", "fla"):
            raise ValueError(f"SSECfg.backend must be 'auto', 'torch' or 'fla', got {self.backend!r}")
        if self.gate_logit_normalizer <= 0 or self.norm_eps <= 0:
            raise ValueError("SSECfg.gate_logit_normalizer and norm_eps must be > 0")


def load_balance_loss(probs: torch.Tensor, selected: torch.Tensor, top_k: int) -> torch.Tensor:
    """Switch-style balance loss ``(N / k) * sum_i P_i f_i`` over all tokens.

    ``probs``: router probabilities ``(..., N)``; ``selected``: bool ``(..., N)``, True for the
    top-k partitions of each token. ``P_i`` is the mean probability, ``f_i`` the fraction of
    tokens that selected partition i. Equals 1 for a uniform router.
    """
    n = probs.shape[-1]
    p_mean = probs.reshape(-1, n).mean(0)
    f = selected.reshape(-1, n).to(probs.dtype).mean(0)
    return (n / top_k) * (p_mean * f).sum()


class _Decay(nn.Module):
    """Per-branch log-decay ``g`` (and ``beta`` for GDN) from the layer input ``x`` ``(..., d)``.

    GLA: ``g = logsigmoid(W2 W1 x + b) / normalizer`` of shape ``(..., H, Dk)``, beta None.
    GDN: ``g = -exp(A_log) * softplus(W_a x + dt_bias)`` ``(..., H)`` and ``beta = sigmoid(W_b x)``.
    """

    def __init__(self, cfg: SSECfg) -> None:
        super().__init__()
        h, d = cfg.num_heads, cfg.d_model
        self.variant, self.normalizer, self.shape = (
            cfg.variant,
            cfg.gate_logit_normalizer,
            (h, cfg.head_k_dim),
        )
        if cfg.variant == "gla":
            self.proj = nn.Sequential(
                nn.Linear(d, cfg.gate_low_rank, bias=False), nn.Linear(cfg.gate_low_rank, h * cfg.head_k_dim)
            )
        else:
            self.a_proj = nn.Linear(d, h, bias=False)
            self.b_proj = nn.Linear(d, h, bias=False)
            self.a_log = nn.Parameter(torch.log(torch.empty(h).uniform_(1.0, 16.0)))
            dt = torch.exp(torch.rand(h) * (math.log(0.1) - math.log(0.001)) + math.log(0.001))
            self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self.variant == "gla":
            return F.logsigmoid(self.proj(x)).unflatten(-1, self.shape) / self.normalizer, None
        g = -torch.exp(self.a_log) * F.softplus(self.a_proj(x) + self.dt_bias)
        return g, torch.sigmoid(self.b_proj(x))


class SSELayer(nn.Module):
    """SSE token mixer ``(..., d) -> (..., d)`` with a step form and an exact sequence form."""

    def __init__(self, cfg: SSECfg) -> None:
        super().__init__()
        self.cfg = cfg
        d, h, dk, dv, n = cfg.d_model, cfg.num_heads, cfg.head_k_dim, cfg.head_v_dim, cfg.num_partitions
        self.q_proj = nn.Linear(d, h * dk, bias=False)
        self.k_proj = nn.Linear(d, h * dk, bias=False)
        self.v_proj = nn.Linear(d, h * dv, bias=False)
        self.decay_shared = _Decay(cfg)
        if n > 0:
            self.q_lora = nn.Sequential(nn.Linear(d, dv, bias=False), nn.Linear(dv, h * dk, bias=False))
            self.k_lora = nn.Sequential(nn.Linear(d, dv, bias=False), nn.Linear(dv, h * dk, bias=False))
            self.router = nn.Linear(d, n, bias=False)
            self.decay_part = _Decay(cfg)
        self.gate_proj = nn.Sequential(nn.Linear(d, dv, bias=False), nn.Linear(dv, h * dv))
        self.norm_weight = nn.Parameter(torch.ones(dv))
        self.o_proj = nn.Linear(h * dv, d, bias=False)
        self.last_aux_loss: torch.Tensor | None = None
        """Load-balancing loss of the last call (None for a dense layer or before any call)."""

    # ----------------------------------------------------------------------------- helpers
    def initial_state(self, batch: int, device: torch.device | str | None, dtype: torch.dtype) -> tuple:
        """Zero states: ``S0`` ``(B, H, Dk, Dv)`` and, if N > 0, ``Sp`` ``(B, N, H, Dk, Dv)`` (>= float32)."""
        c = self.cfg
        dt = torch.promote_types(dtype, torch.float32)
        s0 = torch.zeros(batch, c.num_heads, c.head_k_dim, c.head_v_dim, device=device, dtype=dt)
        if c.num_partitions == 0:
            return (s0,)
        return s0, torch.zeros((batch, c.num_partitions) + tuple(s0.shape[1:]), device=device, dtype=dt)

    def _feature(self, a: torch.Tensor, key: bool) -> torch.Tensor:
        """Feature map on ``(..., H, Dk)``: GLA keys softmax over Dk, else silu (then L2 norm for GDN)."""
        if self.cfg.variant == "gla":
            return torch.softmax(a, dim=-1) if key else F.silu(a)
        return F.normalize(F.silu(a), dim=-1)

    def _project(self, x: torch.Tensor) -> dict[str, torch.Tensor | None]:
        """All per-token quantities for ``x`` ``(..., d)``; head tensors are ``(..., H, D)``."""
        c = self.cfg
        hk = (c.num_heads, c.head_k_dim)
        aq, ak = self.q_proj(x).unflatten(-1, hk), self.k_proj(x).unflatten(-1, hk)
        out: dict[str, torch.Tensor | None] = {
            "q1": self._feature(aq, key=False),
            "k1": self._feature(ak, key=True),
            "v": F.silu(self.v_proj(x)).unflatten(-1, (c.num_heads, c.head_v_dim)),
        }
        out["g1"], out["beta1"] = self.decay_shared(x)
        if c.num_partitions > 0:
            out["q2"] = self._feature(aq + self.q_lora(x).unflatten(-1, hk), key=False)
            out["k2"] = self._feature(ak + self.k_lora(x).unflatten(-1, hk), key=True)
            out["g2"], out["beta2"] = self.decay_part(x)
            probs = torch.softmax(self.router(x), dim=-1)
            top_val, top_idx = torch.topk(probs, c.top_k, dim=-1)
            out["probs"], out["top_val"], out["top_idx"] = probs, top_val, top_idx
            selected = torch.zeros_like(probs, dtype=torch.bool).scatter(-1, top_idx, True)
            out["selected"] = selected
            self.last_aux_loss = load_balance_loss(probs, selected, c.top_k)
        return out

    def _output(self, o: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Gated RMSNorm over Dv per head, then the output projection. ``o``: ``(..., H, Dv)``."""
        o = o.to(x.dtype)
        o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + self.cfg.norm_eps) * self.norm_weight
        o = o * F.silu(self.gate_proj(x).unflatten(-1, o.shape[-2:]))
        return self.o_proj(o.flatten(-2))

    def _op_step(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        g: torch.Tensor,
        beta: torch.Tensor | None,
        state: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One step of the variant's op on ``(B, H, D)`` tensors; returns ``(B, H, Dv)`` and the state."""
        scale = self.cfg.head_k_dim**-0.5
        if self.cfg.variant == "gla":
            return gla_step(q, k, v, g, state, scale)
        return gated_delta_step(q, k, v, g, beta, state, scale)

    # ----------------------------------------------------------------------------- forms
    def step(self, x: torch.Tensor, state: tuple) -> tuple[torch.Tensor, tuple]:
        """One token per row. ``x``: ``(B, d)`` -> ``(B, d)`` and the next state.

        Only the top-k partitions of each row are gathered, updated and scattered back; the
        other partitions' tensors are not written.
        """
        f = self._project(x)
        o, s0 = self._op_step(f["q1"], f["k1"], f["v"], f["g1"], f["beta1"], state[0])
        if self.cfg.num_partitions == 0:
            return self._output(o, x), (s0,)
        sp = state[1]
        rows = torch.arange(x.shape[0], device=x.device)
        for j in range(self.cfg.top_k):
            idx, w = f["top_idx"][:, j], f["top_val"][:, j, None, None]
            o_j, s_j = self._op_step(f["q2"] * w, f["k2"] * w, f["v"], f["g2"], f["beta2"], sp[rows, idx])
            sp = sp.index_put((rows, idx), s_j)
            o = o + o_j
        return self._output(o, x), (s0, sp)

    def forward_sequence(
        self, x: torch.Tensor, state: tuple, resets: torch.Tensor | None
    ) -> tuple[torch.Tensor, tuple]:
        """``x``: ``(B, L, d)``, ``resets``: ``(B, L)`` bool -> ``(B, L, d)`` and the final state."""
        c = self.cfg
        b = x.shape[0]
        f = self._project(x)
        q, k, g, beta = [f["q1"]], [f["k1"]], [f["g1"]], [f["beta1"]]
        if c.num_partitions > 0:
            w = f["probs"] * f["selected"]  # (B, L, N): router weight where selected, else 0
            sel = f["selected"].to(w.dtype)
            for i in range(c.num_partitions):
                q.append(f["q2"] * w[..., i, None, None])
                k.append(f["k2"] * w[..., i, None, None])
                g.append(f["g2"] * (sel[..., i, None, None] if c.variant == "gla" else sel[..., i, None]))
                if c.variant == "gdn":
                    beta.append(f["beta2"] * sel[..., i, None])
        rows = len(q)
        init = state[0] if rows == 1 else torch.cat([state[0], state[1].transpose(0, 1).flatten(0, 1)])
        args = dict(
            initial_state=init,
            resets=None if resets is None else resets.repeat(rows, 1),
            chunk_size=c.chunk_size,
            backend=c.backend,
        )
        qs, ks, vs, gs = torch.cat(q), torch.cat(k), f["v"].repeat(rows, 1, 1, 1), torch.cat(g)
        if c.variant == "gla":
            o, final = gla(qs, ks, vs, gs, **args)
        else:
            o, final = gated_delta_rule(qs, ks, vs, gs, torch.cat(beta), **args)
        o = o.unflatten(0, (rows, b)).sum(0)
        if rows == 1:
            return self._output(o, x), (final,)
        return self._output(o, x), (final[:b], final[b:].unflatten(0, (c.num_partitions, b)).transpose(0, 1))
