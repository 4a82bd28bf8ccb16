"""Logging for the command line: the package's log records go to stderr through rich.

``configure_logging`` runs once per invocation, in the app callback; library code only calls
``logging.getLogger(__name__)``. On a terminal records look like rich's usual log lines; piped
into a file they stay one plain line each (``warning: ...``), so logs can be grepped.
"""

from __future__ import annotations

import logging

from rich.console import Console
from rich.logging import RichHandler
from rich.text import Text

#: The logger every module of the package logs under (``logging.getLogger(__name__)``).
PACKAGE_LOGGER = "urbanverse"

_installed: logging.Handler | None = None


class StderrHandler(RichHandler):
    """``RichHandler`` on stderr that writes unwrapped single lines when stderr is not a terminal."""

    def render(self, *, record, traceback, message_renderable):
        if self.console.is_terminal:
            return super().render(record=record, traceback=traceback, message_renderable=message_renderable)
        prefix = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        return Text.assemble(prefix, message_renderable)


def package_level(verbose: bool = False, quiet: bool = False) -> int:
    """Level of the package's loggers: DEBUG with ``verbose``, WARNING with ``quiet``, else INFO."""
    if verbose:
        return logging.DEBUG
    return logging.WARNING if quiet else logging.INFO


def configure_logging(verbose: bool = False, quiet: bool = False) -> logging.Handler:
    """Route log records to stderr: the package's at ``package_level``, other libraries' at WARNING.

    Idempotent: a second call replaces the handler the first one installed (tests invoke the
    app many times in one process). Returns the installed handler.
    """
    global _installed
    root = logging.getLogger()
    if _installed is not None:
        root.removeHandler(_installed)
    # soft_wrap: plain lines (not a terminal) are never cut at 80 columns.
    handler = StderrHandler(
        console=Console(stderr=True, soft_wrap=True),
        show_time=verbose,
        show_path=verbose,
        markup=False,
    )
    handler.setLevel(logging.DEBUG)
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger(PACKAGE_LOGGER).setLevel(package_level(verbose, quiet))
    _installed = handler
    return handler
