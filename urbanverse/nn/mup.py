"""Maximal-update parameterisation (muP) for Adam, so hyperparameters tuned narrow transfer wide.

Spec: ``shared/reference/backbones.md`` section 5 (microsoft/mup README; TP-V, arXiv 2203.03466).
With ``width_mult = fan_in / base_fan_in`` for every ``nn.Linear`` of a model built at
``width`` compared with the same model built at ``base_width``:

* init: input and hidden Linear weights variance ``1 / fan_in`` (:func:`mup_init_`; torch's
  default ``U(+-1/sqrt(fan_in))`` has the same scaling), biases 0, readout zero;
* Adam learning rates: a Linear weight whose fan-in grows with width (hidden matrices, and
  width-to-fixed maps such as routers or low-rank gates) gets ``lr / width_mult``; input
  weights, biases, norm gains and all non-Linear parameters keep ``lr``;
* readout: :class:`MuReadout` multiplies its input by ``1 / width_mult`` (its weight keeps
  ``lr``, as in ``mup.MuAdam``).

:func:`coord_check` measures activation RMS per layer after a few Adam steps at several
widths; under muP the curves are flat in width, under standard parameterisation they grow.

Under Adam a ``MuReadout`` (multiplier ``1 / width_mult``, learning rate ``lr``) is the same
as a plain Linear readout with ``1 / width_mult`` times its init and learning rate
``lr / width_mult``, which :func:`mup_param_groups` already gives a Linear whose fan-in grew.
A model that must keep plain Linear heads (quantisation, export) uses that form with zero-init
heads; :data:`MUP_WIDTH_FIELDS` names the backbones it covers and their width field.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from urbanverse.nn.backbones import Backbone, backbone_config, make_backbone

__all__ = [
    "MUP_WIDTH_FIELDS",
    "MuReadout",
    "ReadoutModel",
    "backbone_width",
    "build_mup_model",
    "coord_check",
    "coord_spread",
    "mup_init_",
    "mup_param_groups",
    "with_width",
]

#: Backbones muP covers and the config field that sets their width. Their width-dependent
#: matrices are ``nn.Linear`` layers, which :func:`mup_param_groups` scales; ``gru`` and
#: ``lstm`` keep theirs inside a fused ``nn.GRU`` / ``nn.LSTM`` and are not covered.
MUP_WIDTH_FIELDS: dict[str, str] = {
    "mlp": "hidden",
    "ultramem": "hidden",
    "gla": "d_model",
    "sse": "d_model",
    "sse-h": "d_model",
}


def _width_field(name: str) -> str:
    if name not in MUP_WIDTH_FIELDS:
        raise ValueError(
            f"muP covers the backbones {', '.join(MUP_WIDTH_FIELDS)}, not {name!r} "
            "(its hidden matrices are not nn.Linear layers)"
        )
    return MUP_WIDTH_FIELDS[name]


def backbone_width(name: str, overrides: dict) -> int:
    """Width of backbone ``name`` built with config ``overrides`` (the field in :data:`MUP_WIDTH_FIELDS`)."""
    return int(getattr(backbone_config(name, **overrides), _width_field(name)))


def with_width(name: str, overrides: dict, width: int) -> dict:
    """``overrides`` with backbone ``name``'s width set to ``width`` (e.g. to build the base model)."""
    return {**overrides, _width_field(name): width}


