"""Exceptions that the CLI maps to exit codes.

``InputError`` (exit 2) means the user's input is wrong: the message says what and where
(a file, a JSON path) in one line. Anything else that escapes a command is an internal
failure (exit 1).
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: a malformed file, a wrong field, a missing path. CLI exit code 2."""


class Cancelled(Exception):
    """Work stopped because another part of the run failed or was interrupted (Ctrl-C); nothing of it
    was saved, and a rerun does it again."""


class MissingDependencyError(ImportError):
    """An optional dependency is needed for this command; the message names the install command."""


def require(module: str, extra: str):
    """Import ``module`` or raise ``MissingDependencyError`` naming ``pip install 'urbanverse[extra]'``."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{module} is not installed ({exc}); install it with: pip install 'urbanverse[{extra}]'"
        ) from exc
