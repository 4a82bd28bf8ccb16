"""Open and validate the stage's input: a video file, a single still image, or a folder of stills.

Every failure a user can cause (missing file, not a video, zero frames, too short, a codec FFmpeg
cannot decode, an unreadable image, a frame too small, too large or too elongated) raises
:class:`~urbanverse.errors.InputError` with one line that names the file.

Frame sizes are checked against what the file's header declares before anything is decoded, so a
hostile header cannot make the decoder allocate gigabytes: a video frame holds at most
``MAX_VIDEO_PIXELS``, a still image at most ``MAX_IMAGE_PIXELS``; each side is at least
``MIN_SIDE_PX`` and the long side at most ``MAX_ASPECT`` times the short one. FFmpeg's and OpenCV's
own console messages about a damaged file are silenced (set ``OPENCV_FFMPEG_LOGLEVEL`` to see them);
the ``InputError`` says what is wrong.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from urbanverse.errors import InputError

#: Suffixes read as still images (case-insensitive).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp")
#: Largest video frame, pixels: 40 MP (an 8K UHD frame, 7680 x 4320, is 33 MP); 120 MB per BGR frame.
MAX_VIDEO_PIXELS = 40_000_000
#: Largest still image, pixels: 100 MP (a 48 MP phone photo fits; 200 MP ones must be downscaled);
#: 300 MB decoded.
MAX_IMAGE_PIXELS = 100_000_000
#: Smallest side of a frame or image, pixels: below it there is nothing to detect or match.
MIN_SIDE_PX = 16
#: Largest ratio of the long side to the short one (a 360-degree panorama is 2:1).
MAX_ASPECT = 8.0

# FFmpeg (inside OpenCV) prints its complaints about damaged files to the terminal unless told
# otherwise before its first use; -8 is AV_LOG_QUIET.
os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")


def check_frame_size(path: Path, width: int, height: int, max_pixels: int, what: str = "frame") -> None:
    """``InputError`` naming ``path`` unless ``width`` x ``height`` is within the size limits above."""
    if width < MIN_SIDE_PX or height < MIN_SIDE_PX:
        raise InputError(
            f"{path}: {what} size {width}x{height} px is too small (each side must be at least "
            f"{MIN_SIDE_PX} px)"
        )
    if width * height > max_pixels:
        raise InputError(
            f"{path}: {what} size {width}x{height} px ({width * height / 1e6:.0f} MP) is over the "
            f"{max_pixels / 1e6:.0f} MP limit; downscale it first"
        )
    if max(width, height) > MAX_ASPECT * min(width, height):
        raise InputError(
            f"{path}: {what} size {width}x{height} px is too elongated (aspect ratio over {MAX_ASPECT:g}:1)"
        )


@contextlib.contextmanager
def _opencv_quiet() -> Iterator[None]:
    """Silence OpenCV's own warnings (``[ WARN ] ... can't be used to capture by name``) meanwhile."""
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_ERROR)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


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


def probe_video(path: Path) -> None:
    """Check what the container declares, before OpenCV decodes anything: ``InputError`` naming ``path``
    for a file without a video stream, a declared frame size outside the limits, or a stream OpenCV's
    decoder is known to crash on (uncompressed bottom-up 24-bit video, the classic raw AVI: its
    frames come with a negative row stride that corrupts the heap). Files PyAV cannot open are left to
    :func:`open_video` to judge."""
    import av

    try:
        container = av.open(str(path), metadata_errors="ignore")
    except (av.FFmpegError, OSError, ValueError):
        return
    with container:
        streams = list(container.streams.video)
        if not streams:
            raise InputError(
                f"{path}: no video stream with frames (zero frames, or an audio-only or data file)"
            )
        for stream in streams:
            ctx = stream.codec_context
            if ctx is None:  # a codec PyAV does not know: left to OpenCV
                continue
            if ctx.width > 0 and ctx.height > 0:
                check_frame_size(path, ctx.width, ctx.height, MAX_VIDEO_PIXELS)
            extradata = bytes(ctx.extradata or b"")
            if ctx.name == "rawvideo" and extradata.startswith(b"BottomUp") and ctx.pix_fmt == "bgr24":
                raise InputError(
                    f"{path}: uncompressed bottom-up 24-bit video (a raw AVI) is not supported; "
                    "re-encode it, e.g. ffmpeg -i INPUT -c:v libx264 -pix_fmt yuv420p OUTPUT.mp4"
                )


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
    probe_video(path)
    with _opencv_quiet():
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
    if info.width > 0 and info.height > 0:  # as declared: checked before a frame is decoded
        try:
            check_frame_size(path, info.width, info.height, MAX_VIDEO_PIXELS)
        except InputError:
            cap.release()
            raise
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
    try:  # as decoded (after the display rotation)
        check_frame_size(path, info.width, info.height, MAX_VIDEO_PIXELS)
    except InputError:
        cap.release()
        raise
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


def read_frames(
    path: Path, wanted: Iterable[int], size: tuple[int, int], colour: bool = False
) -> dict[int, np.ndarray]:
    """The frames ``wanted`` (indices from 0) of the video ``path`` resized to ``size`` = (W, H):
    grey-scale ``(H, W)`` uint8, or with ``colour`` RGB ``(H, W, 3)`` uint8; frames past the end of the
    stream are left out.

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
            if colour:
                frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2RGB if frame.ndim == 2 else cv2.COLOR_BGR2RGB)
            elif frame.ndim == 3:
                frame = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            out[i] = cv2.resize(frame, size, interpolation=cv2.INTER_AREA)
    finally:
        cap.release()
    return out


