"""Quantisation-aware training (QAT): fake quantisation with a straight-through estimator.

Spec: ``shared/reference/backbones.md`` section 3 (Dremov et al., arXiv 2509.22935).

* Weights: per-output-channel symmetric, ``bits`` = 8 (int8, ``[-127, 127]``) or 4
  (``[-7, 7]``); scale ``= max|w_row| / qmax`` recomputed every forward.
* Activations (the input of each quantised Linear): per-tensor affine int8 ``[-128, 127]``
  with a range observer (running min/max, or an EMA of per-batch min/max), updated in
  training mode only; the range always contains 0 so that 0 is exact.
* Gradients: straight-through; identity for weights, identity inside the observed range and
  zero outside it for activations (clipped STE).
* :class:`QATSchedule`: a warmup-stable-decay LR schedule whose decay (cooldown) is fused
  with QAT: QAT switches on where the cooldown starts and the whole cooldown runs quantised.
* :func:`export_int8` / :func:`load_int8`: int8 weight tensors + scales as a state dict, and
  a float model rebuilt from it whose outputs equal the fake-quant model's.
* :func:`freeze_qat`: the inference graph of a fake-quant model with constant grids and plain
  tensor ops (for ``torch.export``, ONNX and TorchScript).
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import math
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "QATCfg",
    "QATLinear",
    "QATSchedule",
    "export_int8",
    "fake_quant_activation",
    "fake_quant_weight",
    "freeze_qat",
    "load_int8",
    "prepare_qat",
    "samples_per_param_byte",
    "set_qat_enabled",
]

ACT_QMIN, ACT_QMAX = -128, 127


@dataclasses.dataclass(frozen=True, kw_only=True)
class QATCfg:
    """Which layers get quantised and how."""

    weight_bits: Literal[8, 4] = 8
    """Bit width of the per-channel symmetric weight grid."""
    quantize_activations: bool = True
    """Fake-quantise each quantised Linear's input to per-tensor int8."""
    observer: Literal["minmax", "ema"] = "ema"
    """Activation range: running min/max over all training batches, or an EMA of batch min/max."""
    ema_momentum: float = 0.01
    """Weight of the newest batch in the EMA observer."""
    keep_float: tuple[str, ...] = ()
    """``fnmatch`` patterns of qualified module names left in float (e.g. ``"head.*"``)."""

    def __post_init__(self) -> None:
        if self.weight_bits not in (4, 8):
            raise ValueError(f"QATCfg.weight_bits must be 8 or 4, got {self.weight_bits}")
        if self.observer not in ("minmax", "ema"):
            raise ValueError(f"QATCfg.observer must be 'minmax' or 'ema', got {self.observer!r}")
        if not 0 < self.ema_momentum <= 1:
            raise ValueError(f"QATCfg.ema_momentum must be in (0, 1], got {self.ema_momentum}")
        if isinstance(self.keep_float, str):
            raise ValueError("QATCfg.keep_float must be a tuple of patterns, not a string")


def weight_qmax(bits: int) -> int:
    """Largest grid value of a symmetric ``bits`` grid (127 for 8, 7 for 4)."""
    return 2 ** (bits - 1) - 1


def weight_scale(w: torch.Tensor, bits: int) -> torch.Tensor:
    """Per-output-channel scale ``(out, 1)`` of weight ``w`` ``(out, in)``; never zero."""
    amax = w.detach().abs().amax(dim=1, keepdim=True)
    return torch.clamp(amax, min=torch.finfo(w.dtype).tiny) / weight_qmax(bits)


class _RoundSTE(torch.autograd.Function):
    """``round`` in the forward pass, identity gradient (straight-through estimator)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


def fake_quant_weight(w: torch.Tensor, bits: int = 8) -> torch.Tensor:
    """Symmetric per-channel fake quantisation of ``w`` ``(out, in)``; STE gradient (identity).

    The forward value is ``round(w / s) * s`` with ``s`` from :func:`weight_scale`, so
    ``|result - w| <= s / 2`` elementwise (no clipping: ``|w / s| <= qmax``).
    """
    s = weight_scale(w, bits)
    return _RoundSTE.apply(w / s) * s


def act_qparams(lo: torch.Tensor, hi: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Affine int8 ``(scale, zero_point)`` (0-dim tensors) for the range ``[lo, hi]`` widened to contain 0."""
    lo, hi = torch.clamp(lo, max=0.0), torch.clamp(hi, min=0.0)
    scale = torch.clamp((hi - lo) / (ACT_QMAX - ACT_QMIN), min=torch.finfo(torch.float32).eps)
    zero_point = torch.clamp(ACT_QMIN - torch.round(lo / scale), ACT_QMIN, ACT_QMAX)
    return scale, zero_point


