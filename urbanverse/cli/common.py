"""Pieces shared by the command modules: exit-code mapping, common arguments, JSON output."""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from urbanverse.errors import InputError, MissingDependencyError

SceneDir = Annotated[Path, typer.Argument(help="Scene folder holding scene.json (e.g. scenes/example).")]

JsonFlag = Annotated[
    bool,
    typer.Option(
        "--json", help="Print the results as one JSON document on stdout (progress and logs go to stderr)."
    ),
]


def _strict(data: Any) -> Any:
    """``data`` with NaN and infinities as None: strict JSON readers (jq, browsers) reject them."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {k: _strict(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_strict(v) for v in data]
    return data


def print_json(data: Any) -> None:
    """Write ``data`` to stdout as one indented, strict JSON document (paths become strings, NaN null)."""
    typer.echo(json.dumps(_strict(data), indent=2, default=str, allow_nan=False))


def _fail(message: str, code: int) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def cli_command(fn):
    """Map exceptions to exit codes: InputError / missing dependency -> 2, anything else -> 1.

    Set ``URBANVERSE_DEBUG=1`` to see the traceback of internal errors.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except (InputError, MissingDependencyError) as exc:
            _fail(str(exc), 2)
        except Exception as exc:
            if os.environ.get("URBANVERSE_DEBUG"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (set URBANVERSE_DEBUG=1 for the traceback)", 1
            )

    return wrapper
