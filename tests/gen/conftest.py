"""Shared fixtures of the gen tests: a short rendered walk along the example street."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLE_SCENE
from urbanverse.render.tour import TourCfg, run_render_tour


@pytest.fixture(scope="session")
def walk_video(tmp_path_factory) -> Path:
    """A 5 s, 10 fps, 480x270 walk (``render-tour`` seed 1) through ``scenes/example``."""
    root = tmp_path_factory.mktemp("walk")
    shutil.copytree(EXAMPLE_SCENE, root / "example")
    video = root / "walk.mp4"
    run_render_tour(root / "example", video, TourCfg(seconds=5.0, fps=10.0, width=480, height=270, seed=1))
    return video
