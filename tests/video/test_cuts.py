"""Cut detection on an edited video built from our own tours: hard cuts, fades, dissolves, titles."""

from __future__ import annotations

from pathlib import Path

import pytest

from urbanverse.bench.edited_video import EditCfg, build_edited_video, score_cuts
from urbanverse.video import VideoCfg, run_video


@pytest.mark.parametrize("seed", [7, 8])
def test_every_transition_of_an_edited_video_is_found_and_no_other(tmp_path: Path, seed: int) -> None:
    """Five 1.5-2.5 s walks at 160x90 joined by one of each transition (a hard cut, a fade through
    black, a cross-dissolve, a title card; some shots captioned): each is found within 0.2 s, nothing
    else is, and no keyframe lies inside a transition."""
    cfg = EditCfg(shots=5, shot_s=(1.5, 2.5), width=160, height=90)
    video = build_edited_video(tmp_path / "edited.mp4", seed, cfg)
    assert sorted(t.kind for t in video.transitions) == ["cut", "dissolve", "fade", "title"]
    kfs = run_video(video.path, tmp_path / "work", VideoCfg())
    score = score_cuts(video.transitions, [(t.start_s, t.end_s) for t in kfs.transitions])
    assert score.missed == () and score.spurious == (), score
    assert len(kfs.shots) == 5
    inside = [(t.start_frame, t.end_frame) for t in video.transitions if t.kind != "cut"]
    assert not [k.frame for k in kfs.keyframes if any(a <= k.frame < b for a, b in inside)]
    assert all(
        k.shot == s.index for s in kfs.shots for k in kfs.keyframes if s.start_frame <= k.frame < s.end_frame
    )


def test_a_cut_between_two_walks_of_the_same_street_is_found(tmp_path: Path) -> None:
    """The harder hard cut: two walks of one street, the second a little darker (another take)."""
    cfg = EditCfg(shots=2, shot_s=(2.0, 2.0), width=160, height=90, kinds=("cut",), overlay_p=0.0)
    video = build_edited_video(tmp_path / "cut.mp4", 3, cfg)
    kfs = run_video(video.path, tmp_path / "work", VideoCfg())
    assert [(t.kind, t.start_frame) for t in kfs.transitions] == [("cut", video.transitions[0].start_frame)]
