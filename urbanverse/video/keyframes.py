"""Motion/parallax keyframe selection on small greyscale frames (shot boundaries: ``cuts``).

It runs on an *analysis* copy of each frame (a few hundred pixels wide) so that a minute of 720p
video costs little more than decoding it.

- Keyframes: Shi-Tomasi corners are detected at each keyframe and tracked frame to frame with pyramidal
  Lucas-Kanade; a new keyframe is taken when the median displacement since the last keyframe exceeds
  ``motion_px`` (enough parallax for triangulation), when ``max_gap_s`` has elapsed (a static or slow
  camera still gets regular samples), or when most tracks were lost (a fast turn), but never sooner
  than ``min_gap_s`` after the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

_LK_PARAMS = dict(
    winSize=(15, 15), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 0.03)
)


def sharpness(gray: np.ndarray) -> float:
    """Variance of the Laplacian (higher is sharper); a blur indicator."""
    return float(cv2.Laplacian(gray, cv2.CV_32F).var())


@dataclass
class KeyframeDecision:
    """The selector's verdict for one analysed frame."""

    is_keyframe: bool
    reason: str
    motion_px: float


class KeyframeSelector:
    """Motion-based keyframe selection within one shot, fed analysed greyscale frames in order.

    ``motion_px`` is in analysis-resolution pixels; the caller converts. ``update`` returns the
    decision for the frame just fed; after a keyframe the tracker re-seeds on that frame.
    """

    def __init__(
        self,
        *,
        motion_px: float,
        min_gap_s: float,
        max_gap_s: float,
        min_track_fraction: float = 0.5,
        max_corners: int = 200,
    ) -> None:
        self.motion_px = motion_px
        self.min_gap_s = min_gap_s
        self.max_gap_s = max_gap_s
        self.min_track_fraction = min_track_fraction
        self.max_corners = max_corners
        self._prev_gray: np.ndarray | None = None
        self._pts: np.ndarray | None = None  # (N, 1, 2) current positions of surviving tracks
        self._pts0: np.ndarray | None = None  # (N, 1, 2) their positions at the last keyframe
        self._n_seeded = 0
        self._kf_time = 0.0
        self.last_motion_px = 0.0

    def _seed(self, gray: np.ndarray, t: float) -> None:
        h, w = gray.shape
        min_dist = max(4, int(0.02 * w))
        pts = cv2.goodFeaturesToTrack(gray, self.max_corners, 0.01, min_dist, blockSize=7)
        self._pts = pts if pts is not None else np.zeros((0, 1, 2), np.float32)
        self._pts0 = self._pts.copy()
        self._n_seeded = len(self._pts)
        self._prev_gray = gray
        self._kf_time = t

    def start(self, gray: np.ndarray, t: float) -> KeyframeDecision:
        """Begin a shot on ``gray`` (always a keyframe)."""
        self._seed(gray, t)
        self.last_motion_px = 0.0
        return KeyframeDecision(True, "first", 0.0)

    def track(self, gray: np.ndarray) -> float:
        """Track the features into ``gray``; returns the median displacement since the last keyframe."""
        assert self._prev_gray is not None and self._pts is not None and self._pts0 is not None
        if len(self._pts) > 0:
            nxt, status, _err = cv2.calcOpticalFlowPyrLK(self._prev_gray, gray, self._pts, None, **_LK_PARAMS)
            ok = status.reshape(-1).astype(bool) if nxt is not None else np.zeros(len(self._pts), bool)
            if nxt is not None:
                h, w = gray.shape
                inside = (nxt[:, 0, 0] >= 0) & (nxt[:, 0, 0] < w) & (nxt[:, 0, 1] >= 0) & (nxt[:, 0, 1] < h)
                ok &= inside
                self._pts, self._pts0 = nxt[ok], self._pts0[ok]
            else:
                self._pts, self._pts0 = self._pts[:0], self._pts0[:0]
        self._prev_gray = gray
        if len(self._pts) == 0:
            self.last_motion_px = 0.0
        else:
            self.last_motion_px = float(np.median(np.linalg.norm((self._pts - self._pts0)[:, 0], axis=1)))
        return self.last_motion_px

    def update(self, gray: np.ndarray, t: float) -> KeyframeDecision:
        """Feed the next analysed frame at time ``t`` (seconds)."""
        motion = self.track(gray)
        dt = t - self._kf_time
        reason = ""
        if dt + 1e-9 >= self.min_gap_s:
            surviving = len(self._pts) / max(1, self._n_seeded)
            if motion >= self.motion_px:
                reason = "motion"
            elif dt + 1e-9 >= self.max_gap_s:
                reason = "max_gap"
            elif self._n_seeded >= 20 and surviving < self.min_track_fraction:
                reason = "tracks_lost"
        if reason:
            self._seed(gray, t)
            return KeyframeDecision(True, reason, motion)
        return KeyframeDecision(False, "", motion)

    @property
    def keyframe_time(self) -> float:
        """Time (s) of the last keyframe."""
        return self._kf_time
