"""Frozen dataclass configs: ``--set a.b=value`` overrides, JSON round trip (DESIGN.md section 7).

Override values are parsed as JSON where they parse (numbers, booleans, lists, objects) and kept
as strings otherwise; every value is checked against the field's type, and unknown fields are
errors naming the valid ones. Used by ``urbanverse train`` (``TrainCfg``) and ``urbanverse gen``
(``GenCfg``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from pathlib import Path
from typing import Any

from urbanverse.errors import InputError


def to_dict(cfg: Any) -> Any:
    """A JSON-ready nested dict of a dataclass tree (tuples become lists, paths strings)."""
    if dataclasses.is_dataclass(cfg):
        return {f.name: to_dict(getattr(cfg, f.name)) for f in dataclasses.fields(cfg) if f.init}
    if isinstance(cfg, (list, tuple)):
        return [to_dict(v) for v in cfg]
    if isinstance(cfg, dict):
        return {k: to_dict(v) for k, v in cfg.items()}
    if isinstance(cfg, Path):
        return str(cfg)
    return cfg


def _coerce(tp: Any, value: Any, where: str) -> Any:
    """Convert a JSON value to field type ``tp`` (dataclasses, tuples, unions, scalars)."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        if dataclasses.is_dataclass(value):
            return value
        if not isinstance(value, dict):
            raise InputError(f"{where}: expected an object, got {value!r}")
        return from_dict(tp, value, where)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _coerce(a, value, where)
            except InputError as exc:
                errors.append(str(exc))
        raise InputError(errors[0] if errors else f"{where}: cannot use {value!r}")
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise InputError(f"{where}: expected one of {typing.get_args(tp)}, got {value!r}")
        return value
    if origin is tuple or tp is tuple:
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{where}: expected a list, got {value!r}")
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(args[0], v, where) for v in value)
        if args and len(args) != len(value):
            raise InputError(f"{where}: expected {len(args)} values, got {value!r}")
        return tuple(_coerce(a, v, where) for a, v in zip(args, value, strict=True)) if args else tuple(value)
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise InputError(f"{where}: expected an object, got {value!r}")
        return dict(value)
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{where}: expected a number, got {_short(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"{where}: expected a finite number, got {_short(value)}")
        if abs(value) > MAX_INT:
            raise InputError(
                f"{where}: {_short(value)} is out of range (a setting stays within ±{MAX_INT:.3g})"
            )
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ):
            raise InputError(f"{where}: expected an integer, got {_short(value)}")
        if abs(value) > MAX_INT:
            raise InputError(
                f"{where}: {_short(value)} is out of range (a setting stays within ±{MAX_INT:.3g})"
            )
        return int(value)
    if tp is bool:
        if not isinstance(value, bool):
            raise InputError(f"{where}: expected true or false, got {value!r}")
        return value
    if tp is str or tp is Path or tp == Path | str:
        if isinstance(value, list | dict):
            raise InputError(f"{where}: expected a string, got {_short(value)}")
        return Path(value) if tp is Path else str(value)
    return value


#: Largest magnitude of a numeric setting: a signed 64-bit integer, what numpy and torch hold.
MAX_INT = 2**63 - 1


def _short(value: Any) -> str:
    """A value for a message: its repr, at most 80 characters (a huge integer as a float)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"{float(value):g}" if abs(value) < 1e308 else "a number over 1e308"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def from_dict(cls: type, data: dict, where: str = "") -> Any:
    """Build dataclass ``cls`` from a (possibly partial) nested dict; unknown keys are errors."""
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise InputError(
            f"{where or cls.__name__}: unknown field(s) {unknown}; valid: {', '.join(sorted(fields))}"
        )
    kwargs = {k: _coerce(hints[k], v, f"{where}.{k}" if where else k) for k, v in data.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError, ArithmeticError) as exc:
        message = " ".join(str(exc).split())  # one line, whatever the value held
        raise InputError(f"{where or cls.__name__}: {message[:300]}") from None


def _parse_value(text: str) -> Any:
    """``text`` as JSON where it parses, else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
    except (
        ValueError,
        RecursionError,
    ) as exc:  # a number over 4300 digits, nesting deeper than Python's stack
        raise InputError(f"cannot read {text[:40]!r}...: {type(exc).__name__}") from None


def apply_overrides(cfg: Any, overrides: list[str] | tuple[str, ...]) -> Any:
    """Return ``cfg`` with every ``a.b.c=value`` in ``overrides`` applied (``--set``).

    Fields of dataclasses must exist; a dict-valued field (e.g. ``backbone_overrides``) takes new keys.
    """
    data = to_dict(cfg)
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise InputError(f"--set {_short(item)}: expected key=value, e.g. ppo.learning_rate=3e-4")
        node, obj, parts = data, cfg, key.strip().split(".")
        for i, part in enumerate(parts[:-1]):
            if not isinstance(node.get(part), dict):
                section = _short(".".join(parts[: i + 1]))
                raise InputError(f"--set {_short(item)}: {section} is not a config section")
            node = node[part]
            obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
        open_dict = isinstance(obj, dict)
        if parts[-1] not in node and not open_dict:
            known = ", ".join(sorted(node))
            raise InputError(f"--set {_short(item)}: no field {_short(key)} (known here: {known})")
        try:
            node[parts[-1]] = _parse_value(text.strip())
        except InputError as exc:
            raise InputError(f"--set {_short(item)}: {exc}") from None
    return from_dict(type(cfg), data)
