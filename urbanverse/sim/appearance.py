"""Appearance grids: what the batched RGB camera sees of a scene, on the world's own grid.

The 2.5D world grids (``urbanverse.sim.world``) hold what robots collide with. A camera also needs
colour and the parts that hang overhead (tree crowns, lamp heads, awnings, bench seats), so each
cell of the same grid (same origin, resolution and shape as the scene's ``CompiledWorld``) holds
two layers:

- the **base layer**: a column from below the ground up to ``base_top`` (m): the ground, or the top
  of the visual parts standing on it (trunks, poles, boxes, curbs), with its albedo, its semantic
  id and its sun term (``base_sun``: the Lambert factor ``max(0, n . -sun)`` of the top face);
- the **overhead layer**: the span ``[over_bottom, over_top]`` (m) of the visual parts whose lowest
  point over the cell is more than ``OVERHEAD_GAP`` above their object's base, with albedo and
  semantic id; ``over_bottom > over_top`` where there is none.

Each layer also keeps the horizontal outward normal of its sides (``*_normal``, from the gradient
of its smoothed top; zero inside flat areas), with which the camera shades walls and crowns.

Albedo is the display (sRGB) colour the renderer (``urbanverse.render``) shades: ground textures
sampled at the cell centre (tiled every ``texture_scale`` m) or the material colour; object parts
in their own colours. Semantic ids are those of ``urbanverse.render.scene_model`` (0 sky, ground
types, object classes), so the two cameras' segmentations compare directly. Cells off the map have
no base layer (``base_top = -inf``): the camera sees past them, as the renderer shows sky there.

Compiled from the visual meshes (a top-down z-buffer of every triangle), cached beside the world
grids under ``cache_dir("worlds")``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage

from urbanverse.assets.record import load_asset, load_visual_parts
from urbanverse.render.appearance import detail_mean, part_look, srgb
from urbanverse.render.scene_model import load_texture, semantic_id
from urbanverse.scene.ground import top_triangles
from urbanverse.scene.record import SCENE_FILE, Scene, load_scene, resolve_inside
from urbanverse.sim import camera_kernels
from urbanverse.sim.world import CompiledWorld, fill_triangles, save_npz, world_cache_dir

#: Where a visual part's lowest point over a cell is more than this (m) above its object's base, it
#: hangs overhead there (crowns, branches, lamp heads, seats); elsewhere it stands on the ground.
OVERHEAD_GAP = 0.25
#: Cells within this (m) of a coarse window's highest cell give the window its colour (``coarsen``).
MIP_TOLERANCE = 0.05
#: Heights (m) that mark "no surface" in the float layers.
NONE_BELOW, NONE_ABOVE = -1.0e9, 1.0e9

_FORMAT = 7
_ARRAYS = (
    "base_top",
    "base_texel",
    "base_tint",
    "base_side_tint",
    "base_sun",
    "base_class",
    "base_normal",
    "over_bottom",
    "over_top",
    "over_texel",
    "over_tint",
    "over_side_tint",
    "over_class",
    "over_normal",
)


@dataclass(frozen=True, kw_only=True)
class AppearanceGrid:
    """Per-cell look of one scene (see the module docstring); shapes (H, W) or (H, W, 3)."""

    base_top: np.ndarray
    """(H, W) float32 m; ``NONE_BELOW`` off the map."""
    base_texel: np.ndarray
    """(H, W, 3) uint8: the surface texture's colour at the cell (the ground texture's texel, or the
    mean of an object's detail texture)."""
    base_tint: np.ndarray
    """(H, W, 3) uint8: the material colour that multiplies the lit texture (255: textured ground)."""
    base_side_tint: np.ndarray
    """(H, W, 3) uint8: tint of the base layer's sides: the area-weighted mean tint of the steep
    triangles over the cell (windows and walls, tyres and doors), else ``base_tint``."""
    base_sun: np.ndarray
    """(H, W) float32 in [0, 1]: Lambert sun factor of the base layer's top face."""
    base_class: np.ndarray
    """(H, W) uint8 semantic id."""
    base_normal: np.ndarray
    """(H, W, 2) float32: unit horizontal outward normal of the base layer's sides, or zero."""
    over_bottom: np.ndarray
    """(H, W) float32 m; ``NONE_ABOVE`` where nothing hangs overhead."""
    over_top: np.ndarray
    """(H, W) float32 m; ``NONE_BELOW`` where nothing hangs overhead."""
    over_texel: np.ndarray
    over_tint: np.ndarray
    over_side_tint: np.ndarray
    """(H, W, 3) uint8: tint of the overhead layer's sides (as ``base_side_tint``)."""
    over_class: np.ndarray
    over_normal: np.ndarray
    """(H, W, 2) float32: unit horizontal outward normal of the overhead layer's sides, or zero."""


