"""UltraMemV2 memory layer: Tucker-decomposed query-key retrieval over a large value table.

Follows Huang et al., arXiv 2508.18756 (reference code ``olmo/ultramem_layer_v2.py``), see
``shared/reference/backbones.md`` section 2. Per token ``x`` of width ``d``:

1. Query ``q = LN(W_q x)`` split into a row and a column half (``kdim`` each). Row/column
   keys ``K[2, Kn, kdim, r]`` (layer-normed over ``kdim``) give rank-``r`` scores
   ``sr[a] = q_row . K_row[a]`` and ``sc[b] = q_col . K_col[b]`` (each ``(Kn, r)``).
2. The score of virtual slot ``(a, b)`` is the Tucker form ``S[a, b] = sum_h sr[a]^T C_h sc[b]``
   with ``h = 1..tucker_cores`` cores ``C_h`` of shape ``(r, r)``; raw scores, no softmax.
3. Fast path: rank-1 pre-selection with the top singular pair ``(u, v)`` of ``sum_h C_h``
   keeps ``knn`` rows by ``sr @ u`` and ``knn`` columns by ``sc @ v``, scores the grid with
   the full Tucker form and keeps the top ``knn``. Deviation from the reference code: we keep
   the ``knn`` largest *and* the ``knn`` smallest rows/columns (a ``2knn x 2knn`` grid). For
   a rank-1 core ``S[a, b] = sigma f(a) g(b)``, so any slot outside that grid is beaten by
   ``knn`` slots inside it whatever the signs: the fast path is then exactly the top-``knn``
   over all ``Kn^2`` slots, and it no longer depends on the SVD sign convention (the
   reference keeps one side and sign-aligns ``(u, v)`` between optimizer steps). For rank > 1
   cores it is the same approximation as the paper's. ``(u, v)`` are recomputed from the
   (detached) cores on every forward, so no optimizer hook is needed.
4. Virtual slot ``a * Kn + b`` maps to a real value row through a fixed random permutation
   (implicit value expansion with ``key_expand``): ``real = perm[a * Kn + b] % M``,
   ``M = knum^2``.
5. PEER-style single-neuron value: ``w_i = act(<W_pre x, P[real_i]>)``, and the output is
   ``W_out sum_i w_i concat_h(S_h,i V[real_i, chunk_h])`` (the value row split across cores).

The layer is stateless and acts on the last axis: ``(..., d) -> (..., d)``.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["UltraMemCfg", "UltraMemLayer", "Retrieval", "ultramem_param_groups", "value_lr_multiplier"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class UltraMemCfg:
    """UltraMemV2 layer settings. Defaults are sized for RL policies (hidden width 128)."""

    knum: int = 32
    """Real value table is ``knum^2`` rows (``M``)."""
    key_expand: int = 2
    """Keys per side ``Kn = key_expand * knum``; ``Kn^2`` virtual slots map onto the ``M`` rows."""
    kdim: int = 32
    """Width of the row and of the column query/key."""
    vdim: int = 64
    """Width of a value row (split into ``tucker_cores`` chunks)."""
    pre_vdim: int = 64
    """Width of the PEER down-projection ``W_pre x`` and of each per-slot down vector."""
    knn: int = 16
    """Slots read per token (``m``); also the pre-selection size per side."""
    tucker_rank: int = 2
    """Rank ``r`` of the row/column key scores and of the Tucker cores."""
    tucker_cores: int = 2
    """Number of Tucker cores ``C_h`` (the reference's ``tucker_multihead``)."""
    value_act: Literal["gelu", "none"] = "gelu"
    """Activation of the single-neuron value score (reference default: none; PEER: yes)."""
    value_init_std: float = 0.02
    """Std of the value and down-vector tables."""
    value_lr_mult: float = 4.0
    """Initial value learning-rate multiplier ``lambda0`` (decays linearly to 1)."""
    value_lr_decay_fraction: float = 1.0
    """Fraction of training over which the value LR multiplier decays to 1."""

    def __post_init__(self) -> None:
        for name in ("knum", "key_expand", "kdim", "vdim", "pre_vdim", "knn", "tucker_rank", "tucker_cores"):
            if getattr(self, name) < 1:
                raise ValueError(f"UltraMemCfg.{name} must be >= 1, got {getattr(self, name)}")
        if self.knn > self.key_expand * self.knum:
            raise ValueError(
                f"UltraMemCfg.knn={self.knn} exceeds the keys per side key_expand*knum="
                f"{self.key_expand * self.knum}"
            )
        if self.vdim % self.tucker_cores:
            raise ValueError(
                f"UltraMemCfg.vdim={self.vdim} must be divisible by tucker_cores={self.tucker_cores}"
            )
        if self.value_act not in ("gelu", "none"):
            raise ValueError(f"UltraMemCfg.value_act must be 'gelu' or 'none', got {self.value_act!r}")
        if self.value_init_std <= 0 or self.value_lr_mult <= 0:
            raise ValueError("UltraMemCfg.value_init_std and value_lr_mult must be > 0")
        if not 0 < self.value_lr_decay_fraction <= 1:
            raise ValueError(
                f"UltraMemCfg.value_lr_decay_fraction must be in (0, 1], got {self.value_lr_decay_fraction}"
            )

    @property
    def keys_per_side(self) -> int:
        """``Kn``, the number of row keys (= column keys)."""
        return self.key_expand * self.knum

    @property
    def num_values(self) -> int:
        """``M``, rows of the real value table."""
        return self.knum * self.knum


@dataclasses.dataclass(frozen=True)
class Retrieval:
    """Result of a retrieval for ``T`` tokens.

    ``slots``: ``(T, knn)`` long, virtual slot ids ``a * Kn + b``, best first.
    ``core_scores``: ``(T, knn, tucker_cores)``, the per-core Tucker scores ``S_h`` of those slots.
    """

    slots: torch.Tensor
    core_scores: torch.Tensor


class UltraMemLayer(nn.Module):
    """UltraMemV2 memory layer ``(..., dim) -> (..., dim)``; see the module docstring."""

    def __init__(self, dim: int, cfg: UltraMemCfg | None = None) -> None:
        super().__init__()
        cfg = cfg or UltraMemCfg()
        if dim < 1:
            raise ValueError(f"UltraMemLayer dim must be >= 1, got {dim}")
        self.dim, self.cfg = dim, cfg
        kn, r = cfg.keys_per_side, cfg.tucker_rank
        self.q_proj = nn.Linear(dim, 2 * cfg.kdim, bias=False)
        self.q_norm = nn.LayerNorm(cfg.kdim, bias=False)
        self.k_norm = nn.LayerNorm(cfg.kdim, bias=False)
        self.keys = nn.Parameter(torch.empty(2, kn, cfg.kdim, r))
        self.cores = nn.Parameter(torch.empty(cfg.tucker_cores, r, r))
        self.pre_proj = nn.Linear(dim, cfg.pre_vdim, bias=False)
        self.values = nn.Parameter(torch.empty(cfg.num_values, cfg.vdim))
        self.pre_values = nn.Parameter(torch.empty(cfg.num_values, cfg.pre_vdim))
        self.out_proj = nn.Linear(cfg.vdim, dim, bias=False)
        self.register_buffer("perm", torch.randperm(kn * kn), persistent=True)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Initialisation of the reference code (std values, not variances)."""
        c = self.cfg
        nn.init.constant_(self.q_norm.weight, c.kdim**-0.4)
        nn.init.constant_(self.k_norm.weight, c.kdim**-0.4)
        nn.init.normal_(self.q_proj.weight, std=c.kdim**-0.5)
        nn.init.normal_(self.keys, std=c.kdim**-0.5)
        nn.init.uniform_(self.cores, 0.0, 1.0)
        nn.init.normal_(self.pre_proj.weight, std=self.dim**-0.5)
        nn.init.normal_(self.out_proj.weight, std=c.vdim**-0.5)
        nn.init.normal_(self.values, std=c.value_init_std)
        nn.init.normal_(self.pre_values, std=c.value_init_std)

    def value_parameters(self) -> list[nn.Parameter]:
        """The sparse tables trained with the value learning-rate multiplier."""
        return [self.values, self.pre_values]

    # -- retrieval -----------------------------------------------------------------------
    def key_scores(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x``: ``(T, dim)`` -> row and column scores ``sr, sc``, each ``(T, Kn, r)``."""
        q = self.q_norm(self.q_proj(x).unflatten(-1, (2, self.cfg.kdim)))  # (T, 2, kdim)
        k = self.k_norm(self.keys.transpose(-1, -2))  # (2, Kn, r, kdim), normed over kdim
        s = torch.einsum("tsk,snrk->tsnr", q, k)
        return s[:, 0], s[:, 1]

    def _finish(
        self, sr: torch.Tensor, sc: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor
    ) -> Retrieval:
        """Top-``knn`` of the Tucker scores on the grid ``rows x cols`` (``(T, R)``, ``(T, Q)`` long)."""
        kn, knn = self.cfg.keys_per_side, self.cfg.knn
        r_sel = sr.gather(1, rows[..., None].expand(-1, -1, sr.shape[-1]))  # (T, R, r)
        c_sel = sc.gather(1, cols[..., None].expand(-1, -1, sc.shape[-1]))  # (T, Q, r)
        grid = torch.einsum("tar,rq,tbq->tab", r_sel, self.cores.sum(0), c_sel)
        best = grid.flatten(1).topk(knn, dim=1, sorted=True).indices  # (T, knn)
        a_loc, b_loc = best // cols.shape[1], best % cols.shape[1]
        a, b = rows.gather(1, a_loc), cols.gather(1, b_loc)
        ra = sr.gather(1, a[..., None].expand(-1, -1, sr.shape[-1]))  # (T, knn, r)
        cb = sc.gather(1, b[..., None].expand(-1, -1, sc.shape[-1]))
        core_scores = torch.einsum("tmr,hrq,tmq->tmh", ra, self.cores, cb)
        return Retrieval(slots=a * kn + b, core_scores=core_scores)

    def retrieve(self, x: torch.Tensor) -> Retrieval:
        """Fast product-key retrieval for ``x`` ``(T, dim)`` (two-sided rank-1 pre-selection)."""
        sr, sc = self.key_scores(x)
        kn, knn = self.cfg.keys_per_side, self.cfg.knn
        if 2 * knn >= kn:  # the two-sided pre-selection would cover every key anyway
            full = torch.arange(kn, device=x.device).expand(x.shape[0], -1)
            return self._finish(sr, sc, full, full)
        core = self.cores.detach().sum(0)
        u_, _, vh = torch.linalg.svd(core)
        f, g = sr @ u_[:, 0], sc @ vh[0]  # (T, Kn) each

        def ends(score: torch.Tensor) -> torch.Tensor:
            order = score.argsort(dim=1)
            return torch.cat([order[:, -knn:], order[:, :knn]], dim=1)  # disjoint since Kn > 2 knn

        return self._finish(sr, sc, ends(f), ends(g))

    def retrieve_bruteforce(self, x: torch.Tensor) -> Retrieval:
        """Reference retrieval: Tucker-score all ``Kn^2`` slots and keep the top ``knn``."""
        sr, sc = self.key_scores(x)
        full = torch.arange(self.cfg.keys_per_side, device=x.device).expand(x.shape[0], -1)
        return self._finish(sr, sc, full, full)

    def full_scores(self, x: torch.Tensor) -> torch.Tensor:
        """Tucker scores of all slots, ``(T, Kn, Kn)`` (for tests and diagnostics)."""
        sr, sc = self.key_scores(x)
        return torch.einsum("tar,rq,tbq->tab", sr, self.cores.sum(0), sc)

    # -- values --------------------------------------------------------------------------
    def read(self, x: torch.Tensor, ret: Retrieval) -> torch.Tensor:
        """PEER-style value read for the retrieved slots: ``(T, dim)`` -> ``(T, dim)``."""
        c = self.cfg
        real = self.perm[ret.slots] % c.num_values  # (T, knn)
        z = self.pre_proj(x)  # (T, pre_vdim)
        w = torch.einsum("tp,tmp->tm", z, self.pre_values[real])
        if c.value_act == "gelu":
            w = F.gelu(w)
        v = self.values[real].unflatten(-1, (c.tucker_cores, c.vdim // c.tucker_cores))  # (T, m, h, vdim/h)
        out = torch.einsum("tm,tmh,tmhc->thc", w, ret.core_scores, v).flatten(1)
        return self.out_proj(out)

    def forward(self, x: torch.Tensor, bruteforce: bool = False) -> torch.Tensor:
        """``x``: ``(..., dim)`` -> ``(..., dim)``; ``bruteforce`` selects the reference retrieval."""
        flat = x.reshape(-1, self.dim)
        ret = self.retrieve_bruteforce(flat) if bruteforce else self.retrieve(flat)
        return self.read(flat, ret).reshape(x.shape)


def ultramem_param_groups(model: nn.Module, lr: float, value_lr_mult: float | None = None) -> list[dict]:
    """Optimizer param groups: UltraMem value tables at ``lr * value_lr_mult``, the rest at ``lr``.

    ``value_lr_mult`` defaults to each layer's ``cfg.value_lr_mult``. Every group carries
    ``lr_mult`` (1 for the rest) so a schedule can set ``group["lr"] = lr_t * factor`` with
    ``factor`` from :func:`value_lr_multiplier` for value groups. Empty groups are dropped.
    """
    value_ids: set[int] = set()
    groups: list[dict] = []
    for name, mod in model.named_modules():
        if isinstance(mod, UltraMemLayer):
            mult = mod.cfg.value_lr_mult if value_lr_mult is None else value_lr_mult
            params = mod.value_parameters()
            value_ids.update(id(p) for p in params)
            groups.append({"params": params, "lr": lr * mult, "lr_mult": mult, "name": f"{name}.values"})
    rest = [p for p in model.parameters() if id(p) not in value_ids]
    return [{"params": rest, "lr": lr, "lr_mult": 1.0, "name": "default"}, *groups]


def value_lr_multiplier(step: int, total_steps: int, lr_mult: float, decay_fraction: float = 1.0) -> float:
    """Value LR factor ``1 + (lr_mult - 1) * max(0, 1 - step / (total_steps * decay_fraction))``.

    Applied on top of the main schedule (reference ``optim.py``); equals ``lr_mult`` at step 0
    and 1 once ``step >= total_steps * decay_fraction``.
    """
    if total_steps < 1 or not 0 < decay_fraction <= 1:
        raise ValueError(
            f"need total_steps >= 1 and decay_fraction in (0, 1], got {total_steps}, {decay_fraction}"
        )
    return 1.0 + (lr_mult - 1.0) * max(0.0, 1.0 - step / (total_steps * decay_fraction))
