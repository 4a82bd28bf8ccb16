"""Register the keyframes a model left out by chaining along the ground plane.

Incremental SfM loses the camera where a walk turns on the spot or crosses a low-texture plaza, and
keeps the largest of its models: a tour's tail or head then has no poses. But once a model is
metric and ground-aligned, the ground itself is a known 3D structure: a pixel of a registered
keyframe below the horizon sees the point where its ray meets ``z = 0``. Corners tracked from a
registered keyframe into its unregistered neighbour (OpenCV pyramidal Lucas-Kanade, checked
forward and backward) then give 3D-2D matches, and ``cv2.solvePnPRansac`` the neighbour's pose.
Pixels that are not ground (a facade's foot, a bollard) are RANSAC outliers. The new pose is kept
when enough matches agree, the camera stays near the walking height, it moved a walking step, and
the ground of the two keyframes, warped onto each other by the two poses, lines up (tracks on a
smooth or repeating pavement can agree on a wrong step), and, where it stood still while the walk's
pace says it walked on, the rest of the view stood still too (ground seen in a narrow band ahead
cannot tell a step from a nod); then its own neighbour is tried, outward from each registered run,
until a check fails.

Why by hand: OpenCV gives the tracking and the PnP; casting pixels to a fitted ground plane and
the chaining are this project's (COLMAP registers new images only against its own triangulated
points, which these keyframes lack).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cv2
import numpy as np

from urbanverse.recon.geometry import cast_to_ground, make_pose, plane_homography, project_with
from urbanverse.recon.record import Reconstruction


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtendParams:
    """Chaining thresholds: ground seen within ``max_ground_m`` of the camera; ``min_inliers`` PnP
    inliers, at least ``min_inlier_share`` of the tracked corners; the new camera within
    ``height_tolerance`` (relative) of the prior height and at most ``max_step_m`` from the last; the
    ground of the two keyframes, warped by their poses, correlating at ``min_ground_ncc`` or more. A
    step under ``stop_share`` of the walk's pace (where that pace predicts ``min_paced_m`` or more)
    is a stop only where the view off the ground, turned by the rotation alone, correlates as well."""

    enabled: bool = True
    """On the round-trip tours it registers 1-6 more keyframes on three of five tours and the blind
    object hits rise 37 -> 43 of 123 (BENCHMARKS.md); ``--set recon.extend.enabled=false`` turns it
    off."""
    max_corners: int = 1500
    max_ground_m: float = 8.0
    max_track_error_px: float = 1.0
    reprojection_px: float = 2.0
    min_inliers: int = 60
    min_inlier_share: float = 0.4
    height_tolerance: float = 0.25
    max_step_m: float = 3.0
    min_ground_ncc: float = 0.6
    min_paced_m: float = 0.2
    stop_share: float = 0.5


def _ground_points(m: np.ndarray, k: np.ndarray, uv: np.ndarray, max_ground_m: float) -> np.ndarray:
    """Where the rays through pixels ``uv (N, 2)`` of the camera ``m`` meet the ground ``z = 0``; NaN
    rows above the horizon or farther than ``max_ground_m`` from the camera along the ground."""
    points = cast_to_ground(m, k, uv)
    points[np.linalg.norm(points[:, :2] - m[:3, 3][:2], axis=1) > max_ground_m] = np.nan
    return points


def _step(
    m_a: np.ndarray,
    predicted: np.ndarray,
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    k: np.ndarray,
    height_m: float,
    p: ExtendParams,
) -> np.ndarray | None:
    """The 4x4 world_from_camera of keyframe b from the registered keyframe a (``m_a``), or None.
    ``predicted``: b's pose if the walk kept its pace (tracks start where it would put them)."""
    h, w = gray_a.shape
    rows, cols = np.mgrid[0:h:4, 0:w:4]
    seen = np.isfinite(_ground_points(m_a, k, np.c_[cols.ravel(), rows.ravel()] + 0.5, p.max_ground_m)[:, 0])
    mask = cv2.resize(seen.reshape(rows.shape).astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST)
    corners = cv2.goodFeaturesToTrack(gray_a, p.max_corners, 0.001, 5, mask=mask)
    if corners is None:
        return None
    uv_a = corners.reshape(-1, 2)
    ground = _ground_points(m_a, k, uv_a.astype(float), p.max_ground_m)
    on_ground = np.isfinite(ground[:, 0])
    uv_a, ground = uv_a[on_ground], ground[on_ground]
    if len(uv_a) < p.min_inliers:
        return None
    # Paving and zebra stripes repeat: tracks started at a's pixels lock onto the nearest repeat when
    # the camera walked a metre or more, so they start where the walk's pace would put them. A wide
    # window and a deep pyramid cover turns.
    guess = project_with(predicted, k, ground)[0].astype(np.float32).reshape(-1, 1, 2)
    lk = {"winSize": (31, 31), "maxLevel": 5}
    uv_b, ok, _ = cv2.calcOpticalFlowPyrLK(
        gray_a, gray_b, uv_a.reshape(-1, 1, 2), guess, flags=cv2.OPTFLOW_USE_INITIAL_FLOW, **lk
    )
    back, ok_back, _ = cv2.calcOpticalFlowPyrLK(gray_b, gray_a, uv_b, None, **lk)
    good = (
        ok.ravel().astype(bool)
        & ok_back.ravel().astype(bool)
        & (np.linalg.norm(back.reshape(-1, 2) - uv_a, axis=1) < p.max_track_error_px)
    )
    if good.sum() < p.min_inliers:
        return None
    rot_p = predicted[:3, :3].T
    rvec, _ = cv2.Rodrigues(rot_p)
    tvec = (-rot_p @ predicted[:3, 3]).reshape(3, 1)
    found, rvec, tvec, inliers = cv2.solvePnPRansac(
        ground[good], uv_b.reshape(-1, 2)[good].astype(float), k, None, rvec, tvec,
        useExtrinsicGuess=True, iterationsCount=200, reprojectionError=p.reprojection_px,
        confidence=0.999, flags=cv2.SOLVEPNP_ITERATIVE,
    )  # fmt: skip
    if not found or inliers is None or len(inliers) < max(p.min_inliers, p.min_inlier_share * good.sum()):
        return None
    rot, _ = cv2.Rodrigues(rvec)
    m_b = np.eye(4)
    m_b[:3, :3] = rot.T
    m_b[:3, 3] = (-rot.T @ tvec).ravel()
    if abs(m_b[2, 3] / height_m - 1.0) > p.height_tolerance:
        return None
    step, paced = np.linalg.norm(m_b[:3, 3] - m_a[:3, 3]), np.linalg.norm(predicted[:3, 3] - m_a[:3, 3])
    if step > p.max_step_m:
        return None
    ground = mask.astype(bool)
    if not _ground_agreement(m_a, m_b, gray_a, gray_b, k, ground) >= p.min_ground_ncc:
        return None  # (NaN, too little ground seen twice, fails too)
    if paced >= p.min_paced_m and step < p.stop_share * paced:
        # Ground seen in a narrow band ahead cannot tell a step forward from a nod: on a crosswalk
        # whose stripes run along the walk, PnP kept the camera still while it walked a metre. A stop
        # holds only where the rest of the view, turned by the rotation alone, lines up too.
        if not _still_agreement(m_a, m_b, gray_a, gray_b, k, ground) >= p.min_ground_ncc:
            return None
    return m_b


