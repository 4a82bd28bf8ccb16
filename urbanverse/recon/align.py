"""Metric, ground-aligned world frame from an up-to-similarity reconstruction.

1. Up prior: the mean of the cameras' "up" axes (minus their y axes, OpenCV) with the component along
   the main travel direction removed (a walking camera moves roughly parallel to the ground, so this
   also cancels a systematic downward pitch).
2. Ground: RANSAC plane on the sparse points below the mean camera, normals within ``max_tilt_deg`` of
   the up prior, inlier band a fraction of the hypothesised camera height (so the test is scale-free),
   refined by least squares on the inliers, then refitted on the inliers along the camera path only
   (the surface walked on: a sidewalk, not the sidewalk and the road 15 cm below it).
3. Scale: the cameras' mean height above the plane (trimmed: the 20 % farthest from the median are left
   out, so one stray pose does not move it) becomes the camera-height prior. Without enough
   ground points the up prior is the normal and the scale comes from a walking-speed prior (video) or,
   failing that, a unit baseline (warned).
4. Frame: Z = plane normal, origin = ground point below the first camera, X = principal direction of
   travel on the ground (towards the last camera), or the first camera's heading when it did not travel.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from urbanverse.recon.record import GroundPlaneFit


@dataclass(frozen=True, kw_only=True)
class AlignCfg:
    """Ground-fit and scale settings of :func:`align_to_ground` (the stage builds them from
    ``ReconCfg``). Lengths in metres, fractions of the camera height where said."""

    camera_height_m: float = 1.6
    """Camera height above the ground (m): the cameras' mean height above the fitted plane is scaled to it."""
    walking_speed_mps: float = 1.3
    """Mean camera speed (m/s) that sets the scale of a video without a ground plane: a walking pace."""
    max_tilt_deg: float = 25.0
    """Ground normals farther than this (degrees) from the up prior are rejected (facades, slopes)."""
    inlier_frac: float = 0.03
    """Ground inlier band as a fraction of the hypothesised camera height, so the test is scale-free."""
    min_ground_inliers: int = 12
    """Fewest inlier points for a ground plane (and for its refit along the path); fewer leave the up
    prior and the walking speed to set the frame and scale."""
    path_band_frac: float = 1.0
    """The refit keeps inliers within this many camera heights of the camera path (seen from above):
    the surface walked on, not the road beside it 15 cm lower."""
    ransac_iters: int = 400
    """RANSAC plane hypotheses (three points each): plenty for the share of ground among the points
    below the cameras."""
    seed: int = 0
    """Seed of the RANSAC sampling (reproducible planes)."""


@dataclass
class Alignment:
    """``transform`` (4x4) maps old coordinates to world: ``p_w = scale * R @ (p - origin)``."""

    transform: np.ndarray
    rotation: np.ndarray
    scale: float
    ground: GroundPlaneFit
    scale_source: str
    warnings: list[str] = field(default_factory=list)

    def apply_points(self, pts: np.ndarray) -> np.ndarray:
        """``(N, 3)`` old-frame points into the world."""
        return np.asarray(pts, float).reshape(-1, 3) @ self.transform[:3, :3].T + self.transform[:3, 3]

    def apply_pose(self, wfc: np.ndarray) -> np.ndarray:
        """A 4x4 camera-to-old-frame pose into camera-to-world (rotation stays orthonormal)."""
        out = np.eye(4)
        out[:3, :3] = self.rotation @ wfc[:3, :3]
        out[:3, 3] = self.apply_points(wfc[:3, 3][None])[0]
        return out


def robust_mean(x: np.ndarray, trim: float = 0.2) -> float:
    """Mean of ``x`` without the ``trim`` fraction of values farthest from the median."""
    x = np.asarray(x, float)
    keep = max(1, int(np.ceil(len(x) * (1 - trim))))
    order = np.argsort(np.abs(x - np.median(x)))
    return float(x[order[:keep]].mean())


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def travel_direction(centres: np.ndarray) -> tuple[np.ndarray, float]:
    """Principal direction of the camera path (unit, towards the last camera) and its extent."""
    if len(centres) < 2:
        return np.zeros(3), 0.0
    c = centres - centres.mean(axis=0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    d = vt[0]
    if float(np.dot(centres[-1] - centres[0], d)) < 0:
        d = -d
    proj = c @ d
    return d, float(proj.max() - proj.min())


def up_prior(rotations: np.ndarray, centres: np.ndarray, points: np.ndarray) -> np.ndarray:
    """World-up estimate in the reconstruction frame from camera orientations and the travel direction."""
    up = _unit(-rotations[:, :, 1].mean(axis=0))
    d, extent = travel_direction(centres)
    scene = float(np.median(np.linalg.norm(points - centres.mean(0), axis=1))) if len(points) else 0.0
    if extent > 0 and extent > 0.05 * max(scene, 1e-9) and abs(float(up @ d)) < 0.7:
        up = _unit(up - float(up @ d) * d)
    return up


def _fit_plane(pts: np.ndarray, up: np.ndarray) -> tuple[np.ndarray, float]:
    c = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - c, full_matrices=False)
    n = vt[2]
    if n @ up < 0:
        n = -n
    return n, -float(n @ c)


