"""Where generated data lives: a user cache (never committed), overridable with ``URBANVERSE_CACHE``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$URBANVERSE_CACHE`` (default ``~/.cache/urbanverse``) joined with ``parts``; created on demand."""
    root = Path(os.environ.get("URBANVERSE_CACHE", Path.home() / ".cache" / "urbanverse"))
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
