"""Planar LiDAR over compiled worlds: a range lookup table (fast) or sphere tracing (reference).

Sphere tracing marches each beam by the signed distance at its tip (at least half a cell per
iteration) until it enters an obstacle; its error is about one grid cell. The lookup table
stores, for every ``lut_resolution`` cell centre and each of ``lut_directions`` directions,
the sphere-traced range (centimetres, int16), as range_libc's LUT method; a query snaps the
beam to the nearest table direction and corrects to first order for the offset of the sensor
from the cell centre (``r = table - (p - c) . d``). A scan is then one gather per beam, so
1024 x 64 beams cost well under a millisecond instead of tens. Pedestrians (vertical
cylinders) are intersected analytically and override farther world hits. With
``LidarCfg.sees_steps`` the scan's walls are the obstacles plus the ground steps the robot cannot
climb (``world.step_edges``: the climb rule of ``sim.rules`` that also blocks the robot), through
a scan-specific sdf.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from urbanverse.sim import kernels, rules
from urbanverse.sim.sensors.lidar_cfg import LidarCfg
from urbanverse.sim.sensors.lidar_data import LidarData
from urbanverse.sim.world import CompiledWorld, save_npz, signed_distance, step_edges, world_cache_dir
from urbanverse.sim.world_batch import WorldBatch, pad_stack


def scan_occupancy(world: CompiledWorld, step_height: float | None) -> np.ndarray:
    """Cells (H, W) bool the scan sees as walls: obstacles, plus the ground steps that a robot with
    climb limit ``step_height`` m cannot climb (``rules.step_blocks``); None: obstacles only."""
    if step_height is None:
        return world.occupancy
    return world.occupancy | step_edges(world.ground_height, step_height)


def scan_sdf(world: CompiledWorld, step_height: float | None) -> np.ndarray:
    """Signed distance (H, W) m to what the scan sees (``scan_occupancy``)."""
    if step_height is None:
        return world.sdf
    return signed_distance(scan_occupancy(world, step_height), world.resolution)


def sphere_trace(
    world: WorldBatch,
    sdf: torch.Tensor,
    scene: torch.Tensor,
    origin: torch.Tensor,
    dirs: torch.Tensor,
    max_range: float,
    iterations: int,
) -> torch.Tensor:
    """Reference caster: ranges (K, B) m of beams from ``origin`` (K, 2) along unit ``dirs`` (K, B, 2),
    marching over ``sdf`` (M, H, W) m laid out like ``world.sdf``."""
    sdf = sdf.view(-1)
    min_step = 0.5 * world.resolution
    t = torch.zeros(dirs.shape[:2], device=dirs.device)
    for _ in range(iterations):
        s = sdf[world.flat_index(scene, origin[:, None, :] + t[..., None] * dirs)]
        t = torch.where(s > 0, t + s.clamp_min(min_step), t).clamp_max_(max_range)
    return t


def ray_circle_hits(
    origin: torch.Tensor, dirs: torch.Tensor, centres: torch.Tensor, radius: float
) -> torch.Tensor:
    """Distance (K, B) m along unit rays ``dirs`` (K, B, 2) from ``origin`` (K, 2) to the nearest of
    circles ``centres`` (K, P, 2); inf where a ray misses all of them (or starts inside one)."""
    q = centres - origin[:, None, :]  # (K, P, 2)
    t_ca = torch.einsum("kbd,kpd->kbp", dirs, q)
    perp2 = q.square().sum(-1)[:, None, :] - t_ca.square()
    half = (radius * radius - perp2).clamp_min(0.0).sqrt()
    t = t_ca - half
    hit = (perp2 <= radius * radius) & (t > 0)
    return torch.where(hit, t, torch.full_like(t, math.inf)).amin(dim=-1)


def lut_reference(
    world: WorldBatch, sdf: torch.Tensor, m: int, cfg: LidarCfg, chunk: int = 1 << 20
) -> np.ndarray:
    """Range table (Hl, Wl, D) int16 centimetres of scene ``m`` by torch sphere tracing over ``sdf``
    (M, H, W) (reference)."""
    cw = world.worlds[m]
    h, w = cw.shape
    hl = math.ceil(h * cw.resolution / cfg.lut_resolution)
    wl = math.ceil(w * cw.resolution / cfg.lut_resolution)
    ys, xs = torch.meshgrid(torch.arange(hl), torch.arange(wl), indexing="ij")
    centres = world.origin[m].cpu() + (torch.stack([xs, ys], -1).reshape(-1, 2) + 0.5) * cfg.lut_resolution
    ang = torch.arange(cfg.lut_directions) * (2 * math.pi / cfg.lut_directions)
    dirs = torch.stack([ang.cos(), ang.sin()], -1)
    per = max(1, chunk // cfg.lut_directions)
    out = torch.empty(centres.shape[0], cfg.lut_directions, dtype=torch.int16)
    for i in range(0, centres.shape[0], per):
        c = centres[i : i + per].to(world.device)
        scene = torch.full((c.shape[0],), m, dtype=torch.long, device=world.device)
        r = sphere_trace(
            world,
            sdf,
            scene,
            c,
            dirs.to(world.device).expand(c.shape[0], -1, -1),
            cfg.max_range,
            cfg.sphere_iterations,
        )
        out[i : i + per] = (r * 100 + 0.5).floor().to(torch.int16).cpu()
    return out.view(hl, wl, cfg.lut_directions).numpy()


class Lidar:
    """Batched planar LiDAR; ``update`` writes ``data.ranges`` for the given environments."""

    def __init__(
        self, cfg: LidarCfg, world: WorldBatch, num_envs: int, device: str, step_height: float | None = None
    ):
        """``step_height``: the robot's climb limit (m); with ``cfg.sees_steps`` taller steps are walls."""
        self.cfg = cfg
        self.world = world
        self.device = device
        self.step_height = step_height if cfg.sees_steps else None
        self._sdf: torch.Tensor | None = None
        angles = torch.tensor(cfg.beam_angles(), dtype=torch.float32, device=device)
        self.data = LidarData(
            ranges=torch.full((num_envs, cfg.num_beams), cfg.max_range, device=device), angles_b=angles
        )
        self.lut = None
        if cfg.method == "lut":
            tables = [self._table(m) for m in range(world.num_scenes)]
            if len(tables) == 1:  # no padding copy: the table is the largest array of a scene
                lut = torch.from_numpy(tables[0])[None]
            else:
                hl = max(t.shape[0] for t in tables)
                wl = max(t.shape[1] for t in tables)
                lut = torch.zeros((len(tables), hl, wl, cfg.lut_directions), dtype=torch.int16)
                for m, t in enumerate(tables):
                    lut[m, : t.shape[0], : t.shape[1]] = torch.from_numpy(t)
            self.lut = lut.to(device)
            if kernels.available(device):
                self._lut_np = self.lut.numpy()
                self._origin_np = world.origin.numpy().astype(np.float64)
                self._angles_np = angles.numpy().astype(np.float64)

    def scan_sdf(self) -> torch.Tensor:
        """Signed distance (M, H, W) m to what the scan sees, laid out like ``world.sdf``."""
        if self._sdf is None:
            if self.step_height is None:
                self._sdf = self.world.sdf
            else:
                sdfs = [scan_sdf(w, self.step_height) for w in self.world.worlds]
                self._sdf = pad_stack(sdfs, -self.world.resolution, torch.float32, self.device)
        return self._sdf

    def _table(self, m: int) -> np.ndarray:
        """Range table (Hl, Wl, D) int16 centimetres for scene ``m`` (cached on disk)."""
        cfg, cw = self.cfg, self.world.worlds[m]
        seen = "obstacles" if self.step_height is None else f"steps{self.step_height:g}r{rules.RULES_VERSION}"
        path = world_cache_dir(cw.key) / (
            f"lidar_lut_{cfg.lut_resolution:g}_{cfg.lut_directions}_{cfg.max_range:g}"
            f"_{cfg.sphere_iterations}_{seen}.npz"
        )
        if path.is_file():
            with np.load(path) as d:
                return d["lut"]
        if kernels.numba is not None:
            lut = kernels.build_range_lut(
                scan_sdf(cw, self.step_height),
                cw.origin,
                cw.resolution,
                cfg.lut_resolution,
                cfg.lut_directions,
                cfg.max_range,
            )
        else:
            lut = lut_reference(self.world, self.scan_sdf(), m, cfg)
        save_npz(path, lut=lut)
        return lut

    def _lut_ranges(self, scene: torch.Tensor, origin: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
        cfg, m_hl_wl = self.cfg, self.lut.shape
        _, hl, wl, nd = m_hl_wl
        rel = (origin - self.world.origin[scene]) / cfg.lut_resolution
        ix = rel[:, 0].floor().clamp(0, wl - 1)
        iy = rel[:, 1].floor().clamp(0, hl - 1)
        offset = (
            rel - torch.stack([ix, iy], -1) - 0.5
        ) * cfg.lut_resolution  # sensor minus cell centre (K, 2)
        k = torch.remainder((angles * (nd / (2 * math.pi)) + 0.5).floor().long(), nd)  # (K, B)
        cell = ((scene * hl + iy.long()) * wl + ix.long()) * nd
        table = self.lut.view(-1)[cell[:, None] + k].float() * 0.01
        snapped = k.float() * (2 * math.pi / nd)
        corr = offset[:, None, 0] * snapped.cos() + offset[:, None, 1] * snapped.sin()
        return table - corr

    def _fused(self, scene, pos_w, yaw_w, peds_w, ped_radius) -> torch.Tensor:
        """Numba twin of the table path with pedestrians, in one pass per environment."""
        peds = peds_w if peds_w is not None else pos_w.new_zeros(pos_w.shape[0], 0, 2)
        out = kernels.lidar_scan(
            self._lut_np,
            self._origin_np,
            self.cfg.lut_resolution,
            scene.numpy(),
            pos_w.contiguous().numpy(),
            yaw_w.contiguous().numpy(),
            self._angles_np,
            peds.contiguous().numpy(),
            ped_radius,
            self.cfg.max_range,
        )
        return torch.from_numpy(out)

    def compute(
        self,
        scene: torch.Tensor,
        pos_w: torch.Tensor,
        yaw_w: torch.Tensor,
        peds_w: torch.Tensor | None = None,
        ped_radius: float = 0.0,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Ranges (K, B) m for sensors at ``pos_w`` (K, 2), ``yaw_w`` (K,); pedestrians (K, P, 2) or None."""
        cfg = self.cfg
        if self.lut is not None and kernels.available(self.device):
            ranges = self._fused(scene, pos_w, yaw_w, peds_w, ped_radius)
            if cfg.noise_std > 0:
                noise = torch.randn(ranges.shape, generator=generator, device=ranges.device)
                ranges = (ranges + cfg.noise_std * noise).clamp_(0.0, cfg.max_range)
            return ranges
        angles = yaw_w[:, None] + self.data.angles_b  # (K, B) world beam angles
        if self.lut is not None:
            ranges = self._lut_ranges(scene, pos_w, angles)
        else:
            dirs = torch.stack([angles.cos(), angles.sin()], -1)
            ranges = sphere_trace(
                self.world, self.scan_sdf(), scene, pos_w, dirs, cfg.max_range, cfg.sphere_iterations
            )
        if peds_w is not None and peds_w.shape[1] > 0:
            dirs = torch.stack([angles.cos(), angles.sin()], -1)
            ranges = torch.minimum(ranges, ray_circle_hits(pos_w, dirs, peds_w, ped_radius))
        if cfg.noise_std > 0:
            noise = torch.randn(ranges.shape, generator=generator, device=ranges.device)
            ranges = ranges + cfg.noise_std * noise
        return ranges.clamp_(0.0, cfg.max_range)

    def update(
        self, env_ids: torch.Tensor | None, scene, pos_w, yaw_w, peds_w=None, ped_radius=0.0, generator=None
    ):
        """Scan for ``env_ids`` (all when None); the other arguments are already indexed by them."""
        ranges = self.compute(scene, pos_w, yaw_w, peds_w, ped_radius, generator)
        if env_ids is None:
            self.data.ranges = ranges
        else:
            self.data.ranges[env_ids] = ranges
