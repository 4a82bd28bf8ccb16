"""Helpers on a :class:`Reconstruction` that later stages need: poses as arrays (and to and from
OpenCV's PnP convention), projecting world points into a keyframe, triangulating pixel pairs, pixel
rays, intersecting rays with the ground plane ``z = 0``, loading the sparse points, and metric
rescaling. Conventions in :mod:`urbanverse.recon.record`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from urbanverse.errors import InputError
from urbanverse.recon.record import KeyframePose, Mat4, Reconstruction
from urbanverse.records import atomic_path


def mat4_to_tuple(m: np.ndarray) -> Mat4:
    """A 4x4 array as the record's nested tuple (row-major)."""
    return tuple(tuple(float(v) for v in row) for row in np.asarray(m, dtype=float).reshape(4, 4))  # type: ignore[return-value]


def pose_angles(world_from_camera: np.ndarray) -> tuple[float, float, float]:
    """``(yaw, pitch, roll)`` in radians of an OpenCV camera in the Z-up world (see ``KeyframePose``)."""
    r = np.asarray(world_from_camera)[:3, :3]
    fwd, right = r[:, 2], r[:, 0]
    yaw = math.atan2(fwd[1], fwd[0])
    pitch = math.asin(float(np.clip(fwd[2], -1.0, 1.0)))
    roll = math.asin(float(np.clip(right[2], -1.0, 1.0)))
    return yaw, pitch, roll


def make_pose(
    index: int, frame: int, time_s: float, image: str, world_from_camera: np.ndarray | None, n_obs: int = 0
) -> KeyframePose:
    """A ``KeyframePose`` with the convenience fields filled from ``world_from_camera`` (None: no pose)."""
    if world_from_camera is None:
        return KeyframePose(index=index, frame=frame, time_s=time_s, image=image, registered=False)
    m = np.asarray(world_from_camera, dtype=float)
    yaw, pitch, roll = pose_angles(m)
    return KeyframePose(
        index=index,
        frame=frame,
        time_s=time_s,
        image=image,
        registered=True,
        world_from_camera=mat4_to_tuple(m),
        position=tuple(float(v) for v in m[:3, 3]),  # type: ignore[arg-type]
        yaw_rad=yaw,
        pitch_rad=pitch,
        roll_rad=roll,
        num_observations=n_obs,
    )


def world_from_camera(recon: Reconstruction, keyframe: int) -> np.ndarray:
    """The 4x4 ``world_from_camera`` of keyframe ``keyframe`` (``ValueError`` if it is not registered)."""
    kf = recon.keyframes[keyframe]
    if not kf.registered or kf.world_from_camera is None:
        raise ValueError(f"keyframe {keyframe} (frame {kf.frame}) has no camera pose")
    return np.array(kf.world_from_camera, dtype=float)


def plane_homography(m_a: np.ndarray, m_b: np.ndarray, k: np.ndarray) -> np.ndarray:
    """3x3 homography taking a pixel of camera ``m_a`` to the pixel of camera ``m_b`` (4x4
    world_from_camera each, intrinsics ``k``) that sees the same point of the ground plane ``z = 0``."""

    def plane_to_image(m: np.ndarray) -> np.ndarray:
        rot_t, centre = m[:3, :3].T, m[:3, 3]
        # A plane point (x, y, 0) projects to K R^T ((x, y, 0) - c) = K R^T [e1 e2 -c] (x, y, 1).
        return k @ rot_t @ np.column_stack([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], -centre])

    return plane_to_image(m_b) @ np.linalg.inv(plane_to_image(m_a))


