"""A tiny deterministic synthetic street for the video and camera-stage tests.

A textured ground plane (z = 0) between two textured facades (y = +-half_width, up to ``wall_h``) and
an end wall, ray-cast per pixel with numpy, seen by a camera walking along +X at ``height`` with a
little sway, bob and yaw. The world frame is the one the reconstruction stage must output (Z up,
ground z = 0, X along travel, origin below the first camera), so recovered poses compare directly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from urbanverse.recon.geometry import make_pose
from urbanverse.recon.record import GroundPlaneFit, Reconstruction
from urbanverse.video.record import CameraIntrinsics


@dataclass(frozen=True)
class Street:
    width: int = 320
    height_px: int = 240
    hfov_deg: float = 65.0
    half_width: float = 4.0
    wall_h: float = 8.0
    end_x: float = 40.0
    camera_height: float = 1.6
    speed: float = 1.2
    seed: int = 0

    @property
    def k(self) -> np.ndarray:
        f = 0.5 * self.width / math.tan(math.radians(self.hfov_deg) / 2)
        return np.array([[f, 0, self.width / 2], [0, f, self.height_px / 2], [0, 0, 1.0]])


def _texture(
    rng: np.random.Generator, size: int, base: tuple[int, int, int], windows: bool = False
) -> np.ndarray:
    """A blotchy multi-scale texture with sharp blobs (plenty of corners for SIFT and LK).

    ``windows``: dark window rectangles in rows (on a facade their sides are vertical and horizontal).
    """
    tex = np.zeros((size, size, 3), np.float32)
    for scale, amp in ((64, 60), (16, 40), (4, 30)):
        noise = rng.random((size // scale + 2, size // scale + 2, 3)).astype(np.float32)
        tex += amp * cv2.resize(noise, (size, size), interpolation=cv2.INTER_CUBIC)
    tex += np.array(base, np.float32) - tex.mean(axis=(0, 1))
    for _ in range(size * size // 900):
        c = tuple(int(v) for v in rng.integers(0, size, 2))
        col = tuple(float(v) for v in rng.integers(0, 255, 3))
        if rng.random() < 0.5:
            cv2.circle(tex, c, int(rng.integers(2, 9)), col, -1)
        else:
            cv2.rectangle(tex, c, (c[0] + int(rng.integers(3, 14)), c[1] + int(rng.integers(3, 14))), col, -1)
    if windows:
        for x0 in range(16, size - 48, 96):
            for y0 in range(24, size - 72, 128):
                shade = float(rng.integers(20, 70))
                cv2.rectangle(tex, (x0, y0), (x0 + 48, y0 + 72), (shade, shade, shade + 10), -1)
    return np.clip(tex, 0, 255).astype(np.uint8)


class StreetRenderer:
    """Ray-casts the street; ``texels_per_m`` texture pixels per metre on every surface."""

    def __init__(self, street: Street, texels_per_m: float = 48.0) -> None:
        self.s = street
        rng = np.random.default_rng(street.seed)
        self.tex = {
            "ground": _texture(rng, 512, (110, 110, 105)),
            "left": _texture(rng, 512, (90, 120, 170), windows=True),
            "right": _texture(rng, 512, (160, 140, 110), windows=True),
            "end": _texture(rng, 512, (120, 160, 120)),
        }
        self.tpm = texels_per_m
        v, u = np.mgrid[0 : street.height_px, 0 : street.width].astype(np.float64)
        self.rays_c = np.stack([u + 0.5, v + 0.5, np.ones_like(u)], -1) @ np.linalg.inv(street.k).T

    def surfaces(self, world_from_camera: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(H, W)`` int, the surface each pixel sees (0 ground, 1 left wall, 2 right wall, 3 end wall,
        -1 sky), and ``(H, W)`` float, the height of the point it sees (m)."""
        which, p, sky = self._cast(world_from_camera)
        return np.where(sky, -1, which), p[..., 2]

    def _cast(self, world_from_camera: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self.s
        r, c = world_from_camera[:3, :3], world_from_camera[:3, 3]
        d = self.rays_c @ r.T  # (H, W, 3) world directions
        with np.errstate(divide="ignore", invalid="ignore"):
            t_ground = np.where(d[..., 2] < 0, -c[2] / d[..., 2], np.inf)
            t_left = np.where(d[..., 1] > 0, (s.half_width - c[1]) / d[..., 1], np.inf)
            t_right = np.where(d[..., 1] < 0, (-s.half_width - c[1]) / d[..., 1], np.inf)
            t_end = np.where(d[..., 0] > 0, (s.end_x - c[0]) / d[..., 0], np.inf)
        t_all = np.stack([t_ground, t_left, t_right, t_end])
        which = np.argmin(t_all, axis=0)
        t = np.min(t_all, axis=0)
        p = c + d * t[..., None]
        sky = ~np.isfinite(t) | (p[..., 2] > s.wall_h)
        return which, p, sky

    def render(self, world_from_camera: np.ndarray) -> np.ndarray:
        s = self.s
        which, p, sky = self._cast(world_from_camera)
        out = np.zeros((s.height_px, s.width, 3), np.uint8)
        out[:] = (235, 206, 180)  # sky (BGR)
        coords = {
            0: (p[..., 0], p[..., 1]),
            1: (p[..., 0], p[..., 2]),
            2: (p[..., 0], p[..., 2]),
            3: (p[..., 1], p[..., 2]),
        }
        for idx, name in enumerate(("ground", "left", "right", "end")):
            mask = (which == idx) & ~sky
            if not mask.any():
                continue
            a, b = coords[idx]
            mx = (a * self.tpm).astype(np.float32)
            my = (b * self.tpm).astype(np.float32)
            img = cv2.remap(self.tex[name], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
            out[mask] = img[mask]
        return out


def camera_path(street: Street, times: np.ndarray) -> np.ndarray:
    """``(T, 4, 4)`` world_from_camera (OpenCV axes) of the walking camera at ``times`` (s)."""
    out = []
    for t in times:
        x = street.speed * t
        y = 0.25 * math.sin(2 * math.pi * t / 3.0)
        z = street.camera_height + 0.03 * math.sin(2 * math.pi * t * 1.8)
        yaw = math.radians(6.0) * math.sin(2 * math.pi * t / 4.0)
        pitch = math.radians(-6.0)
        fwd = np.array([math.cos(yaw) * math.cos(pitch), math.sin(yaw) * math.cos(pitch), math.sin(pitch)])
        right = np.array([math.sin(yaw), -math.cos(yaw), 0.0])
        down = np.cross(fwd, right)
        m = np.eye(4)
        m[:3, :3] = np.stack([right, down, fwd], axis=1)
        m[:3, 3] = (x, y, z)
        out.append(m)
    return np.stack(out)


def write_video(path: Path, street: Street, seconds: float, fps: float = 10.0) -> np.ndarray:
    """Render and write an mp4v video; returns the true per-frame poses ``(T, 4, 4)``."""
    times = np.arange(int(round(seconds * fps))) / fps
    poses = camera_path(street, times)
    r = StreetRenderer(street)
    writer = cv2.VideoWriter(
        str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (street.width, street.height_px)
    )
    assert writer.isOpened()
    for m in poses:
        writer.write(r.render(m))
    writer.release()
    return poses


def similarity_align(src: np.ndarray, dst: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Umeyama: ``(s, R, t)`` minimising ``|| s R src + t - dst ||`` over ``(N, 3)`` point pairs."""
    mu_s, mu_d = src.mean(0), dst.mean(0)
    a, b = src - mu_s, dst - mu_d
    u, sig, vt = np.linalg.svd(b.T @ a / len(src))
    e = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        e[2, 2] = -1
    r = u @ e @ vt
    s = float(np.trace(np.diag(sig) @ e) / (a**2).sum(1).mean())
    return s, r, mu_d - s * r @ mu_s


def street_reconstruction(street: Street, poses: np.ndarray) -> Reconstruction:
    """A metric, ground-aligned reconstruction holding the true ``poses (T, 4, 4)``, keyframe i at
    frame i and 0.5 i seconds."""
    k = street.k
    intr = CameraIntrinsics(
        width=street.width, height=street.height_px, fx=k[0, 0], fy=k[1, 1], cx=k[0, 2], cy=k[1, 2]
    )
    return Reconstruction(
        mode="sfm",
        intrinsics=intr,
        keyframes=tuple(make_pose(i, i, 0.5 * i, f"{i}.jpg", m) for i, m in enumerate(poses)),
        ground=GroundPlaneFit(method="camera_prior", camera_height_m=street.camera_height),
        scale_source="ground_plane",
        metric_scale=1.0,
        camera_height_prior_m=street.camera_height,
    )
