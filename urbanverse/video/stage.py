"""The video stage: ``run_video(path, work_dir, cfg) -> KeyframeSet``.

One decoding pass over the video: every ``step``-th frame is shrunk to an analysis copy for shot-cut
detection and keyframe selection; keyframes are written at the working resolution as they are chosen
(files ``kf_s<shot>_f<frame>.<ext>`` in ``work_dir``), then the usable shot(s) are kept and the rest
deleted. Memory stays at a few frames whatever the video's length.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from urbanverse.errors import InputError
from urbanverse.video.cuts import Transition, TransitionDetector
from urbanverse.video.decode import (
    IMAGE_SUFFIXES,
    exif_focal_35mm,
    iter_frames,
    list_images,
    open_video,
    read_image,
    sha256_file,
    working_size,
)
from urbanverse.video.keyframes import KeyframeSelector, sharpness
from urbanverse.video.record import (
    CameraIntrinsics,
    Keyframe,
    KeyframeSet,
    Shot,
    TransitionSpan,
    save_keyframes,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class VideoCfg:
    """Settings of the video stage. Pixel sizes at the working resolution unless stated."""

    max_width: int = 960
    """Keyframes wider than this are downscaled to it (aspect kept); smaller inputs keep their size."""
    min_seconds: float = 2.0
    """Videos shorter than this (seconds) are rejected with ``InputError``."""
    fov_deg: float = 65.0
    """Horizontal field-of-view prior (degrees) for the focal-length guess (typical phone main camera)."""
    focal_px: float | None = None
    """Known focal length in pixels *of the original resolution*; overrides ``fov_deg`` and EXIF."""
    min_shot_s: float = 1.0
    """A shot shorter than this (seconds) is not usable."""
    cut_threshold: float = 27.0
    """Hard cut: least PySceneDetect ``ContentDetector`` score (mean change of hue, saturation and
    lightness between consecutive analysed frames, 0-255) of a cut; lower finds cuts between similar
    views, and splits fast camera turns."""
    cut_ratio: float = 3.0
    """Hard cut: least ratio of a cut's score to the mean score of the two analysed frames on each
    side (PySceneDetect ``AdaptiveDetector``)."""
    window_s: float = 0.25
    """Cross-dissolve test: seconds of video between a frame and each of the two frames it is compared
    with (``urbanverse.video.cuts``)."""
    dissolve_min_change: float = 20.0
    """Cross-dissolve test: least mean absolute grey difference (0-255) between the frames
    ``window_s`` before and after a frame for it to be tested as a blend of the two."""
    dissolve_max_residual: float = 0.3
    """Cross-dissolve test: a frame whose difference from the mean of those two frames is at most this
    share of their difference is a blend (a walking camera's frame gives about 0.5)."""
    dark_level: float = 24.0
    """A frame whose mean grey level (0-255) is below this is dark (a fade through black): no keyframe
    is taken from it, and a run of them is a transition between shots."""
    flat_fraction: float = 0.9
    """A frame in which at least this share (0-1) of the pixels lie on no edge (grey gradient under 8
    levels) is flat (a title card, a slate, a blank): treated as a dark frame."""
    transition_margin_s: float = 0.2
    """Seconds on each side of a run of dark or flat frames that also belong to the transition (the
    frames fading into it); transitions closer than this merge into one."""
    min_cut_gap_s: float = 0.3
    """Seconds of video between two hard cuts at least (a flash or a flicker is not two cuts)."""
    analysis_width: int = 320
    """Width (pixels) of the greyscale copy on which cuts and motion are analysed."""
    analysis_fps: float = 15.0
    """Frames analysed per second of video (every ``round(fps / analysis_fps)``-th one)."""
    motion_frac: float = 0.06
    """New keyframe when the median feature displacement since the last one exceeds this fraction of width."""
    min_gap_s: float = 0.2
    """Minimum time between keyframes (seconds)."""
    max_gap_s: float = 1.5
    """Maximum time between keyframes (seconds); also sets the rate for a static camera."""
    max_keyframes: int = 90
    """Per shot; more are thinned evenly (first and last kept)."""
    image_format: Literal["jpg", "png"] = "jpg"
    """File format of the stored keyframes: JPEG is several times smaller, PNG lossless."""
    jpeg_quality: int = 95
    """JPEG quality (1-100) of stored keyframes; high, so compression artefacts stay below what
    feature matching and detection notice."""
    static_band_ratio: float = 0.15
    """A row whose mean change from frame to frame (grey levels) is under this share of the median
    row's belongs to a still band; such rows running in from the top or bottom edge, 3-35 % of the
    height, are cut off the shot's keyframes (a burnt-in caption, a letterbox bar: points on them do not
    move with the street). 0 turns it off."""
    static_band_min_change: float = 1.5
    """Below this median change per row (grey levels per analysed frame) the camera is still and no
    band is cut (everything is still)."""
    blank_max_std: float = 3.0
    """A frame whose grey levels (0-255, at ``analysis_width``) spread less than this standard
    deviation is blank (a flat colour: a fade to black, a covered lens); a shot of blank frames only
    is not usable, and a video or image with nothing else is bad input."""

    def __post_init__(self) -> None:
        for name in ("max_width", "analysis_width", "max_keyframes"):
            if getattr(self, name) < 2:
                raise ValueError(f"VideoCfg.{name} must be >= 2, got {getattr(self, name)}")
        for name in ("analysis_fps", "motion_frac", "max_gap_s", "window_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"VideoCfg.{name} must be positive, got {getattr(self, name)}")
        if not 1.0 <= self.cut_threshold <= 255.0:
            raise ValueError(
                "VideoCfg.cut_threshold is a ContentDetector score (0-255, default 27), "
                f"got {self.cut_threshold}"
            )
        if not self.cut_ratio >= 1:
            raise ValueError(f"VideoCfg.cut_ratio must be >= 1, got {self.cut_ratio}")
        if not 0 < self.dissolve_max_residual < 1 or not 0 < self.dissolve_min_change <= 255:
            raise ValueError(
                "VideoCfg.dissolve_max_residual must be in (0, 1), dissolve_min_change in (0, 255]"
            )
        if not 0 <= self.dark_level <= 255 or not 0 < self.flat_fraction <= 1:
            raise ValueError("VideoCfg.dark_level must be in [0, 255] and flat_fraction in (0, 1]")
        if self.transition_margin_s < 0 or self.min_cut_gap_s < 0:
            raise ValueError("VideoCfg.transition_margin_s and min_cut_gap_s must be >= 0")
        if not 0 < self.fov_deg < 170:
            raise ValueError(f"VideoCfg.fov_deg must be in (0, 170) degrees, got {self.fov_deg}")
        if self.focal_px is not None and not self.focal_px > 0:
            raise ValueError(f"VideoCfg.focal_px must be positive, got {self.focal_px}")
        if self.min_seconds < 0 or self.min_shot_s < 0 or self.min_gap_s < 0 or self.blank_max_std < 0:
            raise ValueError("VideoCfg.min_seconds, min_shot_s, min_gap_s and blank_max_std must be >= 0")
        if self.min_gap_s > self.max_gap_s:
            raise ValueError(
                f"VideoCfg.min_gap_s ({self.min_gap_s}) must not exceed max_gap_s ({self.max_gap_s})"
            )
        if not 1 <= self.jpeg_quality <= 100:
            raise ValueError(f"VideoCfg.jpeg_quality must be in [1, 100], got {self.jpeg_quality}")


def _intrinsics(
    cfg: VideoCfg, orig: tuple[int, int], work: tuple[int, int], exif_f35: float | None = None
) -> CameraIntrinsics:
    """Focal length guess: ``cfg.focal_px`` > EXIF 35 mm equivalent > field-of-view prior."""
    w, h = work
    s = w / orig[0]
    if cfg.focal_px is not None:
        f = cfg.focal_px * s
        return CameraIntrinsics(width=w, height=h, fx=f, fy=f, cx=w / 2.0, cy=h / 2.0, source="focal_px")
    if exif_f35 is not None:
        # 35 mm film is 36 mm wide along its long side.
        f = exif_f35 / 36.0 * max(w, h)
        return CameraIntrinsics(width=w, height=h, fx=f, fy=f, cx=w / 2.0, cy=h / 2.0, source="exif")
    return CameraIntrinsics.from_hfov(w, h, cfg.fov_deg)


def _shrink(bgr: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Fast bilinear downscale for analysis (some aliasing is harmless to histograms and pyramidal LK)."""
    return cv2.resize(bgr, size, interpolation=cv2.INTER_LINEAR)


def _clear_old(work_dir: Path) -> None:
    for old in work_dir.glob("kf_s*_f*.*"):
        old.unlink()


class _Writer:
    def __init__(self, work_dir: Path, size: tuple[int, int], cfg: VideoCfg) -> None:
        self.work_dir, self.size, self.cfg = work_dir, size, cfg

    def write(self, shot: int, frame_idx: int, bgr: np.ndarray) -> str:
        if (bgr.shape[1], bgr.shape[0]) != self.size:
            bgr = cv2.resize(bgr, self.size, interpolation=cv2.INTER_AREA)
        name = f"kf_s{shot:02d}_f{frame_idx:06d}.{self.cfg.image_format}"
        self._save(name, bgr)
        return name

    def crop(self, name: str, top: int, bottom: int) -> None:
        """Cut ``top`` and ``bottom`` rows off the stored keyframe ``name``."""
        bgr = cv2.imread(str(self.work_dir / name), cv2.IMREAD_COLOR)
        self._save(name, bgr[top : bgr.shape[0] - bottom])

    def _save(self, name: str, bgr: np.ndarray) -> None:
        params = [cv2.IMWRITE_JPEG_QUALITY, self.cfg.jpeg_quality] if self.cfg.image_format == "jpg" else []
        if not cv2.imwrite(str(self.work_dir / name), bgr, params):
            raise OSError(f"could not write keyframe {self.work_dir / name}")


def static_bands(changes: np.ndarray, cfg: VideoCfg) -> tuple[int, int]:
    """Rows ``(top, bottom)`` of a still band at each edge, from ``changes (F, H)``: each analysed frame's
    mean absolute change per row from the frame before (grey levels); ``(0, 0)`` when the camera is
    still or no band qualifies (:attr:`VideoCfg.static_band_ratio`)."""
    if cfg.static_band_ratio <= 0 or len(changes) < 3:
        return 0, 0
    per_row = changes.mean(axis=0)
    moving = float(np.median(per_row))
    if moving < cfg.static_band_min_change:
        return 0, 0
    still = per_row < cfg.static_band_ratio * moving
    rows = len(per_row)

    def run(flags: np.ndarray) -> int:
        n = int(np.argmin(flags)) if not flags.all() else len(flags)
        return n if 0.03 * rows <= n <= 0.35 * rows else 0

    return run(still), run(still[::-1])


def _thin(kfs: list[Keyframe], n_max: int) -> list[Keyframe]:
    if len(kfs) <= n_max:
        return kfs
    keep = np.unique(np.round(np.linspace(0, len(kfs) - 1, n_max)).astype(int))
    return [kfs[i] for i in keep]


def _run_stills(paths: list[Path], source: Path, work_dir: Path, cfg: VideoCfg) -> KeyframeSet:
    t0 = time.perf_counter()
    warnings: list[str] = []
    if len(paths) > cfg.max_keyframes:
        warnings.append(f"{len(paths)} images given; using {cfg.max_keyframes} spread evenly")
        keep = np.unique(np.round(np.linspace(0, len(paths) - 1, cfg.max_keyframes)).astype(int))
        paths = [paths[i] for i in keep]
    first = read_image(paths[0])
    orig = (first.shape[1], first.shape[0])
    work = working_size(*orig, cfg.max_width)
    writer = _Writer(work_dir, work, cfg)
    keyframes = []
    for i, p in enumerate(paths):
        img = first if i == 0 else read_image(p)
        if (img.shape[1], img.shape[0]) != orig:
            raise InputError(
                f"{p}: image size {img.shape[1]}x{img.shape[0]} differs from {paths[0].name}'s "
                f"{orig[0]}x{orig[1]}; a sequence must come from one camera"
            )
        gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        if _blank(gray, cfg):
            raise InputError(f"{p}: the image is blank (one flat colour): no street to reconstruct")
        name = writer.write(0, i, img)
        keyframes.append(
            Keyframe(
                index=i, frame=i, time_s=0.0, image=name, shot=0, sharpness=sharpness(gray), reason="image"
            )
        )
    if source.is_dir():
        sha = sha256_file_list(paths)
    else:
        sha = sha256_file(source)
    return KeyframeSet(
        mode="image" if source.is_file() else "images",
        source=str(source.resolve()),
        source_sha256=sha,
        fps=0.0,
        frame_count=len(paths),
        duration_s=0.0,
        original_size=orig,
        working_size=work,
        shots=(Shot(index=0, start_frame=0, end_frame=len(paths), start_s=0.0, end_s=0.0),),
        selected_shots=(0,),
        keyframes=tuple(keyframes),
        intrinsics=_intrinsics(cfg, orig, work, exif_focal_35mm(paths[0])),
        warnings=tuple(warnings),
        timings_s={"stills": round(time.perf_counter() - t0, 4)},
    )


def _blank(gray: np.ndarray, cfg: VideoCfg) -> bool:
    """Whether the grey image is one flat colour (see ``VideoCfg.blank_max_std``)."""
    return float(gray.std()) < cfg.blank_max_std


def sha256_file_list(paths: list[Path]) -> str:
    """One hash for an ordered list of files: SHA-256 over their names and content hashes."""
    h = hashlib.sha256()
    for p in paths:
        h.update(f"{p.name}\0{sha256_file(p)}\n".encode())
    return h.hexdigest()


def run_video(path: Path, work_dir: Path, cfg: VideoCfg | None = None) -> KeyframeSet:
    """Validate the input, choose keyframes, write them into ``work_dir`` with ``keyframes.json``.

    ``path`` may be a video file, a still image (one keyframe, ``mode="image"``) or a folder of same-size
    stills taken in order (``mode="images"``). Raises ``InputError`` (one line naming the file) for a
    missing file, something that is not a video/image, a video with zero frames, one shorter than
    ``cfg.min_seconds``, one whose codec cannot be decoded, or frames outside the size limits of
    :mod:`urbanverse.video.decode`; on any failure no keyframe file is left in ``work_dir``.
    """
    cfg = cfg or VideoCfg()
    path, work_dir = Path(path), Path(work_dir)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    work_dir.mkdir(parents=True, exist_ok=True)
    _clear_old(work_dir)
    try:
        if path.is_dir():
            kfs = _run_stills(list_images(path), path, work_dir, cfg)
        elif path.suffix.lower() in IMAGE_SUFFIXES:
            kfs = _run_stills([path], path, work_dir, cfg)
        else:
            kfs = _run_video_file(path, work_dir, cfg)
    except BaseException:  # a bad file late in a folder, Ctrl-C: no keyframes of a run that failed
        _clear_old(work_dir)
        raise
    save_keyframes(kfs, work_dir)
    log.info("video: %d keyframes from %s (%s)", len(kfs.keyframes), path, kfs.mode)
    return kfs


def _too_short(path: Path, seconds: float, cfg: VideoCfg) -> InputError:
    return InputError(f"{path}: the video is {seconds:.2f} s long; at least {cfg.min_seconds:g} s is needed")


def _sort_into_shots(
    transitions: list[Transition], chosen: list[Keyframe], frame_count: int, fps: float, work_dir: Path
) -> tuple[tuple[Shot, ...], list[list[Keyframe]]]:
    """The shots between ``transitions`` (the frames of a transition belong to none) and the keyframes
    ``chosen`` sorted into them: those inside a transition are deleted, the others' files renamed to
    their shot (``kf_s<shot>_f<frame>``); each shot's first keyframe is its ``first``."""
    bounds, start = [], 0
    for tr in transitions:
        if tr.start_frame > start:
            bounds.append((start, tr.start_frame))
        start = max(start, tr.end_frame)
    if start < frame_count:
        bounds.append((start, frame_count))
    shots = tuple(
        Shot(index=k, start_frame=a, end_frame=b, start_s=round(a / fps, 6), end_s=round(b / fps, 6))
        for k, (a, b) in enumerate(bounds)
    )
    per_shot: list[list[Keyframe]] = [[] for _ in shots]
    starts = [s.start_frame for s in shots]
    for kf in chosen:
        k = int(np.searchsorted(starts, kf.frame, side="right")) - 1
        if k < 0 or kf.frame >= shots[k].end_frame:  # inside a transition
            (work_dir / kf.image).unlink(missing_ok=True)
            continue
        name = kf.image.replace("kf_s00_", f"kf_s{k:02d}_", 1)
        if name != kf.image:
            (work_dir / kf.image).replace(work_dir / name)
        if not per_shot[k]:
            kf = dataclasses.replace(kf, reason="first", motion_px=0.0)
        per_shot[k].append(dataclasses.replace(kf, image=name, shot=k))
    return shots, per_shot


def _crop_still_bands(
    shots: tuple[Shot, ...],
    selected: list[int],
    per_shot: list[list[Keyframe]],
    row_changes: list[tuple[int, np.ndarray]],
    writer: _Writer,
    rows_to_work: float,
    cfg: VideoCfg,
) -> tuple[Shot, ...]:
    """``shots`` with each selected shot's still bands (:func:`static_bands`, from the per-row changes of
    its frames after its first) cut off its keyframe images and recorded as its ``crop_rows``
    (working-size rows, 2 more than the band for the resampling's blur)."""
    out = list(shots)
    for k in selected:
        shot = shots[k]
        inside = [c for (i, c) in row_changes if shot.start_frame < i < shot.end_frame]
        top, bottom = static_bands(np.array(inside, np.float32).reshape(len(inside), -1), cfg)
        if not (top or bottom):
            continue
        crop = tuple(int(np.ceil(n * rows_to_work)) + 2 if n else 0 for n in (top, bottom))
        for kf in per_shot[k]:
            writer.crop(kf.image, *crop)
        out[k] = dataclasses.replace(shot, crop_rows=crop)
    return tuple(out)


def _run_video_file(path: Path, work_dir: Path, cfg: VideoCfg) -> KeyframeSet:
    t0 = time.perf_counter()
    cap, info, first = open_video(path)
    warnings: list[str] = []
    fps = info.fps
    if not 0.5 <= fps <= 1000:
        warnings.append(f"container reports {fps:g} fps; assuming 30 fps")
        fps = 30.0
    if info.frame_count_meta > 0 and info.frame_count_meta / fps < cfg.min_seconds - 1.0 / fps:
        cap.release()
        raise _too_short(path, info.frame_count_meta / fps, cfg)

    orig = (info.width, info.height)
    work = working_size(*orig, cfg.max_width)
    aw = min(cfg.analysis_width, work[0])
    ah = max(2, int(round(orig[1] * aw / orig[0])))
    motion_thr = cfg.motion_frac * aw
    step = max(1, int(round(fps / cfg.analysis_fps)))
    writer = _Writer(work_dir, work, cfg)

    detector = TransitionDetector(
        fps=fps,
        step=step,
        cut_threshold=cfg.cut_threshold,
        cut_ratio=cfg.cut_ratio,
        window_s=cfg.window_s,
        dissolve_min_change=cfg.dissolve_min_change,
        dissolve_max_residual=cfg.dissolve_max_residual,
        dark_level=cfg.dark_level,
        flat_fraction=cfg.flat_fraction,
        margin_s=cfg.transition_margin_s,
        min_cut_gap_s=cfg.min_cut_gap_s,
    )
    selector = KeyframeSelector(motion_px=motion_thr, min_gap_s=cfg.min_gap_s, max_gap_s=cfg.max_gap_s)
    to_work = work[0] / aw  # analysis px -> working px
    # Keyframes are chosen as frames are decoded, in provisional pieces (the selector restarts at each
    # boundary the detector finds); once the transitions are all known they are sorted into shots.
    chosen: list[list[Keyframe]] = []
    recent: deque = deque(maxlen=TransitionDetector.LAG + 2)  # (frame, bgr, t, grey, sharpness)
    prev: tuple[int, np.ndarray, float, float, float] | None = None  # frame, bgr, t, motion, sharpness
    last_index = 0
    row_changes: list[tuple[int, np.ndarray]] = []  # (frame, mean |change| per analysis row), for still bands
    last_gray: np.ndarray | None = None

    def add(frame_idx: int, bgr: np.ndarray, t: float, motion: float, sharp: float, reason: str) -> None:
        name = writer.write(0, frame_idx, bgr)
        chosen[-1].append(
            Keyframe(
                index=0,
                frame=frame_idx,
                time_s=round(t, 6),
                image=name,
                shot=0,
                motion_px=round(motion * to_work, 3),
                sharpness=round(sharp, 3),
                reason=reason,  # type: ignore[arg-type]
            )
        )

    def close_piece() -> None:
        # Take the piece's last analysed frame too when it moved enough since the last keyframe.
        if prev is None or not chosen or not chosen[-1] or chosen[-1][-1].frame == prev[0]:
            return
        frame_idx, bgr, t, motion, sharp = prev
        if motion >= 0.3 * motion_thr or t - chosen[-1][-1].time_s >= 0.5 * cfg.max_gap_s:
            add(frame_idx, bgr, t, motion, sharp, "last")

    try:
        for i, frame in iter_frames(cap, first, step):
            last_index = i
            if frame is None:
                continue
            t = i / fps
            small = _shrink(frame, (aw, ah))
            gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
            boundary, usable = detector.update(i, small, gray)
            if not usable:  # dark or flat: a transition frame, never a keyframe
                last_gray = None
                continue
            if last_gray is not None:
                change = np.abs(gray.astype(np.int16) - last_gray).mean(axis=1).astype(np.float32)
                row_changes.append((i, change))
            last_gray = gray.astype(np.int16)
            recent.append((i, frame, t, gray, sharpness(gray)))
            if prev is None or boundary is not None:
                # A new shot from frame ``boundary`` on: its keyframes so far go, its frames are replayed.
                start = i if boundary is None else boundary
                if chosen:
                    for kf in [kf for kf in chosen[-1] if kf.frame >= start]:
                        (work_dir / kf.image).unlink(missing_ok=True)
                    chosen[-1] = [kf for kf in chosen[-1] if kf.frame < start]
                before = [r for r in recent if r[0] < start]
                if before and prev is not None and prev[0] >= start:  # the old shot ended before ``start``
                    j, f, tj, _g, sh = before[-1]
                    prev = (j, f, tj, selector.last_motion_px, sh)
                elif prev is not None and prev[0] >= start:
                    prev = None  # nothing of the old shot is left to close it with
                close_piece()
                chosen.append([])
                replay = [r for r in recent if r[0] >= start] or [recent[-1]]
                j, f, tj, g, sh = replay[0]
                selector.start(g, tj)
                add(j, f, tj, 0.0, sh, "first")
                prev = (j, f, tj, 0.0, sh)
                replay = replay[1:]
            else:
                replay = [recent[-1]]
            for j, f, tj, g, sh in replay:
                dec = selector.update(g, tj)
                if dec.is_keyframe:
                    add(j, f, tj, dec.motion_px, sh, dec.reason)
                prev = (j, f, tj, selector.last_motion_px, sh)
        close_piece()
    finally:
        cap.release()

    frame_count = last_index + 1
    duration = frame_count / fps
    if info.frame_count_meta > 0 and frame_count < 0.9 * info.frame_count_meta:
        warnings.append(
            f"decoding stopped at frame {frame_count} of {info.frame_count_meta} (damaged or truncated)"
        )
    if duration < cfg.min_seconds - 1e-9:
        _clear_old(work_dir)
        raise _too_short(path, duration, cfg)
    t_decode = time.perf_counter() - t0

    if prev is None:
        _clear_old(work_dir)
        raise InputError(
            f"{path}: every frame is blank, dark or flat (one colour, a title): no street to reconstruct"
        )
    transitions = detector.finish()
    shots, per_shot = _sort_into_shots(transitions, [kf for piece in chosen for kf in piece], frame_count,
                                       fps, work_dir)  # fmt: skip
    if len(transitions) > 0:
        kinds = sorted({tr.kind for tr in transitions})
        warnings.append(f"{len(transitions)} transitions ({', '.join(kinds)}): {len(shots)} shots")
    usable = [s.index for s in shots if s.duration_s >= cfg.min_shot_s and len(per_shot[s.index]) >= 1]
    with_keyframes = [s for s in shots if per_shot[s.index]]
    longest = max(with_keyframes, key=lambda s: s.duration_s).index
    if not usable:
        warnings.append(
            f"no shot lasts {cfg.min_shot_s:g} s; using the longest ({shots[longest].duration_s:.2f} s)"
        )
        usable = [longest]
    selected = sorted(usable)  # gen tries them longest first, or makes one scene of each (--per-shot)

    shots = _crop_still_bands(shots, selected, per_shot, row_changes, writer, work[1] / ah, cfg)
    keyframes: list[Keyframe] = []
    for k in range(len(shots)):
        if k in selected:
            thinned = _thin(per_shot[k], cfg.max_keyframes)
            if len(thinned) < len(per_shot[k]):
                warnings.append(f"shot {k}: {len(per_shot[k])} keyframes thinned to {len(thinned)}")
            dropped = {kf.image for kf in per_shot[k]} - {kf.image for kf in thinned}
            keyframes.extend(thinned)
        else:
            dropped = {kf.image for kf in per_shot[k]}
        for name in dropped:
            (work_dir / name).unlink(missing_ok=True)
    keyframes = [dataclasses.replace(kf, index=n) for n, kf in enumerate(keyframes)]
    moving = [kf.motion_px for kf in keyframes if kf.reason == "motion"]
    if len(keyframes) > 1 and not moving:
        warnings.append("little image motion: the camera looks static (keyframes sampled every max_gap_s)")
    return KeyframeSet(
        mode="video",
        source=str(path.resolve()),
        source_sha256=sha256_file(path),
        fps=float(fps),
        frame_count=frame_count,
        duration_s=round(duration, 6),
        original_size=orig,
        working_size=work,
        shots=shots,
        selected_shots=tuple(selected),
        transitions=tuple(
            TransitionSpan(
                kind=tr.kind,
                start_frame=tr.start_frame,
                end_frame=tr.end_frame,
                start_s=round(tr.start_frame / fps, 6),
                end_s=round(tr.end_frame / fps, 6),
            )
            for tr in transitions
        ),  # fmt: skip
        keyframes=tuple(keyframes),
        intrinsics=_intrinsics(cfg, orig, work),
        warnings=tuple(warnings),
        timings_s={"decode_select": round(t_decode, 4), "total": round(time.perf_counter() - t0, 4)},
    )
