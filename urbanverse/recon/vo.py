"""OpenCV visual odometry, the fallback when SfM does not register enough keyframes.

SIFT features matched between consecutive keyframes (ratio test) are chained into tracks. The first
pair with enough parallax initialises the map (essential matrix with RANSAC, ``recoverPose``,
triangulation); every later keyframe is located by PnP-RANSAC (+ Levenberg-Marquardt refinement)
against the triangulated tracks it sees, then triangulates the new tracks it shares with the previous
keyframe. No global bundle adjustment: drift grows with length, which is why SfM comes first.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from urbanverse.errors import Cancelled
from urbanverse.recon.geometry import SparsePoints, pose_from_opencv, triangulate
from urbanverse.recon.sfm import RawReconstruction
from urbanverse.video.record import CameraIntrinsics

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class VoCfg:
    """Visual-odometry settings of :func:`run_vo` (the stage sets ``max_image_size`` from
    ``ReconCfg.sfm``). Pixels at the downscaled resolution, angles in degrees."""

    max_image_size: int = 640
    """Keyframes are downscaled to this longest side (px) for SIFT, as for SfM."""
    max_features: int = 1500
    """SIFT features kept per keyframe (the strongest): enough tracks between consecutive keyframes."""
    ratio: float = 0.75
    """Lowe's ratio test: a match's distance below this fraction of the second best's; ambiguous
    matches on repeating facades go."""
    min_init_parallax_deg: float = 1.5
    """The first keyframe pair whose triangulated tracks reach this median ray angle initialises the
    map: less parallax gives a poorly scaled start."""
    min_tri_angle_deg: float = 0.75
    """Tracks triangulated with a smaller ray angle are not used: their depth is unreliable."""
    reproj_px: float = 2.0
    """RANSAC inlier threshold (px) of the PnP that locates each keyframe."""
    min_pnp_inliers: int = 12
    """Fewest triangulated tracks seen (and PnP inliers) to locate a keyframe; fewer skip it."""


def _features(path: Path, p: VoCfg, sift) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise FileNotFoundError(f"{path}: keyframe image missing or unreadable")
    s = min(1.0, p.max_image_size / max(img.shape[:2]))
    small = cv2.resize(img, None, fx=s, fy=s, interpolation=cv2.INTER_AREA) if s < 1 else img
    kps, desc = sift.detectAndCompute(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), None)
    if desc is None:
        return np.zeros((0, 2)), np.zeros((0, 128), np.float32), np.zeros((0, 3), np.uint8), s
    xy = np.array([k.pt for k in kps], float) / s
    ij = np.clip(np.round(xy).astype(int), 0, [img.shape[1] - 1, img.shape[0] - 1])
    colours = img[ij[:, 1], ij[:, 0], ::-1]
    return xy, desc, colours, s


def _match(d1: np.ndarray, d2: np.ndarray, ratio: float) -> np.ndarray:
    """``(M, 2)`` index pairs passing Lowe's ratio test in both directions."""
    if len(d1) < 2 or len(d2) < 2:
        return np.zeros((0, 2), int)
    bf = cv2.BFMatcher(cv2.NORM_L2)
    fwd = bf.knnMatch(d1, d2, k=2)
    good = {
        m.queryIdx: m.trainIdx for m, n in (x for x in fwd if len(x) == 2) if m.distance < ratio * n.distance
    }
    bwd = bf.knnMatch(d2, d1, k=1)
    back = {x[0].queryIdx: x[0].trainIdx for x in bwd if x}
    pairs = [(i, j) for i, j in good.items() if back.get(j) == i]
    return np.array(pairs, int).reshape(-1, 2)


def _triangulate(k: np.ndarray, wfc_a: np.ndarray, wfc_b: np.ndarray, xa: np.ndarray, xb: np.ndarray):
    """Triangulate ``(N, 2)`` pixel pairs; returns points ``(N, 3)`` and a validity mask."""
    x = triangulate(k, wfc_a, wfc_b, xa, xb)
    ok = np.isfinite(x).all(axis=1)
    for wfc, obs in ((wfc_a, xa), (wfc_b, xb)):
        cfw = np.linalg.inv(wfc)
        pc = x @ cfw[:3, :3].T + cfw[:3, 3]
        ok &= pc[:, 2] > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            proj = (pc @ k.T)[:, :2] / pc[:, 2:3]
        ok &= np.linalg.norm(proj - obs, axis=1) < 4.0
    return x, ok


