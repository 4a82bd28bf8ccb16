"""CLI fixtures: undo the logging set-up that each invocation of the app installs."""

from __future__ import annotations

import logging

import pytest

from urbanverse.cli import logs


@pytest.fixture(autouse=True)
def _restore_logging():
    root, package = logging.getLogger(), logging.getLogger(logs.PACKAGE_LOGGER)
    levels = root.level, package.level
    yield
    if logs._installed is not None:
        root.removeHandler(logs._installed)
        logs._installed = None
    root.setLevel(levels[0])
    package.setLevel(levels[1])
