"""The camera/reconstruction stage: ``run_recon(keyframes, work_dir, cfg) -> Reconstruction``.

Order of attempts: a parallax check on the keyframes (no motion -> single view), pycolmap SfM, OpenCV
visual odometry, single view. The result is aligned to the metric ground frame described in
:mod:`urbanverse.recon.record` and written as ``reconstruction.json`` + ``points.npz`` in ``work_dir``.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from urbanverse.errors import InputError
from urbanverse.recon.align import AlignCfg, Alignment, align_to_ground, level_between, up_prior
from urbanverse.recon.dense import spread_pairs, sweep_ground
from urbanverse.recon.extend import ExtendCfg, extend_by_ground, video_frames_wanted
from urbanverse.recon.geometry import SparsePoints, drop_observers, make_pose, save_points
from urbanverse.recon.record import (
    POINTS_FILE,
    GroundPlaneFit,
    Reconstruction,
    save_reconstruction,
)
from urbanverse.recon.sfm import COLMAP_LOG, RawReconstruction, run_sfm
from urbanverse.recon.sfm_cfg import SfmCfg
from urbanverse.recon.single_view import SingleViewCfg, median_motion, pair_flow, single_view_poses
from urbanverse.recon.vo import EarlyVo, VoCfg
from urbanverse.video.decode import read_frames
from urbanverse.video.record import CameraIntrinsics, KeyframeSet, load_keyframes

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class ReconCfg:
    """Settings of the camera stage. Lengths in metres, pixels at the keyframes' working resolution."""

    camera_height_m: float = 1.6
    """Camera height above the ground (m; walking: 1.6 m). The metric scale: the cameras' height above
    the fitted ground plane is set to it."""
    method: Literal["auto", "sfm", "vo", "single_view"] = "auto"
    """``auto``: SfM, then VO, then single view. Others force one method (falling back to single view)."""
    min_registered_frac: float = 0.5
    """SfM/VO count as failed when they register fewer than this fraction of keyframes (and < 2)."""
    static_px: float = 2.0
    """Camera considered static when the median keyframe-to-keyframe feature motion (px) stays below
    this: without parallax no pose can be triangulated, and single view takes over."""
    sfm: SfmCfg = dataclasses.field(default_factory=SfmCfg)
    """Structure from motion (``recon.sfm``); its ``max_image_size`` also sizes visual odometry's and the
    parallax check's images."""
    sweep_below_inliers: int = 30
    """A ground plane fitted to fewer sparse inlier points than this is refitted with the plane-sweep
    ground points too (``recon.dense``), as one with none is: a few sparse points can tilt the plane
    and put the metric scale far off."""
    sweep_level: bool = True
    """Put the ground (and so the metric scale) halfway between the sparse points' plane and the plane
    fitted to them and the plane-sweep ground points together (``recon.dense``): two estimates of the
    walked ground that err in different places (the sparse plane can be the road beside a sidewalk, a
    curb below the walked ground). Costs about a second per walk."""
    keep_colmap: bool = False
    """Keep COLMAP's database and models in ``work_dir/colmap`` (for debugging; tens of MB)."""
    walking_speed_mps: float = 1.3
    """Scale fallback when no ground plane is found: mean camera speed (m/s), a typical walking pace."""
    max_ground_tilt_deg: float = 25.0
    """Ground normals farther than this (degrees) from the camera path's up prior are rejected: a walking
    camera is held roughly upright, so a steeper plane is a facade or a slope of points, not the ground."""
    ground_inlier_frac: float = 0.03
    """Ground inlier band as a fraction of the camera height (0.03 x 1.6 m = 4.8 cm): relative to the
    height, so the test holds before the scale is known."""
    min_ground_inliers: int = 12
    """Fewest sparse points on a ground plane for it to count; with fewer the up prior and the walking
    speed set the frame and scale, as a plane through a handful of points is unreliable."""
    max_height_jump_frac: float = 0.3
    """Registered poses whose height differs from the median by more than this x camera height are
    dropped: a walking camera keeps its height within centimetres."""
    max_step_speed_mps: float = 2.5
    """A keyframe-to-keyframe step faster than this (m/s; and 2.5x the median) marks a misregistration:
    faster than a brisk walk."""
    max_speed_mps: float = 4.0
    """Mean camera speeds (m/s) above this (or below 0.1 m/s) are reported as implausible in the
    warnings: faster than a walk means the scale or the poses are likely wrong."""
    pitch_prior_deg: float = -5.0
    """Single view without vertical lines: assumed camera pitch (degrees, negative looks down), a
    hand-held camera's slight downward tilt."""
    extend: ExtendCfg = dataclasses.field(default_factory=ExtendCfg)
    """Chaining the keyframes a model left out from their registered neighbours (``recon.extend``)."""
    seed: int = 0
    """Seed of the ground-plane RANSAC and of single view (SfM has its own, ``sfm.seed``)."""

    def __post_init__(self) -> None:
        if not 0.1 <= self.camera_height_m <= 100.0:
            raise ValueError(f"ReconCfg.camera_height_m must be in [0.1, 100] m, got {self.camera_height_m}")
        if not 0 < self.min_registered_frac <= 1:
            raise ValueError(
                f"ReconCfg.min_registered_frac must be in (0, 1], got {self.min_registered_frac}"
            )
        for name in ("static_px", "walking_speed_mps", "ground_inlier_frac"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ReconCfg.{name} must be positive, got {getattr(self, name)}")
        if self.sweep_below_inliers < 0:
            raise ValueError(f"ReconCfg.sweep_below_inliers must be >= 0, got {self.sweep_below_inliers}")
        if not 0 < self.max_ground_tilt_deg < 90:
            raise ValueError(
                f"ReconCfg.max_ground_tilt_deg must be in (0, 90), got {self.max_ground_tilt_deg}"
            )


def _load_grays(image_dir: Path, names: list[str], width: int) -> list[np.ndarray]:
    out = []
    for n in names:
        img = cv2.imread(str(image_dir / n), cv2.IMREAD_GRAYSCALE)
        if img is None:
            raise InputError(f"{image_dir / n}: keyframe image missing or unreadable")
        if img.shape[1] > width:
            size = (width, int(round(img.shape[0] * width / img.shape[1])))
            img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
        out.append(img)
    return out


def run_recon(
    keyframes: KeyframeSet | Path,
    work_dir: Path,
    cfg: ReconCfg | None = None,
    *,
    image_dir: Path | None = None,
) -> Reconstruction:
    """Camera poses, sparse points and ground plane for one shot's keyframes, metric and ground-aligned.

    ``keyframes`` is the video stage's record (then ``image_dir`` is the folder holding its images) or
    that stage's work folder (``keyframes.json`` is loaded from it and its images read from it).
    Writes ``reconstruction.json`` and ``points.npz`` into ``work_dir``.
    """
    cfg = cfg or ReconCfg()
    t_start = time.perf_counter()
    if not isinstance(keyframes, KeyframeSet):
        image_dir = Path(keyframes)
        keyframes = load_keyframes(image_dir)
    if image_dir is None:
        raise ValueError(
            "run_recon: image_dir (the video stage's work folder) is required with a KeyframeSet"
        )
    image_dir, work_dir = Path(image_dir), Path(work_dir)
    if len(keyframes.selected_shots) != 1:
        raise ValueError("run_recon takes one shot; split a per-shot KeyframeSet with video.split_shots")
    if not keyframes.keyframes:
        raise InputError(f"{image_dir}: no keyframes to reconstruct")
    work_dir.mkdir(parents=True, exist_ok=True)
    (work_dir / POINTS_FILE).unlink(missing_ok=True)  # never leave a previous run's points behind
    names = [k.image for k in keyframes.keyframes]
    intr = keyframes.intrinsics
    timings: dict[str, float] = {}
    warnings: list[str] = []

    # Parallax check. The video stage already tracked features between keyframes: when it chose
    # keyframes because of motion, the camera moves. Otherwise (stills, a static camera) check here on
    # downscaled greys, which single view reuses.
    t0 = time.perf_counter()
    width = min(cfg.sfm.max_image_size, intr.width)
    s = width / intr.width
    grays: list[np.ndarray] | None = None
    flows = None
    moved = [k.motion_px for k in keyframes.keyframes if k.reason in ("motion", "tracks_lost")]
    if moved and max(moved) >= cfg.static_px:
        motion = moved
    else:
        grays = _load_grays(image_dir, names, width)
        flows = [pair_flow(grays[i], grays[i + 1]) for i in range(len(grays) - 1)]
        motion = [m / s for m in median_motion(flows)] or [0.0]
    static = len(names) == 1 or max(motion) < cfg.static_px
    timings["parallax_check"] = round(time.perf_counter() - t0, 4)

    raw: RawReconstruction | None = None
    mode = "single_view"
    if static and len(names) > 1:
        warnings.append(f"no camera motion (max keyframe motion {max(motion):.2f} px): single-view mode")
    if not static:
        raw, mode = _multi_view(image_dir, names, intr, keyframes, cfg, work_dir, timings, warnings)
    if not static and raw is None and cfg.method != "single_view":
        warnings.append("no usable multi-view reconstruction: single-view mode")
    if not static and cfg.method == "single_view":
        warnings.append("single-view mode forced by the configuration")

    t0 = time.perf_counter()
    if raw is not None:
        recon = _from_raw(raw, keyframes, intr, cfg, mode, warnings, work_dir, image_dir)
    else:
        if grays is None:
            grays = _load_grays(image_dir, names, width)
        recon = _single_view(grays, s, flows, keyframes, intr, cfg, warnings, moving=not static)
    timings["align"] = round(time.perf_counter() - t0, 4)
    if not cfg.keep_colmap:
        shutil.rmtree(work_dir / "colmap", ignore_errors=True)
    timings["total"] = round(time.perf_counter() - t_start, 4)
    recon = dataclasses.replace(recon, timings_s=timings, source_sha256=keyframes.source_sha256)
    save_reconstruction(recon, work_dir)
    log.info(
        "recon: %s, %d/%d keyframes registered, %d points",
        recon.mode,
        len(recon.registered),
        len(recon.keyframes),
        recon.num_points,
    )
    return recon


def _multi_view(
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    keyframes: KeyframeSet,
    cfg: ReconCfg,
    work_dir: Path,
    timings: dict[str, float],
    warnings: list[str],
) -> tuple[RawReconstruction | None, str]:
    """SfM, then (``auto``) visual odometry where SfM keeps too few keyframes: the model with the most
    plausible keyframes and its mode, or ``(None, "single_view")``. Adds seconds to ``timings``
    (``vo``: VO's own seconds, which may overlap SfM's) and lines to ``warnings``."""
    need = max(2, math.ceil(cfg.min_registered_frac * len(names)))
    least = min(3, len(names))  # a partial model beats single view when the camera moves
    sfm_raw: RawReconstruction | None = None
    with EarlyVo(image_dir, names, intr, VoCfg(max_image_size=cfg.sfm.max_image_size)) as vo:
        if cfg.method in ("auto", "sfm"):
            t0 = time.perf_counter()
            sfm_raw = run_sfm(
                image_dir,
                names,
                intr,
                work_dir / "colmap",
                cfg.sfm,
                consistent=lambda r: _consistent_keyframes(r, keyframes, cfg).keyframes,
                on_fallback=vo.start if cfg.method == "auto" else None,
                log_file=work_dir / COLMAP_LOG,
            )
            timings["sfm"] = round(time.perf_counter() - t0, 4)
            if sfm_raw is not None:
                timings.update(sfm_raw.timings_s)
            got = 0 if sfm_raw is None else len(sfm_raw.wfc)
            plausible = 0 if sfm_raw is None else int(sfm_raw.score)
            if plausible >= need:
                return sfm_raw, "sfm"
            warnings.append(
                f"SfM registered {got} of {len(names)} keyframes, {plausible} plausible (want {need})"
            )
            if sfm_raw is not None and plausible < least:
                sfm_raw = None
        if cfg.method in ("auto", "vo"):
            vo_raw, vo_seconds = vo.result()
            timings["vo"] = round(vo_seconds, 4)
            # Compare by keyframes with plausible poses, not by registered ones.
            got_vo = 0 if vo_raw is None else int(_plausible(vo_raw, keyframes, cfg))
            got_sfm = 0 if sfm_raw is None else int(sfm_raw.score)
            n_vo = 0 if vo_raw is None else len(vo_raw.wfc)
            warnings.append(
                f"visual odometry registered {n_vo} of {len(names)} keyframes, {got_vo} plausible"
            )
            if got_vo >= least and got_vo > got_sfm:  # SfM (bundle-adjusted) wins ties
                return vo_raw, "vo"
            if got_sfm >= least:
                warnings.append(f"using the partial SfM model ({got_sfm} of {len(names)} keyframes)")
                return sfm_raw, "sfm"
        elif sfm_raw is not None:  # (plausible >= least, see above)
            warnings.append(f"using the partial SfM model ({len(sfm_raw.wfc)} of {len(names)} keyframes)")
            return sfm_raw, "sfm"
    return None, "single_view"


def _from_raw(
    raw: RawReconstruction,
    kfs: KeyframeSet,
    intr: CameraIntrinsics,
    cfg: ReconCfg,
    mode: str,
    warnings: list[str],
    work_dir: Path,
    image_dir: Path,
) -> Reconstruction:
    kept = _consistent_keyframes(raw, kfs, cfg)
    if not kept.keyframes:  # (a chosen model has a consistent part unless focal refinement broke it)
        warnings.append(f"no consistent set of keyframes ({kept.why}): poses unreliable")
        kept = _Consistent(sorted(raw.wfc), [], "", kept.alignment, raw.points)
    if kept.dropped:
        warnings.append(f"keyframes {kept.dropped} dropped as misregistered ({kept.why})")
        for i in kept.dropped:
            raw.wfc.pop(i)
        raw.points = kept.points
    al, reg = kept.alignment, kept.keyframes
    weak = al.ground.method == "up_prior" or al.ground.num_inliers < cfg.sweep_below_inliers
    if weak and len(reg) >= 2:
        al = _swept_ground(raw, kfs, intr, cfg, image_dir, reg, kept.points) or al
    elif cfg.sweep_level and len(reg) >= 2 and al.ground.method == "ransac":
        swept = _swept_ground(raw, kfs, intr, cfg, image_dir, reg, kept.points)
        if swept is not None:
            centres = np.stack([raw.wfc[i][:3, 3] for i in reg])
            al = level_between(al, swept, centres, _align_cfg(cfg))
    n_obs = np.bincount(raw.points.obs_keyframes, minlength=len(kfs.keyframes))
    warnings.extend(raw.notes)
    warnings.extend(al.warnings)
    poses = []
    for kf in kfs.keyframes:
        m = al.apply_pose(raw.wfc[kf.index]) if kf.index in raw.wfc else None
        poses.append(make_pose(kf.index, kf.frame, kf.time_s, kf.image, m, int(n_obs[kf.index])))
    low = [p.index for p in poses if p.registered and p.position is not None and p.position[2] < 0.2]
    if low:
        warnings.append(f"keyframes {low} end up less than 0.2 m above the ground plane (bad ground fit?)")
    regs = [p for p in poses if p.registered and p.position is not None]
    span_t = regs[-1].time_s - regs[0].time_s if len(regs) > 1 else 0.0
    if span_t > 0:
        path = sum(math.dist(a.position, b.position) for a, b in zip(regs, regs[1:], strict=False))
        if not 0.1 <= path / span_t <= cfg.max_speed_mps:
            warnings.append(
                f"implied camera speed {path / span_t:.2f} m/s is implausible for a walk "
                f"(expected 0.1-{cfg.max_speed_mps:g} m/s): scale or poses may be wrong"
            )
    points = raw.points
    points.xyz = al.apply_points(points.xyz)
    save_points(points, work_dir / POINTS_FILE)
    refined = CameraIntrinsics(
        width=intr.width,
        height=intr.height,
        fx=raw.fx,
        fy=raw.fy,
        cx=raw.cx,
        cy=raw.cy,
        source="refined" if abs(raw.fx - intr.fx) > 1e-6 else intr.source,
    )
    if abs(raw.fx / intr.fx - 1) > 0.25:
        warnings.append(f"bundle adjustment moved the focal length from {intr.fx:.0f} to {raw.fx:.0f} px")
    recon = Reconstruction(
        mode=mode,  # type: ignore[arg-type]
        intrinsics=refined,
        keyframes=tuple(poses),
        ground=al.ground,
        scale_source=al.scale_source,  # type: ignore[arg-type]
        metric_scale=float(al.scale),
        camera_height_prior_m=cfg.camera_height_m,
        points_file=POINTS_FILE,
        num_points=len(points),
        mean_reprojection_error_px=raw.mean_reprojection_error_px,
    )
    video = None
    if kfs.mode == "video":
        wanted = video_frames_wanted(recon, kfs.fps, cfg.extend)
        video = read_frames(Path(kfs.source), wanted, tuple(kfs.working_size)) if wanted else None
        top, bottom = kfs.crop_rows
        if video and (top or bottom):  # the rows the keyframe images hold
            video = {i: frame[top : frame.shape[0] - bottom] for i, frame in video.items()}
    recon, chained = extend_by_ground(recon, image_dir, cfg.extend, video)
    if chained:
        warnings.append(f"keyframes {chained} registered by chaining along the ground plane")
    missing = len(kfs.keyframes) - len(recon.registered)
    if missing:
        warnings.append(f"{missing} of {len(kfs.keyframes)} keyframes not registered")
    return dataclasses.replace(recon, warnings=tuple(warnings))


def _swept_ground(
    raw: RawReconstruction,
    kfs: KeyframeSet,
    intr: CameraIntrinsics,
    cfg: ReconCfg,
    image_dir: Path,
    keep: list[int],
    points: SparsePoints,
) -> Alignment | None:
    """The alignment with a ground plane fitted to the sparse points plus the plane-sweep ground points
    of the registered keyframes ``keep`` (:mod:`urbanverse.recon.dense`), for a model whose sparse
    points hold too few ground points; None when there is still no plane."""
    wfc = np.stack([raw.wfc[i] for i in keep])
    up = up_prior(wfc[:, :3, :3], wfc[:, :3, 3], points.xyz)
    pairs = spread_pairs(keep)
    needed = sorted({i for pair in pairs for i in pair})
    width = min(cfg.sfm.max_image_size, intr.width)
    images = _load_grays(image_dir, [kfs.keyframes[i].image for i in needed], width)
    s = width / intr.width
    k = np.array([[raw.fx * s, 0.0, raw.cx * s], [0.0, raw.fy * s, raw.cy * s], [0.0, 0.0, 1.0]])
    extra = sweep_ground(pairs, dict(zip(needed, images, strict=True)), raw.wfc, k, up)
    if len(extra) == 0:
        return None
    times = np.array([kfs.keyframes[i].time_s for i in keep])
    al = align_to_ground(wfc, np.concatenate([points.xyz, extra]), times, _align_cfg(cfg))
    if al.ground.method != "ransac":
        return None
    al.warnings.append(
        f"ground plane from a plane sweep ({len(extra)} ground pixels; too few sparse ground points)"
    )
    return al


def _align_cfg(cfg: ReconCfg) -> AlignCfg:
    return AlignCfg(
        camera_height_m=cfg.camera_height_m,
        walking_speed_mps=cfg.walking_speed_mps,
        max_tilt_deg=cfg.max_ground_tilt_deg,
        inlier_frac=cfg.ground_inlier_frac,
        min_ground_inliers=cfg.min_ground_inliers,
        seed=cfg.seed,
    )


def _plausible(raw: RawReconstruction, kfs: KeyframeSet, cfg: ReconCfg) -> float:
    """How many keyframes of a candidate reconstruction have poses a walking camera can have."""
    if len(raw.wfc) < 2:
        return float(len(raw.wfc))
    return float(len(_consistent_keyframes(raw, kfs, cfg).keyframes))


@dataclass
class _Consistent:
    """The keyframes of a reconstruction that a walking camera can have (see ``_consistent_keyframes``)."""

    keyframes: list[int]
    dropped: list[int]
    why: str
    alignment: Alignment
    points: SparsePoints


def _consistent_keyframes(
    raw: RawReconstruction, kfs: KeyframeSet, cfg: ReconCfg, rounds: int = 3
) -> _Consistent:
    """Align to the ground, drop keyframes whose pose a walking camera cannot have, realign without
    them (and without their points), repeat while any are dropped (up to ``rounds`` times).

    Realigning matters when the model breaks at a turn or a pause (a failed registration bends the
    rest of the path): the ground fitted over the whole model is tilted, and only after the bent part
    is dropped does the consistent part get its true ground and heights. When more than a third of the
    keyframes go, the rest must fit a ground plane of their own (else their heights were measured
    along a guessed up direction): otherwise nothing is plausible.
    """
    params = _align_cfg(cfg)
    keep, points = sorted(raw.wfc), raw.points
    dropped: list[int] = []
    reasons: list[str] = []
    for round_ in range(rounds + 1):
        wfc = np.stack([raw.wfc[i] for i in keep])
        times = np.array([kfs.keyframes[i].time_s for i in keep])
        al = align_to_ground(wfc, points.xyz, times, params)
        if round_ == rounds or len(keep) < 2:
            break
        pos = np.stack([al.apply_pose(m)[:3, 3] for m in wfc])
        stray, why = _stray_keyframes(keep, pos, times, cfg)
        if not stray:
            break
        if len(keep) - len(stray) < 2:  # no consistent part: nothing is plausible
            return _Consistent([], sorted(raw.wfc), why, al, raw.points)
        dropped += stray
        reasons.append(why)
        keep = [i for i in keep if i not in stray]
        points = drop_observers(raw.points, set(dropped))
    why_all = "; ".join(dict.fromkeys(reasons))
    if len(dropped) > len(raw.wfc) // 3 and al.ground.method != "ransac":
        # More than a third dropped, and no ground plane confirms the rest: their heights were measured
        # along a guessed up direction, so they are no more plausible than the dropped ones.
        return _Consistent([], sorted(raw.wfc), why_all, al, raw.points)
    return _Consistent(keep, sorted(dropped), why_all, al, points)


def _stray_keyframes(
    reg: list[int], pos: np.ndarray, times: np.ndarray, cfg: ReconCfg
) -> tuple[list[int], str]:
    """Registered keyframes whose metric pose contradicts a walking camera, and why.

    Height: a walking camera keeps its height within centimetres, so a pose farther than
    ``max_height_jump_frac x camera_height_m`` from the median height is misregistered. Speed (video
    only): a step between consecutive keyframes faster than ``max(max_step_speed_mps, 2.5 x median)``
    splits the path; everything outside the longest consistent piece is misregistered.
    """
    tol = cfg.max_height_jump_frac * cfg.camera_height_m
    stray = {i for i, z in zip(reg, pos[:, 2], strict=True) if abs(z - np.median(pos[:, 2])) > tol}
    why = [f"height off by > {tol:.2f} m"] if stray else []
    dt = np.diff(times)
    if len(reg) >= 4 and (dt > 0).all():
        speed = np.linalg.norm(np.diff(pos, axis=0), axis=1) / dt
        limit = max(cfg.max_step_speed_mps, 2.5 * float(np.median(speed)))
        cuts = np.flatnonzero(speed > limit) + 1
        pieces = np.split(np.arange(len(reg)), cuts)
        best = max(pieces, key=len)
        jumped = {reg[j] for piece in pieces if piece is not best for j in piece}
        if jumped:
            why.append(f"jump faster than {limit:.1f} m/s")
            stray |= jumped
    return sorted(stray), ", ".join(why)


def _single_view(
    grays: list[np.ndarray],
    s: float,
    flows,
    kfs: KeyframeSet,
    intr: CameraIntrinsics,
    cfg: ReconCfg,
    warnings: list[str],
    moving: bool = False,
) -> Reconstruction:
    """Single-view poses. A ``moving`` camera (multi-view failed) keeps only its first keyframe: the
    others are at unknown positions, and placing them at the first one would mislead later stages."""
    k_small = intr.matrix()
    k_small[:2] *= s
    poses_m, how, w = single_view_poses(
        grays,
        k_small,
        cfg.camera_height_m,
        SingleViewCfg(pitch_prior_deg=cfg.pitch_prior_deg, seed=cfg.seed),
        cfg.static_px * s,
        flows,
    )
    warnings.extend(w)
    warnings.append(f"single view: camera tilt from {how}; ground assumed {cfg.camera_height_m:g} m below")
    if moving and len(poses_m) > 1:
        poses_m = [poses_m[0]] + [None] * (len(poses_m) - 1)
        warnings.append("the camera moves but could not be tracked: only the first keyframe is posed")
    poses = [
        make_pose(kf.index, kf.frame, kf.time_s, kf.image, m)
        for kf, m in zip(kfs.keyframes, poses_m, strict=True)
    ]
    return Reconstruction(
        mode="single_view",
        intrinsics=intr,
        keyframes=tuple(poses),
        ground=GroundPlaneFit(method="camera_prior", camera_height_m=cfg.camera_height_m),
        scale_source="camera_height_prior",
        metric_scale=1.0,
        camera_height_prior_m=cfg.camera_height_m,
        warnings=tuple(warnings),
    )
