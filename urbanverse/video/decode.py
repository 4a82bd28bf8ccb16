"""Open and validate the stage's input: a video file, a single still image, or a folder of stills.

Every failure a user can cause (missing file, not a video, zero frames, too short, a codec FFmpeg
cannot decode, an unreadable image) raises :class:`~urbanverse.errors.InputError` with one line that
names the file.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from urbanverse.errors import InputError

#: Suffixes read as still images (case-insensitive).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, streamed in ``chunk``-byte pieces."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def working_size(width: int, height: int, max_width: int) -> tuple[int, int]:
    """``(w, h)`` downscaled so that ``w <= max_width`` (aspect kept, even sizes); never upscaled."""
    if width <= max_width:
        return width, height
    s = max_width / width
    return max_width, max(2, int(round(height * s / 2.0)) * 2)


def fourcc_text(code: float) -> str:
    """The four-character codec code OpenCV reports, as text (``'????'`` when unknown)."""
    c = int(code)
    text = "".join(chr((c >> (8 * i)) & 0xFF) for i in range(4))
    return text if text.isprintable() and text.strip() else "????"


@dataclass
class VideoInfo:
    """What the container says before decoding (the frame count may be an estimate)."""

    fps: float
    frame_count_meta: int
    width: int
    height: int
    fourcc: str


def open_video(path: Path) -> tuple[cv2.VideoCapture, VideoInfo, np.ndarray]:
    """Open ``path`` and decode its first frame; returns ``(capture, info, first_frame_bgr)``.

    The capture is positioned after the first frame. Raises ``InputError`` for a missing file, a file
    FFmpeg cannot open (not a video), a video without frames, or one whose frames cannot be decoded.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file (0 bytes), not a video")
    cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    if not cap.isOpened():
        raise InputError(f"{path}: not a video that FFmpeg can open (unknown container or corrupt file)")
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    n_meta = int(max(0.0, cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0.0))
    info = VideoInfo(
        fps=fps if math.isfinite(fps) else 0.0,
        frame_count_meta=n_meta,
        width=int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
        height=int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        fourcc=fourcc_text(cap.get(cv2.CAP_PROP_FOURCC)),
    )
    ok, frame = cap.read()
    if not ok or frame is None or frame.size == 0:
        cap.release()
        if n_meta == 0 or info.width == 0:
            raise InputError(f"{path}: the video has zero frames")
        raise InputError(
            f"{path}: unreadable codec '{info.fourcc}': FFmpeg opened the file but could not decode a frame"
        )
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    info.width, info.height = frame.shape[1], frame.shape[0]
    return cap, info, frame


def iter_frames(
    cap: cv2.VideoCapture, first: np.ndarray, step: int
) -> Iterator[tuple[int, np.ndarray | None]]:
    """Yield ``(frame_index, bgr_or_None)`` for every frame; only every ``step``-th one is decoded to BGR.

    Frames in between are grabbed (demuxed and decoded by FFmpeg but not converted), yielding ``None``.
    Stops at the end of the stream or at the first frame that fails to decode.
    """
    yield 0, first
    i = 1
    while True:
        if i % step == 0:
            ok, frame = cap.read()
            if not ok or frame is None:
                return
            if frame.ndim == 2:
                frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
            yield i, frame
        else:
            if not cap.grab():
                return
            yield i, None
        i += 1


def read_gray_frames(path: Path, wanted: Iterable[int], size: tuple[int, int]) -> dict[int, np.ndarray]:
    """The frames ``wanted`` (indices from 0) of the video ``path`` as grey-scale ``(H, W)`` uint8,
    resized to ``size`` = (W, H); frames past the end of the stream are left out.

    The stream is read from its start, counting frames as :func:`iter_frames` does (the video stage
    numbered its keyframes that way; a seek by frame number can land a few frames off in some
    containers); frames not wanted are grabbed only.
    """
    wanted = set(wanted)
    out: dict[int, np.ndarray] = {}
    if not wanted:
        return out
    cap = cv2.VideoCapture(str(path))
    try:
        for i in range(max(wanted) + 1):
            if i not in wanted:
                if not cap.grab():
                    break
                continue
            ok, frame = cap.read()
            if not ok or frame is None:
                break
            gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            out[i] = cv2.resize(gray, size, interpolation=cv2.INTER_AREA)
    finally:
        cap.release()
    return out


def read_image(path: Path) -> np.ndarray:
    """Read a still image as BGR uint8 (``InputError`` naming the file if it cannot be decoded)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise InputError(f"{path}: not a readable image")
    return img


def exif_focal_35mm(path: Path) -> float | None:
    """The EXIF ``FocalLengthIn35mmFilm`` (mm) of a still image, or ``None`` when absent/unreadable."""
    try:
        from PIL import Image

        with Image.open(path) as im:
            exif = im.getexif()
            value = exif.get_ifd(0x8769).get(41989) or exif.get(41989)
    except Exception:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return f if 5.0 <= f <= 1000.0 else None


def list_images(folder: Path) -> list[Path]:
    """Image files directly inside ``folder``, sorted by name (``InputError`` if there are none)."""
    files = sorted(p for p in Path(folder).iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise InputError(f"{folder}: a folder without images (expected {', '.join(IMAGE_SUFFIXES)})")
    return files
