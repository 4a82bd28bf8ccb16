"""H.264 MP4 writing with PyAV (FFmpeg's libx264 ships inside the PyAV wheel)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np


class Mp4Writer:
    """Append RGB frames ``(H, W, 3)`` uint8 to an H.264 MP4 (yuv420p, so H and W must be even).

    Writes ``path`` as given: give it a temporary path from ``urbanverse.records.atomic_path`` so an
    interrupted run leaves no half-written video under the final name. :meth:`close` finishes the
    file; :meth:`abort` closes it unfinished.
    """

    def __init__(self, path: Path, fps: float, width: int, height: int, crf: int = 20):
        import av

        if width % 2 or height % 2:
            raise ValueError(f"H.264 needs even frame sizes, got {width}x{height}")
        self.path = Path(path)
        self._container = av.open(str(self.path), mode="w", format="mp4")
        self._stream = self._container.add_stream("libx264", rate=Fraction(fps).limit_denominator(1000))
        self._stream.width, self._stream.height = width, height
        self._stream.pix_fmt = "yuv420p"
        # x264's macroblock-tree rate control gives different bytes run to run on the same frames
        # (seen with PyAV 18 / x264 core 165); without it the same tour encodes to the same file.
        self._stream.options = {"crf": str(crf), "preset": "veryfast", "x264-params": "mbtree=0"}
        self._av = av

    def write(self, rgb: np.ndarray) -> None:
        frame = self._av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24")
        for packet in self._stream.encode(frame):
            self._container.mux(packet)

    def close(self) -> None:
        for packet in self._stream.encode():
            self._container.mux(packet)
        self._container.close()

    def abort(self) -> None:
        self._container.close()
