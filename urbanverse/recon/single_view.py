"""Single-view mode: no parallax (a static camera, a tripod pan, one still).

The camera stands at the height prior above the ground origin. Its pitch and roll come from the
vertical vanishing point (RANSAC over near-vertical line segments: building edges, poles, doors),
which gives world "up" in camera coordinates; with too few vertical lines a level-camera prior with a
configurable pitch is used. Later keyframes are related to the first by the rotation-only homography
``H = K R K^-1`` between consecutive keyframes (identity for a static camera).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

_LK = dict(winSize=(21, 21), maxLevel=3, criteria=(cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03))


@dataclass(frozen=True, kw_only=True)
class SingleViewCfg:
    """Settings of the single-view pose (:func:`single_view_poses`; the stage builds them from
    ``ReconCfg``). Angles in degrees."""

    pitch_prior_deg: float = -5.0
    """Camera pitch assumed without enough vertical lines (negative looks down): a hand-held camera's
    slight downward tilt."""
    min_vertical_lines: int = 6
    """Fewest near-vertical line segments (and inliers of their vanishing point) to measure the camera's
    tilt; fewer do not pin the vanishing point down."""
    max_line_tilt_deg: float = 25.0
    """Segments within this of the image's vertical are candidates for world verticals (poles, facade
    edges) under a moderate camera tilt."""
    max_pitch_deg: float = 70.0
    """A vertical vanishing point implying a larger pitch is rejected (the prior is used instead): no
    street camera looks that steeply."""
    max_roll_deg: float = 20.0
    """Likewise for roll: a hand-held camera is held roughly level."""
    seed: int = 0
    """Seed of the RANSAC over line pairs (reproducible tilt)."""


def line_segments(gray: np.ndarray) -> np.ndarray:
    """``(N, 4)`` line segments ``x1, y1, x2, y2`` (LSD when available, else probabilistic Hough)."""
    try:
        lsd = cv2.createLineSegmentDetector()
        lines = lsd.detect(gray)[0]
    except (cv2.error, AttributeError):
        lines = None
    if lines is None:
        edges = cv2.Canny(gray, 60, 150)
        h = gray.shape[0]
        lines = cv2.HoughLinesP(edges, 1, np.pi / 360, 40, minLineLength=int(0.05 * h), maxLineGap=3)
    return np.zeros((0, 4)) if lines is None else lines.reshape(-1, 4).astype(float)


def vertical_vanishing_point(gray: np.ndarray, p: SingleViewCfg) -> tuple[np.ndarray, int] | None:
    """Homogeneous vertical vanishing point (3,) and its inlier count, or None if unsupported."""
    seg = line_segments(gray)
    if len(seg) == 0:
        return None
    d = seg[:, 2:] - seg[:, :2]
    length = np.linalg.norm(d, axis=1)
    tilt = np.degrees(np.arctan2(np.abs(d[:, 0]), np.abs(d[:, 1])))
    keep = (length >= 0.05 * gray.shape[0]) & (tilt <= p.max_line_tilt_deg)
    seg, d, length = seg[keep], d[keep], length[keep]
    if len(seg) < p.min_vertical_lines:
        return None
    ones = np.ones((len(seg), 1))
    lines = np.cross(np.hstack([seg[:, :2], ones]), np.hstack([seg[:, 2:], ones]))
    lines /= np.linalg.norm(lines[:, :2], axis=1, keepdims=True)
    mid = 0.5 * (seg[:, :2] + seg[:, 2:])
    u = d / length[:, None]
    # Angular tolerance: a segment's direction is good to about 1.5 px over its length.
    cos_tol = np.cos(np.maximum(np.radians(0.25), np.arctan(1.5 / length)))

    def inliers(v: np.ndarray) -> np.ndarray:
        if abs(v[2]) > 1e-9:
            to_v = v[:2] / v[2] - mid
        else:
            to_v = np.broadcast_to(v[:2], mid.shape)
        to_v = to_v / (np.linalg.norm(to_v, axis=1, keepdims=True) + 1e-12)
        return np.abs((u * to_v).sum(1)) > cos_tol

    rng = np.random.default_rng(p.seed)
    best, best_score = None, 0.0
    for _ in range(300):
        i, j = rng.choice(len(seg), 2, replace=False)
        v = np.cross(lines[i], lines[j])
        if np.linalg.norm(v) < 1e-12:
            continue
        score = float(length[inliers(v)].sum())
        if score > best_score:
            best, best_score = v, score
    if best is None:
        return None
    inl = inliers(best)
    if inl.sum() < p.min_vertical_lines:
        return None
    _, _, vt = np.linalg.svd(lines[inl] * length[inl, None] ** 2)
    return vt[2], int(inl.sum())


def camera_up_from_vp(vp: np.ndarray, k: np.ndarray) -> np.ndarray:
    """World up in camera coordinates from the vertical vanishing point (up points to image top)."""
    up = np.linalg.solve(k, vp)
    up /= np.linalg.norm(up)
    return -up if up[1] > 0 else up


def camera_up_from_angles(pitch_rad: float, roll_rad: float = 0.0) -> np.ndarray:
    """World up in camera coordinates for the ``KeyframePose`` pitch and roll (radians).

    Pitch is the optical axis' elevation (``up . z = sin(pitch)``), roll the elevation of the camera's
    x axis (``up . x = sin(roll)``); up points to the image top (negative y).
    """
    x, z = math.sin(roll_rad), math.sin(pitch_rad)
    return np.array([x, -math.sqrt(max(0.0, 1.0 - x * x - z * z)), z])


def world_from_camera_up(up_c: np.ndarray, height_m: float) -> np.ndarray:
    """4x4 camera-to-world pose at ``(0, 0, height_m)`` with X the camera heading on the ground."""
    z = np.array([0.0, 0.0, 1.0])
    fwd = z - float(z @ up_c) * up_c
    if np.linalg.norm(fwd) < 1e-6:  # looking straight down: heading = image up
        fwd = np.array([0.0, -1.0, 0.0]) - float(-up_c[1]) * up_c
    fwd /= np.linalg.norm(fwd)
    left = np.cross(up_c, fwd)
    r_cw = np.stack([fwd, left, up_c], axis=1)  # world axes in camera coordinates (columns)
    m = np.eye(4)
    m[:3, :3] = r_cw.T
    m[:3, 3] = (0.0, 0.0, height_m)
    return m


def pair_flow(ga: np.ndarray, gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Corners of ``ga`` tracked into ``gb`` by pyramidal LK (forward-backward checked): ``(M,2), (M,2)``."""
    pts = cv2.goodFeaturesToTrack(ga, 400, 0.01, max(4, ga.shape[1] // 80), blockSize=7)
    if pts is None:
        return np.zeros((0, 2)), np.zeros((0, 2))
    nxt, st, _ = cv2.calcOpticalFlowPyrLK(ga, gb, pts, None, **_LK)
    back, st2, _ = cv2.calcOpticalFlowPyrLK(gb, ga, nxt, None, **_LK)
    ok = (st.ravel() > 0) & (st2.ravel() > 0) & (np.linalg.norm((back - pts)[:, 0], axis=1) < 1.0)
    return pts[ok, 0].astype(float), nxt[ok, 0].astype(float)


def median_motion(flows: list[tuple[np.ndarray, np.ndarray]]) -> list[float]:
    """Median displacement (pixels) per keyframe pair; 0 for pairs without tracks."""
    return [float(np.median(np.linalg.norm(b - a, axis=1))) if len(a) else 0.0 for a, b in flows]


def relative_rotation(a: np.ndarray, b: np.ndarray, k: np.ndarray, static_px: float) -> np.ndarray | None:
    """Rotation ``R_ba`` (camera a -> camera b) of a purely rotating camera from tracked points, or None."""
    if len(a) >= 8 and float(np.median(np.linalg.norm(b - a, axis=1))) < static_px:
        return np.eye(3)
    if len(a) < 12:
        return None
    h, mask = cv2.findHomography(a, b, cv2.RANSAC, 2.0)
    if h is None or mask.sum() < 12:
        return None
    r = np.linalg.solve(k, h @ k)
    u, _, vt = np.linalg.svd(r)
    r = u @ vt
    return r if np.linalg.det(r) > 0 else None


def single_view_poses(
    grays: list[np.ndarray],
    k: np.ndarray,
    height_m: float,
    p: SingleViewCfg,
    static_px: float,
    flows: list[tuple[np.ndarray, np.ndarray]] | None = None,
) -> tuple[list[np.ndarray | None], str, list[str]]:
    """Poses (4x4 or None) for keyframes ``grays`` (working resolution), how the tilt was found, warnings."""
    warnings: list[str] = []
    # The median over a few keyframes removes moving people and cars from the line search.
    sample = grays[:: max(1, len(grays) // 9)][:9]
    bg = np.median(np.stack(sample), axis=0).astype(np.uint8) if len(sample) > 1 else grays[0]
    found = vertical_vanishing_point(bg, p)
    up = None
    how = "level_prior"
    if found is not None:
        up = camera_up_from_vp(found[0], k)
        pitch, roll = math.degrees(math.asin(up[2])), math.degrees(math.asin(up[0]))
        if abs(pitch) <= p.max_pitch_deg and abs(roll) <= p.max_roll_deg:
            how = f"vertical_vanishing_point ({found[1]} lines)"
        else:
            warnings.append(
                f"vertical vanishing point implies pitch {pitch:.0f} deg, roll {roll:.0f} deg; ignored"
            )
            up = None
    if up is None:
        up = camera_up_from_angles(math.radians(p.pitch_prior_deg))
        warnings.append(
            f"too few vertical lines for the camera tilt; assuming pitch {p.pitch_prior_deg:g} deg, no roll"
        )
    first = world_from_camera_up(up, height_m)
    poses: list[np.ndarray | None] = [first]
    if flows is None:
        flows = [pair_flow(grays[i], grays[i + 1]) for i in range(len(grays) - 1)]
    r_cw = first[:3, :3].T
    lost = 0
    for a, b in flows:
        r_ba = relative_rotation(a, b, k, static_px) if r_cw is not None else None
        if r_ba is None:
            r_cw = None
            lost += 1
            poses.append(None)
            continue
        r_cw = r_ba @ r_cw
        m = np.eye(4)
        m[:3, :3], m[:3, 3] = r_cw.T, first[:3, 3]
        poses.append(m)
    if lost:
        warnings.append(
            f"{lost} keyframes could not be related to the first by a rotation; left unregistered"
        )
    return poses, how, warnings
