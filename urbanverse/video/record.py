"""Records of the video stage: the keyframe set (``keyframes.json``) and the pinhole intrinsics guess.

All image sizes and pixel quantities refer to the *working* resolution (the keyframe files on disk)
unless a field name says ``original``. Times are seconds from the start of the video.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Literal

from urbanverse.records import load_record, record, save_json

KEYFRAMES_SCHEMA_VERSION = 1
KEYFRAMES_FILE = "keyframes.json"


@record
class CameraIntrinsics:
    """Pinhole intrinsics at the working resolution, in pixels (OpenCV convention, pixel centres at .5).

    ``K = [[fx, 0, cx], [0, fy, cy], [0, 0, 1]]``. ``source`` says where the focal length came from:
    ``fov_prior`` (the configured horizontal field of view), ``focal_px`` (a focal length given by the
    user), ``exif`` (the 35 mm equivalent focal length in an image's EXIF), or ``refined`` (bundle
    adjustment in the reconstruction stage).
    """

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    source: Literal["fov_prior", "focal_px", "exif", "refined"] = "fov_prior"

    @property
    def hfov_deg(self) -> float:
        """Horizontal field of view in degrees."""
        return math.degrees(2.0 * math.atan(0.5 * self.width / self.fx))

    def matrix(self):
        """The 3x3 calibration matrix ``K`` as a float64 numpy array."""
        import numpy as np

        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @staticmethod
    def from_hfov(width: int, height: int, hfov_deg: float, source: str = "fov_prior") -> CameraIntrinsics:
        """Square pixels, principal point at the image centre, focal from the horizontal FOV (degrees)."""
        f = 0.5 * width / math.tan(math.radians(hfov_deg) / 2.0)
        return CameraIntrinsics(
            width=width,
            height=height,
            fx=f,
            fy=f,
            cx=width / 2.0,
            cy=height / 2.0,
            source=source,  # type: ignore[arg-type]
        )


@record
class Shot:
    """A run of frames between two cuts: frames ``[start_frame, end_frame)``."""

    index: int
    start_frame: int
    end_frame: int
    start_s: float
    end_s: float
    crop_rows: tuple[int, int] = (0, 0)
    """Rows (top, bottom; working-size pixels) cut off the shot's keyframes: a band that stays still
    while the rest of the picture moves (a burnt-in caption, a letterbox bar)."""

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@record
class TransitionSpan:
    """A transition between shots: frames ``[start_frame, end_frame)`` (``[start_s, end_s)``) belong to
    no shot. ``kind``: ``cut`` (a hard cut, an empty span at the next shot's first frame), ``fade``
    (through dark frames), ``title`` (flat frames: a title card, a slate, a blank) or ``dissolve``."""

    kind: Literal["cut", "fade", "dissolve", "title"]
    start_frame: int
    end_frame: int
    start_s: float
    end_s: float


@record
class Keyframe:
    """One selected frame, written to ``image`` (a file name relative to the stage's work folder).

    ``motion_px`` is the median optical-flow displacement (working-resolution pixels) of tracked
    features since the previous keyframe of the same shot (0 for the first one); ``reason`` says why
    the frame was chosen: ``first``, ``motion`` (displacement over the threshold), ``max_gap`` (the
    longest allowed interval elapsed), ``tracks_lost`` (too few features survived), ``last`` (end of the
    shot), or ``image`` (a still input).
    """

    index: int
    frame: int
    time_s: float
    image: str
    shot: int = 0
    motion_px: float = 0.0
    sharpness: float = 0.0
    reason: Literal["first", "motion", "max_gap", "tracks_lost", "last", "image"] = "motion"


@record
class KeyframeSet:
    """What the video stage produced (``keyframes.json``).

    ``mode`` is ``video`` for a video file, ``image`` for a single still, ``images`` for a folder of
    stills (an ordered sequence, e.g. a two-view pair). ``original_size``/``working_size`` are
    ``(width, height)`` in pixels; keyframe images are stored at ``working_size``. ``shots`` lists
    every detected shot, ``transitions`` what separates them; ``selected_shots`` the usable shots
    (at least ``min_shot_s`` long, with a keyframe), whose keyframes are in ``keyframes``: gen tries
    them longest first, or makes a scene of each (``--per-shot``). ``timings_s`` maps a step name to
    seconds.
    """

    schema_version: int = KEYFRAMES_SCHEMA_VERSION
    mode: Literal["video", "image", "images"]
    source: str
    source_sha256: str
    fps: float
    frame_count: int
    duration_s: float
    original_size: tuple[int, int]
    working_size: tuple[int, int]
    shots: tuple[Shot, ...]
    selected_shots: tuple[int, ...]
    keyframes: tuple[Keyframe, ...]
    intrinsics: CameraIntrinsics
    transitions: tuple[TransitionSpan, ...] = ()
    warnings: tuple[str, ...] = ()
    timings_s: dict[str, float] = dataclasses.field(default_factory=dict)
    crop_rows: tuple[int, int] = (0, 0)
    """For one shot (:func:`split_shots`): its ``Shot.crop_rows``; the keyframe images are the rows
    between them of the ``working_size`` frames, and ``intrinsics`` describe those images."""


def save_keyframes(kfs: KeyframeSet, work_dir: Path) -> Path:
    """Write ``kfs`` to ``work_dir/keyframes.json`` atomically; returns the path."""
    path = Path(work_dir) / KEYFRAMES_FILE
    save_json(kfs, path)
    return path


def load_keyframes(work_dir: Path) -> KeyframeSet:
    """Read ``work_dir/keyframes.json`` (``InputError`` naming the file if missing or invalid)."""
    return load_record(KeyframeSet, Path(work_dir) / KEYFRAMES_FILE)


def split_shots(kfs: KeyframeSet) -> list[KeyframeSet]:
    """One ``KeyframeSet`` per selected shot (keyframes re-indexed from 0), for per-shot reconstruction."""
    out = []
    shots = {s.index: s for s in kfs.shots}
    for shot in kfs.selected_shots:
        kept = [k for k in kfs.keyframes if k.shot == shot]
        kept = [dataclasses.replace(k, index=i) for i, k in enumerate(kept)]
        top, bottom = shots[shot].crop_rows if shot in shots else (0, 0)
        intr = kfs.intrinsics
        intr = dataclasses.replace(intr, height=intr.height - top - bottom, cy=intr.cy - top)
        out.append(
            dataclasses.replace(
                kfs, selected_shots=(shot,), keyframes=tuple(kept), intrinsics=intr, crop_rows=(top, bottom)
            )
        )
    return out
