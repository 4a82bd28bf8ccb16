"""Policy backbones behind one interface (:class:`~urbanverse.nn.backbones.base.Backbone`) and a registry.

``make_backbone(name, in_dim, **overrides)`` builds a backbone by name; ``overrides`` are
fields of its config dataclass (a nested config such as ``memory`` may be given as a dict of
its fields). Modules are imported lazily, so a backbone whose module fails to import only
fails when it is requested.
"""

from __future__ import annotations

import dataclasses
import importlib
import typing
from types import UnionType

from urbanverse.nn.backbones.base import Backbone, State, reset_rows

__all__ = ["BACKBONE_NAMES", "Backbone", "State", "backbone_config", "make_backbone", "reset_rows"]

BACKBONE_NAMES = ("mlp", "gru", "lstm", "gla", "sse", "sse-h", "ultramem")

_REGISTRY: dict[str, tuple[str, str]] = {
    "mlp": ("urbanverse.nn.backbones.mlp", "MLPBackbone"),
    "gru": ("urbanverse.nn.backbones.recurrent", "GRUBackbone"),
    "lstm": ("urbanverse.nn.backbones.recurrent", "LSTMBackbone"),
    "gla": ("urbanverse.nn.backbones.gla", "GLABackbone"),
    "sse": ("urbanverse.nn.backbones.sse", "SSEBackbone"),
    "sse-h": ("urbanverse.nn.backbones.sse", "SSEHBackbone"),
    "ultramem": ("urbanverse.nn.backbones.ultramem", "UltraMemMLPBackbone"),
}


def _backbone_class(name: str) -> type[Backbone]:
    if name not in _REGISTRY:
        raise ValueError(f"unknown backbone {name!r}; valid choices: {', '.join(BACKBONE_NAMES)}")
    module_name, cls_name = _REGISTRY[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ImportError(f"backbone {name!r} needs module {module_name}, which failed to import: {e}") from e
    return getattr(module, cls_name)


def _config_class(cls: type[Backbone]) -> type:
    """The config dataclass named by the ``cfg`` annotation of ``cls.__init__``."""
    hint = typing.get_type_hints(cls.__init__)["cfg"]
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    if not dataclasses.is_dataclass(hint):
        raise TypeError(f"{cls.__name__}.__init__ cfg annotation {hint!r} is not a dataclass")
    return hint


def _build_config(cfg_cls: type, overrides: dict, where: str) -> object:
    fields = {f.name: f for f in dataclasses.fields(cfg_cls) if f.init}
    unknown = sorted(set(overrides) - set(fields))
    if unknown:
        raise ValueError(f"unknown field(s) {unknown} for {where}; valid fields: {', '.join(sorted(fields))}")
    values = dict(overrides)
    for key, value in overrides.items():
        if isinstance(value, dict):
            default = cfg_cls()
            nested = getattr(default, key)
            if not dataclasses.is_dataclass(nested):
                raise ValueError(f"{where}.{key} is not a nested config; got a dict for it")
            values[key] = _build_config(type(nested), value, f"{where}.{key}")
    return cfg_cls(**values)


def backbone_config(name: str, **overrides) -> object:
    """The config dataclass instance that :func:`make_backbone` would use for ``name``."""
    cfg_cls = _config_class(_backbone_class(name))
    return _build_config(cfg_cls, overrides, cfg_cls.__name__)


def make_backbone(name: str, in_dim: int, **overrides) -> Backbone:
    """Build backbone ``name`` (one of :data:`BACKBONE_NAMES`) for ``in_dim`` input features.

    Raises ``ValueError`` for an unknown name or config field (naming the valid choices).
    """
    cls = _backbone_class(name)
    cfg_cls = _config_class(cls)
    return cls(in_dim, _build_config(cfg_cls, overrides, cfg_cls.__name__))
