"""Typed JSON records shared across stages: validation with JSON paths, atomic writes.

Records are frozen dataclasses validated by pydantic (strict JSON types, no NaN or
infinity, no unknown fields). Errors name the JSON path of the first bad value in the
form ``objects[3].position: expected 3 numbers, got 2``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pydantic
from pydantic import BeforeValidator, ConfigDict, TypeAdapter
from pydantic_core import PydanticCustomError

from urbanverse.errors import InputError

T = TypeVar("T")

#: Config for every record: unknown fields, NaN/inf and silent type coercion are errors.
RECORD_CONFIG = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


def record(cls: type[T]) -> type[T]:
    """Decorate a class as a frozen, keyword-only, validated record."""
    return pydantic.dataclasses.dataclass(frozen=True, kw_only=True, config=RECORD_CONFIG)(cls)


def _fixed_length(n: int):
    def check(value: Any) -> Any:
        if isinstance(value, list | tuple):
            if len(value) != n:
                raise PydanticCustomError(
                    "vector_length", "expected {n} numbers, got {got}", {"n": n, "got": len(value)}
                )
            return tuple(value)
        raise PydanticCustomError("vector_type", "expected a list of {n} numbers", {"n": n})

    return BeforeValidator(check)


Vec2 = Annotated[tuple[float, float], _fixed_length(2)]
Vec3 = Annotated[tuple[float, float, float], _fixed_length(3)]
Vec4 = Annotated[tuple[float, float, float, float], _fixed_length(4)]


def json_path(loc: tuple[str | int, ...]) -> str:
    """``("objects", 3, "position")`` -> ``"objects[3].position"``; odd keys quoted: ``x["a b"]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union")):
            continue
        elif not str(part).isidentifier():  # a key the file made up: quoted, control characters escaped
            out += f"[{json.dumps(str(part))}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(root)"


def _first_error(exc: pydantic.ValidationError) -> str:
    err = exc.errors()[0]
    msg = err["msg"]
    if err["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
        msg = "unknown field"
    elif err["type"] in ("missing", "missing_keyword_argument"):
        msg = "missing field"
    extra = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{json_path(tuple(err['loc']))}: {msg}{extra}"


@functools.cache
def _adapter(cls: type) -> TypeAdapter:
    """One validator per record class (building a TypeAdapter costs far more than using it)."""
    return TypeAdapter(cls)


def parse_record(cls: type[T], text: str | bytes, source: str) -> T:
    """Parse and validate JSON ``text`` as ``cls``; ``InputError`` names ``source`` and the JSON path."""
    try:
        return _adapter(cls).validate_json(text)
    except pydantic.ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            raise InputError(f"{source}: not valid JSON ({exc.errors()[0]['msg']})") from None
        raise InputError(f"{source}: {_first_error(exc)}") from None


def load_record(cls: type[T], path: Path) -> T:
    """Read ``path`` and validate it as ``cls`` (see ``parse_record``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    return parse_record(cls, path.read_bytes(), str(path))


def record_to_dict(obj: Any) -> dict:
    """A record as plain JSON-compatible Python data."""
    return _adapter(type(obj)).dump_python(obj, mode="json")


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield an unused temporary path beside ``path`` (same suffix); rename it onto ``path`` on success.

    On any exception the temporary file is removed, so a reader never sees a half-written file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = path.parent / f".{path.stem}.{uuid.uuid4().hex[:12]}.tmp{path.suffix}"
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        tmp_path.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_dir(path: Path) -> Iterator[Path]:
    """Yield an empty hidden folder beside ``path``; on success it replaces ``path`` (removed first if any).

    On any exception the temporary folder is removed, so a reader never sees a half-written folder. Its
    name is fixed (``.<name>.partial``), so what a killed writer left behind is cleared by the next one.
    """
    path = Path(path)
    tmp_dir = path.with_name(f".{path.name}.partial")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir(parents=True)
    try:
        yield tmp_dir
        shutil.rmtree(path, ignore_errors=True)
        tmp_dir.rename(path)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)


def strict_json(data: Any) -> Any:
    """``data`` with NaN and infinities as None: strict JSON readers (jq, browsers) reject them."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {k: strict_json(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [strict_json(v) for v in data]
    return data


def save_json(data: Any, path: Path) -> None:
    """Write ``data`` (a record or plain data) as indented JSON, atomically; NaN and infinities
    become null (:func:`strict_json`)."""
    if not isinstance(data, dict | list):
        data = record_to_dict(data)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(strict_json(data), indent=2, allow_nan=False) + "\n")
