"""The ``urbanverse`` command line (``app``, the console script's entry point).

One module per command group: ``scene`` (usd, validate, check, procgen, preview), ``gen``,
``assets``, ``render``, ``train`` (train, eval, export) and ``view`` (view, isaac); ``common``
holds the exit-code mapping and shared options, ``logs`` the logging set-up.
"""

from __future__ import annotations

from urbanverse.cli.app import app

__all__ = ["app"]
