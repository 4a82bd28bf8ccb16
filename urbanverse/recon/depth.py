"""Dense 3D points from posed keyframes: optical flow triangulated, kept where two partners agree.

Sparse SfM points are too few on street furniture (a bench gets 0-5), so objects that no detector
names leave no trace in them. Here every keyframe is matched densely (OpenCV DIS optical flow, with
a forward-backward check) to its two nearest registered neighbours whose camera centre lies
``min_baseline_m``..``max_baseline_m`` away. Each flow is triangulated with the two known poses
(the midpoint of the two rays, :func:`midpoints`) and a pixel's point is kept when both reprojection
errors are small, the rays meet at a usable angle, and the two partners give the same depth within
``agree_rel``: flow errors at occlusion edges differ between partners, so the streaks they leave do
not survive.

Why by hand: OpenCV gives the flow; the triangulation, the choice of partners and the two-partner
consistency test are a few lines that no library we use offers for posed video keyframes (COLMAP's
dense stereo needs CUDA).
"""

from __future__ import annotations

import dataclasses
import functools
import zipfile
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from urbanverse.errors import InputError
from urbanverse.recon.geometry import project_with, world_from_camera
from urbanverse.recon.record import Reconstruction
from urbanverse.records import atomic_path


@dataclasses.dataclass(frozen=True, kw_only=True)
class DenseCfg:
    """Dense matching of posed keyframes (:func:`dense_cloud`). Thresholds in pixels at the flow's
    scale, metres and degrees."""

    scale: float = 1.0
    """Fraction of the working resolution the optical flow runs at. Full resolution: a bollard 15 m off
    is a few pixels wide, and at lower resolution its flow blurs into the street behind it."""
    step: int = 3
    """Every ``step``-th pixel in each direction (at the flow's scale) is triangulated: neighbouring
    pixels give nearly the same point for the time they cost."""
    min_baseline_m: float = 0.3
    """Least distance (m) between a keyframe's camera centre and a partner's: shorter baselines
    triangulate depth too coarsely."""
    max_baseline_m: float = 4.0
    """Largest distance (m) to a partner: farther keyframes see the scene from too far apart for the
    optical flow to follow."""
    max_flow_error_px: float = 1.0
    """Forward-backward check: a pixel carried to the partner and back must land within this (px) of
    where it started; larger means the flow lost it (occlusion, no texture)."""
    max_reprojection_px: float = 1.0
    """A triangulated point must reproject within this (px) of its pixel in both keyframes."""
    min_angle_deg: float = 0.5
    """Least angle (degrees) between the two rays at a point: near-parallel rays give no usable depth."""
    min_depth_m: float = 0.5
    """Points nearer than this (m) to either camera are dropped: nothing in a street is that close to
    a hand-held camera but noise."""
    max_depth_m: float = 25.0
    """Points farther than this (m) from the keyframe are dropped: depth error grows with the square of
    the distance."""
    agree_rel: float = 0.05
    """The two partners' depths of a pixel must agree within this fraction of the nearer one: flow
    errors at occlusion edges differ between partners, so their streaks do not survive."""
    threads: int = 2
    """Keyframes matched at once (the ground stage runs after the camera stage, alone)."""

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise InputError(f"dense.threads: expected >= 1, got {self.threads}")


@dataclasses.dataclass(frozen=True)
class DenseCloud:
    """World points ``xyz (N, 3)`` (m), their colours ``rgb (N, 3)`` uint8 and the keyframe each
    came from ``keyframe (N,)``."""

    xyz: np.ndarray
    rgb: np.ndarray
    keyframe: np.ndarray


def save_cloud(cloud: DenseCloud, path: Path) -> None:
    """Write ``cloud`` to the ``.npz`` file ``path`` (positions as float32: millimetres are plenty)."""
    with atomic_path(Path(path)) as tmp:
        np.savez(
            tmp, xyz=cloud.xyz.astype(np.float32), rgb=cloud.rgb, keyframe=cloud.keyframe.astype(np.int32)
        )


