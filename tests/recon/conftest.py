"""Shared fixtures: keyframes of a synthetic walk along a textured street (known camera path)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.video.synth import Street, write_video
from urbanverse.video import KeyframeSet, run_video


@pytest.fixture(scope="session")
def walk_keyframes(tmp_path_factory) -> tuple[KeyframeSet, Path, np.ndarray]:
    """``(keyframes, their folder, true per-frame world_from_camera (T, 4, 4))`` of a 6 s, 10 fps walk."""
    root = tmp_path_factory.mktemp("walk")
    poses = write_video(root / "walk.mp4", Street(), seconds=6.0, fps=10.0)
    kfs = run_video(root / "walk.mp4", root / "video")
    return kfs, root / "video", poses
