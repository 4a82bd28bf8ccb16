"""RGB camera: each environment's view of its scene, from the batched column renderer or MuJoCo.

``RgbCameraCfg.renderer`` picks the renderer (see ``RgbCameraCfg``): the column renderer
(``column_camera.ColumnRenderer``) draws every environment in one multi-threaded call and also
gives depth and semantic ids; the MuJoCo rasterizer (one per scene, built once: about a second and a
few tens of MB per street) draws one view after another in the thread that built it. Both see more
than the LiDAR and the 2.5D depth camera: colours, ground types, overhanging crowns and lamp heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from urbanverse.render.raster import Capsule, PinholeCamera
from urbanverse.render.scene_model import build_rasterizer
from urbanverse.scene.record import load_scene
from urbanverse.sim.sensors.column_camera import ColumnRenderer
from urbanverse.sim.sensors.depth_camera import PEDESTRIAN_HEIGHT
from urbanverse.sim.sensors.rgb_camera_cfg import RgbAugmentCfg, RgbCameraCfg
from urbanverse.sim.sensors.rgb_camera_data import RgbCameraData
from urbanverse.sim.world_batch import WorldBatch

#: Display RGBA clothing colours that pedestrians cycle through.
PEDESTRIAN_COLOURS = (
    (0.05, 0.07, 0.2, 1.0),
    (0.5, 0.08, 0.06, 1.0),
    (0.12, 0.3, 0.12, 1.0),
    (0.6, 0.5, 0.3, 1.0),
    (0.04, 0.04, 0.04, 1.0),
)


def camera_poses(cfg: RgbCameraCfg, pos_w: np.ndarray, yaw_w: np.ndarray, ground_w: np.ndarray) -> np.ndarray:
    """``world_from_camera`` (K, 4, 4), OpenCV axes, for robots at ``pos_w`` (K, 2) m, ``yaw_w`` (K,)
    rad on ground heights ``ground_w`` (K,) m."""
    c, s = np.cos(yaw_w), np.sin(yaw_w)
    cp, sp = np.cos(cfg.pitch), np.sin(cfg.pitch)
    forward = np.stack([cp * c, cp * s, np.full_like(c, -sp)], -1)
    right = np.stack([s, -c, np.zeros_like(c)], -1)
    down = np.cross(forward, right)
    pose = np.zeros((len(yaw_w), 4, 4))
    pose[:, :3, 0], pose[:, :3, 1], pose[:, :3, 2] = right, down, forward
    pose[:, 0, 3] = pos_w[:, 0] + cfg.mount_forward * c
    pose[:, 1, 3] = pos_w[:, 1] + cfg.mount_forward * s
    pose[:, 2, 3] = ground_w + cfg.mount_height
    pose[:, 3, 3] = 1.0
    return pose


def augment(rgb: torch.Tensor, cfg: RgbAugmentCfg, generator: torch.Generator | None) -> torch.Tensor:
    """``rgb`` (K, H, W, 3) uint8 with ``cfg``'s random gain, contrast, white balance, noise and blur."""
    k = rgb.shape[0]

    def uniform(spread: float, *shape: int) -> torch.Tensor:
        u = torch.rand(k, *shape, generator=generator, device=rgb.device)
        return 1.0 + spread * (2.0 * u - 1.0)

    x = rgb.float()
    if cfg.contrast:
        mean = x.mean(dim=(1, 2, 3), keepdim=True)
        x = mean + (x - mean) * uniform(cfg.contrast, 1, 1, 1)
    if cfg.brightness or cfg.colour:
        x = x * uniform(cfg.brightness, 1, 1, 1) * uniform(cfg.colour, 1, 1, 3)
    if cfg.blur:
        chosen = torch.rand(k, generator=generator, device=rgb.device) < cfg.blur
        if bool(chosen.any()):
            img = x[chosen].permute(0, 3, 1, 2)
            blurred = torch.nn.functional.avg_pool2d(img, 3, stride=1, padding=1, count_include_pad=False)
            x[chosen] = blurred.permute(0, 2, 3, 1)
    if cfg.noise_std:
        x = x + cfg.noise_std * torch.randn(x.shape, generator=generator, device=rgb.device)
    return x.round_().clamp_(0, 255).to(torch.uint8)