def fit_ground(
    points: np.ndarray, centres: np.ndarray, up: np.ndarray, p: AlignCfg
) -> tuple[np.ndarray, float, np.ndarray, int] | None:
    """RANSAC ground plane ``n . x + d = 0`` (n towards the cameras) on points below the cameras.

    Returns ``(n, d, inlier_mask over candidates, num_candidates)`` or None when there is no plane with
    ``min_ground_inliers`` inliers.
    """
    if len(points) < 3:
        return None
    rel = points - centres.mean(axis=0)
    below = rel @ up < 0
    dist = np.linalg.norm(rel, axis=1)
    near = dist <= np.quantile(dist, 0.95)
    cand = points[below & near]
    if len(cand) < max(3, p.min_ground_inliers):
        return None
    rng = np.random.default_rng(p.seed)
    cos_max = math.cos(math.radians(p.max_tilt_deg))
    best: tuple[int, np.ndarray, float] | None = None
    for _ in range(p.ransac_iters):
        a, b, c = cand[rng.choice(len(cand), 3, replace=False)]
        n = np.cross(b - a, c - a)
        norm = np.linalg.norm(n)
        if norm < 1e-12:
            continue
        n = n / norm
        if n @ up < 0:
            n = -n
        if n @ up < cos_max:
            continue
        d = -float(n @ a)
        h = float(np.median(centres @ n + d))
        if h <= 0:
            continue
        count = int((np.abs(cand @ n + d) < p.inlier_frac * h).sum())
        if best is None or count > best[0]:
            best = (count, n, d)
    if best is None or best[0] < p.min_ground_inliers:
        return None
    _, n, d = best
    inl = np.zeros(len(cand), bool)
    for _ in range(3):  # least-squares refinement on the inliers
        h = float(np.median(centres @ n + d))
        inl = np.abs(cand @ n + d) < p.inlier_frac * max(h, 1e-12)
        if inl.sum() < 3:
            return None
        n_new, d_new = _fit_plane(cand[inl], up)
        if n_new @ up < cos_max:
            break
        n, d = n_new, d_new
    h = float(np.median(centres @ n + d))
    inl = np.abs(cand @ n + d) < p.inlier_frac * max(h, 1e-12)
    if inl.sum() < p.min_ground_inliers or h <= 0:
        return None
    return n, d, inl, len(cand)


def _path_distance(xy: np.ndarray, path: np.ndarray) -> np.ndarray:
    """Distance of 2D points ``(N, 2)`` to the polyline ``(K, 2)`` (a single point when K == 1)."""
    if len(path) == 1:
        return np.linalg.norm(xy - path[0], axis=1)
    a, b = path[:-1], path[1:]
    ab = b - a
    t = ((xy[:, None, :] - a[None]) * ab[None]).sum(-1) / np.maximum((ab * ab).sum(-1), 1e-12)[None]
    closest = a[None] + np.clip(t, 0, 1)[..., None] * ab[None]
    return np.linalg.norm(xy[:, None, :] - closest, axis=-1).min(axis=1)


def walked_surface(
    points: np.ndarray, centres: np.ndarray, n: np.ndarray, d: float, p: AlignCfg
) -> tuple[np.ndarray, float, int] | None:
    """Refit the plane on the ground points along the camera's own path (within ``path_band_frac`` x
    camera height of the path's footprint): the surface walked on. A plane through the whole street
    also takes in the road 15 cm below a sidewalk, tilting it sideways by a few degrees. Returns
    ``(n, d, num_points)`` or None when too few points lie along the path."""
    h = float(np.median(centres @ n + d))
    if h <= 0:
        return None
    e1 = np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    plane2d = np.stack([e1, e2], axis=1)
    near = _path_distance(points @ plane2d, centres @ plane2d) < p.path_band_frac * h
    on = np.abs(points @ n + d) < p.inlier_frac * h
    sel = near & on
    for _ in range(2):
        if sel.sum() < p.min_ground_inliers:
            return None
        n_new, d_new = _fit_plane(points[sel], n)
        if n_new @ n < math.cos(math.radians(p.max_tilt_deg)):
            return None
        n, d = n_new, d_new
        h = float(np.median(centres @ n + d))
        sel = near & (np.abs(points @ n + d) < p.inlier_frac * h)
    return n, d, int(sel.sum())