def _tri_angles(x: np.ndarray, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    """Triangulation angle (degrees) at each point ``(N, 3)`` between camera centres ``ca`` and ``cb``."""
    ra, rb = x - ca, x - cb
    cos = (ra * rb).sum(1) / (np.linalg.norm(ra, axis=1) * np.linalg.norm(rb, axis=1) + 1e-12)
    return np.degrees(np.arccos(np.clip(cos, -1, 1)))


def _angle_ok(x: np.ndarray, ca: np.ndarray, cb: np.ndarray, min_deg: float) -> np.ndarray:
    return _tri_angles(x, ca, cb) >= min_deg


def run_vo(
    image_dir: Path,
    names: list[str],
    intr: CameraIntrinsics,
    p: VoCfg,
    stop: threading.Event | None = None,
) -> RawReconstruction | None:
    """Chain keyframes ``names`` (in order) into camera poses; None if no pair has enough parallax.
    ``stop``: once set, ``Cancelled`` is raised before the next keyframe's features or pose."""

    def check() -> None:
        if stop is not None and stop.is_set():
            raise Cancelled("visual odometry stopped")

    n = len(names)
    if n < 2:
        return None
    k = intr.matrix()
    sift = cv2.SIFT_create(nfeatures=p.max_features, contrastThreshold=0.02)
    feats = []
    for nm in names:
        check()
        feats.append(_features(image_dir / nm, p, sift))
    # Tracks: track id per (keyframe, feature) through consecutive matches.
    track_of = [np.full(len(f[0]), -1, int) for f in feats]
    n_tracks = 0
    for i in range(n - 1):
        m = _match(feats[i][1], feats[i + 1][1], p.ratio)
        for a, b in m:
            if track_of[i][a] < 0:
                track_of[i][a] = n_tracks
                n_tracks += 1
            track_of[i + 1][b] = track_of[i][a]
    xyz = np.full((n_tracks, 3), np.nan)
    colour = np.zeros((n_tracks, 3), np.uint8)
    wfc: dict[int, np.ndarray] = {}

    def common(i: int, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ti, tj = track_of[i], track_of[j]
        ids, ia, ja = np.intersect1d(ti[ti >= 0], tj[tj >= 0], return_indices=True)
        fa = np.flatnonzero(ti >= 0)[ia]
        fb = np.flatnonzero(tj >= 0)[ja]
        return ids, fa, fb

    # Initialisation: the first pair (a, b), b - a < 8, with enough parallax, trying a few places along
    # the sequence (the start may be a turn on the spot).
    init = None
    for a in sorted({0, n // 3, (2 * n) // 3}):
        for b in range(a + 1, min(n, a + 8)):
            ids, fa, fb = common(a, b)
            if len(ids) < 30:
                break
            xa, xb = feats[a][0][fa], feats[b][0][fb]
            e, mask = cv2.findEssentialMat(xa, xb, k, cv2.RANSAC, 0.999, 1.0)
            if e is None or e.shape != (3, 3):
                continue
            _, r, t, mask = cv2.recoverPose(e, xa, xb, k, mask=mask)
            inl = mask.ravel() > 0
            wfc_b = np.eye(4)
            wfc_b[:3, :3], wfc_b[:3, 3] = r.T, (-r.T @ t).ravel()
            x, ok = _triangulate(k, np.eye(4), wfc_b, xa, xb)
            ok &= inl & _angle_ok(x, np.zeros(3), wfc_b[:3, 3], p.min_tri_angle_deg)
            if ok.sum() < 30:
                continue
            if float(np.median(_tri_angles(x[ok], np.zeros(3), wfc_b[:3, 3]))) >= p.min_init_parallax_deg:
                wfc[a], wfc[b] = np.eye(4), wfc_b
                xyz[ids[ok]] = x[ok]
                colour[ids[ok]] = feats[a][2][fa[ok]]
                init = (a, b)
                break
        if init is not None:
            break
    if init is None:
        return None
    a, b = init
    # Register outwards from the initial pair: forwards to the end, then backwards to the start.
    order = list(range(a + 1, b)) + list(range(b + 1, n)) + list(range(a - 1, -1, -1))
    for i in order:
        check()
        # Locate keyframe i by PnP against every track with a 3D point.
        ti = track_of[i]
        has = (ti >= 0) & np.isfinite(xyz[np.maximum(ti, 0), 0])
        log.debug("vo: keyframe %d sees %d triangulated tracks", i, int(has.sum()))
        if has.sum() < p.min_pnp_inliers:
            continue
        obj, img = xyz[ti[has]], feats[i][0][has]
        ok, rvec, tvec, inliers = cv2.solvePnPRansac(
            obj,
            img,
            k,
            None,
            iterationsCount=200,
            reprojectionError=p.reproj_px,
            confidence=0.999,
            flags=cv2.SOLVEPNP_EPNP,
        )
        if not ok or inliers is None or len(inliers) < p.min_pnp_inliers:
            continue
        inl = inliers.ravel()
        rvec, tvec = cv2.solvePnPRefineLM(obj[inl], img[inl], k, None, rvec, tvec)
        m = pose_from_opencv(rvec, tvec)
        wfc[i] = m
        # Triangulate new tracks with every registered keyframe that shares them, widest baseline first.
        for ref in sorted(wfc, key=lambda j: -float(np.linalg.norm(wfc[j][:3, 3] - m[:3, 3]))):
            if ref == i:
                continue
            ids, fa, fb = common(ref, i)
            new = np.isnan(xyz[ids, 0])
            if not new.any():
                continue
            x, okt = _triangulate(k, wfc[ref], m, feats[ref][0][fa[new]], feats[i][0][fb[new]])
            okt &= _angle_ok(x, wfc[ref][:3, 3], m[:3, 3], p.min_tri_angle_deg)
            xyz[ids[new][okt]] = x[okt]
            colour[ids[new][okt]] = feats[i][2][fb[new][okt]]
    if len(wfc) < 2:
        return None
    return _to_raw(wfc, xyz, colour, track_of, feats, k)


class EarlyVo:
    """:func:`run_vo` started on a second thread before it is known to be needed, so that it runs
    while SfM tries its fallback features; a context manager that stops and joins it on leaving.

    SfM maps on one thread (for reproducible models). When its first features fall short, the
    fallback features map once or twice more (seconds each), and if they fall short too, VO runs
    (seconds too) and compares. Started at the fallback, VO's result
    is ready by then; when SfM succeeds, it is stopped at its next keyframe and never read."""

    def __init__(self, image_dir: Path, names: list[str], intr: CameraIntrinsics, p: VoCfg) -> None:
        self._args = (image_dir, names, intr, p)
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="vo")
        self._job: Future[tuple[RawReconstruction | None, float]] | None = None

    def start(self) -> None:
        """Start VO on the second thread (once; later calls do nothing)."""
        if self._job is None:
            self._job = self._pool.submit(self._timed)

    def result(self) -> tuple[RawReconstruction | None, float]:
        """VO's result and its own seconds, starting it now if :meth:`start` was not called."""
        self.start()
        assert self._job is not None
        return self._job.result()

    def _timed(self) -> tuple[RawReconstruction | None, float]:
        t0 = time.perf_counter()
        raw = run_vo(*self._args, stop=self._stop)
        return raw, time.perf_counter() - t0

    def __enter__(self) -> EarlyVo:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _to_raw(wfc, xyz, colour, track_of, feats, k) -> RawReconstruction:
    observers: dict[int, list[int]] = {}
    errors: dict[int, list[float]] = {}
    for i, m in wfc.items():
        ti = track_of[i]
        has = (ti >= 0) & np.isfinite(xyz[np.maximum(ti, 0), 0])
        cfw = np.linalg.inv(m)
        pc = xyz[ti[has]] @ cfw[:3, :3].T + cfw[:3, 3]
        proj = (pc @ k.T)[:, :2] / pc[:, 2:3]
        err = np.linalg.norm(proj - feats[i][0][has], axis=1)
        for tid, e in zip(ti[has], err, strict=True):
            observers.setdefault(int(tid), []).append(i)
            errors.setdefault(int(tid), []).append(float(e))
    keep = sorted(t for t, obs in observers.items() if len(obs) >= 2 and np.mean(errors[t]) < 4.0)
    offsets, obs = [0], []
    for t in keep:
        obs.extend(sorted(observers[t]))
        offsets.append(len(obs))
    n_obs = {i: 0 for i in wfc}
    for i in obs:
        n_obs[i] += 1
    err = np.array([np.mean(errors[t]) for t in keep], np.float32)
    points = SparsePoints(
        xyz=xyz[keep].reshape(-1, 3),
        rgb=colour[keep].reshape(-1, 3),
        error_px=err,
        obs_offsets=np.array(offsets, np.int64),
        obs_keyframes=np.array(obs, np.int32),
    )
    return RawReconstruction(
        wfc=wfc,
        points=points,
        fx=float(k[0, 0]),
        fy=float(k[1, 1]),
        cx=float(k[0, 2]),
        cy=float(k[1, 2]),
        mean_reprojection_error_px=float(err.mean()) if len(err) else 0.0,
        num_observations=n_obs,
    )