def load_cloud(path: Path) -> DenseCloud:
    """Read a cloud written by :func:`save_cloud` (``InputError`` when missing or unreadable)."""
    try:
        with np.load(Path(path)) as data:
            return DenseCloud(data["xyz"].astype(float), data["rgb"], data["keyframe"].astype(int))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path}: dense points missing or unreadable ({exc})") from None


def midpoints(
    m_a: np.ndarray, m_b: np.ndarray, k: np.ndarray, uv_a: np.ndarray, uv_b: np.ndarray
) -> np.ndarray:
    """Triangulated points ``(N, 3)``: the midpoints of the closest approach of the rays through
    pixels ``uv_a (N, 2)`` of camera ``m_a`` and ``uv_b (N, 2)`` of camera ``m_b`` (4x4
    world_from_camera, intrinsics ``k``); NaN for parallel rays.

    Why by hand: ``cv2.triangulatePoints`` solves an SVD per point, 30 ms for the 32k pixels of one
    pair, over half the dense stage; the midpoint is a closed form over all points at once.
    """
    k_inv = np.linalg.inv(k)
    d_a = np.c_[uv_a, np.ones(len(uv_a))] @ k_inv.T @ m_a[:3, :3].T
    d_b = np.c_[uv_b, np.ones(len(uv_b))] @ k_inv.T @ m_b[:3, :3].T
    w0 = m_a[:3, 3] - m_b[:3, 3]
    aa, ab, bb = (d_a * d_a).sum(1), (d_a * d_b).sum(1), (d_b * d_b).sum(1)
    da, db = d_a @ w0, d_b @ w0
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = aa * bb - ab * ab
        s = np.where(denom > 1e-12, (ab * db - bb * da) / denom, np.nan)
        t = np.where(denom > 1e-12, (aa * db - ab * da) / denom, np.nan)
    return 0.5 * ((m_a[:3, 3] + s[:, None] * d_a) + (m_b[:3, 3] + t[:, None] * d_b))


def _flow_depth(
    recon: Reconstruction, a: int, b: int, forward: np.ndarray, backward: np.ndarray, p: DenseCfg
) -> tuple[np.ndarray, np.ndarray]:
    """Points ``(N, 3)`` triangulated at the grid pixels of keyframe ``a`` against keyframe ``b`` and
    their depths ``(N,)`` in ``a`` (m); NaN where a check fails. ``forward`` / ``backward``: the
    ``(H, W, 2)`` optical flows a -> b and b -> a at the flow's scale."""
    k = np.array(recon.intrinsics.matrix(), dtype=float) * np.array([[p.scale], [p.scale], [1.0]])
    h, w = forward.shape[:2]
    rows, cols = np.mgrid[0 : h : p.step, 0 : w : p.step]
    rows, cols = rows.ravel(), cols.ravel()
    src = np.stack([cols, rows], axis=1).astype(np.float64)
    dst = src + forward[rows, cols]
    inside = (dst[:, 0] >= 0) & (dst[:, 0] <= w - 1) & (dst[:, 1] >= 0) & (dst[:, 1] <= h - 1)
    back_at = np.clip(np.round(dst).astype(int), 0, [w - 1, h - 1])
    round_trip = np.linalg.norm(dst + backward[back_at[:, 1], back_at[:, 0]] - src, axis=1)
    xyz = midpoints(world_from_camera(recon, a), world_from_camera(recon, b), k, src, dst)
    ok = inside & (round_trip < p.max_flow_error_px) & np.isfinite(xyz).all(axis=1)
    depths, rays = [], []
    for index, uv in ((a, src), (b, dst)):
        m = world_from_camera(recon, index)
        pix, depth = project_with(m, k, xyz)
        ok &= (depth > p.min_depth_m) & (np.linalg.norm(pix - uv, axis=1) < p.max_reprojection_px)
        depths.append(depth)
        rays.append(xyz - m[:3, 3])
    cos_angle = np.sum(rays[0] * rays[1], axis=1) / np.maximum(
        np.linalg.norm(rays[0], axis=1) * np.linalg.norm(rays[1], axis=1), 1e-12
    )
    ok &= (depths[0] < p.max_depth_m) & (cos_angle < np.cos(np.radians(p.min_angle_deg)))
    xyz[~ok] = np.nan
    return xyz, np.where(ok, depths[0], np.nan)


