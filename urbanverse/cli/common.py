"""Pieces shared by the command modules: exit-code mapping, common arguments, JSON output."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from urbanverse.errors import InputError, MissingDependencyError
from urbanverse.records import strict_json

SceneDir = Annotated[Path, typer.Argument(help="Scene folder holding scene.json (e.g. scenes/example).")]

JsonFlag = Annotated[
    bool,
    typer.Option(
        "--json", help="Print the results as one JSON document on stdout (progress and logs go to stderr)."
    ),
]


def print_json(data: Any) -> None:
    """Write ``data`` to stdout as one indented, strict JSON document (paths become strings, NaN null)."""
    typer.echo(json.dumps(strict_json(data), indent=2, default=str, allow_nan=False))


def _fail(message: str, code: int) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


#: Exit status of a command stopped by Ctrl-C (SIGINT), as shells report a process ended by SIGINT.
EXIT_INTERRUPTED = 130


def _interrupted(exc: KeyboardInterrupt) -> None:
    """One line and exit 130. The long jobs keep what they finished (each survives SIGKILL), so the
    line says how to go on; ``exc``'s text, when a job gave one, says it for that job. Work still
    running on other threads (a gen stage inside COLMAP) is not waited for: the process ends at once,
    which leaves the same state a kill does."""
    how = str(exc) or "what finished is kept; run the same command again to resume"
    typer.echo(f"error: interrupted (Ctrl-C); {how}", err=True)
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)
    raise typer.Exit(EXIT_INTERRUPTED)


#: Set by the SIGINT handler a command runs under: Ctrl-C was pressed during this command.
_SIGINT_SEEN = threading.Event()


def _on_sigint(signum, frame) -> None:
    """Python's own Ctrl-C handling (``KeyboardInterrupt``), remembered: an extension module whose
    initialisation it stops reports ``ImportError: initialization failed`` instead, which may not
    carry the ``KeyboardInterrupt`` along."""
    _SIGINT_SEEN.set()
    signal.default_int_handler(signum, frame)


def _interrupt_behind(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C behind ``exc``, if any: a ``KeyboardInterrupt`` it was raised from, or a SIGINT
    received while the command ran."""
    if _SIGINT_SEEN.is_set():
        return KeyboardInterrupt()
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def cli_command(fn):
    """Map exceptions to exit codes: InputError / missing dependency -> 2, Ctrl-C -> 130 (one line),
    anything else -> 1.

    Set ``URBANVERSE_DEBUG=1`` to see the traceback of internal errors.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _SIGINT_SEEN.clear()
        if threading.current_thread() is threading.main_thread() and (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            signal.signal(signal.SIGINT, _on_sigint)
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt as exc:
            _interrupted(exc)
        except (InputError, MissingDependencyError) as exc:
            _fail(str(exc), 2)
        except Exception as exc:
            interrupt = _interrupt_behind(exc)
            if interrupt is not None:  # Ctrl-C inside an import or a library that wrapped it
                _interrupted(interrupt)
            if os.environ.get("URBANVERSE_DEBUG"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (set URBANVERSE_DEBUG=1 for the traceback)", 1
            )

    return wrapper
