"""Small media files built from seeds for the fuzz tests: videos (PyAV), still images (OpenCV, Pillow)
and corruptions of their bytes.

Every builder is deterministic in its arguments; the frames are a textured plane seen by a camera that
pans sideways, so a well-formed file of two seconds or more is a usable input of the video stage.
"""

from __future__ import annotations

import struct
from fractions import Fraction
from pathlib import Path

import av
import numpy as np


def texture(seed: int, height: int, width: int) -> np.ndarray:
    """A blotchy BGR uint8 texture of ``(height, width, 3)`` with detail at several scales."""
    rng = np.random.default_rng(seed)
    out = np.zeros((height, width, 3), np.float32)
    for cell, amp in ((32, 90.0), (8, 60.0), (2, 40.0)):
        coarse = rng.random((height // cell + 2, width // cell + 2, 3)).astype(np.float32)
        out += amp * np.kron(coarse, np.ones((cell, cell, 1), np.float32))[:height, :width]
    return np.clip(out, 0, 255).astype(np.uint8)


def pan_frames(seed: int, n: int, width: int, height: int, speed_px: int = 3) -> list[np.ndarray]:
    """``n`` BGR frames of ``width`` x ``height``: a window sliding ``speed_px`` pixels per frame over a
    texture (a camera panning over a textured wall)."""
    tex = texture(seed, height, width + speed_px * n + 1)
    return [np.ascontiguousarray(tex[:, k * speed_px : k * speed_px + width]) for k in range(n)]


#: container, codec and pixel format of each video flavour (odd sizes need a codec without chroma
#: subsampling: FFV1 or raw video).
FLAVOURS = {
    "mp4_h264": ("mp4", "libx264", "yuv420p"),
    "mp4_mpeg4": ("mp4", "mpeg4", "yuv420p"),
    "mkv_ffv1": ("matroska", "ffv1", "bgr0"),
    "avi_raw": ("avi", "rawvideo", "bgr24"),
    "mov_mjpeg": ("mov", "mjpeg", "yuvj444p"),
}


def write_video(
    path: Path,
    frames: list[np.ndarray],
    fps: float = 10.0,
    flavour: str = "mp4_h264",
    times_s: list[float] | None = None,
) -> Path:
    """Encode BGR ``frames`` into ``path``; ``times_s`` gives each frame's presentation time (a
    variable frame rate), else frames are ``1 / fps`` apart. An empty ``frames`` gives a file whose
    video stream has no packets."""
    fmt, codec, pix_fmt = FLAVOURS[flavour]
    height, width = (frames[0].shape[:2]) if frames else (48, 64)
    rate = Fraction(fps).limit_denominator(1000)
    tb = Fraction(1, 1000) if times_s is not None else 1 / rate
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.width, stream.height, stream.pix_fmt = width, height, pix_fmt
        stream.time_base = stream.codec_context.time_base = tb
        if codec == "libx264":
            stream.options = {"preset": "ultrafast", "bf": "0"}
        out.start_encoding()
        for k, bgr in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(bgr), format="bgr24")
            t = times_s[k] if times_s is not None else k / fps
            frame.pts, frame.time_base = int(round(t / tb)), tb
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path


def rotate_mp4(path: Path, degrees: int) -> Path:
    """Set the display matrix of every track header (``tkhd``) of an MP4/MOV to a rotation by
    ``degrees`` (a multiple of 90), as a phone filming upright writes it."""
    a = {0: (1, 0), 90: (0, 1), 180: (-1, 0), 270: (0, -1)}[degrees % 360]
    one = 0x10000
    matrix = struct.pack(">9i", a[0] * one, a[1] * one, 0, -a[1] * one, a[0] * one, 0, 0, 0, 0x40000000)
    data = bytearray(path.read_bytes())
    at = data.find(b"tkhd")
    while at >= 0:
        version = data[at + 4]
        # version, flags; creation, modification, track id, reserved, duration (4 or 8 bytes each for
        # the times); 8 reserved; layer, group, volume, reserved.
        offset = at + 8 + (32 if version == 1 else 20) + 8 + 8
        data[offset : offset + 36] = matrix
        at = data.find(b"tkhd", at + 4)
    path.write_bytes(bytes(data))
    return path


def declare_avi_size(path: Path, width: int, height: int) -> Path:
    """Overwrite the frame size that an AVI's headers declare (``avih`` and the stream's ``strf``)
    without touching the frames: a hostile header. A negative ``height`` means rows stored top-down
    (as written here), a positive one bottom-up."""
    data = bytearray(path.read_bytes())
    at = data.find(b"avih")
    if at >= 0:
        data[at + 8 + 32 : at + 8 + 40] = struct.pack("<II", width, abs(height))
    at = data.find(b"strf")
    if at >= 0:
        data[at + 12 : at + 20] = struct.pack("<ii", width, height)
    path.write_bytes(bytes(data))
    return path


def write_image(path: Path, bgr: np.ndarray, mode: str = "RGB") -> Path:
    """Save ``bgr`` through Pillow converted to ``mode`` (``RGB``, ``RGBA``, ``L``, ``LA``, ``I;16``,
    ``CMYK``, ``P``, ``1``, ``F``), in the format of ``path``'s suffix."""
    from PIL import Image

    rgb = Image.fromarray(np.ascontiguousarray(bgr[..., ::-1]))
    if mode == "RGBA":
        alpha = Image.fromarray(np.ascontiguousarray(bgr[..., 0]))
        im = rgb.copy()
        im.putalpha(alpha)
    elif mode == "I;16":
        grey = bgr.mean(axis=2).astype(np.uint16) * 257
        im = Image.fromarray(grey)
    elif mode == "F":
        im = Image.fromarray(bgr.mean(axis=2).astype(np.float32) / 255.0)
    else:
        im = rgb.convert(mode)
    im.save(path)
    return path


def png_declaring(path: Path, width: int, height: int) -> Path:
    """Rewrite the size in a PNG's ``IHDR`` (with a valid checksum) without touching its pixel data."""
    import zlib

    data = bytearray(path.read_bytes())
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])))
    path.write_bytes(bytes(data))
    return path


def corrupt(path: Path, kind: str, where: float, flips: list[tuple[float, int]]) -> Path:
    """Damage the file in place: ``truncate`` it at fraction ``where`` of its length, ``flip`` bytes
    (each ``(fraction, value)``), or ``zero`` a run of bytes starting at ``where`` (a clobbered header
    when ``where`` is small); ``none`` leaves it."""
    data = bytearray(path.read_bytes())
    n = len(data)
    if kind == "truncate":
        data = data[: int(where * n)]
    elif kind == "flip":
        for at, value in flips:
            data[min(n - 1, int(at * n))] = value
    elif kind == "zero":
        start = int(where * n)
        data[start : start + 64] = bytes(len(data[start : start + 64]))
    path.write_bytes(bytes(data))
    return path
