"""2.5D depth camera: column marching over the surface height map, pedestrians as cylinders.

For a level camera every image column is a vertical fan of rays over one horizontal ground
track. Sampling the surface height ``h_k`` at distances ``d_k = k * step`` along the track, a
pixel ray with vertical slope ``s`` (rise per metre of horizontal travel) first hits the
surface at the first ``k`` where ``(h_k - z_cam) / d_k >= s``. The running maximum of that
ratio is non-decreasing, so one ``cummax`` and one batched ``searchsorted`` give every row of
a column at once: O(W * K) gathers per image instead of O(H * W * K).
"""

from __future__ import annotations

import math

import torch

from urbanverse.sim import kernels
from urbanverse.sim.sensors.depth_camera_cfg import DepthCameraCfg
from urbanverse.sim.sensors.depth_camera_data import DepthCameraData
from urbanverse.sim.world_batch import WorldBatch

#: Height of a pedestrian cylinder (m).
PEDESTRIAN_HEIGHT = 1.7


class DepthCamera:
    """Batched depth camera; ``update`` writes ``data.depth`` for the given environments."""

    def __init__(self, cfg: DepthCameraCfg, world: WorldBatch, num_envs: int, device: str):
        self.cfg = cfg
        self.world = world
        f = 0.5 * cfg.width / math.tan(0.5 * cfg.hfov)
        cols = (torch.arange(cfg.width, device=device) + 0.5 - 0.5 * cfg.width) / f
        rows = -(torch.arange(cfg.height, device=device) + 0.5 - 0.5 * cfg.height) / f
        self.col_angle = -torch.atan(cols)  # (W,) image x to the right is body -y
        self.col_cos = torch.cos(self.col_angle)
        self.row_slope = rows[None, :] * self.col_cos[:, None]  # (W, H) rise per horizontal metre
        n = int(math.floor(cfg.max_range / cfg.step))
        self.dist = torch.arange(1, n + 1, device=device, dtype=torch.float32) * cfg.step  # (S,)
        self.data = DepthCameraData(
            depth=torch.full((num_envs, cfg.height, cfg.width), cfg.max_range, device=device)
        )

    def compute(
        self,
        scene: torch.Tensor,
        pos_w: torch.Tensor,
        yaw_w: torch.Tensor,
        ground_w: torch.Tensor,
        peds_w: torch.Tensor | None = None,
        ped_radius: float = 0.0,
    ) -> torch.Tensor:
        """Depth (K, H, W) m for robots at ``pos_w`` (K, 2), ``yaw_w`` (K,) on ground ``ground_w`` (K,) m."""
        cfg, world = self.cfg, self.world
        k = pos_w.shape[0]
        heading = torch.stack([yaw_w.cos(), yaw_w.sin()], -1)
        cam_xy = pos_w + cfg.mount_forward * heading
        cam_z = ground_w + cfg.mount_height
        if kernels.available(str(pos_w.device)):
            return self._fused(scene, cam_xy, cam_z, yaw_w, peds_w, ped_radius)
        ang = yaw_w[:, None] + self.col_angle  # (K, W)
        dirs = torch.stack([ang.cos(), ang.sin()], -1)
        pts = cam_xy[:, None, None, :] + dirs[:, :, None, :] * self.dist[:, None]  # (K, W, S, 2)
        h = world.lookup(world.surface_height, scene, pts)
        ratio = (h - cam_z[:, None, None]) / self.dist
        envelope = torch.cummax(ratio, dim=-1).values.reshape(-1, self.dist.numel())  # (K*W, S)
        slopes = self.row_slope.expand(k, -1, -1).reshape(-1, cfg.height).contiguous()  # (K*W, H)
        idx = torch.searchsorted(envelope.contiguous(), slopes)
        dist_ext = torch.cat([self.dist, self.dist.new_tensor([math.inf])])
        horiz = dist_ext[idx].view(k, cfg.width, cfg.height)  # horizontal hit distance (K, W, H)
        if peds_w is not None and peds_w.shape[1] > 0:
            horiz = torch.minimum(horiz, self._pedestrians(scene, cam_xy, cam_z, dirs, peds_w, ped_radius))
        depth = horiz * self.col_cos[None, :, None]
        return depth.clamp_(max=cfg.max_range).transpose(1, 2).contiguous()

    def _fused(self, scene, cam_xy, cam_z, yaw_w, peds_w, ped_radius) -> torch.Tensor:
        """Numba twin of the torch path below (one pass per environment, O(W * (S + H)))."""
        world = self.world
        if peds_w is None:
            peds_w = cam_xy.new_zeros(cam_xy.shape[0], 0, 2)
        depth = kernels.depth_render(
            world.numpy_views(),
            world.surface_height.view(-1).numpy(),
            scene.numpy(),
            cam_xy.contiguous().numpy(),
            cam_z.contiguous().numpy(),
            yaw_w.contiguous().numpy(),
            self.col_angle.numpy(),
            self.col_cos.numpy(),
            self.row_slope.contiguous().numpy(),
            self.dist.numpy(),
            peds_w.contiguous().numpy(),
            ped_radius,
            PEDESTRIAN_HEIGHT,
            self.cfg.max_range,
        )
        return torch.from_numpy(depth)

    def _pedestrians(self, scene, cam_xy, cam_z, dirs, peds_w, radius) -> torch.Tensor:
        """Horizontal distance (K, W, H) to the nearest pedestrian each pixel ray meets (inf: none)."""
        q = peds_w[:, None, :, :] - cam_xy[:, None, None, :]  # (K, 1, P, 2)
        t_ca = (dirs[:, :, None, :] * q).sum(-1)  # (K, W, P)
        perp2 = q.square().sum(-1) - t_ca.square()
        t = t_ca - (radius * radius - perp2).clamp_min(0.0).sqrt()
        base = self.world.lookup(self.world.ground_height, scene, peds_w)  # (K, P)
        z = cam_z[:, None, None, None] + self.row_slope[None, :, None, :] * t[..., None]  # (K, W, P, H)
        inside = (z >= base[:, None, :, None]) & (z <= base[:, None, :, None] + PEDESTRIAN_HEIGHT)
        hit = inside & ((perp2 <= radius * radius) & (t > 0))[..., None]
        return torch.where(hit, t[..., None], torch.full_like(z, math.inf)).amin(dim=2)

    def update(self, env_ids, scene, pos_w, yaw_w, ground_w, peds_w=None, ped_radius=0.0):
        """Render for ``env_ids`` (all when None); the other arguments are already indexed by them."""
        depth = self.compute(scene, pos_w, yaw_w, ground_w, peds_w, ped_radius)
        if env_ids is None:
            self.data.depth = depth
        else:
            self.data.depth[env_ids] = depth
