"""The video stage of ``urbanverse gen``: open and validate the input (video, image or image folder),
detect shot cuts, pick keyframes by motion/parallax, downscale, guess the intrinsics.

Entry point: :func:`run_video` (``VideoCfg`` -> :class:`KeyframeSet`, saved as ``keyframes.json``).
"""

from urbanverse.video.record import (
    KEYFRAMES_FILE,
    CameraIntrinsics,
    Keyframe,
    KeyframeSet,
    Shot,
    load_keyframes,
    save_keyframes,
    split_shots,
)
from urbanverse.video.stage import VideoCfg, run_video

__all__ = [
    "KEYFRAMES_FILE",
    "CameraIntrinsics",
    "Keyframe",
    "KeyframeSet",
    "Shot",
    "VideoCfg",
    "load_keyframes",
    "run_video",
    "save_keyframes",
    "split_shots",
]