def fake_quant_activation(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor) -> torch.Tensor:
    """Per-tensor affine int8 fake quantisation; clipped-STE gradient (1 inside the grid range, else 0).

    Inside the range, ``|result - x| <= scale / 2``.
    """
    scale, zero_point = scale.to(x.dtype), zero_point.to(x.dtype)
    lo, hi = (ACT_QMIN - zero_point) * scale, (ACT_QMAX - zero_point) * scale
    xc = torch.clamp(x, lo, hi)  # gradient 1 inside [lo, hi], 0 outside
    return _RoundSTE.apply(xc / scale) * scale  # = (q - zero_point) * scale with q = round(xc / scale) + zp


class QATLinear(nn.Linear):
    """``nn.Linear`` with fake-quantised weights and input; a plain Linear while disabled.

    Buffers: ``act_lo``/``act_hi`` hold the observed input range and ``act_scale``/
    ``act_zero_point`` the input grid derived from it (NaN until the first observed batch;
    until then the input is not quantised). The range is observed in training mode only, so
    eval uses the frozen grid. ``weight_quant`` is False only in models rebuilt by
    :func:`load_int8`, whose weights already lie on the grid.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, cfg: QATCfg) -> None:
        super().__init__(in_features, out_features, bias=bias)
        self.cfg = cfg
        self.enabled = True
        self.weight_quant = True
        for name in ("act_lo", "act_hi", "act_scale", "act_zero_point"):
            self.register_buffer(name, torch.tensor(math.nan))

    @classmethod
    def from_linear(cls, lin: nn.Linear, cfg: QATCfg) -> QATLinear:
        """A QAT copy of ``lin`` (same parameters' values, dtype and device)."""
        new = cls(lin.in_features, lin.out_features, lin.bias is not None, cfg=cfg)
        new.to(device=lin.weight.device, dtype=lin.weight.dtype)
        with torch.no_grad():
            new.weight.copy_(lin.weight)
            if lin.bias is not None:
                new.bias.copy_(lin.bias)
        return new

    @torch.no_grad()
    def _observe(self, x: torch.Tensor) -> None:
        lo, hi = x.min().float(), x.max().float()
        if torch.isnan(self.act_lo):
            self.act_lo.copy_(lo)
            self.act_hi.copy_(hi)
        elif self.cfg.observer == "minmax":
            self.act_lo.copy_(torch.minimum(self.act_lo, lo))
            self.act_hi.copy_(torch.maximum(self.act_hi, hi))
        else:
            m = self.cfg.ema_momentum
            self.act_lo.lerp_(lo, m)
            self.act_hi.lerp_(hi, m)
        scale, zero_point = act_qparams(self.act_lo, self.act_hi)
        self.act_scale.copy_(scale)
        self.act_zero_point.copy_(zero_point)

    def reset_observer(self) -> None:
        """Forget the observed activation range and grid."""
        for buf in (self.act_lo, self.act_hi, self.act_scale, self.act_zero_point):
            buf.fill_(math.nan)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return super().forward(x)
        if self.cfg.quantize_activations:
            if self.training:
                self._observe(x)
            if not torch.isnan(self.act_scale):
                x = fake_quant_activation(x, self.act_scale, self.act_zero_point)
        w = fake_quant_weight(self.weight, self.cfg.weight_bits) if self.weight_quant else self.weight
        return F.linear(x, w, self.bias)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, weight_bits={self.cfg.weight_bits}, enabled={self.enabled}"


def _swap_linears(model: nn.Module, cfg: QATCfg, prefix: str = "") -> None:
    for child_name, child in model.named_children():
        name = f"{prefix}{child_name}"
        if any(fnmatch.fnmatchcase(name, pat) for pat in cfg.keep_float):
            continue
        if type(child) is nn.Linear:
            setattr(model, child_name, QATLinear.from_linear(child, cfg))
        else:
            _swap_linears(child, cfg, f"{name}.")


def prepare_qat(model: nn.Module, cfg: QATCfg | None = None, enabled: bool = False) -> nn.Module:
    """Swap every plain ``nn.Linear`` of ``model`` (in place) for a :class:`QATLinear`.

    Modules whose qualified name matches a ``cfg.keep_float`` pattern (and everything below
    them) stay float; Linear subclasses are left alone. QAT starts disabled unless
    ``enabled`` (switch it on with :func:`set_qat_enabled` when the schedule says so).
    Returns ``model``.
    """
    cfg = cfg or QATCfg()
    _swap_linears(model, cfg)
    set_qat_enabled(model, enabled)
    return model


def set_qat_enabled(model: nn.Module, enabled: bool) -> None:
    """Switch fake quantisation on or off in every :class:`QATLinear` of ``model``.

    Switching on from off resets the activation observers, so ranges come from QAT batches.
    """
    for mod in model.modules():
        if isinstance(mod, QATLinear):
            if enabled and not mod.enabled:
                mod.reset_observer()
            mod.enabled = enabled


@dataclasses.dataclass(frozen=True, kw_only=True)
class QATSchedule:
    """Warmup-stable-decay LR schedule with the decay fused with QAT.

    Over ``total_steps`` optimizer steps: linear warmup for ``warmup_fraction``, constant LR,
    then from ``qat_start = round((1 - qat_fraction) * total_steps)`` QAT is on and the LR
    decays to ``min_lr_ratio`` (linear or cosine) by the last step. The loss-optimal
    ``qat_fraction`` grows with the training samples per byte of quantised weights
    (:func:`samples_per_param_byte`): about 0.10-0.15 for small budgets, 0.55 and more for
    large ones (Dremov et al.), so choose it per run.
    """

    total_steps: int
    """Optimizer steps in the whole run."""
    qat_fraction: float = 0.15
    """Fraction of steps at the end that run with QAT (= the cooldown)."""
    warmup_fraction: float = 0.0
    """Fraction of steps of linear LR warmup from 0."""
    decay: Literal["linear", "cosine"] = "linear"
    """Shape of the cooldown."""
    min_lr_ratio: float = 0.0
    """LR at the last step relative to the peak."""

    def __post_init__(self) -> None:
        if self.total_steps < 1:
            raise ValueError(f"QATSchedule.total_steps must be >= 1, got {self.total_steps}")
        if not 0 < self.qat_fraction <= 1:
            raise ValueError(f"QATSchedule.qat_fraction must be in (0, 1], got {self.qat_fraction}")
        if not 0 <= self.warmup_fraction < 1 - self.qat_fraction + 1e-12:
            raise ValueError(
                f"QATSchedule.warmup_fraction={self.warmup_fraction} must be >= 0 and end before "
                f"the QAT cooldown (1 - qat_fraction = {1 - self.qat_fraction})"
            )
        if self.decay not in ("linear", "cosine"):
            raise ValueError(f"QATSchedule.decay must be 'linear' or 'cosine', got {self.decay!r}")
        if not 0 <= self.min_lr_ratio <= 1:
            raise ValueError(f"QATSchedule.min_lr_ratio must be in [0, 1], got {self.min_lr_ratio}")

    @property
    def qat_start(self) -> int:
        """First step with QAT on, which is also the first cooldown step."""
        return round((1.0 - self.qat_fraction) * self.total_steps)

    def qat_active(self, step: int) -> bool:
        """Whether optimizer step ``step`` (0-based) trains with fake quantisation."""
        return step >= self.qat_start

    def lr_scale(self, step: int) -> float:
        """Multiplier of the peak LR at step ``step`` (0-based)."""
        warm = round(self.warmup_fraction * self.total_steps)
        if step < warm:
            return (step + 1) / warm
        if step < self.qat_start:
            return 1.0
        span = max(self.total_steps - 1 - self.qat_start, 1)
        t = min((step - self.qat_start) / span, 1.0)
        shape = 1.0 - t if self.decay == "linear" else 0.5 * (1.0 + math.cos(math.pi * t))
        return self.min_lr_ratio + (1.0 - self.min_lr_ratio) * shape


def samples_per_param_byte(samples: float, num_params: float, bits: int) -> float:
    """``S_total = D / (N * B / 8)``: training samples per byte of quantised weights (paper's predictor)."""
    return samples / (num_params * bits / 8.0)


def export_int8(model: nn.Module) -> dict[str, torch.Tensor]:
    """State dict with each :class:`QATLinear` stored as int8.

    For a QAT layer ``name``: ``name.weight_int8`` (int8 ``(out, in)``, values in
    ``[-qmax, qmax]``; int4 weights are stored unpacked in int8), ``name.weight_scale``
    (float32 ``(out, 1)``), ``name.weight_bits``, and, if its input is quantised,
    ``name.act_scale`` / ``name.act_zero_point`` (0-dim float32). Every other entry of
    ``model.state_dict()`` (biases included) is kept as is.
    """
    out: dict[str, torch.Tensor] = {}
    qat_names = {n for n, m in model.named_modules() if isinstance(m, QATLinear)}
    for key, value in model.state_dict().items():
        owner, _, leaf = key.rpartition(".")
        if owner in qat_names and leaf in ("weight", "act_lo", "act_hi", "act_scale", "act_zero_point"):
            continue
        out[key] = value
    for name in qat_names:
        mod: QATLinear = model.get_submodule(name)
        bits = mod.cfg.weight_bits
        s = weight_scale(mod.weight, bits)
        q = torch.round(mod.weight.detach() / s).clamp(-weight_qmax(bits), weight_qmax(bits))
        out[f"{name}.weight_int8"] = q.to(torch.int8)
        out[f"{name}.weight_scale"] = s.to(torch.float32)
        out[f"{name}.weight_bits"] = torch.tensor(bits)
        if mod.cfg.quantize_activations and not torch.isnan(mod.act_scale):
            out[f"{name}.act_scale"] = mod.act_scale.clone()
            out[f"{name}.act_zero_point"] = mod.act_zero_point.clone()
    return out


def load_int8(model: nn.Module, state: dict[str, torch.Tensor]) -> nn.Module:
    """Rebuild ``model`` (a fresh float instance of the exported architecture) from :func:`export_int8`.

    Each exported Linear becomes an eval-ready :class:`QATLinear` holding the dequantised
    weights ``int8 * scale`` (weight fake-quant off: they are on the grid already) and the
    frozen input grid; its outputs equal those of the exported fake-quant model. Returns
    ``model``, modified in place.
    """
    names = [k[: -len(".weight_int8")] for k in state if k.endswith(".weight_int8")]
    rest = {k: v for k, v in state.items() if not any(k.startswith(f"{n}.") for n in names)}
    for name in names:
        lin = model.get_submodule(name)
        if type(lin) is not nn.Linear:
            raise ValueError(f"load_int8: {name} is {type(lin).__name__}, expected a float nn.Linear")
        has_act = f"{name}.act_scale" in state
        cfg = QATCfg(weight_bits=int(state[f"{name}.weight_bits"]), quantize_activations=has_act)
        new = QATLinear.from_linear(lin, cfg)
        new.weight_quant = False
        w = state[f"{name}.weight_int8"].to(lin.weight.dtype) * state[f"{name}.weight_scale"].to(
            lin.weight.dtype
        )
        with torch.no_grad():
            new.weight.copy_(w)
            if new.bias is not None:
                new.bias.copy_(state[f"{name}.bias"])
        if has_act:
            new.act_scale.copy_(state[f"{name}.act_scale"])
            new.act_zero_point.copy_(state[f"{name}.act_zero_point"])
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name) if parent_name else model, child, new)
    missing, unexpected = model.load_state_dict(rest, strict=False)
    missing = [k for k in missing if not any(k.startswith(f"{n}.") for n in names)]
    if missing or unexpected:
        raise ValueError(
            f"load_int8: state does not match the model: missing {missing}, unexpected {unexpected}"
        )
    return model.eval()