def image_header_size(path: Path) -> tuple[int, int] | None:
    """``(width, height)`` as the image file's header declares it, read without decoding the pixels;
    ``None`` when Pillow cannot parse the header (OpenCV may still read the file). ``InputError`` for a
    header declaring more pixels than Pillow agrees to open at all (a decompression bomb)."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow's DecompressionBombWarning: the limit is ours
            with Image.open(path) as im:
                return int(im.width), int(im.height)
    except Image.DecompressionBombError:
        raise InputError(
            f"{path}: the image header declares over {2 * Image.MAX_IMAGE_PIXELS / 1e6:.0f} MP, over the "
            f"{MAX_IMAGE_PIXELS / 1e6:.0f} MP limit; downscale it first"
        ) from None
    except Exception:
        return None


def image_is_truncated(path: Path) -> bool:
    """Whether Pillow finds the image's pixel data cut short (OpenCV would decode what is there and fill
    the rest with grey). JPEGs are decoded at an eighth of their size for this, which still reads the
    whole stream."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(path) as im:
                im.draft("RGB", (max(1, im.width // 8), max(1, im.height // 8)))
                im.load()
    except OSError as exc:
        return "truncated" in str(exc)
    except Exception:  # anything else Pillow cannot do is left to OpenCV to judge
        return False
    return False


def read_image(path: Path) -> np.ndarray:
    """Read a still image as BGR uint8 (``InputError`` naming the file if it cannot be decoded, is cut
    short, or its size is outside the limits; an alpha channel is dropped, grey, 16-bit and CMYK are
    converted)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file (0 bytes), not an image")
    declared = image_header_size(path)
    if declared is not None:
        check_frame_size(path, *declared, MAX_IMAGE_PIXELS, what="image")
        if image_is_truncated(path):
            raise InputError(f"{path}: the image file is cut short (truncated): its pixel data ends early")
    try:
        with _opencv_quiet():
            img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    except cv2.error as exc:  # OpenCV's own size limit, a decoder that gives up
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: not a readable image ({reason})") from None
    if img is None or img.size == 0:
        raise InputError(f"{path}: not a readable image")
    check_frame_size(path, img.shape[1], img.shape[0], MAX_IMAGE_PIXELS, what="image")
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