class MuReadout(nn.Linear):
    """Readout ``(..., in_features) -> (..., out_features)`` computing ``W (x / width_mult) + b``.

    ``zero_init`` (recommended) starts the weight and bias at zero.
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        width_mult: float,
        bias: bool = True,
        zero_init: bool = True,
    ) -> None:
        if width_mult <= 0:
            raise ValueError(f"MuReadout width_mult must be > 0, got {width_mult}")
        self.width_mult = width_mult
        self.zero_init = zero_init
        super().__init__(in_features, out_features, bias=bias)

    def reset_parameters(self) -> None:
        if self.zero_init:
            nn.init.zeros_(self.weight)
            if self.bias is not None:
                nn.init.zeros_(self.bias)
        else:
            super().reset_parameters()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x / self.width_mult, self.weight, self.bias)


def mup_init_(model: nn.Module, std: float = 1.0) -> nn.Module:
    """Re-initialise every plain ``nn.Linear`` weight to ``N(0, std^2 / fan_in)`` and its bias to 0.

    :class:`MuReadout` layers keep their own init. Returns ``model``.
    """
    for mod in model.modules():
        if isinstance(mod, nn.Linear) and not isinstance(mod, MuReadout):
            nn.init.normal_(mod.weight, std=std / math.sqrt(mod.in_features))
            if mod.bias is not None:
                nn.init.zeros_(mod.bias)
    return model


def _linear_fan_in(model: nn.Module) -> dict[str, int]:
    """Qualified weight name -> fan-in, for plain Linear layers (not readouts)."""
    return {
        f"{name}.weight" if name else "weight": mod.in_features
        for name, mod in model.named_modules()
        if isinstance(mod, nn.Linear) and not isinstance(mod, MuReadout)
    }


def mup_param_groups(model: nn.Module, base_model: nn.Module, lr: float) -> list[dict]:
    """Adam param groups for muP: ``lr / width_mult`` where a Linear's fan-in grew, else ``lr``.

    ``base_model`` is the same architecture built at the base width (only shapes are read).
    Each group carries ``lr_mult`` (its ``lr / lr``); parameters are grouped by multiplier.
    """
    fan_in, base_fan_in = _linear_fan_in(model), _linear_fan_in(base_model)
    if fan_in.keys() != base_fan_in.keys():
        raise ValueError("mup_param_groups: model and base_model have different Linear layers")
    by_mult: dict[float, list[nn.Parameter]] = {}
    for name, p in model.named_parameters():
        mult = base_fan_in[name] / fan_in[name] if name in fan_in else 1.0
        by_mult.setdefault(mult, []).append(p)
    return [{"params": ps, "lr": lr * m, "lr_mult": m} for m, ps in sorted(by_mult.items(), reverse=True)]


class ReadoutModel(nn.Module):
    """Backbone plus readout: ``x (B, L, in_dim) -> (B, L, out_dim)`` from the initial state, no resets."""

    def __init__(self, backbone: Backbone, readout: nn.Linear) -> None:
        super().__init__()
        self.backbone, self.readout = backbone, readout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        state = self.backbone.initial_state(x.shape[0], x.device)
        resets = torch.zeros(x.shape[:2], dtype=torch.bool, device=x.device)
        features, _ = self.backbone.forward_sequence(x, state, resets)
        return self.readout(features)


def build_mup_model(
    name: str,
    in_dim: int,
    out_dim: int,
    width: int,
    base_width: int,
    lr: float,
    width_field: str = "hidden",
    mup: bool = True,
    reinit: bool = True,
    **overrides,
) -> tuple[ReadoutModel, list[dict]]:
    """Backbone ``name`` at ``width`` (config field ``width_field``) plus readout, and its Adam groups.

    ``mup=False`` gives the standard parameterisation for comparison (plain readout with
    torch's init, one learning rate). ``reinit`` applies :func:`mup_init_` to the backbone
    (keep False for backbones with their own careful init; torch's default Linear init
    already has variance proportional to ``1 / fan_in``).
    """
    backbone = make_backbone(name, in_dim, **{width_field: width}, **overrides)
    if reinit:
        mup_init_(backbone)
    if not mup:
        model = ReadoutModel(backbone, nn.Linear(backbone.out_dim, out_dim))
        return model, [{"params": list(model.parameters()), "lr": lr, "lr_mult": 1.0}]
    base = make_backbone(name, in_dim, **{width_field: base_width}, **overrides)
    model = ReadoutModel(backbone, MuReadout(backbone.out_dim, out_dim, width / base_width))
    base_model = ReadoutModel(base, MuReadout(base.out_dim, out_dim, 1.0))
    return model, mup_param_groups(model, base_model, lr)


def coord_check(
    build: Callable[[int], tuple[nn.Module, list[dict]]],
    widths: Sequence[int],
    x: torch.Tensor,
    y: torch.Tensor,
    steps: int = 3,
    seed: int = 0,
) -> dict[int, dict[str, float]]:
    """Activation RMS per Linear layer after ``steps`` Adam steps on ``mse(model(x), y)``, per width.

    ``build(width)`` returns the model and its Adam param groups. Returns
    ``{width: {layer_name: rms of the layer's output on x}}``.
    """
    results: dict[int, dict[str, float]] = {}
    for width in widths:
        torch.manual_seed(seed)
        model, groups = build(width)
        opt = torch.optim.Adam(groups)
        for _ in range(steps):
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        rms: dict[str, float] = {}

        def record(name: str, out: torch.Tensor, rms: dict[str, float] = rms) -> None:
            rms[name] = out.pow(2).mean().sqrt().item()

        hooks = [
            mod.register_forward_hook(lambda _m, _i, out, n=name: record(n, out))
            for name, mod in model.named_modules()
            if isinstance(mod, nn.Linear)
        ]
        with torch.no_grad():
            model(x)
        for h in hooks:
            h.remove()
        results[width] = rms
    return results


def coord_spread(results: dict[int, dict[str, float]]) -> dict[str, float]:
    """Per layer, largest / smallest RMS across widths (1 = perfectly flat)."""
    layers = next(iter(results.values())).keys()
    return {n: max(r[n] for r in results.values()) / min(r[n] for r in results.values()) for n in layers}
