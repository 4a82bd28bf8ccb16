"""RL fixtures: a session-wide compile cache (kept out of the user's cache) and one torch thread."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "scenes" / "example"


@pytest.fixture(autouse=True, scope="session")
def _rl_session(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("rl_cache")))
    mp.setenv("OMP_NUM_THREADS", "1")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    mp.undo()


@pytest.fixture
def cli_env() -> dict[str, str]:
    """Environment for CLI subprocesses (the session cache, one thread)."""
    return dict(os.environ)
