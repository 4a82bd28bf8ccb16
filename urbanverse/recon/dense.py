"""Ground points by a plane sweep between posed keyframes, for the ground that sparse SIFT misses.

SIFT finds few stable features on asphalt, cobbles and paving (repetitive or low-contrast texture),
so a reconstruction can have no sparse point on the ground at all: the Leuven street pair's 212 SfM
points all lie on facades, and its scale was then unknown. The ground is still seen: warped by the
homography of the right plane, one keyframe's ground matches the other's. This module sweeps planes
normal to the up direction over a range of heights, scores each by the local normalised
cross-correlation of the warped images below the horizon (summed over keyframe pairs), and returns
the pixels that match at the best height as points on that plane. Written here because OpenCV and
COLMAP offer dense stereo only for rectified pairs or full multi-view stereo (CUDA), not this
one-parameter sweep.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import cv2
import numpy as np


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepCfg:
    """Plane-sweep settings of :func:`sweep_ground`; heights are relative to the mean baseline of the
    pairs (so the sweep is scale-free)."""

    width_px: int = 480
    """Images are downscaled to this width (px) first: the ground's texture survives, the cost drops."""
    min_height: float = 0.05
    """Nearest plane swept: this many mean baselines below the cameras' mean height."""
    max_height: float = 50.0
    """Farthest plane swept, in mean baselines below the cameras: the range covers any walking
    camera, whatever the reconstruction's arbitrary scale."""
    steps: int = 80
    """Heights swept, log-spaced; the best is refined with ``refine_steps`` between its neighbours."""
    refine_steps: int = 11
    """Heights tried between the best height's two neighbours (linearly spaced)."""
    window_px: int = 9
    """Side of the square window of the normalised cross-correlation (px)."""
    min_texture: float = 4.0
    """Pixels with a grey-level standard deviation under this in their window are not scored: blank
    pixels correlate at any height."""
    min_score: float = 0.25
    """The best plane's mean correlation must reach this..."""
    min_contrast: float = 0.1
    """...and exceed the median over all heights by this; else no plane is found."""
    match_ncc: float = 0.6
    """Pixels correlating this well at the best plane become ground points."""
    max_points: int = 3000
    """At most this many ground points are returned (a fixed-seed sample): enough for a plane fit,
    few enough not to outweigh the sparse points."""


def spread_pairs(keyframes: list[int], max_pairs: int = 6) -> list[tuple[int, int]]:
    """Up to ``max_pairs`` pairs of consecutive ``keyframes``, spread evenly over the sequence."""
    pairs = list(zip(keyframes, keyframes[1:], strict=False))
    if len(pairs) > max_pairs:
        pairs = [pairs[int(j)] for j in np.linspace(0, len(pairs) - 1, max_pairs).round()]
    return pairs


def sweep_ground(
    pairs: list[tuple[int, int]],
    grays: dict[int, np.ndarray],
    world_from_camera: dict[int, np.ndarray],
    k: np.ndarray,
    up: np.ndarray,
    p: SweepCfg | None = None,
) -> np.ndarray:
    """Ground points ``(N, 3)`` (reconstruction frame) on the best plane ``up . x = offset``; empty
    when no height stands out.

    ``grays``: keyframe index -> grey image (all one size, ``k`` its 3x3 intrinsics);
    ``world_from_camera``: keyframe index -> 4x4 pose (OpenCV camera axes); ``up``: unit vector.
    """
    p = p or SweepCfg()
    if not pairs:
        return np.zeros((0, 3))
    scale = min(1.0, p.width_px / next(iter(grays.values())).shape[1])
    small = {
        i: cv2.resize(g, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) for i, g in grays.items()
    }
    ks = np.diag([scale, scale, 1.0]) @ k
    up = up / np.linalg.norm(up)
    centres = np.array([world_from_camera[i][:3, 3] for pair in pairs for i in pair])
    baseline = float(np.mean([np.linalg.norm(world_from_camera[a][:3, 3] - world_from_camera[b][:3, 3])
                              for a, b in pairs]))  # fmt: skip
    top = float(np.mean(centres @ up))
    heights = baseline * np.geomspace(p.min_height, p.max_height, p.steps)

    refs = {a: _reference(small[a], world_from_camera[a][:3, :3], ks, up, p) for a, _ in pairs}

    def score(h: float) -> float:
        ncc = [_pair_ncc(refs[a], a, b, top - h, small, world_from_camera, ks, up, p)[0] for a, b in pairs]
        return float(np.mean(ncc))

    scores = np.array([score(h) for h in heights])
    best = int(np.nanargmax(scores)) if np.isfinite(scores).any() else -1
    if best < 0 or scores[best] < p.min_score or scores[best] - np.nanmedian(scores) < p.min_contrast:
        return np.zeros((0, 3))
    # The peak is a step or two wide: refine between the neighbouring heights.
    fine = np.linspace(heights[max(best - 1, 0)], heights[min(best + 1, p.steps - 1)], p.refine_steps)
    fine = np.append(fine, heights[best])
    height = float(fine[np.nanargmax([score(h) for h in fine])])
    offset = top - height
    points = []
    for a, b in pairs:
        _, ncc = _pair_ncc(refs[a], a, b, offset, small, world_from_camera, ks, up, p)
        vs, us = np.nonzero(ncc >= p.match_ncc)
        points.append(_on_plane(np.stack([us, vs], axis=1), world_from_camera[a], ks, up, offset))
    xyz = np.concatenate(points)
    if len(xyz) > p.max_points:
        xyz = xyz[np.random.default_rng(0).choice(len(xyz), p.max_points, replace=False)]
    return xyz