def _ground_agreement(
    m_a: np.ndarray,
    m_b: np.ndarray,
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    k: np.ndarray,
    ground: np.ndarray,
) -> float:
    """Normalised cross-correlation of the fine texture of keyframe a's ground pixels (``ground (H, W)``
    bool) and keyframe b warped onto them by the ground homography of the two poses
    (:func:`_texture_agreement`).

    Tracks on a smooth or repeating pavement can all agree on a wrong step; the warp of the whole
    ground then misaligns its texture, which this measures.
    """
    return _texture_agreement(plane_homography(m_a, m_b, k), gray_a, gray_b, ground)


def _still_agreement(
    m_a: np.ndarray,
    m_b: np.ndarray,
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    k: np.ndarray,
    ground: np.ndarray,
) -> float:
    """The agreement of keyframe a's pixels off the ground (``~ground``) with keyframe b warped onto
    them by the two poses' rotation alone (the homography of the plane at infinity): high where the
    camera stood still, low where it walked (facades and posts shift with parallax)."""
    h_ab = k @ m_b[:3, :3].T @ m_a[:3, :3] @ np.linalg.inv(k)
    return _texture_agreement(h_ab, gray_a, gray_b, ~ground)


def _texture_agreement(h_ab: np.ndarray, gray_a: np.ndarray, gray_b: np.ndarray, use: np.ndarray) -> float:
    """Normalised cross-correlation of the fine texture (minus a 5 px blur) of keyframe a's pixels
    ``use (H, W)`` and keyframe b warped onto them by the homography ``h_ab`` (a's pixels to b's);
    NaN (no evidence) where b sees under 1000 of them."""
    h, w = gray_a.shape
    warped = cv2.warpPerspective(gray_b, h_ab, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    inside = cv2.warpPerspective(
        np.ones_like(gray_b), h_ab, (w, h), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
    ).astype(bool)
    use = use & inside
    if use.sum() < 1000:
        return float("nan")
    fine_a = gray_a.astype(float) - cv2.GaussianBlur(gray_a.astype(float), (0, 0), 5)
    fine_b = warped.astype(float) - cv2.GaussianBlur(warped.astype(float), (0, 0), 5)
    a, b = fine_a[use], fine_b[use]
    return float(a @ b / max(np.sqrt((a @ a) * (b @ b)), 1e-9))


def _predict(keyframes, a: int, b: int, direction: int) -> np.ndarray:
    """b's pose if the camera kept a's orientation and the pace between a and its registered
    neighbour before it (a's own position where there is none)."""
    m_a = np.array(keyframes[a].world_from_camera, dtype=float)
    before = a - direction
    out = m_a.copy()
    if 0 <= before < len(keyframes) and keyframes[before].registered:
        c_before = np.asarray(keyframes[before].position)
        dt = keyframes[a].time_s - keyframes[before].time_s
        if abs(dt) > 1e-6:
            out[:3, 3] += (m_a[:3, 3] - c_before) / dt * (keyframes[b].time_s - keyframes[a].time_s)
    return out


def extend_by_ground(
    recon: Reconstruction, image_dir: Path, p: ExtendParams | None = None
) -> tuple[Reconstruction, list[int]]:
    """``recon`` with its unregistered keyframes chained from their registered neighbours (module
    docstring), and the indices newly registered. Keyframe images are read from ``image_dir``."""
    p = p or ExtendParams()
    keyframes = list(recon.keyframes)
    if not p.enabled or not any(kf.registered for kf in keyframes) or all(kf.registered for kf in keyframes):
        return recon, []
    k = recon.intrinsics.matrix()
    height = recon.ground.camera_height_m
    grays: dict[int, np.ndarray] = {}

    def gray(i: int) -> np.ndarray:
        if i not in grays:
            grays[i] = cv2.imread(str(image_dir / keyframes[i].image), cv2.IMREAD_GRAYSCALE)
        return grays[i]

    added: list[int] = []
    for direction in (1, -1):
        order = range(len(keyframes)) if direction == 1 else range(len(keyframes) - 1, -1, -1)
        for b in order:
            a = b - direction
            if keyframes[b].registered or not 0 <= a < len(keyframes) or not keyframes[a].registered:
                continue
            m_a = np.array(keyframes[a].world_from_camera, dtype=float)
            m_b = _step(m_a, _predict(keyframes, a, b, direction), gray(a), gray(b), k, height, p)
            if m_b is None:
                continue
            kf = keyframes[b]
            keyframes[b] = make_pose(kf.index, kf.frame, kf.time_s, kf.image, m_b)
            added.append(b)
    return dataclasses.replace(recon, keyframes=tuple(keyframes)), sorted(added)
