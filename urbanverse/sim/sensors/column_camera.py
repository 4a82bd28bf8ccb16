"""The batched column renderer behind ``RgbCamera`` (``RgbCameraCfg.renderer = "columns"``).

Holds every scene's appearance grid (``urbanverse.sim.appearance``) padded to one shape, the level
virtual camera that the kernel marches (``urbanverse.sim.camera_kernels.render_columns``) and the
map from it to the real, pitched camera; renders colour, depth and semantic ids of all requested
environments in one multi-threaded call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from urbanverse.render.raster import HEADLIGHT, Lighting
from urbanverse.render.scene_model import scene_lighting, semantic_id
from urbanverse.scene.record import load_scene
from urbanverse.sim import camera_kernels
from urbanverse.sim.appearance import NONE_ABOVE, NONE_BELOW, AppearanceGrid, coarsen, compile_appearance
from urbanverse.sim.sensors.rgb_camera_cfg import RgbCameraCfg
from urbanverse.sim.world_batch import WorldBatch

#: Cells of the fine grid per side of a coarse cell: samples farther apart than a coarse cell
#: read the coarse level.
COARSE = 4
#: Nearest distance marched (m): closer surfaces are inside the robot's own footprint.
MIN_RANGE = 0.1
#: March samples per pixel footprint: the step at distance d is d / focal / this (at least a cell).
SAMPLES_PER_PIXEL = 1.25


def _blocked(arrays: Sequence[np.ndarray], shape: tuple[int, int], fill, dtype) -> np.ndarray:
    """``arrays`` (H_i, W_i, ...) padded with ``fill`` to ``shape`` (multiples of ``BLOCK``), stacked
    and stored block by block (the kernel's cell order, ``camera_kernels.render_columns``), flat."""
    b = camera_kernels.BLOCK
    bh, bw = shape[0] // b, shape[1] // b
    tail = arrays[0].shape[2:]
    out = np.full((len(arrays), *shape, *tail), fill, dtype=dtype)
    for i, a in enumerate(arrays):
        out[i, : a.shape[0], : a.shape[1]] = a
    out = out.reshape(len(arrays), bh, b, bw, b, *tail).swapaxes(2, 3)
    return np.ascontiguousarray(out).reshape(-1, *tail)


#: Headlight factor (cosine between the view and the face) baked into top faces and undersides,
#: and into sides: the shading a typical pixel gets (MuJoCo's headlight varies it per pixel).
HEAD_TOP, HEAD_SIDE = 0.35, 0.8


def _lit(
    texel: np.ndarray, tint: np.ndarray, sun: np.ndarray | float, head: float, light: Lighting
) -> np.ndarray:
    """Display colours (..., 3) uint8 of faces with texture colour ``texel`` and material ``tint``
    (8-bit) under ``light``, with sun factor ``sun`` (..., the Lambert cosine) and headlight factor
    ``head``: OpenGL's fixed-function lighting, which clamps the lit material colour before it
    modulates the texture, as MuJoCo draws."""
    sun = np.asarray(sun, np.float64)[..., None]
    lamp = np.asarray(light.ambient_color) + np.asarray(light.sun_color) * sun + HEADLIGHT * head
    lit = np.minimum(1.0, tint / 255.0 * lamp)
    return np.clip(texel * lit + 0.5, 0, 255).astype(np.uint8)


def lit_colours(grid: AppearanceGrid, light: Lighting) -> dict[str, np.ndarray]:
    """The colours the camera paints from ``grid`` under ``light``: top faces (with each cell's sun
    term), sides (lit by the sun through the cell's side normal; an average over directions where it
    has none) and undersides (no sun) of both layers, (H, W, 3) uint8 each."""
    d = np.asarray(light.sun_direction, np.float64)
    d /= np.linalg.norm(d)

    def side_sun(normal: np.ndarray) -> np.ndarray:
        has = np.abs(normal).sum(-1) > 0
        facing = np.clip(-(normal[..., 0] * d[0] + normal[..., 1] * d[1]), 0.0, 1.0)
        return np.where(has, facing, np.hypot(d[0], d[1]) / np.pi)

    return {
        "base_top": _lit(grid.base_texel, grid.base_tint, grid.base_sun, HEAD_TOP, light),
        "base_side": _lit(grid.base_texel, grid.base_side_tint, side_sun(grid.base_normal), HEAD_SIDE, light),
        "over_top": _lit(grid.over_texel, grid.over_tint, max(0.0, -d[2]), HEAD_TOP, light),
        "over_side": _lit(grid.over_texel, grid.over_side_tint, side_sun(grid.over_normal), HEAD_SIDE, light),
        "over_bottom": _lit(grid.over_texel, grid.over_tint, 0.0, HEAD_TOP, light),
    }


def _level_layers(
    grids: Sequence[AppearanceGrid], lights: Sequence[Lighting], grid_shape: tuple[int, int]
) -> tuple[tuple, tuple]:
    """The kernel's layer tuple of ``grids`` (one per scene, each at most ``grid_shape``, lit by
    ``lights``) and its blocks per scene (bh, bw)."""
    b = camera_kernels.BLOCK
    shape = (-(-grid_shape[0] // b) * b, -(-grid_shape[1] // b) * b)
    k = camera_kernels
    lit = [lit_colours(g, light) for g, light in zip(grids, lights, strict=True)]
    base_top = _blocked([g.base_top for g in grids], shape, NONE_BELOW, np.float32)
    records = np.zeros((len(base_top), k.RECORD // 4), np.float32)
    records[:, 0] = base_top
    records[:, 1] = _blocked([g.over_bottom for g in grids], shape, NONE_ABOVE, np.float32)
    records[:, 2] = _blocked([g.over_top for g in grids], shape, NONE_BELOW, np.float32)
    looks = records.view(np.uint8)
    for name, at in (
        ("base_top", k.BASE_TOP),
        ("base_side", k.BASE_SIDE),
        ("over_top", k.OVER_TOP),
        ("over_side", k.OVER_SIDE),
        ("over_bottom", k.OVER_BOTTOM),
    ):
        looks[:, at : at + 3] = _blocked([c[name] for c in lit], shape, 0, np.uint8)
    looks[:, k.BASE_CLASS] = _blocked([g.base_class for g in grids], shape, 0, np.uint8)
    looks[:, k.OVER_CLASS] = _blocked([g.over_class for g in grids], shape, 0, np.uint8)
    block_max = records[:, [0, 2]].max(1).reshape(-1, b * b).max(1)
    layers = (records, looks, block_max)
    return layers, (shape[0] // b, shape[1] // b)


def virtual_camera(cfg: RgbCameraCfg) -> dict[str, np.ndarray | float]:
    """The level camera whose image, resampled through ``pixel_map``, is the pitched camera's.

    Output pixel (u, v) has the ray (x, y, 1), x = (u + 0.5 - W/2) / f, y = (v + 0.5 - H/2) / f in
    the camera frame (OpenCV axes); pitched down by p, the level frame sees it as
    (x, y cos p + sin p, cos p - y sin p). The level image samples the image plane of that frame on
    the same pixel pitch 1 / f, over the span the output's rays cover.
    """
    f = 0.5 * cfg.width / math.tan(0.5 * cfg.hfov)
    x = (np.arange(cfg.width) + 0.5 - 0.5 * cfg.width) / f
    y = (np.arange(cfg.height) + 0.5 - 0.5 * cfg.height) / f
    xx, yy = np.meshgrid(x, y)
    cp, sp = math.cos(cfg.pitch), math.sin(cfg.pitch)
    z_level = cp - yy * sp
    x_level, y_level = xx / z_level, (yy * cp + sp) / z_level
    x0, y0 = float(x_level.min()), float(y_level.min())
    cols = np.round((x_level - x0) * f).astype(np.int64)
    rows = np.round((y_level - y0) * f).astype(np.int64)
    wv, hv = int(cols.max()) + 1, int(rows.max()) + 1
    return {
        "col_tan": x0 + np.arange(wv) / f,
        "row_tan": y0 + np.arange(hv) / f,
        "focal": f,
        "centre_row": 0.5 - f * y0,
        "pixel_map": (rows * wv + cols).reshape(-1),
        "depth_scale": (1.0 / z_level).reshape(-1).astype(np.float32),
    }


def march_samples(focal: float, resolution: float, max_range: float) -> tuple[np.ndarray, np.ndarray]:
    """Distances (S,) m along a column's ground track and the step (S,) m that reached each: one
    grid cell near the camera, then growing with distance so each pixel footprint gets
    ``SAMPLES_PER_PIXEL`` samples."""
    dist, step = [], []
    d = MIN_RANGE
    while d <= max_range:
        s = max(resolution, d / (focal * SAMPLES_PER_PIXEL))
        dist.append(d)
        step.append(s)
        d += s
    return np.asarray(dist), np.asarray(step)


class ColumnRenderer:
    """Renders colour, depth and semantic images of many environments in one call."""

    def __init__(self, cfg: RgbCameraCfg, world: WorldBatch, scene_dirs: Sequence[Path | str]):
        self.cfg, self.world = cfg, world
        grids = [compile_appearance(d, w) for d, w in zip(scene_dirs, world.worlds, strict=True)]
        lights = [scene_lighting(load_scene(Path(d)), shadows=False) for d in scene_dirs]
        coarse = [coarsen(g, COARSE) for g in grids]
        coarse_shape = (-(-world.shape[0] // COARSE), -(-world.shape[1] // COARSE))
        self.levels = (
            _level_layers(grids, lights, world.shape),
            _level_layers(coarse, lights, coarse_shape),
        )
        self.level_res = np.array([world.resolution, world.resolution * COARSE])
        self.lighting = self._lighting_arrays(lights)
        self.camera = virtual_camera(cfg)
        col, row = self.camera["col_tan"], self.camera["row_tan"]
        slope = -row[:, None] / np.sqrt(1.0 + col[None, :] ** 2)  # (Hv, Wv) rise per metre
        inv = 1.0 / np.sqrt(1.0 + slope**2)
        self.pix_slope, self.pix_inv = slope.reshape(-1), inv.reshape(-1)
        # MuJoCo's gradient skybox: horizon colour straight down, zenith colour straight up.
        up = (0.5 * (1.0 + slope * inv))[None, :, :, None]
        zenith = self.lighting["sky_zenith"][:, None, None, :]
        horizon = self.lighting["sky_horizon"][:, None, None, :]
        sky = 255.0 * (zenith * up + horizon * (1.0 - up)) + 0.5
        self.sky = sky.clip(0, 255).astype(np.uint8).reshape(len(lights), -1)
        self.dist, self.step = march_samples(float(self.camera["focal"]), world.resolution, cfg.max_range)
        self.ped_class = semantic_id("pedestrian")

    @staticmethod
    def _lighting_arrays(lights: Sequence[Lighting]) -> dict[str, np.ndarray]:
        def rows(name: str) -> np.ndarray:
            return np.asarray([getattr(li, name) for li in lights], np.float64)

        sun = rows("sun_direction")
        ambient = rows("ambient_color")
        headlight = np.full((len(lights), 1), HEADLIGHT)
        return {
            "lamps": np.concatenate([ambient, rows("sun_color"), headlight], axis=1),
            "sun_dir": sun / np.linalg.norm(sun, axis=1, keepdims=True),
            "sky_zenith": rows("sky_zenith"),
            "sky_horizon": rows("sky_horizon"),
        }

    def render(
        self,
        scene: np.ndarray,
        cam: np.ndarray,
        yaw: np.ndarray,
        peds: np.ndarray,
        ped_base: np.ndarray,
        ped_radius: float,
        ped_height: float,
        ped_colours: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Colour (K, H, W, 3) uint8, depth (K, H, W) float32 m and semantic ids (K, H, W) uint8 for
        cameras at ``cam`` (K, 3) m with heading ``yaw`` (K,) rad in scenes ``scene`` (K,);
        pedestrians at ``peds`` (K, P, 2) m on ground ``ped_base`` (K, P) m, display colours
        ``ped_colours`` (C, 3) in [0, 1] in turn."""
        cfg, cam_geo, light = self.cfg, self.camera, self.lighting
        k, n_pix = len(scene), cfg.height * cfg.width
        rgb = np.empty((k, n_pix * 3), np.uint8)
        depth = np.empty((k, n_pix), np.float32)
        semantic = np.empty((k, n_pix), np.uint8)
        (fine, fine_blocks), (coarse, coarse_blocks) = self.levels
        camera_kernels.render_columns(
            fine,
            coarse,
            self.level_res,
            np.array([fine_blocks, coarse_blocks], np.int64),
            int(np.searchsorted(self.step, self.level_res[1])),
            self.world.origin.numpy().astype(np.float64),
            np.ascontiguousarray(scene, np.int64),
            np.ascontiguousarray(cam, np.float64),
            np.ascontiguousarray(yaw, np.float64),
            cam_geo["col_tan"],
            cam_geo["row_tan"],
            float(cam_geo["focal"]),
            float(cam_geo["centre_row"]),
            self.pix_slope,
            self.pix_inv,
            self.sky,
            self.dist,
            1.0 / self.dist,
            self.step,
            np.ascontiguousarray(peds, np.float64),
            np.ascontiguousarray(ped_base, np.float64),
            float(ped_radius),
            float(ped_height),
            np.ascontiguousarray(ped_colours, np.float64).reshape(-1) * 255.0,
            self.ped_class,
            light["lamps"],
            light["sun_dir"],
            cam_geo["pixel_map"],
            cam_geo["depth_scale"],
            float(cfg.max_range),
            rgb,
            depth,
            semantic,
        )
        shape = (k, cfg.height, cfg.width)
        return rgb.reshape(*shape, 3), depth.reshape(shape), semantic.reshape(shape)
