"""Fuzzing the inputs of ``urbanverse gen``: videos and still images handed to the video stage.

The property, for every file: ``run_video`` either returns keyframes (whose files are all there) or
raises ``InputError`` with one line naming the file, and then leaves no keyframe file behind; never
another exception, a hang or a crash. Well-formed inputs of a usable size and length must work.
A fixed corpus keeps every case found so far; the seeded Hypothesis run is in the default suite and
a long one runs with ``-m slow``. ``--hypothesis-show-statistics`` prints the counts per format.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import av
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.cli.conftest import _restore_logging  # noqa: F401  (the CLI runs below set up logging)
from tests.fuzz.media import (
    FLAVOURS,
    corrupt,
    declare_avi_size,
    pan_frames,
    png_declaring,
    rotate_mp4,
    texture,
    write_image,
    write_video,
)
from urbanverse.errors import InputError
from urbanverse.video import VideoCfg, load_keyframes, run_video
from urbanverse.video.decode import MAX_ASPECT, MIN_SIDE_PX

SUFFIX = {"mp4_h264": ".mp4", "mp4_mpeg4": ".mp4", "mkv_ffv1": ".mkv", "avi_raw": ".avi", "mov_mjpeg": ".mov"}
EVEN_ONLY = {"mp4_h264", "mp4_mpeg4"}  # 4:2:0 chroma: even sizes only
SETTINGS = {"derandomize": True, "deadline": None, "suppress_health_check": list(HealthCheck)}


def check(path: Path, work: Path) -> str:
    """Run the video stage on ``path``; ``"ok"`` or the one-line error, after checking the property."""
    try:
        kfs = run_video(path, work, VideoCfg())
    except InputError as exc:
        msg = str(exc)
        assert "\n" not in msg and path.name in msg, msg
        assert not list(work.glob("kf_*")), "keyframes left after an error"
        return msg
    assert kfs.keyframes and load_keyframes(work) == kfs
    assert sorted(p.name for p in work.glob("kf_*")) == sorted(k.image for k in kfs.keyframes)
    w, h = kfs.working_size
    assert min(w, h) >= 2 and kfs.duration_s >= 0
    return "ok"


# --- the fixed corpus: (name, builder, expected: "ok" or a piece of the message) ---------------


def _video(tmp: Path, name: str, frames, flavour="mp4_h264", **kw) -> Path:
    return write_video(tmp / f"{name}{SUFFIX[flavour]}", frames, flavour=flavour, **kw)


def _bottom_up_avi(tmp: Path) -> Path:
    # The classic uncompressed AVI (rows stored bottom-up) made OpenCV's FFmpeg reader corrupt the heap.
    path = _video(tmp, "bottom_up", pan_frames(0, 25, 64, 48), "avi_raw")
    return declare_avi_size(path, 64, 48)  # a positive height in the header means bottom-up rows


def _declared(tmp: Path, width: int, height: int) -> Path:
    path = _video(tmp, f"declares_{width}x{height}", pan_frames(0, 25, 64, 48), "avi_raw")
    return declare_avi_size(path, width, -height)  # rows top-down, as written


def _truncated(tmp: Path, frac: float) -> Path:
    path = _video(tmp, f"cut_{frac}", pan_frames(0, 25, 64, 48))
    return corrupt(path, "truncate", frac, [])


def _png(tmp: Path, name: str, w: int, h: int, mode: str = "RGB", suffix: str = ".png") -> Path:
    return write_image(tmp / f"{name}{suffix}", texture(3, h, w), mode)


CORPUS = {
    "h264": (lambda t: _video(t, "walk", pan_frames(0, 25, 64, 48)), "ok"),
    "variable_frame_rate": (
        lambda t: _video(
            t, "vfr", pan_frames(0, 25, 64, 48), times_s=[0.15 * k + 0.05 * (k % 3) for k in range(25)]
        ),
        "ok",
    ),
    "rotated_90": (lambda t: rotate_mp4(_video(t, "rot", pan_frames(0, 25, 64, 48)), 90), "ok"),
    "raw_avi_top_down": (lambda t: _video(t, "raw", pan_frames(0, 25, 64, 48), "avi_raw"), "ok"),
    "raw_avi_bottom_up": (_bottom_up_avi, "bottom-up"),
    "one_frame": (lambda t: _video(t, "one", pan_frames(0, 1, 64, 48)), "at least 2 s"),
    "zero_length_stream": (lambda t: _video(t, "empty", []), "no video stream"),
    "size_1x1": (lambda t: _video(t, "tiny", pan_frames(0, 25, 1, 1), "mkv_ffv1"), "too small"),
    "size_3x5": (lambda t: _video(t, "odd", pan_frames(0, 25, 3, 5), "mkv_ffv1"), "too small"),
    "size_9999x2": (lambda t: _video(t, "strip", pan_frames(0, 25, 9999, 2), "mkv_ffv1"), "too small"),
    "size_400x20": (lambda t: _video(t, "slit", pan_frames(0, 25, 400, 20), "mkv_ffv1"), "elongated"),
    "declares_8000x6000": (lambda t: _declared(t, 8000, 6000), "40 MP limit"),
    "declares_65535x2": (lambda t: _declared(t, 65535, 2), "too small"),
    "truncated_10pc": (lambda t: _truncated(t, 0.1), "FFmpeg"),
    "truncated_99pc": (lambda t: _truncated(t, 0.99), "FFmpeg"),
    # Found by the long run: a cut H.264 stream whose pixel format its headers do not give.
    "truncated_h264_2x2": (
        lambda t: corrupt(_video(t, "cut_tiny", pan_frames(0, 13, 2, 2), fps=5.0), "truncate", 0.8125, []),
        "FFmpeg",
    ),
    "audio_only": (None, "no video stream"),
    "image_rgba": (lambda t: _png(t, "rgba", 64, 48, "RGBA"), "ok"),
    "image_16bit": (lambda t: _png(t, "deep", 64, 48, "I;16"), "ok"),
    "image_grey": (lambda t: _png(t, "grey", 64, 48, "L"), "ok"),
    "image_cmyk_jpeg": (lambda t: _png(t, "cmyk", 64, 48, "CMYK", ".jpg"), "ok"),
    "image_3x5": (lambda t: _png(t, "odd", 3, 5), "too small"),
    "image_declares_60000x60000": (
        lambda t: png_declaring(_png(t, "bomb", 64, 48), 60000, 60000),
        "MP limit",
    ),
    "image_declares_12000x9000": (lambda t: png_declaring(_png(t, "big", 64, 48), 12000, 9000), "MP limit"),
    "image_corrupt_header": (
        lambda t: corrupt(_png(t, "hdr", 64, 48), "zero", 0.0, []),
        "not a readable image",
    ),
    "image_truncated_jpeg": (
        lambda t: corrupt(_png(t, "cut", 64, 48, "RGB", ".jpg"), "truncate", 0.6, []),
        "cut short",
    ),
    "image_truncated_png": (lambda t: corrupt(_png(t, "cut", 64, 48), "truncate", 0.95, []), "cut short"),
    "image_empty": (lambda t: corrupt(_png(t, "zero", 64, 48), "truncate", 0.0, []), "empty file"),
}


def _audio_only(tmp: Path) -> Path:
    import av

    path = tmp / "speech.mp4"
    with av.open(str(path), "w") as out:
        stream = out.add_stream("aac", rate=8000)
        for k in range(10):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 8000, k * 1024
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    return path


CORPUS["audio_only"] = (_audio_only, "no video stream")


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_corpus(case: str, tmp_path: Path) -> None:
    build, expected = CORPUS[case]
    (tmp_path / "in").mkdir()
    path = build(tmp_path / "in")
    got = check(path, tmp_path / "work")
    assert got == "ok" if expected == "ok" else expected in got, got


def test_a_bad_image_late_in_a_folder_leaves_no_keyframes(tmp_path: Path) -> None:
    folder = tmp_path / "shots"
    folder.mkdir()
    for i in range(3):
        _png(folder, f"view{i}", 64, 48)
    corrupt(folder / "view2.png", "zero", 0.0, [])
    got = check(folder, tmp_path / "work")
    assert "view2.png" in got and "not a readable image" in got


# --- generated inputs -------------------------------------------------------------------------


@st.composite
def videos(draw, flavour: str):
    size = draw(
        st.one_of(
            st.sampled_from([(64, 48), (48, 64), (1, 1), (3, 5), (16, 16), (128, 16), (9999, 2)]),
            st.tuples(st.integers(1, 96), st.integers(1, 96)),
            st.integers(16, 96).flatmap(lambda w: st.tuples(st.just(w), st.integers(max(16, w // 4), 96))),
        )
    )
    if flavour in EVEN_ONLY or flavour == "mov_mjpeg":
        size = (max(2, size[0] // 2 * 2), max(2, size[1] // 2 * 2))
    if size[0] * size[1] > 40_000:
        size = (size[0], max(1, 40_000 // size[0]))
    n = draw(st.one_of(st.integers(0, 40), st.integers(12, 30)))
    fps = draw(st.sampled_from([5.0, 5.0, 10.0, 12.5, 30.0]))
    vfr = draw(st.booleans()) and flavour != "avi_raw"
    rotation = (
        draw(st.sampled_from([0, 90, 180, 270])) if flavour in ("mp4_h264", "mp4_mpeg4", "mov_mjpeg") else 0
    )
    kind = draw(st.sampled_from(["none", "none", "truncate", "flip", "zero"]))
    where = draw(st.floats(0.0, 1.0))
    flips = draw(st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255)), max_size=20))
    seed = draw(st.integers(0, 2**16))
    return flavour, size, n, fps, vfr, rotation, kind, where, flips, seed


def _fuzz_video(case, tmp: Path) -> None:
    flavour, (w, h), n, fps, vfr, rotation, kind, where, flips, seed = case
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    frames = pan_frames(seed, n, w, h, speed_px=2)
    times = list(np.cumsum(np.random.default_rng(seed).uniform(0.5, 1.5, n)) / fps) if vfr else None
    try:
        path = write_video(tmp / f"in{SUFFIX[flavour]}", frames, fps=fps, flavour=flavour, times_s=times)
    except av.FFmpegError:  # an encoder that refuses this size (MPEG-4 part 2 over 8191 px wide)
        assume(False)
    if rotation:
        rotate_mp4(path, rotation)
    corrupt(path, kind, where, flips)
    got = check(path, tmp / "work")
    event(f"format={flavour}")
    event("outcome=ok" if got == "ok" else "outcome=refused")
    usable = min(w, h) >= MIN_SIDE_PX and max(w, h) <= MAX_ASPECT * min(w, h) and n / fps >= 2.2
    if kind == "none" and not vfr and usable:
        assert got == "ok", got  # a well-formed, usable video works


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
@given(data=st.data())
@settings(max_examples=12, **SETTINGS)
def test_generated_videos(flavour, data, tmp_path_factory) -> None:
    """12 videos per container and codec in the default run."""
    _fuzz_video(data.draw(videos(flavour)), tmp_path_factory.getbasetemp() / "fuzz_video")


@pytest.mark.slow
@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
@given(data=st.data())
@settings(max_examples=300, **SETTINGS)
def test_generated_videos_long(flavour, data, tmp_path_factory) -> None:
    """300 videos per container and codec."""
    _fuzz_video(data.draw(videos(flavour)), tmp_path_factory.getbasetemp() / "fuzz_video_long")


IMAGE_MODES = {
    ".png": ["RGB", "RGBA", "L", "LA", "I;16", "P", "1"],
    ".jpg": ["RGB", "L", "CMYK"],
    ".tif": ["RGB", "RGBA", "L", "I;16", "CMYK", "F"],
    ".bmp": ["RGB", "L", "P", "1"],
    ".webp": ["RGB", "RGBA"],
}


@st.composite
def images(draw, suffix: str):
    mode = draw(st.sampled_from(IMAGE_MODES[suffix]))
    size = draw(st.tuples(st.integers(1, 160), st.integers(1, 160)))
    declared = draw(st.sampled_from([None, None, None, (60000, 60000), (12000, 9000), (0, 48), (1, 1)]))
    if suffix != ".png":
        declared = None
    kind = draw(st.sampled_from(["none", "none", "truncate", "flip", "zero"]))
    where = draw(st.floats(0.0, 1.0))
    flips = draw(st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255)), max_size=20))
    return suffix, mode, size, declared, kind, where, flips, draw(st.integers(0, 2**16))


def _fuzz_image(case, tmp: Path) -> None:
    suffix, mode, (w, h), declared, kind, where, flips, seed = case
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    path = write_image(tmp / f"in{suffix}", texture(seed, h, w), mode)
    if declared:
        png_declaring(path, *declared)
    corrupt(path, kind, where, flips)
    got = check(path, tmp / "work")
    event(f"format={suffix[1:]}/{mode}")
    event("outcome=ok" if got == "ok" else "outcome=refused")
    usable = min(w, h) >= MIN_SIDE_PX and max(w, h) <= MAX_ASPECT * min(w, h)
    if kind == "none" and declared is None and usable and mode in ("RGB", "RGBA", "L", "I;16", "CMYK"):
        assert got == "ok", got  # a well-formed image of a usable size works


@pytest.mark.parametrize("suffix", sorted(IMAGE_MODES))
@given(data=st.data())
@settings(max_examples=10, **SETTINGS)
def test_generated_images(suffix, data, tmp_path_factory) -> None:
    """10 images per file format in the default run."""
    _fuzz_image(data.draw(images(suffix)), tmp_path_factory.getbasetemp() / "fuzz_image")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", sorted(IMAGE_MODES))
@given(data=st.data())
@settings(max_examples=400, **SETTINGS)
def test_generated_images_long(suffix, data, tmp_path_factory) -> None:
    """400 images per file format."""
    _fuzz_image(data.draw(images(suffix)), tmp_path_factory.getbasetemp() / "fuzz_image_long")


# --- end to end: `urbanverse gen` on the smallest bad cases -----------------------------------


@pytest.mark.parametrize(
    "case", ["size_3x5", "raw_avi_bottom_up", "image_declares_60000x60000", "zero_length_stream"]
)
def test_gen_refuses_with_one_line_and_leaves_only_error_json(case: str, tmp_path: Path) -> None:
    from urbanverse.cli import app

    build, expected = CORPUS[case]
    (tmp_path / "in").mkdir()
    source = build(tmp_path / "in")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["gen", str(source), "-o", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and source.name in lines[0] and expected in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert sorted(p.name for p in out.iterdir()) == ["error.json"]
    assert expected in json.loads((out / "error.json").read_text())["error"]
