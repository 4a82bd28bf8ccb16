"""Single-view camera calibration from upright objects of known height (people, cars), and re-posing.

For a static camera (single-view mode) the pitch and height are otherwise priors. Standing people give
both: a person's feet are on the ground, their head ``H`` metres above it, and how the image height of
people changes with their image position fixes the horizon and the camera height (Hoiem et al.,
"Putting objects in perspective", 2006). Here the exact pinhole model is fitted, not the small-pitch
approximation, so steep surveillance views (``vtest.avi``) work too: parameters ``(pitch, height)``,
the feet's pixel row is cast to the ground, the head is placed ``H`` above it and projected, and the
squared difference to the observed head row is minimised with a robust (soft-L1) loss.

Detections come from the orchestration (this stage has none): call :func:`calibrate_from_upright`
with the boxes' bottom and top rows, then :func:`repose_single_view`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from urbanverse.recon.geometry import make_pose
from urbanverse.recon.record import Reconstruction
from urbanverse.recon.single_view import camera_up_from_angles, world_from_camera_up
from urbanverse.video.record import CameraIntrinsics


@dataclass
class UprightFit:
    """Result of :func:`calibrate_from_upright`: camera pitch and roll (rad, ``KeyframePose``
    convention; negative pitch looks down), height (m), focal length (px, working resolution; the
    input's unless a vanishing point was given), horizon row (px), objects used, median absolute
    head-row residual (px)."""

    pitch_rad: float
    roll_rad: float
    camera_height_m: float
    focal_px: float
    horizon_v: float
    num_objects: int
    residual_px: float


def _predict_top(
    up: np.ndarray, cam_h: float, u: np.ndarray, vb: np.ndarray, h: np.ndarray, k: np.ndarray
) -> np.ndarray:
    """Head rows predicted for feet at pixels ``(u, vb)`` of objects ``h`` metres tall, for a camera
    ``cam_h`` above the ground whose world-up in camera coordinates is ``up``."""
    m = world_from_camera_up(up, cam_h)
    r, c = m[:3, :3], m[:3, 3]
    rays = np.stack([(u - k[0, 2]) / k[0, 0], (vb - k[1, 2]) / k[1, 1], np.ones_like(u)], axis=1) @ r.T
    down = np.minimum(rays[:, 2], -1e-6)
    feet = c + rays * (-c[2] / down)[:, None]
    heads = feet + np.outer(h, [0.0, 0.0, 1.0])
    pc = (heads - c) @ r
    return k[1, 1] * pc[:, 1] / np.maximum(pc[:, 2], 1e-6) + k[1, 2]


def _k(f: float, intr: CameraIntrinsics) -> np.ndarray:
    return np.array([[f, 0.0, intr.cx], [0.0, f, intr.cy], [0.0, 0.0, 1.0]])


def up_from_vp(vp: np.ndarray, f: float, intr: CameraIntrinsics) -> np.ndarray:
    """World up in camera coordinates from a homogeneous vertical vanishing point and a focal ``f``."""
    d = np.linalg.solve(_k(f, intr), np.asarray(vp, float))
    d /= np.linalg.norm(d)
    return -d if d[1] > 0 else d


def calibrate_from_upright(
    bottom_uv: np.ndarray,
    top_v: np.ndarray,
    heights_m: np.ndarray | float,
    intr: CameraIntrinsics,
    vertical_vp: np.ndarray | None = None,
    pitch0_rad: float = math.radians(-10.0),
    height0_m: float = 1.6,
) -> UprightFit | None:
    """Fit the camera's pitch and height (and, with ``vertical_vp``, its focal length) to upright objects.

    ``bottom_uv (N, 2)``: the ground-contact pixel of each object (bottom centre of its box);
    ``top_v (N,)``: the row of its top; ``heights_m``: its true height (one value or ``(N,)``, e.g. 1.7
    for people). Without ``vertical_vp`` the focal length of ``intr`` is trusted and (pitch, height)
    are fitted. With the vertical vanishing point (homogeneous (3,), e.g. from
    :func:`urbanverse.recon.single_view.vertical_vanishing_point`) the tilt follows from the focal
    length, so (focal, height) are fitted instead: people fix the horizon, the vanishing point the
    tilt, and together they fix the focal length (the field-of-view prior can be far off for
    surveillance or zoomed footage). Needs ``N >= 3`` objects spread over the image rows; returns None
    otherwise or when the fit fails.
    """
    from scipy.optimize import least_squares

    bottom_uv = np.asarray(bottom_uv, float).reshape(-1, 2)
    top_v = np.asarray(top_v, float).reshape(-1)
    h = np.broadcast_to(np.asarray(heights_m, float), top_v.shape).astype(float)
    ok = (bottom_uv[:, 1] - top_v > 2.0) & (h > 0)
    u, vb, vt, h = bottom_uv[ok, 0], bottom_uv[ok, 1], top_v[ok], h[ok]
    if len(vb) < 3 or np.ptp(vb) < 0.05 * intr.height:
        return None
    # Small-pitch closed form for the start: (vb - vt) / H = (vb - v0) / y_c, linear in vb.
    a, c = np.polyfit(vb, (vb - vt) / h, 1)
    pitch0, h0 = pitch0_rad, height0_m
    if a > 1e-9:
        pitch0 = math.atan2(-c / a - intr.cy, intr.fy)
        h0 = float(np.clip(1.0 / a, 0.3, 50.0))
    if vertical_vp is None:
        k = intr.matrix()

        def residual(x: np.ndarray) -> np.ndarray:
            return _predict_top(camera_up_from_angles(x[0]), x[1], u, vb, h, k) - vt

        x0 = np.array([np.clip(pitch0, -1.4, 0.5), h0])
        bounds = ([math.radians(-85.0), 0.2], [math.radians(30.0), 100.0])
    else:

        def residual(x: np.ndarray) -> np.ndarray:
            f = math.exp(x[0])
            return _predict_top(up_from_vp(vertical_vp, f, intr), x[1], u, vb, h, _k(f, intr)) - vt

        x0 = np.array([math.log(intr.fx), h0])
        bounds = ([math.log(0.2 * intr.width), 0.2], [math.log(20.0 * intr.width), 100.0])
    res = least_squares(residual, x0, bounds=bounds, loss="soft_l1", f_scale=3.0)
    if not res.success:
        return None
    if vertical_vp is None:
        f, pitch, roll = intr.fx, float(res.x[0]), 0.0
    else:
        f = math.exp(float(res.x[0]))
        up = up_from_vp(vertical_vp, f, intr)
        pitch, roll = math.asin(float(up[2])), math.asin(float(up[0]))
    return UprightFit(
        pitch_rad=pitch,
        roll_rad=roll,
        camera_height_m=float(res.x[1]),
        focal_px=f,
        horizon_v=intr.cy + f * math.tan(pitch),
        num_objects=len(vb),
        residual_px=float(np.median(np.abs(res.fun))),
    )


def repose_single_view(
    recon: Reconstruction,
    pitch_rad: float,
    camera_height_m: float,
    roll_rad: float | None = None,
    focal_px: float | None = None,
) -> Reconstruction:
    """A single-view reconstruction with the first camera's pitch (and roll), height and optionally
    focal length (square pixels) replaced, e.g. from :func:`calibrate_from_upright`.

    Relative rotations between keyframes (a panning camera) are kept; the heading stays +X. ``roll_rad``
    None keeps the current roll.
    """
    if recon.mode != "single_view":
        raise ValueError(f"repose_single_view needs a single-view reconstruction, got mode {recon.mode!r}")
    first = next((k for k in recon.keyframes if k.registered), None)
    if first is None:
        raise ValueError("reconstruction has no registered keyframe")
    r0_old = np.array(first.world_from_camera)[:3, :3]
    roll = first.roll_rad if roll_rad is None else roll_rad
    new0 = world_from_camera_up(camera_up_from_angles(pitch_rad, roll), camera_height_m)
    kfs = []
    for kf in recon.keyframes:
        if not kf.registered:
            kfs.append(kf)
            continue
        m = np.eye(4)
        m[:3, :3] = new0[:3, :3] @ r0_old.T @ np.array(kf.world_from_camera)[:3, :3]
        m[:3, 3] = new0[:3, 3]
        kfs.append(make_pose(kf.index, kf.frame, kf.time_s, kf.image, m, kf.num_observations))
    ground = dataclasses.replace(recon.ground, camera_height_m=camera_height_m)
    intr = recon.intrinsics
    if focal_px is not None:
        intr = dataclasses.replace(intr, fx=float(focal_px), fy=float(focal_px), source="refined")
    return dataclasses.replace(
        recon,
        intrinsics=intr,
        keyframes=tuple(kfs),
        ground=ground,
        camera_height_prior_m=camera_height_m,
        warnings=(
            *recon.warnings,
            f"re-posed: pitch {math.degrees(pitch_rad):.1f} deg, height {camera_height_m:.2f} m",
        ),
    )
