"""Shot boundaries of an edited video: hard cuts, fades, dissolves and title cards, on the analysis frames.

The video stage decodes once and hands every analysed frame (a few hundred pixels wide, about 15 per
second) to :class:`TransitionDetector`; it feeds them to PySceneDetect's detectors through their
frame-processing API (``process_frame``), so the video is not decoded a second time:

- **hard cuts**: ``AdaptiveDetector``: the ``ContentDetector`` score (the mean change of hue,
  saturation and lightness between consecutive frames, 0-255) at least ``cut_threshold`` and at least
  ``cut_ratio`` times the mean score of the two frames before and after (a fast pan through a
  textured street changes every frame a lot, a cut changes one frame);
- **cross-dissolves** (and fades): PySceneDetect has no detector for them, and a dissolve changes the
  picture little from one frame to the next. Inside a dissolve a frame is the mean of the frames
  ``window_s`` before and after it (a linear blend), while a moving camera's frame is not (the mean
  of two shifted views is a ghosted double image): a frame whose mean absolute difference (grey
  levels, at 80 px wide) from that mean is at most ``dissolve_max_residual`` of the difference between
  the two frames, where that difference is at least ``dissolve_min_change`` levels, for two analysed
  frames in a row, lies in a gradual transition;
- **transition frames**: a frame darker than ``dark_level`` (mean grey, 0-255; PySceneDetect's
  ``ThresholdDetector`` rule for fades to black) or *flat* (at least ``flat_fraction`` of its pixels
  without an edge: a title card, a slate, a blank) shows no street.

Each boundary is a span of frames that belongs to no shot: empty for a hard cut, the dark or flat run
(widened by ``margin_s`` each side, for the frames fading through it) for a fade or title, the frames
around the window a dissolve was found in. Spans closer than ``margin_s`` merge. Keyframes are taken
only outside these spans.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from fractions import Fraction
from typing import Literal

import cv2
import numpy as np

from urbanverse.errors import MissingDependencyError

try:
    from scenedetect.common import FrameTimecode
    from scenedetect.detectors import AdaptiveDetector
except ImportError:  # installed beside the package (see the README), so it can be missing
    AdaptiveDetector = FrameTimecode = None

Kind = Literal["cut", "fade", "dissolve", "title"]


@dataclasses.dataclass(frozen=True)
class Transition:
    """Frames ``[start_frame, end_frame)`` of the video (decoded-frame indices) belong to no shot; a
    hard cut has ``start_frame == end_frame``, the next shot's first frame. ``kind``: ``cut``,
    ``fade`` (dark frames), ``title`` (flat frames: a card, a slate, a blank) or ``dissolve``."""

    kind: Kind
    start_frame: int
    end_frame: int


def flat_fraction(gray: np.ndarray) -> float:
    """Share (0-1) of the pixels of a grey image whose gradient (|d/dx| + |d/dy|, Sobel) is under 8
    grey levels: near 1 on a title card or blank, 0.4-0.75 on street footage."""
    gx = cv2.Sobel(gray, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(gray, cv2.CV_16S, 0, 1)
    return float(((np.abs(gx.astype(np.int32)) + np.abs(gy.astype(np.int32))) < 8).mean())


class TransitionDetector:
    """Feed every analysed frame in order with :meth:`update`; :meth:`finish` gives the transitions.

    ``fps``: the video's frame rate; ``step``: every ``step``-th decoded frame is analysed. The
    thresholds are those of the module docstring (``VideoCfg`` documents each); ``margin_s`` and
    ``min_cut_gap_s`` (the least time between two hard cuts) in seconds of video.
    """

    def __init__(
        self,
        *,
        fps: float,
        step: int,
        cut_threshold: float,
        cut_ratio: float,
        window_s: float,
        dissolve_min_change: float,
        dissolve_max_residual: float,
        dark_level: float,
        flat_fraction: float,
        margin_s: float,
        min_cut_gap_s: float,
    ) -> None:
        if AdaptiveDetector is None:
            raise MissingDependencyError(
                "shot detection needs PySceneDetect: pip install --no-deps scenedetect==0.7.2 "
                "(its wheels declare opencv-python, which must not sit beside opencv-python-headless)"
            )
        self.dark_level, self.flat_fraction, self.margin_s = dark_level, flat_fraction, margin_s
        rate = Fraction(fps / step).limit_denominator(1000)
        self._rate = rate
        self._k = max(1, int(round(window_s * float(rate))))
        self.dissolve_min_change, self.dissolve_max_residual = dissolve_min_change, dissolve_max_residual
        min_len = max(1, int(round(min_cut_gap_s * float(rate))))
        self._hard = AdaptiveDetector(adaptive_threshold=cut_ratio, min_content_val=cut_threshold,
                                      min_scene_len=min_len, window_width=self.LAG)  # fmt: skip
        self._tiny: deque[np.ndarray] = deque(maxlen=2 * self._k + 1)  # 80 px wide grey copies
        self._blend_run = 0  # analysed frames in a row that look blended
        self._frames: list[int] = []  # decoded-frame index of each analysed frame
        self._blank: list[bool] = []  # dark or flat
        self._dark: list[bool] = []
        self._cuts: list[int] = []  # analysed-frame positions of hard cuts (the new shot's first)
        self._windows: list[int] = []  # analysed-frame positions of blended frames (second of a run on)

    #: ``AdaptiveDetector``'s window: a hard cut is reported up to LAG + 1 analysed frames late.
    LAG = 2

    def update(self, frame_idx: int, small_bgr: np.ndarray, gray: np.ndarray) -> tuple[int | None, bool]:
        """Feed the analysed frame of decoded index ``frame_idx`` (BGR and grey copies).

        Returns ``(boundary, usable)``: the decoded index of the first frame of a shot when a
        transition was just found (a hard cut's up to ``LAG + 1`` analysed frames back), else None;
        and whether this frame shows a picture (not dark, not flat)."""
        n = len(self._frames)
        self._frames.append(frame_idx)
        dark = float(gray.mean()) < self.dark_level
        blank = dark or flat_fraction(gray) >= self.flat_fraction
        self._dark.append(dark)
        self._blank.append(blank)
        boundary: int | None = None
        for cut in self._hard.process_frame(FrameTimecode(n, fps=self._rate), small_bgr):
            self._cuts.append(cut.frame_num)  # reported LAG frames late
            boundary = self._frames[cut.frame_num]
        h = max(2, int(round(gray.shape[0] * 80 / gray.shape[1])))
        self._tiny.append(cv2.resize(gray, (80, h), interpolation=cv2.INTER_AREA).astype(np.float32))
        if len(self._tiny) == self._tiny.maxlen:
            before, mid, after = self._tiny[0], self._tiny[self._k], self._tiny[-1]
            change = float(np.abs(after - before).mean())
            residual = float(np.abs(mid - 0.5 * (before + after)).mean())
            blended = change >= self.dissolve_min_change and residual <= self.dissolve_max_residual * change
            self._blend_run = self._blend_run + 1 if blended else 0
            if self._blend_run >= 2:
                self._windows.append(n - self._k)
                boundary = frame_idx
        if n > 0 and self._blank[n - 1] and not blank:
            boundary = frame_idx
        return boundary, not blank

    def finish(self) -> list[Transition]:
        """The transitions of the frames fed, in time order (module docstring)."""
        n = len(self._frames)
        if n == 0:
            return []
        margin = max(1, int(round(self.margin_s * float(self._rate))))
        spans: list[tuple[int, int, Kind]] = []  # analysed positions [a, b)
        blank = np.array(self._blank)
        k = 0
        while k < n:
            if blank[k]:
                e = k
                while e < n and blank[e]:
                    e += 1
                kind: Kind = "fade" if any(self._dark[k:e]) else "title"
                spans.append((max(0, k - margin), min(n, e + margin), kind))
                k = e
            else:
                k += 1
        for c in self._cuts:
            spans.append((c, c, "cut"))
        for w in self._windows:
            a, b = max(0, w - 2 * self._k), min(n, w + self._k + 1)
            if any(a <= c <= b for c in self._cuts):
                continue  # the hard cut explains the change
            spans.append((a, b, "dissolve"))
        spans.sort(key=lambda s: (s[0], s[1]))
        merged: list[list] = []
        rank = {"cut": 0, "dissolve": 1, "title": 2, "fade": 3}
        for a, b, kind in spans:
            if merged and a <= merged[-1][1] + margin:
                last = merged[-1]
                last[1] = max(last[1], b)
                if rank[kind] > rank[last[2]]:
                    last[2] = kind
                if last[2] != "cut":
                    last[0] = min(last[0], a)
            else:
                merged.append([a, b, kind])
        out = []
        for a, b, kind in merged:
            if kind == "cut":
                out.append(Transition("cut", self._frames[a], self._frames[a]))
                continue
            start = self._frames[a] if a > 0 else 0
            end = self._frames[b] if b < n else self._frames[-1] + 1
            out.append(Transition(kind, start, end))
        return out
