"""People tracked over frames sampled densely from the video, not over the keyframes alone.

Keyframes are chosen for the camera's motion: a static camera (``vtest.avi``) gets one every 1.5 s,
in which a walker moves 2 m and trackers swap people that pass each other. Trajectories need the
walk itself, so this pass reads a frame every ``step_s`` of the shot, runs the object detector alone
on it (no pole, vegetation or crop-classifier passes: only people are kept) and tracks the people
with the keyframes' tracker (:func:`urbanverse.perception.track.run_tracking`). Frames are numbered
0, 1, 2... in time order; ``times_s`` gives each one's time in the video.
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import numpy as np

from urbanverse.perception.detect import DetectionCfg, run_detection
from urbanverse.perception.record import FrameDetections, Tracks
from urbanverse.perception.track import TrackingCfg, run_tracking
from urbanverse.video.decode import read_frames
from urbanverse.video.record import KeyframeSet


@dataclasses.dataclass(frozen=True)
class PeopleTracks:
    """The person tracks of the sampled frames: ``tracks`` and ``detections`` number frames 0, 1, 2...
    whose times (s from the video's start) are ``times_s``."""

    times_s: tuple[float, ...]
    detections: FrameDetections
    tracks: Tracks


def sample_times(kfs: KeyframeSet, span_s: tuple[float, float], step_s: float, max_frames: int) -> list[int]:
    """Frame numbers every ``step_s`` (at least one frame apart; wider where more than ``max_frames``
    would be read) over ``span_s`` (s), within the selected shot, its last frame included (the last
    keyframe's people are tracked up to it)."""
    shot = kfs.shots[kfs.selected_shots[0]]
    first = max(shot.start_frame, int(np.ceil(span_s[0] * kfs.fps)))
    last = min(shot.end_frame - 1, int(np.floor(span_s[1] * kfs.fps)))
    if last < first:
        return []
    step = max(1, round(step_s * kfs.fps), int(np.ceil((last - first + 1) / max_frames)))
    numbers = list(range(first, last + 1, step))
    return numbers if numbers[-1] == last else [*numbers[: max_frames - 1], last]


def _people_only(dets: FrameDetections) -> FrameDetections:
    frames = tuple(
        dataclasses.replace(
            f, detections=tuple(d for d in f.detections if d.dynamic and d.category_path[1] == "people")
        )
        for f in dets.frames
    )
    return dataclasses.replace(dets, frames=frames)


def track_people(
    kfs: KeyframeSet,
    span_s: tuple[float, float],
    step_s: float,
    max_frames: int,
    detection: DetectionCfg,
    tracking: TrackingCfg,
    stop: threading.Event | None = None,
) -> PeopleTracks:
    """Detect and track the people of the video ``kfs.source`` in frames every ``step_s`` over
    ``span_s``, at the keyframes' working size and crop."""
    numbers = sample_times(kfs, span_s, step_s, max_frames)
    top, bottom = kfs.crop_rows
    frames = read_frames(Path(kfs.source), numbers, tuple(kfs.working_size), colour=True)
    numbers = [n for n in numbers if n in frames]
    rgb = [(j, frames[n][top : frames[n].shape[0] - bottom]) for j, n in enumerate(numbers)]
    cfg = dataclasses.replace(detection, poles=False, vegetation=False, classifier="off", crop_classifier="")
    dets = _people_only(run_detection(rgb, cfg, stop))
    tracks = run_tracking(rgb, dets, tracking, stop=stop).tracks
    return PeopleTracks(tuple(n / kfs.fps for n in numbers), dets, tracks)