class _Reference(NamedTuple):
    """What a pair's NCC needs of its reference keyframe ``a``, whatever the plane's height: the image
    and its local means and variances, and its pixels below the horizon (normal to ``up``)."""

    image: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    below: np.ndarray


def _reference(
    image: np.ndarray, rotation: np.ndarray, k: np.ndarray, up: np.ndarray, p: SweepCfg
) -> _Reference:
    img = image.astype(np.float32)
    win = (p.window_px, p.window_px)
    mean = cv2.blur(img, win)
    rows, cols = img.shape
    vs, us = np.mgrid[0:rows, 0:cols]
    rays = np.stack([us, vs, np.ones_like(us)], axis=-1) @ np.linalg.inv(k).T
    below = rays @ (rotation.T @ up) < 0  # the ray goes down: it meets any plane below the camera
    return _Reference(img, mean, cv2.blur(img * img, win) - mean**2, below)


def _pair_ncc(
    ref: _Reference,
    a: int,
    b: int,
    offset: float,
    small: dict[int, np.ndarray],
    wfc: dict[int, np.ndarray],
    k: np.ndarray,
    up: np.ndarray,
    p: SweepCfg,
) -> tuple[float, np.ndarray]:
    """Mean local NCC of keyframe ``a`` (``ref``) against ``b`` warped by the plane ``up . x = offset``
    below both cameras, over ``a``'s textured pixels below the horizon that land inside ``b``; and the
    NCC image (NaN where not scored)."""
    ra, ca = wfc[a][:3, :3], wfc[a][:3, 3]
    rb, cb = wfc[b][:3, :3], wfc[b][:3, 3]
    normal = ra.T @ up  # plane in camera a: normal . x = offset - up . ca (negative below the camera)
    depth = offset - float(up @ ca)
    h_ab = k @ (rb.T @ ra + np.outer(rb.T @ (ca - cb), normal) / depth) @ np.linalg.inv(k)
    rows, cols = ref.image.shape
    warped = cv2.warpPerspective(small[b].astype(np.float32), h_ab, (cols, rows),
                                 flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderValue=-1.0)  # fmt: skip
    inside = cv2.warpPerspective(np.ones_like(ref.image), h_ab, (cols, rows),
                                 flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP) > 0  # fmt: skip
    win = (p.window_px, p.window_px)
    mean_b = cv2.blur(warped, win)
    var_b = cv2.blur(warped * warped, win) - mean_b**2
    cov = cv2.blur(ref.image * warped, win) - ref.mean * mean_b
    scored = ref.below & inside & (ref.var > p.min_texture**2) & (var_b > p.min_texture**2)
    ncc = np.full(ref.image.shape, np.nan, np.float32)
    ncc[scored] = cov[scored] / np.sqrt(ref.var[scored] * var_b[scored])
    return (float(np.mean(ncc[scored])) if scored.sum() > 100 else float("nan")), ncc


def _on_plane(uv: np.ndarray, wfc: np.ndarray, k: np.ndarray, up: np.ndarray, offset: float) -> np.ndarray:
    """World points ``(N, 3)`` where the rays of pixels ``uv (N, 2)`` meet the plane ``up . x = offset``."""
    rays = (np.c_[uv, np.ones(len(uv))] @ np.linalg.inv(k).T) @ wfc[:3, :3].T
    centre = wfc[:3, 3]
    s = (offset - float(up @ centre)) / (rays @ up)
    return centre + s[:, None] * rays