def pose_from_opencv(rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
    """The 4x4 world_from_camera of OpenCV's camera_from_world rotation vector and translation (as
    ``cv2.solvePnP`` returns them)."""
    rot, _ = cv2.Rodrigues(np.asarray(rvec, float))
    m = np.eye(4)
    m[:3, :3] = rot.T
    m[:3, 3] = -rot.T @ np.asarray(tvec, float).reshape(3)
    return m


def opencv_from_pose(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's camera_from_world ``(rvec (3, 1), tvec (3, 1))`` of the 4x4 world_from_camera ``m`` (a
    ``cv2.solvePnP`` starting guess)."""
    rot = np.asarray(m, float)[:3, :3].T
    rvec, _ = cv2.Rodrigues(rot)
    return rvec, (-rot @ np.asarray(m, float)[:3, 3]).reshape(3, 1)


def triangulate(
    k: np.ndarray, m_a: np.ndarray, m_b: np.ndarray, uv_a: np.ndarray, uv_b: np.ndarray
) -> np.ndarray:
    """World points ``(N, 3)`` of the pixel pairs ``uv_a``, ``uv_b`` ``(N, 2)`` seen by the cameras
    ``m_a``, ``m_b`` (4x4 world_from_camera) with intrinsics ``k`` (linear, ``cv2.triangulatePoints``)."""
    proj_a, proj_b = (k @ np.linalg.inv(m)[:3] for m in (m_a, m_b))
    h = cv2.triangulatePoints(proj_a, proj_b, np.asarray(uv_a, float).T, np.asarray(uv_b, float).T)
    return (h[:3] / h[3]).T


def camera_positions(recon: Reconstruction) -> tuple[np.ndarray, np.ndarray]:
    """``(indices (K,), positions (K, 3))`` of the registered keyframes, in metres."""
    regs = recon.registered
    idx = np.array([k.index for k in regs], dtype=int)
    pos = np.array([k.position for k in regs], dtype=float).reshape(-1, 3)
    return idx, pos


def project_with(m: np.ndarray, k: np.ndarray, points_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project world points ``(N, 3)`` with the camera ``m`` (4x4 world_from_camera) and intrinsics
    ``k`` (3x3): ``(uv (N, 2), depth (N,))``, pixels and the depth along the optical axis (m). Points
    with ``depth <= 0`` are behind the camera; their ``uv`` is NaN."""
    pts = np.asarray(points_w, dtype=float).reshape(-1, 3)
    pc = (pts - m[:3, 3]) @ m[:3, :3]  # = R^T (p - t), row-wise
    depth = pc[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        uv = (pc @ np.asarray(k, dtype=float).T)[:, :2] / depth[:, None]
    uv[depth <= 0] = np.nan
    return uv, depth


def project(recon: Reconstruction, keyframe: int, points_w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project world points ``(N, 3)`` into keyframe ``keyframe`` (:func:`project_with`): pixels at the
    working resolution and depths in metres; NaN pixels behind the camera."""
    return project_with(world_from_camera(recon, keyframe), recon.intrinsics.matrix(), points_w)


def pixel_rays(recon: Reconstruction, keyframe: int, uv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """World rays through pixels ``uv (N, 2)`` of keyframe ``keyframe``: ``(origin (3,), directions (N, 3))``.

    Directions are unit vectors; the origin is the camera centre (metres).
    """
    uv = np.asarray(uv, dtype=float).reshape(-1, 2)
    m = world_from_camera(recon, keyframe)
    k = recon.intrinsics
    d_c = np.stack([(uv[:, 0] - k.cx) / k.fx, (uv[:, 1] - k.cy) / k.fy, np.ones(len(uv))], axis=1)
    d_w = d_c @ m[:3, :3].T
    return m[:3, 3].copy(), d_w / np.linalg.norm(d_w, axis=1, keepdims=True)


def cast_to_ground(m: np.ndarray, k: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Where the rays through pixels ``uv (N, 2)`` of the camera ``m`` (4x4 world_from_camera,
    intrinsics ``k``) meet the ground plane ``z = 0``: ``(N, 3)`` world points, NaN rows for rays
    that do not go down to it (at or above the horizon)."""
    uv = np.asarray(uv, dtype=float).reshape(-1, 2)
    dirs = np.c_[uv, np.ones(len(uv))] @ np.linalg.inv(np.asarray(k, dtype=float)).T @ m[:3, :3].T
    origin = m[:3, 3]
    out = np.full((len(uv), 3), np.nan)
    down = dirs[:, 2] < -1e-12
    s = -origin[2] / dirs[down, 2]
    hit = np.flatnonzero(down)[s > 0]
    out[hit] = origin + s[s > 0, None] * dirs[hit]
    out[hit, 2] = 0.0
    return out


def pixel_to_ground(
    recon: Reconstruction, keyframe: int, uv: np.ndarray, max_distance_m: float = 200.0
) -> np.ndarray:
    """Intersect the rays through pixels ``uv (N, 2)`` with the ground plane ``z = 0``.

    Returns ``(N, 3)`` world points (z = 0); rows are NaN where the ray does not go down to the ground
    (at or above the horizon) or meets it farther than ``max_distance_m`` from the camera.
    """
    m = world_from_camera(recon, keyframe)
    out = cast_to_ground(m, recon.intrinsics.matrix(), uv)
    out[np.linalg.norm(out - m[:3, 3], axis=1) > max_distance_m] = np.nan
    return out


@dataclass
class SparsePoints:
    """Sparse 3D points in the world frame (metres). See ``points.npz`` in :mod:`urbanverse.recon.record`."""

    xyz: np.ndarray  # (N, 3) float64
    rgb: np.ndarray  # (N, 3) uint8
    error_px: np.ndarray  # (N,) float32
    obs_offsets: np.ndarray  # (N + 1,) int64
    obs_keyframes: np.ndarray  # (M,) int32

    def __len__(self) -> int:
        return len(self.xyz)

    def observers(self, i: int) -> np.ndarray:
        """Keyframe indices that observe point ``i``."""
        return self.obs_keyframes[self.obs_offsets[i] : self.obs_offsets[i + 1]]

    def seen_by(self, keyframe: int) -> np.ndarray:
        """Boolean mask ``(N,)`` of the points observed by ``keyframe``."""
        owner = np.repeat(np.arange(len(self.xyz)), np.diff(self.obs_offsets))
        mask = np.zeros(len(self.xyz), bool)
        mask[owner[self.obs_keyframes == keyframe]] = True
        return mask


def drop_observers(points: SparsePoints, keyframes: set[int], min_observers: int = 2) -> SparsePoints:
    """``points`` without the observations by ``keyframes``; points left with too few observers go."""
    owner = np.repeat(np.arange(len(points.xyz)), np.diff(points.obs_offsets))
    keep_obs = ~np.isin(points.obs_keyframes, list(keyframes))
    counts = np.bincount(owner[keep_obs], minlength=len(points.xyz))
    keep_pt = counts >= min_observers
    keep_obs &= keep_pt[owner]
    return SparsePoints(
        xyz=points.xyz[keep_pt],
        rgb=points.rgb[keep_pt],
        error_px=points.error_px[keep_pt],
        obs_offsets=np.concatenate([[0], np.cumsum(counts[keep_pt])]).astype(np.int64),
        obs_keyframes=points.obs_keyframes[keep_obs],
    )


def empty_points() -> SparsePoints:
    return SparsePoints(
        xyz=np.zeros((0, 3)),
        rgb=np.zeros((0, 3), np.uint8),
        error_px=np.zeros(0, np.float32),
        obs_offsets=np.zeros(1, np.int64),
        obs_keyframes=np.zeros(0, np.int32),
    )


def save_points(points: SparsePoints, path: Path) -> None:
    """Write ``points`` to an ``.npz`` (compressed) at ``path``, atomically."""
    with atomic_path(Path(path)) as tmp:
        np.savez_compressed(
            tmp,
            xyz=points.xyz.astype(np.float64),
            rgb=points.rgb.astype(np.uint8),
            error_px=points.error_px.astype(np.float32),
            obs_offsets=points.obs_offsets.astype(np.int64),
            obs_keyframes=points.obs_keyframes.astype(np.int32),
        )


def load_points(recon: Reconstruction, work_dir: Path) -> SparsePoints:
    """The reconstruction's sparse points in its current world frame (``points_transform`` applied)."""
    if recon.points_file is None:
        return empty_points()
    path = Path(work_dir) / recon.points_file
    if not path.is_file():
        raise InputError(f"{path}: sparse points file not found")
    with np.load(path) as z:
        pts = SparsePoints(
            xyz=z["xyz"].astype(np.float64),
            rgb=z["rgb"],
            error_px=z["error_px"],
            obs_offsets=z["obs_offsets"],
            obs_keyframes=z["obs_keyframes"],
        )
    t = np.array(recon.points_transform, dtype=float)
    pts.xyz = pts.xyz @ t[:3, :3].T + t[:3, 3]
    return pts


def rescale(recon: Reconstruction, factor: float) -> Reconstruction:
    """The same reconstruction with every length multiplied by ``factor`` about the world origin.

    Camera positions, sparse points (through ``points_transform``), the ground-fit heights and residual
    scale; the ground stays ``z = 0`` and the origin stays below the first camera, so the output still
    follows the world-frame convention. Used to apply a scale cross-check (e.g. from object-size priors).
    """
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"rescale factor must be a positive finite number, got {factor}")
    kfs = []
    for kf in recon.keyframes:
        if kf.registered and kf.world_from_camera is not None:
            m = np.array(kf.world_from_camera, dtype=float)
            m[:3, 3] *= factor
            kf = dataclasses.replace(
                kf, world_from_camera=mat4_to_tuple(m), position=tuple(float(v) for v in m[:3, 3])
            )
        kfs.append(kf)
    t = np.array(recon.points_transform, dtype=float)
    t[:3, :] *= factor
    g = recon.ground
    ground = dataclasses.replace(
        g,
        residual_m=g.residual_m * factor,
        camera_height_m=g.camera_height_m * factor,
        camera_height_std_m=g.camera_height_std_m * factor,
    )
    return dataclasses.replace(
        recon,
        keyframes=tuple(kfs),
        points_transform=mat4_to_tuple(t),
        ground=ground,
        metric_scale=recon.metric_scale * factor,
        scale_history=(*recon.scale_history, float(factor)),
    )