def align_to_ground(wfc: np.ndarray, points: np.ndarray, times_s: np.ndarray, p: AlignCfg) -> Alignment:
    """Compute the world frame for registered camera poses ``wfc (K, 4, 4)`` and points ``(N, 3)``.

    ``times_s (K,)`` are the keyframe times (for the walking-speed fallback; all zero for stills).
    """
    rot, centres = wfc[:, :3, :3], wfc[:, :3, 3]
    points = np.asarray(points, float).reshape(-1, 3)
    warnings: list[str] = []
    up = up_prior(rot, centres, points)
    fit = fit_ground(points, centres, up, p)
    if fit is not None:
        n, d, inl, n_cand = fit
        walked = walked_surface(points, centres, n, d, p)
        if walked is not None:
            n, d, n_walked = walked
            inl = np.ones(n_walked, bool)
        heights = centres @ n + d
        scale = p.camera_height_m / robust_mean(heights)
        residual = float(np.median(np.abs(_inlier_distances(points, centres, up, n, d, p)))) * scale
        method, source, n_inl = "ransac", "ground_plane", int(inl.sum())
    else:
        n, n_cand, n_inl, residual = up, 0, 0, 0.0
        method = "up_prior"
        steps = np.linalg.norm(np.diff(centres, axis=0), axis=1).sum() if len(centres) > 1 else 0.0
        span_t = float(times_s.max() - times_s.min()) if len(times_s) else 0.0
        if steps > 0 and span_t > 0:
            scale = p.walking_speed_mps * span_t / float(steps)
            source = "walking_speed_prior"
            warnings.append(
                "no ground plane found in the sparse points; "
                f"scale from a {p.walking_speed_mps:g} m/s walking prior"
            )
        else:
            base = float(np.linalg.norm(centres[-1] - centres[0])) if len(centres) > 1 else 0.0
            scale = 1.0 / base if base > 0 else 1.0
            source = "unit_baseline"
            warnings.append(
                "no ground plane and no timing: metric scale unknown (first-to-last baseline = 1 m)"
            )
        d = p.camera_height_m / scale - float((centres @ n).mean())
        heights = centres @ n + d
    # Frame axes.
    z = _unit(n)
    dvec, extent = travel_direction(centres)
    x = dvec - float(dvec @ z) * z
    if extent * scale < 0.25 or np.linalg.norm(x) < 0.3:
        x = rot[0][:, 2] - float(rot[0][:, 2] @ z) * z  # first camera's heading
        if np.linalg.norm(x) < 1e-6:  # looking straight down/up: use its up-image direction
            x = -rot[0][:, 1] - float(-rot[0][:, 1] @ z) * z
    x = _unit(x)
    y = np.cross(z, x)
    r = np.stack([x, y, z])
    origin = centres[0] - float(centres[0] @ z + d) * z
    t = np.eye(4)
    t[:3, :3] = scale * r
    t[:3, 3] = -scale * r @ origin
    ground = GroundPlaneFit(
        method=method,  # type: ignore[arg-type]
        num_candidates=int(n_cand),
        num_inliers=int(n_inl),
        residual_m=float(residual),
        tilt_to_up_deg=float(math.degrees(math.acos(float(np.clip(z @ up, -1, 1))))),
        camera_height_m=float((heights * scale).mean()),
        camera_height_std_m=float((heights * scale).std()),
    )
    return Alignment(
        transform=t, rotation=r, scale=scale, ground=ground, scale_source=source, warnings=warnings
    )


def _inlier_distances(
    points: np.ndarray, centres: np.ndarray, up: np.ndarray, n: np.ndarray, d: float, p: AlignCfg
) -> np.ndarray:
    """Signed distances of the ground inliers (points below the cameras within the inlier band)."""
    rel = points - centres.mean(axis=0)
    dist = points @ n + d
    h = float(np.median(centres @ n + d))
    mask = (rel @ up < 0) & (np.abs(dist) < p.inlier_frac * h)
    return dist[mask] if mask.any() else np.zeros(1)


def level_between(first: Alignment, second: Alignment, centres: np.ndarray, p: AlignCfg) -> Alignment:
    """``first`` with its ground moved halfway to ``second``'s level along its own normal, and the scale
    remeasured from the cameras ``centres (K, 3)`` (old frame) above it: two estimates of the walked
    ground (sparse points, plane sweep) averaged."""
    z, d_first = first.rotation[2], _plane_offset(first)
    gap = float(np.mean(centres @ second.rotation[2] + _plane_offset(second) - (centres @ z + d_first)))
    d = d_first + 0.5 * gap
    heights = centres @ z + d
    scale = p.camera_height_m / robust_mean(heights)
    foot = centres[0] - float(centres[0] @ z + d) * z
    t = np.eye(4)
    t[:3, :3] = scale * first.rotation
    t[:3, 3] = -scale * first.rotation @ foot
    ground = dataclasses.replace(
        first.ground,
        camera_height_m=float((heights * scale).mean()),
        camera_height_std_m=float((heights * scale).std()),
    )
    return Alignment(
        transform=t, rotation=first.rotation, scale=scale, ground=ground, scale_source=first.scale_source,
        warnings=list(first.warnings),
    )  # fmt: skip


def _plane_offset(a: Alignment) -> float:
    """``d`` of the ground plane ``n . x + d = 0`` (old frame, ``n`` the aligned frame's up) that the
    alignment ``a`` maps onto z = 0: read off its transform (the old-frame point it sends to the
    origin lies on the plane)."""
    origin = np.linalg.solve(a.transform[:3, :3], -a.transform[:3, 3])
    return -float(a.rotation[2] @ origin)
