"""Pixels below the horizon that are not ground: facades, walls, hedges, parked cars.

The ground stage casts every pixel below the horizon onto the ground plane, so a facade's pixels
would land behind the facade, in the building's lot, and be classified as road or sidewalk. Two
geometric cues find them; neither needs a trained model:

- **plane + parallax**: a partner keyframe is warped onto this one by the homography that the
  ground plane induces between the two poses. A ground pixel then stays put; a pixel above the plane
  moves, the more the higher it is. The motion left is measured with dense optical flow (OpenCV DIS)
  after a robust homography fitted to it absorbs pose error. Pixels are judged against the previous
  and the next registered keyframe, and the smaller residual counts, so ground hidden from one
  partner (by a hedge, a passing car) is judged by the other.
- **free space**: sparse SfM points higher than ``min_height_m`` are obstacles; ground farther from
  the camera than the nearest obstacle in its direction is hidden behind that obstacle.

Why by hand: OpenCV gives the flow, the warps and the robust homography; the plane-induced
homography from two poses and the bearing profile of obstacles are a few lines that no library
we use offers.
"""

from __future__ import annotations

import cv2
import numpy as np
import scipy.ndimage

from urbanverse.recon.geometry import plane_homography, world_from_camera
from urbanverse.recon.record import Reconstruction


def ground_homography(recon: Reconstruction, a: int, b: int) -> np.ndarray:
    """3x3 homography taking a pixel of keyframe ``a`` to the pixel of keyframe ``b`` that sees the same
    point of the ground plane ``z = 0`` (working-resolution pixels)."""
    k = np.asarray(recon.intrinsics.matrix(), dtype=float)
    return plane_homography(world_from_camera(recon, a), world_from_camera(recon, b), k)


def parallax_residual(
    recon: Reconstruction,
    a: int,
    b: int,
    image_a: np.ndarray,
    image_b: np.ndarray,
    uv: np.ndarray,
    scale: float = 0.5,
) -> np.ndarray:
    """Motion (px at working resolution) of pixels ``uv (N, 2)`` of keyframe ``a`` off the ground plane,
    seen from keyframe ``b``; images are ``(H, W, 3)`` uint8. NaN where ``b`` does not see the pixel's
    ground point (no evidence). Flow runs at ``scale`` x the working resolution."""
    if len(uv) == 0:
        return np.zeros(0)
    h, w = image_a.shape[:2]
    s = np.diag([scale, scale, 1.0])
    h_ab = s @ ground_homography(recon, a, b) @ np.linalg.inv(s)
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    gray_a = cv2.resize(cv2.cvtColor(image_a, cv2.COLOR_RGB2GRAY), size, interpolation=cv2.INTER_AREA)
    gray_b = cv2.resize(cv2.cvtColor(image_b, cv2.COLOR_RGB2GRAY), size, interpolation=cv2.INTER_AREA)
    # warped(p) = b(H p): ground pixels of b land where a sees them.
    warped = cv2.warpPerspective(gray_b, h_ab, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    flow = cv2.DISOpticalFlow_create(cv2.DISOPTICAL_FLOW_PRESET_MEDIUM).calc(gray_a, warped, None)
    src = (np.asarray(uv, np.float64) * scale).astype(np.float32)
    col = np.clip(src[:, 0].astype(int), 0, size[0] - 1)
    row = np.clip(src[:, 1].astype(int), 0, size[1] - 1)
    dst = src + flow[row, col]
    target = cv2.perspectiveTransform(src[None], h_ab)[0]
    seen = (
        (target[:, 0] >= 1)
        & (target[:, 0] < size[0] - 1)
        & (target[:, 1] >= 1)
        & (target[:, 1] < size[1] - 1)
    )
    residual = np.full(len(src), np.nan)
    if seen.sum() < 8:
        return residual
    # Pose error leaves a smooth homography-shaped motion on the ground; fitting one absorbs it.
    fix, _ = cv2.findHomography(src[seen], dst[seen], cv2.RANSAC, 1.0)
    if fix is None:
        return residual
    residual[seen] = np.linalg.norm(cv2.perspectiveTransform(src[seen][None], fix)[0] - dst[seen], axis=1)
    return residual / scale


def hidden_by_obstacles(
    obstacles_xy: np.ndarray,
    camera_xy: np.ndarray,
    ground_xy: np.ndarray,
    bin_deg: float = 0.5,
    spread_deg: float = 1.0,
    gap_deg: float = 8.0,
    gap_rel: float = 0.25,
    margin_m: float = 0.5,
) -> np.ndarray:
    """Which ground points ``(N, 2)`` lie behind an obstacle ``(M, 2)`` seen from ``camera_xy`` (m).

    The obstacles become a range profile over bearing (``bin_deg`` bins): the nearest obstacle range
    per bin. Sparse points leave holes in a facade: gaps up to ``gap_deg`` between bins whose ranges
    agree within ``gap_rel`` are interpolated (a tree and the facade behind it are not joined), and
    the profile is eroded by ``spread_deg`` either side. A ground point is hidden when it is farther
    than the profile plus ``margin_m``.
    """
    if len(obstacles_xy) == 0 or len(ground_xy) == 0:
        return np.zeros(len(ground_xy), bool)
    nbins = int(round(360.0 / bin_deg))

    def polar(xy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = xy - camera_xy
        bearing = np.degrees(np.arctan2(d[:, 1], d[:, 0])) + 180.0
        return np.floor(bearing / bin_deg).astype(int) % nbins, np.hypot(d[:, 0], d[:, 1])

    ob_bin, ob_range = polar(obstacles_xy)
    profile = np.full(nbins, np.inf)
    np.minimum.at(profile, ob_bin, ob_range)
    have = np.flatnonzero(np.isfinite(profile))
    for lo, hi in zip(have, have[1:], strict=False):
        close = abs(profile[lo] - profile[hi]) <= gap_rel * min(profile[lo], profile[hi])
        if 1 < hi - lo <= gap_deg / bin_deg and close:
            profile[lo + 1 : hi] = np.interp(np.arange(lo + 1, hi), [lo, hi], [profile[lo], profile[hi]])
    profile = scipy.ndimage.minimum_filter1d(profile, 2 * round(spread_deg / bin_deg) + 1, mode="wrap")
    g_bin, g_range = polar(ground_xy)
    return g_range > profile[g_bin] + margin_m