class FrozenQuantLinear(nn.Module):
    """Inference form of an enabled :class:`QATLinear`: weights already on their grid, the input
    grid as constants, plain tensor ops only (no data-dependent branch, no autograd Function), so
    ``torch.export`` / ONNX / TorchScript take it. Same outputs as the QAT layer in eval mode."""

    def __init__(self, lin: QATLinear) -> None:
        super().__init__()
        with torch.no_grad():
            w = fake_quant_weight(lin.weight, lin.cfg.weight_bits) if lin.weight_quant else lin.weight
        self.register_buffer("weight", w.detach().clone())
        self.register_buffer("bias", None if lin.bias is None else lin.bias.detach().clone())
        self.act_grid: tuple[float, float, float] | None = None
        """``(scale, lo, hi)`` of the input grid, or None when the input stays float."""
        if lin.cfg.quantize_activations and not torch.isnan(lin.act_scale):
            scale, zp = float(lin.act_scale), float(lin.act_zero_point)
            self.act_grid = (scale, (ACT_QMIN - zp) * scale, (ACT_QMAX - zp) * scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.act_grid is not None:
            scale, lo, hi = self.act_grid
            x = torch.round(torch.clamp(x, lo, hi) / scale) * scale  # = fake_quant_activation
        return F.linear(x, self.weight, self.bias)


def freeze_qat(model: nn.Module) -> nn.Module:
    """A copy of ``model`` with each enabled :class:`QATLinear` as a :class:`FrozenQuantLinear`
    and each disabled one as a plain ``nn.Linear`` (its float weights)."""
    frozen = copy.deepcopy(model).eval()
    for name, mod in list(frozen.named_modules()):
        if not isinstance(mod, QATLinear):
            continue
        if mod.enabled:
            new = FrozenQuantLinear(mod)
        else:
            new = nn.Linear(mod.in_features, mod.out_features, mod.bias is not None)
            new.load_state_dict({k: v for k, v in mod.state_dict().items() if k in ("weight", "bias")})
        parent_name, _, child = name.rpartition(".")
        setattr(frozen.get_submodule(parent_name) if parent_name else frozen, child, new)
    return frozen