def partners(recon: Reconstruction, keyframe: int, p: DenseCfg, count: int = 2) -> list[int]:
    """The ``count`` registered keyframes nearest in time to ``keyframe`` whose camera centre lies
    ``min_baseline_m``..``max_baseline_m`` from its own."""
    centre = world_from_camera(recon, keyframe)[:3, 3]
    near = [
        kf.index
        for kf in recon.registered
        if kf.index != keyframe
        and p.min_baseline_m <= np.linalg.norm(np.asarray(kf.position) - centre) <= p.max_baseline_m
    ]
    return sorted(near, key=lambda i: (abs(i - keyframe), i))[:count]


def dense_cloud(
    recon: Reconstruction, images: Mapping[int, np.ndarray], p: DenseCfg | None = None
) -> DenseCloud:
    """The two-partner-consistent dense points of every registered keyframe with ``(H, W, 3)`` uint8
    RGB image in ``images`` (keyed by keyframe index, working resolution).

    The keyframes are split into ``p.threads`` consecutive runs, each matched on its own thread (OpenCV
    and NumPy let go of the GIL); the flows at a run's ends are computed twice, and the points come
    back in keyframe order, so the cloud is the same on any number of threads."""
    p = p or DenseCfg()
    jobs = []
    for kf in recon.registered:
        pair = [b for b in partners(recon, kf.index, p) if b in images]
        if kf.index in images and len(pair) == 2:
            jobs.append((kf.index, pair))
    runs = [run for run in np.array_split(np.arange(len(jobs)), p.threads) if len(run)]
    with ThreadPoolExecutor(max(1, len(runs))) as pool:
        parts = list(pool.map(lambda run: _run_points(recon, images, [jobs[j] for j in run], p), runs))
    xyz = [np.zeros((0, 3)), *(x for part in parts for x in part[0])]
    rgb = [np.zeros((0, 3), np.uint8), *(c for part in parts for c in part[1])]
    owner = [np.zeros(0, int), *(k for part in parts for k in part[2])]
    return DenseCloud(np.concatenate(xyz), np.concatenate(rgb), np.concatenate(owner))


def _run_points(
    recon: Reconstruction,
    images: Mapping[int, np.ndarray],
    jobs: list[tuple[int, list[int]]],
    p: DenseCfg,
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Points, colours and owning keyframe of each ``(keyframe, its two partners)`` job, in order."""
    grays: dict[int, np.ndarray] = {}

    def gray(index: int) -> np.ndarray:
        if index not in grays:
            rgb = images[index]
            size = (max(1, round(rgb.shape[1] * p.scale)), max(1, round(rgb.shape[0] * p.scale)))
            gray_full = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
            grays[index] = cv2.resize(gray_full, size, interpolation=cv2.INTER_AREA)
        return grays[index]

    dis = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM)  # one per thread

    @functools.lru_cache(maxsize=16)  # a pair's two flows serve both its keyframes, a few apart
    def flow(a: int, b: int) -> np.ndarray:
        return dis.calc(gray(a), gray(b), None)

    xyz, rgb, owner = [], [], []
    for a, pair in jobs:
        (x1, d1), (x2, d2) = (_flow_depth(recon, a, b, flow(a, b), flow(b, a), p) for b in pair)
        with np.errstate(invalid="ignore"):
            agree = np.abs(d1 - d2) < p.agree_rel * np.fmin(d1, d2)
        small = cv2.resize(images[a], gray(a).shape[::-1], interpolation=cv2.INTER_AREA)
        colours = small[:: p.step, :: p.step].reshape(-1, 3)
        xyz.append((x1[agree] + x2[agree]) / 2)
        rgb.append(colours[agree])
        owner.append(np.full(int(agree.sum()), a))
    return xyz, rgb, owner
