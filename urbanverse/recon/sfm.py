"""Structure from motion with pycolmap (COLMAP 3.x/4.x bindings, CPU).

SIFT on keyframes downscaled to ``max_image_size``, sequential matching (each keyframe against the next
``overlap`` plus quadratic strides), then COLMAP's global mapper (GLOMAP: rotation averaging, global
positioning, bundle adjustment; ``SfmCfg.mapper``) or its incremental one, with one shared
SIMPLE_PINHOLE camera whose focal length starts at the field-of-view prior and is refined by bundle
adjustment (principal point fixed at the image centre). Poses come out in COLMAP's arbitrary
similarity frame; :mod:`align` makes them metric and ground-aligned.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from urbanverse.recon.geometry import SparsePoints
from urbanverse.recon.pieces import shared_similarity, unposed_runs
from urbanverse.recon.sfm_cfg import SfmCfg
from urbanverse.recon.sift_features import (
    extract_colmap_sift,
    few_features,
    opencv_features,
    write_opencv_sift,
)
from urbanverse.video.record import CameraIntrinsics

log = logging.getLogger(__name__)


@dataclass
class RawReconstruction:
    """An up-to-similarity reconstruction: camera-to-frame poses per keyframe index, points, focal."""

    wfc: dict[int, np.ndarray]
    points: SparsePoints
    fx: float
    fy: float
    cx: float
    cy: float
    mean_reprojection_error_px: float
    num_observations: dict[int, int]
    notes: list[str] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    """How many keyframes the caller's ``consistent`` check kept (see ``run_sfm``); registered count
    without one."""


#: COLMAP's own log (glog): the camera stage keeps it in its work folder (``run_sfm(log_file=...)``).
COLMAP_LOG = "colmap.log"
_glog_guard = threading.Lock()


@contextlib.contextmanager
def _colmap_log(pycolmap, path: Path) -> Iterator[None]:
    """Route COLMAP's C++ log (glog: every level) into the file ``path`` instead of the terminal while
    the block runs; afterwards COLMAP logs nothing (no terminal lines, no files in the temp folder).

    glog's destination is one per process: SfM runs in one process at a time log to their own file.
    glog may add a time stamp to the name it is given; such files are joined into ``path`` at the end.
    """
    glog = pycolmap.logging
    levels = (glog.INFO, glog.WARNING, glog.ERROR, glog.FATAL)
    path.parent.mkdir(parents=True, exist_ok=True)
    for old in path.parent.glob(path.name + "*"):  # a previous run's, or one a kill left unjoined
        old.unlink()
    with _glog_guard:
        glog.logtostderr = False
        glog.alsologtostderr = False
        glog.stderrthreshold = glog.FATAL  # a fatal error still reaches the terminal before the abort
        glog.minloglevel = glog.INFO
        glog.set_log_destination(glog.INFO, str(path))
        for level in levels[1:]:
            glog.set_log_destination(level, "")  # the INFO file already holds every level
    try:
        yield
    finally:
        with _glog_guard:
            for level in levels:
                glog.set_log_destination(level, "")  # closes (flushes) the file; no file logging after
            glog.minloglevel = glog.FATAL
        stamped = sorted(p for p in path.parent.glob(path.name + "?*") if p.is_file())
        if stamped:
            with path.open("ab") as out:
                for part in stamped:
                    out.write(part.read_bytes())
                    part.unlink()


def run_sfm(
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    work: Path,
    p: SfmCfg,
    consistent: Callable[[RawReconstruction], list[int]] | None = None,
    on_fallback: Callable[[], None] | None = None,
    log_file: Path | None = None,
) -> RawReconstruction | None:
    """Reconstruct the images ``names`` (in ``image_dir``, keyframe index = position in ``names``).

    ``consistent`` returns the keyframes of a candidate whose poses are plausible (the caller's check);
    while they are fewer than ``accept_score x len(names)``, another mapping attempt runs (up to
    ``attempts``), then, with ``fallback_features``, the same attempts on the other SIFT extractor's
    features (COLMAP's and OpenCV's find different features on weak texture, and a walk that one
    cannot map the other often can; ``on_fallback`` is called as the other extractor starts). The
    candidate with the most consistent keyframes is kept; its other keyframes are deregistered before
    the final bundle adjustment, so a part of the model that broke (at a turn, a pause) cannot pull
    the focal length and the good part with it. Scratch files (databases, models) go to ``work``;
    COLMAP's own log to ``log_file`` (default: ``colmap.log`` in ``work``), not the terminal.
    Returns None when COLMAP builds no model.
    """
    import pycolmap  # core dependency; imported here to keep `urbanverse --help` light

    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    with _colmap_log(pycolmap, log_file or work / COLMAP_LOG):
        return _run_sfm(pycolmap, image_dir, names, intr, work, p, consistent, on_fallback)


def _run_sfm(
    pycolmap,
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    work: Path,
    p: SfmCfg,
    consistent: Callable[[RawReconstruction], list[int]] | None,
    on_fallback: Callable[[], None] | None,
) -> RawReconstruction | None:
    """The body of :func:`run_sfm`, run while COLMAP's log goes to its file."""
    first = ("colmap" if few_features(intr, names, p) else "opencv") if p.features == "auto" else p.features
    extractors = [first] + ([{"colmap": "opencv", "opencv": "colmap"}[first]] if p.fallback_features else [])
    timings: dict[str, float] = {}
    notes: list[str] = []
    best: tuple[float, object, list[int] | None] | None = None
    # COLMAP matches and maps on one thread (deterministic); the other core computes the OpenCV
    # fallback's features meanwhile, in case they are needed (seconds saved when they are).
    pool = ThreadPoolExecutor(max_workers=1) if extractors[1:] == ["opencv"] else None
    prefetched: dict[str, Future] = {}

    def prefetch() -> None:
        if pool is not None:
            prefetched.update({n: pool.submit(opencv_features, image_dir / n, p) for n in names})

    try:
        for k, features in enumerate(extractors):
            if k:
                notes.append(f"SfM retried with {features} SIFT features")
                if on_fallback is not None:
                    on_fallback()
            attempts = p.attempts if k == 0 else p.fallback_attempts
            found = _mapping_attempts(
                pycolmap,
                image_dir,
                names,
                intr,
                work / features,
                p,
                features,
                attempts,
                consistent,
                timings,
                notes,
                after_extract=prefetch if k == 0 else None,
                prefetched=prefetched,
            )
            if found is not None and (best is None or found[0] > best[0]):
                best, best_features = found, features
            if best is not None and (consistent is None or best[0] >= p.accept_score * len(names)):
                break
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    log.info("sfm: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))
    if best is None:
        return None
    rec = best[1]
    if best[2] is not None and len(best[2]) >= 2:
        _keep_only(rec, names, set(best[2]))
    if p.refine_focal:
        t0 = time.perf_counter()
        rec = _refine_focal(pycolmap, rec, p, notes)
        timings["sfm_refine_focal"] = time.perf_counter() - t0
    raw = _extract(rec, names)
    if p.pieces and consistent is not None and best[2] is not None:
        t0 = time.perf_counter()
        raw = _map_pieces(pycolmap, raw, image_dir, names, intr, work, p, best_features, consistent, notes)
        timings["sfm_pieces"] = time.perf_counter() - t0
    raw.notes = notes
    raw.score = best[0]
    raw.timings_s = {k: round(v, 4) for k, v in timings.items()}
    return raw


def _mapping_attempts(
    pycolmap,
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    work: Path,
    p: SfmCfg,
    features: str,
    attempts: int,
    consistent: Callable[[RawReconstruction], list[int]] | None,
    timings: dict[str, float],
    notes: list[str],
    after_extract: Callable[[], None] | None = None,
    prefetched: dict[str, Future] | None = None,
) -> tuple[float, object, list[int] | None] | None:
    """Extract ``features`` ("colmap" or "opencv" SIFT), match sequentially, map up to ``attempts``
    times; the best candidate as ``(consistent count, reconstruction, consistent keyframes)``.
    Adds the stage seconds to ``timings`` and a line per failed attempt to ``notes``.
    ``after_extract`` runs once the features are in the database; ``prefetched``: OpenCV features
    by image name (futures of :func:`opencv_features`) already under way."""
    work.mkdir(parents=True)
    db = work / "database.db"
    reader = pycolmap.ImageReaderOptions()
    reader.camera_model = "SIMPLE_PINHOLE"
    reader.camera_params = f"{intr.fx},{intr.cx},{intr.cy}"
    t0 = time.perf_counter()
    if features == "opencv":
        pycolmap.Database.open(db).close()  # create the empty database
        pycolmap.import_images(db, image_dir, pycolmap.CameraMode.SINGLE, names, reader)
        write_opencv_sift(pycolmap, db, image_dir, p, prefetched or {})
    else:
        extract_colmap_sift(pycolmap, db, image_dir, names, intr, reader, p)
    timings["sfm_extract"] = timings.get("sfm_extract", 0.0) + time.perf_counter() - t0
    if after_extract is not None:
        after_extract()
    t0 = time.perf_counter()
    match = pycolmap.FeatureMatchingOptions()
    # Matching threads also run the RANSAC verification, whose random streams then depend on scheduling.
    match.num_threads = 1 if p.deterministic else p.num_threads
    match.use_gpu = False
    pairing = pycolmap.SequentialPairingOptions()
    pairing.overlap = p.overlap
    pairing.quadratic_overlap = True
    pairing.num_threads = 1 if p.deterministic else p.num_threads
    verify = pycolmap.TwoViewGeometryOptions()
    verify.ransac.random_seed = p.seed
    pycolmap.match_sequential(
        db,
        matching_options=match,
        pairing_options=pairing,
        verification_options=verify,
        device=pycolmap.Device.cpu,
    )
    timings["sfm_match"] = timings.get("sfm_match", 0.0) + time.perf_counter() - t0
    t0 = time.perf_counter()
    # Hypothesise and verify: a mapping attempt that starts from a bad initial pair (a turn on the spot,
    # a repetitive facade) yields poses a walking camera cannot have; ``consistent`` (the caller's
    # check) keeps the plausible ones, and too few trigger another attempt with a stricter
    # initialisation and another seed. Features and matches are reused.
    variants = [(p.init_min_tri_angle_deg, p.seed), (2.0 * p.init_min_tri_angle_deg, p.seed + 1)]
    variants += [(1.5 * p.init_min_tri_angle_deg, p.seed + 2)]
    variants = variants[: max(1, attempts)]
    best: tuple[float, object, list[int] | None] | None = None
    best_variant = variants[0]
    refocused = not p.refocus
    attempt = 0
    while attempt < len(variants):
        angle, seed = variants[attempt]
        rec = _map(pycolmap, db, image_dir, work / f"models{attempt}", names, p, angle, seed)
        attempt += 1
        if rec is None:
            continue
        keep = None if consistent is None else consistent(_extract(rec, names))
        value = float(rec.num_reg_images() if keep is None else len(keep))
        log.info(
            "sfm %s attempt %d (init angle %.1f deg): %d registered, %d consistent",
            features,
            attempt,
            angle,
            rec.num_reg_images(),
            value,
        )
        if best is None or value > best[0]:
            best, best_variant = (value, rec, keep), (angle, seed)
        if consistent is None:
            break
        if (
            not refocused
            and value < p.refocus_below * len(names)
            and (focal := _self_calibrated_focal(pycolmap, best[1], best[2], names, p))
        ):
            # Mapping keeps the focal length fixed, and a prior that is off by some per cent bends a
            # forward-moving path until the plausibility check cuts it. The focal that bundle
            # adjustment finds on the plausible part becomes the prior of another attempt with the
            # best initialisation so far, so a walk cut at its turns by a wrong prior can map whole.
            refocused = True
            _set_focal(pycolmap, db, focal)
            notes.append(f"SfM remapped with the focal length {focal:.0f} px that bundle adjustment found")
            # The remapping takes the next attempt's turn (the last variant drops out), but runs even
            # when only one attempt was asked for.
            variants = [*variants[:attempt], best_variant, *variants[attempt:]][: max(2, len(variants))]
            continue
        if value >= p.accept_score * len(names):
            break
        notes.append(
            f"SfM attempt {attempt} ({features} SIFT): only {value:.0f} of {len(names)} keyframes plausible"
        )
    timings["sfm_map"] = timings.get("sfm_map", 0.0) + time.perf_counter() - t0
    return best


def _map_pieces(
    pycolmap,
    raw: RawReconstruction,
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    work: Path,
    p: SfmCfg,
    features: str,
    consistent: Callable[[RawReconstruction], list[int]],
    notes: list[str],
) -> RawReconstruction:
    """``raw`` with each run of at least ``p.min_piece`` keyframes it left out mapped as a model of its
    own, with ``p.piece_overlaps`` of the model's keyframes on each side (the first that holds), and
    joined to it by those (:mod:`urbanverse.recon.pieces`). Keyframes the caller's ``consistent`` check
    rejects in a piece stay out."""
    for first, last in unposed_runs(set(raw.wfc), len(names), p.min_piece):
        for overlap in p.piece_overlaps:
            lo, hi = max(0, first - overlap), min(len(names) - 1, last + overlap)
            sub = names[lo : hi + 1]
            scratch: dict[str, float] = {}
            found = _mapping_attempts(
                pycolmap, image_dir, sub, intr, work / f"piece{first}_{overlap}", p, features, 1, None,
                scratch, [],
            )  # fmt: skip
            if found is None:
                continue
            piece = _shifted(_extract(found[1], sub), lo)
            kept = set(consistent(piece))
            transform = shared_similarity(raw.wfc, {k: piece.wfc[k] for k in kept})
            new = sorted(kept - set(raw.wfc))
            log.info(
                "sfm piece %d-%d (overlap %d): %d of %d plausible, join error %s",
                first, last, overlap, len(kept), len(sub), transform and round(transform.error, 4),
            )  # fmt: skip
            if transform is None or transform.error > p.max_join_error or not new:
                continue
            shared = len(kept & set(raw.wfc))
            # Poses only: the piece's points stay out of the ground fit (across a street crossing, the
            # road a piece sees lies lower than the walked sidewalk and would tilt the ground plane).
            raw.wfc.update({k: transform.apply_pose(piece.wfc[k]) for k in new})
            notes.append(
                f"keyframes {new[0]}-{new[-1]} mapped as a piece of their own and joined by {shared} "
                f"shared keyframes (to {100 * transform.error:.1f} % of their spread)"
            )
            break
    return raw


def _shifted(raw: RawReconstruction, offset: int) -> RawReconstruction:
    """``raw`` with every keyframe index moved up by ``offset`` (a piece of a longer walk)."""
    pts = raw.points
    return dataclasses.replace(
        raw,
        wfc={k + offset: m for k, m in raw.wfc.items()},
        points=dataclasses.replace(pts, obs_keyframes=pts.obs_keyframes + offset),
        num_observations={k + offset: n for k, n in raw.num_observations.items()},
    )


def _map(
    pycolmap, db: Path, image_dir: Path, out: Path, names: list[str], p: SfmCfg, angle: float, seed: int
):
    """One mapping run (``p.mapper``; ``angle`` is the incremental mapper's initial-pair angle); the
    model with the most registered images (None if < 2)."""
    opts = pycolmap.IncrementalPipelineOptions()
    # Several models: when the first initial pair sits in a hard stretch (a fast turn), later pairs
    # still build a model; the one with the most registered keyframes is kept.
    opts.multiple_models = p.max_models > 1
    opts.max_num_models = p.max_models
    opts.min_model_size = 2 if len(names) < 6 else 3
    # One thread: multi-threaded bundle adjustment and registration are not reproducible run to run.
    opts.num_threads = 1 if p.deterministic else p.num_threads
    opts.random_seed = seed
    opts.extract_colors = True
    # Mapping keeps the focal prior fixed: with few keyframes and forward motion, refining it while the
    # model grows can collapse into a wrong focal; a final global BA refines it (see _refine_focal).
    opts.ba_refine_focal_length = False
    opts.ba_refine_principal_point = False
    opts.ba_refine_extra_params = False
    opts.max_runtime_seconds = int(p.max_seconds)
    # Fewer, shorter bundle adjustments than COLMAP's offline defaults (global BA after every 10 %
    # growth, 5 refinement rounds): a minute of walking video must map in seconds on two cores.
    opts.ba_global_max_num_iterations = p.ba_max_iterations
    opts.ba_local_max_num_iterations = max(10, p.ba_max_iterations // 2)
    opts.ba_global_frames_ratio = p.ba_global_ratio
    opts.ba_global_points_ratio = p.ba_global_ratio
    opts.ba_global_max_refinements = 2
    opts.ba_local_max_refinements = 1
    opts.mapper.init_min_tri_angle = angle
    opts.mapper.init_max_forward_motion = 0.995
    opts.mapper.init_min_num_inliers = 50
    opts.mapper.abs_pose_refine_extra_params = False
    opts.mapper.abs_pose_min_num_inliers = p.abs_pose_min_inliers
    opts.mapper.abs_pose_refine_focal_length = False
    opts.mapper.random_seed = seed
    opts.triangulation.random_seed = seed
    opts.triangulation.ignore_two_view_tracks = len(names) > 2
    if p.mapper == "global" and len(names) > 2:  # (a pair is two-view geometry: nothing to average)
        out.mkdir(parents=True, exist_ok=True)
        models = pycolmap.global_mapping(db, image_dir, out, _global_options(pycolmap, opts, seed))
    else:
        models = pycolmap.incremental_mapping(db, image_dir, out, opts)
    if not models:
        return None
    rec = max(models.values(), key=lambda r: r.num_reg_images())
    return rec if rec.num_reg_images() >= 2 else None


def _global_options(pycolmap, incremental, seed: int):
    """Options of the global mapper matching the incremental ones: one thread (reproducible), the
    seed, the minimum model size."""
    opts = pycolmap.GlobalPipelineOptions()
    opts.num_threads = 1
    opts.random_seed = seed
    opts.min_model_size = incremental.min_model_size
    opts.mapper.num_threads = 1
    opts.mapper.random_seed = seed
    return opts


def _keep_only(rec, names: list[str], keyframes: set[int]) -> None:
    """Deregister (in place) every image of ``rec`` whose keyframe index is not in ``keyframes``."""
    for image in list(rec.images.values()):
        if image.has_pose and names.index(image.name) not in keyframes:
            rec.deregister_frame(image.frame_id)


def _self_calibrated_focal(
    pycolmap, rec, keep: list[int] | None, names: list[str], p: SfmCfg
) -> float | None:
    """The shared focal length (px) that bundle adjustment finds on the keyframes ``keep`` of ``rec``
    (all registered ones when None); None when too few are left to refine it, or when it moves by less
    than ``refocus_min_change`` or more than ``max_focal_change`` from the model's."""
    trial = pycolmap.Reconstruction(rec)
    if keep is not None:
        _keep_only(trial, names, set(keep))
    if trial.num_reg_images() < p.min_images_focal:
        return None
    f0 = float(next(iter(trial.cameras.values())).focal_length)
    f1 = _focal_after_ba(pycolmap, trial, p)
    return f1 if p.refocus_min_change <= abs(f1 / f0 - 1) <= p.max_focal_change else None


def _focal_after_ba(pycolmap, rec, p: SfmCfg) -> float:
    """Global bundle adjustment of ``rec`` (in place) with the shared focal length free and a robust
    loss; the focal length it ends with (px)."""
    ba = pycolmap.BundleAdjustmentOptions()
    ba.refine_focal_length = True
    ba.refine_principal_point = False
    ba.refine_extra_params = False
    ba.print_summary = False
    ba.ceres.loss_function_type = pycolmap.LossFunctionType.SOFT_L1
    ba.ceres.solver_options.num_threads = 1 if p.deterministic else p.num_threads
    pycolmap.bundle_adjustment(rec, ba)
    return float(next(iter(rec.cameras.values())).focal_length)


def _set_focal(pycolmap, db: Path, focal: float) -> None:
    """Set the focal length of every camera in the COLMAP database ``db`` (SIMPLE_PINHOLE: f, cx, cy)."""
    with pycolmap.Database.open(db) as database:
        for camera in database.read_all_cameras():
            params = np.asarray(camera.params, float).copy()
            params[0] = focal
            camera.params = params
            database.update_camera(camera)


def _refine_focal(pycolmap, rec, p: SfmCfg, notes: list[str]):
    """Global bundle adjustment with the shared focal length free (robust loss); keeps the fixed-focal
    model when there are too few keyframes or the focal moves more than ``max_focal_change``."""
    n = rec.num_reg_images()
    if n < p.min_images_focal:
        notes.append(
            f"focal length kept at the prior ({n} keyframes registered, "
            f"{p.min_images_focal} needed to refine it)"
        )
        return rec
    f0 = float(next(iter(rec.cameras.values())).focal_length)
    trial = pycolmap.Reconstruction(rec)
    f1 = _focal_after_ba(pycolmap, trial, p)
    if abs(f1 / f0 - 1) > p.max_focal_change:
        notes.append(f"bundle adjustment wanted focal {f1:.0f} px (prior {f0:.0f} px); kept the prior")
        return rec
    return trial


def _extract(rec, names: list[str]) -> RawReconstruction:
    index_of = {n: i for i, n in enumerate(names)}
    image_to_kf: dict[int, int] = {}
    wfc: dict[int, np.ndarray] = {}
    n_obs: dict[int, int] = {}
    for image_id, image in rec.images.items():
        if not image.has_pose or image.name not in index_of:
            continue
        k = index_of[image.name]
        cfw = image.cam_from_world()
        m = np.eye(4)
        m[:3, :4] = np.asarray(cfw.matrix())
        wfc[k] = np.linalg.inv(m)
        image_to_kf[image_id] = k
        n_obs[k] = 0
    xyz, rgb, err, offsets, obs = [], [], [], [0], []
    for _pid, pt in rec.points3D.items():
        kfs = sorted({image_to_kf[e.image_id] for e in pt.track.elements if e.image_id in image_to_kf})
        if len(kfs) < 2 or not (np.isfinite(pt.error) and pt.error < 1e3):
            continue
        xyz.append(np.asarray(pt.xyz, float))
        rgb.append(np.asarray(pt.color, np.uint8))
        err.append(float(pt.error))
        obs.extend(kfs)
        offsets.append(len(obs))
        for k in kfs:
            n_obs[k] += 1
    points = SparsePoints(
        xyz=np.array(xyz, float).reshape(-1, 3),
        rgb=np.array(rgb, np.uint8).reshape(-1, 3),
        error_px=np.array(err, np.float32),
        obs_offsets=np.array(offsets, np.int64),
        obs_keyframes=np.array(obs, np.int32),
    )
    cam = next(iter(rec.cameras.values()))
    # The mean over the kept points' observations. COLMAP's own mean also counts points whose stored
    # error is not finite after deregistration (which makes it astronomically large).
    lengths = np.diff(points.obs_offsets)
    mean_error = float(np.average(points.error_px, weights=lengths)) if len(points) else 0.0
    return RawReconstruction(
        wfc=wfc,
        points=points,
        fx=float(cam.focal_length_x),
        fy=float(cam.focal_length_y),
        cx=float(cam.principal_point_x),
        cy=float(cam.principal_point_y),
        mean_reprojection_error_px=mean_error,
        num_observations=n_obs,
    )