class RgbCamera:
    """Batched RGB camera; ``update`` writes ``data`` (colour, and with the column renderer depth and
    semantic ids) for the given environments."""

    def __init__(
        self,
        cfg: RgbCameraCfg,
        world: WorldBatch,
        scene_dirs: Sequence[Path | str],
        num_envs: int,
        device: str,
        max_pedestrians: int = 0,
    ):
        """``scene_dirs``: the folders ``world`` was compiled from, in its scene order."""
        self.cfg = cfg
        self.world = world
        self.device = device
        size = (num_envs, cfg.height, cfg.width)
        self.data = RgbCameraData(rgb=torch.zeros((*size, 3), dtype=torch.uint8, device=device))
        if cfg.renderer == "columns":
            self.columns = ColumnRenderer(cfg, world, scene_dirs)
            self.data.depth = torch.full(size, cfg.max_range, device=device)
            self.data.semantic = torch.zeros(size, dtype=torch.uint8, device=device)
        else:
            self.camera = PinholeCamera.from_hfov(cfg.width, cfg.height, float(np.degrees(cfg.hfov)))
            self.rasterizers = [
                build_rasterizer(
                    load_scene(Path(d)), Path(d), cfg.width, cfg.height, cfg.shadows, max_pedestrians
                )
                for d in scene_dirs
            ]

    def compute(
        self,
        scene: torch.Tensor,
        pos_w: torch.Tensor,
        yaw_w: torch.Tensor,
        ground_w: torch.Tensor,
        peds_w: torch.Tensor | None = None,
        ped_radius: float = 0.0,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """Colour (K, H, W, 3) uint8, depth (K, H, W) m and semantic ids (K, H, W) uint8 (None from
        MuJoCo) for robots at ``pos_w`` (K, 2) m, ``yaw_w`` (K,) rad on ground ``ground_w`` (K,) m;
        pedestrians ``peds_w`` (K, P, 2) m or None."""
        yaw = yaw_w.detach().cpu().double().numpy()
        poses = camera_poses(
            self.cfg, pos_w.detach().cpu().double().numpy(), yaw, ground_w.detach().cpu().double().numpy()
        )
        if peds_w is None:
            peds_w = pos_w.new_zeros(pos_w.shape[0], 0, 2)
        base = self.world.lookup(self.world.ground_height, scene, peds_w).detach().cpu().numpy()
        xy = peds_w.detach().cpu().numpy()
        if self.cfg.renderer == "columns":
            rgb, depth, semantic = self.columns.render(
                scene.detach().cpu().numpy(),
                poses[:, :3, 3],
                yaw,
                xy,
                base,
                ped_radius,
                PEDESTRIAN_HEIGHT,
                np.asarray(PEDESTRIAN_COLOURS)[:, :3],
            )
            return tuple(torch.from_numpy(a).to(self.device) for a in (rgb, depth, semantic))
        out = np.empty((len(poses), self.cfg.height, self.cfg.width, 3), np.uint8)
        for k, m in enumerate(scene.tolist()):
            people = [
                Capsule(
                    (float(xy[k, p, 0]), float(xy[k, p, 1]), float(base[k, p])),
                    ped_radius,
                    PEDESTRIAN_HEIGHT,
                    PEDESTRIAN_COLOURS[p % len(PEDESTRIAN_COLOURS)],
                )
                for p in range(xy.shape[1])
            ]
            out[k] = self.rasterizers[m].render(self.camera, poses[k], ids=False, capsules=people).rgb
        return torch.from_numpy(out).to(self.device), None, None

    def update(
        self, env_ids, scene, pos_w, yaw_w, ground_w, peds_w=None, ped_radius=0.0, generator=None
    ) -> None:
        """Render for ``env_ids`` (all when None); the other arguments are already indexed by them.
        ``generator`` draws the augmentations (``RgbCameraCfg.augment``)."""
        images = self.compute(scene, pos_w, yaw_w, ground_w, peds_w, ped_radius)
        if self.cfg.augment.active:
            images = (augment(images[0], self.cfg.augment, generator), *images[1:])
        for name, image in zip(("rgb", "depth", "semantic"), images, strict=True):
            if image is None:
                continue
            if env_ids is None:
                setattr(self.data, name, image)
            else:
                getattr(self.data, name)[env_ids] = image

    def close(self) -> None:
        """Free the MuJoCo rasterizers' OpenGL buffers (the column renderer holds plain arrays)."""
        for r in getattr(self, "rasterizers", ()):
            r.close()
