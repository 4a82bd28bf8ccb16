"""Visual odometry started early, beside SfM's fallback features: same poses, stopped when not needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from urbanverse.errors import Cancelled
from urbanverse.recon.sfm import run_sfm
from urbanverse.recon.sfm_cfg import SfmCfg
from urbanverse.recon.vo import EarlyVo, VoCfg, run_vo


def _inputs(walk_keyframes):
    kfs, image_dir, _ = walk_keyframes
    return image_dir, [k.image for k in kfs.keyframes], kfs.intrinsics


def test_early_vo_gives_the_poses_of_vo_run_in_line(walk_keyframes) -> None:
    image_dir, names, intr = _inputs(walk_keyframes)
    in_line = run_vo(image_dir, names, intr, VoCfg())
    with EarlyVo(image_dir, names, intr, VoCfg()) as vo:
        vo.start()
        vo.start()  # a second start runs nothing more
        early, seconds = vo.result()
    assert in_line is not None and early is not None and seconds > 0
    assert sorted(early.wfc) == sorted(in_line.wfc)
    for i, m in in_line.wfc.items():
        np.testing.assert_array_equal(early.wfc[i], m)


def test_result_starts_vo_that_was_never_started(walk_keyframes) -> None:
    image_dir, names, intr = _inputs(walk_keyframes)
    with EarlyVo(image_dir, names, intr, VoCfg()) as vo:
        raw, _ = vo.result()
    assert raw is not None and len(raw.wfc) >= 0.8 * len(names)


def test_leaving_stops_vo_at_its_next_keyframe(walk_keyframes) -> None:
    image_dir, names, intr = _inputs(walk_keyframes)
    vo = EarlyVo(image_dir, names, intr, VoCfg())
    with vo:
        vo.start()
    with pytest.raises(Cancelled):  # (it would take a whole walk's features to finish first)
        vo.result()


def test_sfm_calls_on_fallback_as_its_second_features_start(walk_keyframes, tmp_path: Path) -> None:
    image_dir, names, intr = _inputs(walk_keyframes)
    calls: list[str] = []
    p = SfmCfg(features="colmap", attempts=1, refocus=False, refine_focal=False)
    found = run_sfm(image_dir, names, intr, tmp_path / "ok", p, on_fallback=lambda: calls.append("ok"))
    assert found is not None and calls == []  # the first features map the walk: no fallback
    nothing_plausible = run_sfm(
        image_dir,
        names,
        intr,
        tmp_path / "fails",
        p,
        consistent=lambda raw: [],
        on_fallback=lambda: calls.append("fails"),
    )
    assert calls == ["fails"]
    assert "SfM retried with opencv SIFT features" in nothing_plausible.notes
