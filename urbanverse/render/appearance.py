"""How library assets look in renders: part colours over a procedural detail texture.

Every part keeps its colour and gets a tiling detail texture (fine grain, or blotchy leaves for
green parts), projected box-wise, so structure from motion and feature tracking find corners on
objects as they do on real video. Parts of one asset with the same colour are merged into one
mesh. Used by scene renders and by the asset library's thumbnails.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from urbanverse.assets.textures import fractal_noise, linear_to_srgb
from urbanverse.render.raster import SceneBuilder, triplanar_uv

#: Metres per repeat of the objects' detail texture.
DETAIL_TILE_M = 0.35
#: Mean 8-bit value of the detail textures; colours are divided by it so mean albedo is kept.
DETAIL_MEAN = 200.0


@functools.cache
def detail_texture(kind: str, size: int = 128) -> np.ndarray:
    """A tiling greyscale detail texture ``(size, size, 3)`` uint8 with mean about ``DETAIL_MEAN``.

    ``kind``: ``"grain"`` (fine, low contrast: paint, metal, stone) or ``"leaves"`` (blotchy,
    high contrast: crowns and hedges).
    """
    rng = np.random.default_rng(11 if kind == "grain" else 12)
    if kind == "grain":
        noise = 0.6 * fractal_noise(size, rng, beta=1.2, low=2) + 0.4 * fractal_noise(
            size, rng, beta=2.5, low=1
        )
        grey = DETAIL_MEAN + 28 * noise
    else:
        noise = fractal_noise(size, rng, beta=1.0, low=4)
        grey = DETAIL_MEAN - 10 + 60 * np.tanh(1.5 * noise)
    return np.repeat(np.clip(grey, 0, 255).astype(np.uint8)[..., None], 3, axis=2)


def detail_texture_name(builder: SceneBuilder, kind: str) -> str:
    """Add the ``kind`` detail texture to ``builder`` (once) and return its name."""
    name = f"detail:{kind}"
    builder.add_texture(name, detail_texture(kind))
    return name


def srgb(linear_rgb: Sequence[float]) -> list[float]:
    """Linear RGB in [0, 1] to display (sRGB) values, as the rasterizer shades in display space."""
    return [float(c) for c in linear_to_srgb(np.clip(np.asarray(linear_rgb, float), 0, 1))]


def part_look(linear_rgb: Sequence[float]) -> tuple[list[float], str]:
    """How a part of linear colour ``linear_rgb`` is drawn: display RGBA that tints its detail
    texture, and the texture's kind; the tint is scaled up by the texture's mean so that the mean
    colour stays the part's own."""
    rgba = [min(1.0, x * 255.0 / DETAIL_MEAN) for x in srgb(linear_rgb)] + [1.0]
    return rgba, "leaves" if is_leafy(linear_rgb) else "grain"


@functools.cache
def detail_mean(kind: str) -> float:
    """Mean 8-bit value of the ``kind`` detail texture."""
    return float(detail_texture(kind).mean())


def is_leafy(linear_rgb: Sequence[float]) -> bool:
    r, g, b = linear_rgb
    return g > 1.15 * max(r, b)


@dataclasses.dataclass(frozen=True)
class AssetMesh:
    """A merged mesh of one colour of an asset, ready to place: mesh name, RGBA, texture name."""

    name: str
    rgba: list[float]
    texture: str


def add_asset_meshes(
    builder: SceneBuilder, key: str, parts: Sequence, scale: Sequence[float]
) -> list[AssetMesh]:
    """Merge ``parts`` (``mesh`` + linear ``rgb``, asset frame) by colour, scaled, into ``builder``.

    ``key`` names the meshes, so a second call with the same key reuses them.
    """
    by_colour: dict[tuple, list] = {}
    for part in parts:
        by_colour.setdefault(tuple(round(float(c), 4) for c in part.rgb), []).append(part.mesh)
    out = []
    for c, (rgb, meshes) in enumerate(sorted(by_colour.items())):
        name = f"{key}|{c}"
        if not builder.has_mesh(name):
            offsets = np.cumsum([0] + [len(m.vertices) for m in meshes])[:-1]
            v = np.vstack([np.asarray(m.vertices) for m in meshes]) * np.asarray(scale, float)
            f = np.vstack([np.asarray(m.faces) + o for m, o in zip(meshes, offsets, strict=True)])
            builder.add_mesh(name, v, f, triplanar_uv(v, f, DETAIL_TILE_M))
        rgba, kind = part_look(rgb)
        out.append(AssetMesh(name, rgba, detail_texture_name(builder, kind)))
    return out