def side_normals(top: np.ndarray, present: np.ndarray, res: float) -> np.ndarray:
    """Unit horizontal outward normals (H, W, 2) of the sides of a height field ``top`` (H, W) m
    defined where ``present``: minus the gradient of the field smoothed over about a cell, zero
    where it is flat."""
    z = np.where(present, top, top[present].min() if present.any() else 0.0).astype(np.float64)
    z = ndimage.gaussian_filter(z, 1.0)
    gy, gx = np.gradient(z, res)
    norm = np.hypot(gx, gy)
    steep = norm > 0.5
    normal = np.zeros((*top.shape, 2), np.float32)
    normal[steep, 0] = -gx[steep] / norm[steep]
    normal[steep, 1] = -gy[steep] / norm[steep]
    return normal


def _pooled(a: np.ndarray, factor: int, fill) -> np.ndarray:
    """``a`` (H, W, ...) padded with ``fill`` to multiples of ``factor`` and split into
    (H / factor, W / factor, factor * factor, ...) windows."""
    h, w = a.shape[:2]
    hc, wc = -(-h // factor), -(-w // factor)
    out = np.full((hc * factor, wc * factor, *a.shape[2:]), fill, a.dtype)
    out[:h, :w] = a
    out = out.reshape(hc, factor, wc, factor, *a.shape[2:]).swapaxes(1, 2)
    return out.reshape(hc, wc, factor * factor, *a.shape[2:])


def _weighted_mean(a: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Mean of windows ``a`` (Hc, Wc, F, ...) over axis 2 with ``weight`` (Hc, Wc, F)."""
    w = weight.reshape(*weight.shape, *(1,) * (a.ndim - 3)).astype(np.float64)
    return (a * w).sum(2) / np.maximum(w.sum(2), 1e-9)


def _pick(a: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``a`` (Hc, Wc, F, ...) at window position ``index`` (Hc, Wc)."""
    return np.take_along_axis(a, index.reshape(*index.shape, 1, *(1,) * (a.ndim - 3)), axis=2)[:, :, 0]


def coarsen(grid: AppearanceGrid, factor: int) -> AppearanceGrid:
    """The grid at ``factor`` times the cell size (same origin), as a mipmap level for distant views:
    heights keep the extremes of each window (base top and overhead top: highest; overhead bottom:
    lowest), so thin poles stay visible; colours, sun terms and normals average over the window's
    cells that reach its top (within ``MIP_TOLERANCE``); semantic ids are the highest cell's."""
    top = _pooled(grid.base_top, factor, NONE_BELOW)
    peak = top.max(2)
    near_top = top >= peak[..., None] - MIP_TOLERANCE
    highest = top.argmax(2)
    o_bottom = _pooled(grid.over_bottom, factor, NONE_ABOVE)
    o_top = _pooled(grid.over_top, factor, NONE_BELOW)
    hangs = o_bottom <= o_top
    highest_over = o_top.argmax(2)

    def mean(a, weight, fill, dtype):
        m = _weighted_mean(_pooled(a, factor, fill), weight)
        return (np.round(m) if dtype == np.uint8 else m).astype(dtype)

    return AppearanceGrid(
        base_top=peak.astype(np.float32),
        base_texel=mean(grid.base_texel, near_top, 0, np.uint8),
        base_tint=mean(grid.base_tint, near_top, 0, np.uint8),
        base_side_tint=mean(grid.base_side_tint, near_top, 0, np.uint8),
        base_sun=mean(grid.base_sun, near_top, 0.0, np.float32),
        base_class=_pick(_pooled(grid.base_class, factor, 0), highest),
        base_normal=mean(grid.base_normal, near_top, 0.0, np.float32),
        over_bottom=np.where(hangs, o_bottom, NONE_ABOVE).min(2).astype(np.float32),
        over_top=o_top.max(2).astype(np.float32),
        over_texel=mean(grid.over_texel, hangs, 0, np.uint8),
        over_tint=mean(grid.over_tint, hangs, 0, np.uint8),
        over_side_tint=mean(grid.over_side_tint, hangs, 0, np.uint8),
        over_class=_pick(_pooled(grid.over_class, factor, 0), highest_over),
        over_normal=mean(grid.over_normal, hangs, 0.0, np.float32),
    )


def _sun_unit(scene: Scene) -> np.ndarray:
    d = np.asarray(scene.sky.sun_direction, float)
    return d / max(float(np.linalg.norm(d)), 1e-9)


def _ground_layer(scene: Scene, scene_dir: Path, world: CompiledWorld, sun: np.ndarray):
    """Base layer from the ground regions alone: top (m), texel, tint, sun factor, class."""
    h, w = world.shape
    res, origin = world.resolution, np.asarray(world.origin)
    texel = np.zeros((h, w, 3), np.uint8)
    tint = np.zeros((h, w, 3), np.uint8)
    cls = np.zeros((h, w), np.uint8)
    for k, region in enumerate(scene.ground):
        top, tris = top_triangles(region)
        rows, cols, _ = fill_triangles((h, w), origin, res, top[tris][..., :2])
        mat = region.material
        if mat.texture:
            image = load_texture(resolve_inside(scene_dir, mat.texture, f"ground[{k}].material.texture"))
            # One texel per cell (box filter): what the renderer's mipmaps show at a cell's footprint.
            texels = max(1, round(mat.texture_scale / res))
            image = np.asarray(Image.fromarray(image).resize((texels, texels), Image.BOX))
            xy = origin + (np.stack([cols, rows], -1) + 0.5) * res
            uv = np.mod(xy / mat.texture_scale, 1.0)
            ty = np.minimum(((1.0 - uv[:, 1]) * image.shape[0]).astype(int), image.shape[0] - 1)
            tx = np.minimum((uv[:, 0] * image.shape[1]).astype(int), image.shape[1] - 1)
            texel[rows, cols] = image[ty, tx]
            tint[rows, cols] = 255
        else:  # the material colour over the fine grain texture (``urbanverse.render.scene_model``)
            texel[rows, cols] = round(detail_mean("grain"))
            tint[rows, cols] = np.round(np.asarray(srgb(mat.base_color)) * 255).astype(np.uint8)
        cls[rows, cols] = semantic_id(region.type)
    on_map = world.ground_type > 0
    top = np.where(on_map, world.ground_height, NONE_BELOW).astype(np.float32)
    gy, gx = np.gradient(world.ground_height.astype(np.float64), res)
    # A curb face is one cell wide: a slope there is the face, not the top; keep tops flat.
    steep = np.hypot(gx, gy) > 1.0
    gx[steep] = gy[steep] = 0.0
    normal = np.stack([-gx, -gy, np.ones_like(gx)], -1)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True)
    sun_term = np.clip(normal @ -sun, 0.0, 1.0).astype(np.float32)
    return top, texel, tint, sun_term, np.where(on_map, cls, 0).astype(np.uint8)


def _object_triangles(scene: Scene, scene_dir: Path):
    """Every visual triangle in the world, grouped by part: corners (T, 3, 3) m, where each part's
    triangles start (P + 1,), each part's base height (P,) m (its object's), texel and tint (P, 3)
    uint8 (``urbanverse.render.appearance.part_look``) and semantic id (P,) per part."""
    cache: dict[str, list] = {}
    tris, counts, base, texel, tint, cls = [], [0], [], [], [], []
    for obj in scene.objects:
        asset_dir = resolve_inside(scene_dir, obj.asset.path, f"object {obj.id}")
        if obj.asset.path not in cache:
            cache[obj.asset.path] = load_visual_parts(asset_dir, load_asset(asset_dir))
        c, s = np.cos(obj.yaw), np.sin(obj.yaw)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        for part in cache[obj.asset.path]:
            v = (np.asarray(part.mesh.vertices) * np.asarray(obj.scale)) @ rot.T + np.asarray(obj.position)
            tris.append(v[np.asarray(part.mesh.faces, np.int64)].reshape(-1, 3, 3))
            counts.append(len(tris[-1]))
            base.append(obj.position[2])
            rgba, kind = part_look(part.rgb)
            tint.append(np.round(np.asarray(rgba[:3]) * 255))
            texel.append(np.full(3, round(detail_mean(kind))))
            cls.append(semantic_id(obj.category))
    return (
        np.concatenate(tris) if tris else np.zeros((0, 3, 3)),
        np.cumsum(counts),
        np.asarray(base, np.float64),
        np.asarray(texel, np.uint8).reshape(-1, 3),
        np.asarray(tint, np.uint8).reshape(-1, 3),
        np.asarray(cls, np.uint8),
    )


def build_appearance(scene_dir: Path, scene: Scene, world: CompiledWorld) -> AppearanceGrid:
    """Compile the appearance grid of ``scene`` on ``world``'s grid (no cache)."""
    sun = _sun_unit(scene)
    top, texel, tint, sun_term, cls = _ground_layer(scene, scene_dir, world, sun)
    tris, part_start, part_base, part_texel, part_tint, part_class = _object_triangles(scene, scene_dir)
    h, w = world.shape
    over_bottom = np.full((h, w), NONE_ABOVE, np.float32)
    over_top = np.full((h, w), NONE_BELOW, np.float32)
    base_part = np.full((h, w), -1, np.int64)
    over_part = np.full((h, w), -1, np.int64)
    side_sum = np.zeros((2, h, w, 3))
    side_weight = np.zeros((2, h, w))
    camera_kernels.splat_parts(
        tris.astype(np.float64),
        part_start,
        part_base,
        part_tint.astype(np.float64),
        OVERHEAD_GAP,
        np.asarray(world.origin, np.float64),
        world.resolution,
        -sun,
        top,
        sun_term,
        base_part,
        over_bottom,
        over_top,
        over_part,
        side_sum,
        side_weight,
    )
    hit = base_part >= 0
    texel[hit] = part_texel[base_part[hit]]
    tint[hit] = part_tint[base_part[hit]]
    cls[hit] = part_class[base_part[hit]]
    over_texel = np.zeros((h, w, 3), np.uint8)
    over_tint = np.zeros((h, w, 3), np.uint8)
    over_class = np.zeros((h, w), np.uint8)
    hang = over_part >= 0
    over_texel[hang] = part_texel[over_part[hang]]
    over_tint[hang] = part_tint[over_part[hang]]
    over_class[hang] = part_class[over_part[hang]]
    side_tint, over_side_tint = tint.copy(), over_tint.copy()
    for layer, out in enumerate((side_tint, over_side_tint)):
        sides = side_weight[layer] > 0
        out[sides] = np.round(side_sum[layer][sides] / side_weight[layer][sides, None]).astype(np.uint8)
    res = world.resolution
    return AppearanceGrid(
        base_top=top,
        base_texel=texel,
        base_tint=tint,
        base_side_tint=side_tint,
        base_sun=sun_term,
        base_class=cls,
        base_normal=side_normals(top, top > NONE_BELOW, res),
        over_normal=side_normals(over_top, hang, res),
        over_bottom=over_bottom,
        over_top=over_top,
        over_texel=over_texel,
        over_tint=over_tint,
        over_side_tint=over_side_tint,
        over_class=over_class,
    )


def _appearance_key(scene_dir: Path, scene: Scene, world: CompiledWorld) -> str:
    digest = hashlib.sha256(f"{world.key}|{_FORMAT}|{OVERHEAD_GAP}".encode())
    digest.update((scene_dir / SCENE_FILE).read_bytes())
    for folder in sorted({obj.asset.path for obj in scene.objects}):
        asset_dir = resolve_inside(scene_dir, folder, "objects.asset.path")
        digest.update((asset_dir / load_asset(asset_dir).visual_mesh).read_bytes())
    for region in scene.ground:
        if region.material.texture:
            digest.update(resolve_inside(scene_dir, region.material.texture, "ground texture").read_bytes())
    return digest.hexdigest()[:20]


def compile_appearance(scene_dir: Path | str, world: CompiledWorld, cache: bool = True) -> AppearanceGrid:
    """The appearance grid of the scene in ``scene_dir`` on ``world``'s grid, from the cache when
    it holds one for this scene content (scene, visual meshes, textures) and grid."""
    scene_dir = Path(scene_dir)
    scene = load_scene(scene_dir)
    path = world_cache_dir(world.key) / f"appearance-{_appearance_key(scene_dir, scene, world)}.npz"
    if cache and path.is_file():
        with np.load(path) as data:
            return AppearanceGrid(**{k: data[k] for k in _ARRAYS})
    grid = build_appearance(scene_dir, scene, world)
    if cache:
        save_npz(path, **{k: getattr(grid, k) for k in _ARRAYS})
    return grid
