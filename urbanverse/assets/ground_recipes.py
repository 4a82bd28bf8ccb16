"""Recipes of the procedural ground materials: each returns a tileable ``Surface`` (albedo, height,
roughness) of ``size x size`` pixels from a seeded generator; ``ground_materials`` renders and
describes them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from urbanverse.assets.textures import (
    basketweave_rects,
    cell_offsets,
    chips,
    crack_mask,
    fractal_noise,
    grain,
    herringbone_rects,
    hex_to_linear,
    mix,
    paint_rects,
    pixel_grid,
    row_rects,
    smoothstep,
    worley,
)

#: Map size (px) that recipe pixel parameters (joint widths, bevels) refer to; they scale with ``size``.
DEFAULT_SIZE = 256


@dataclass
class Surface:
    """What a recipe returns: ``albedo (N, N, 3)`` linear RGB in [0, 1], ``height (N, N)`` in metres,
    ``roughness (N, N)`` in [0, 1]. All three tile."""

    albedo: np.ndarray
    height: np.ndarray
    roughness: np.ndarray


def asphalt(size, rng, scale, color, exposed=0.2, stone="#8f8b84", stain=0.1, patches=0, cracks=0, oil=0.0):
    """Asphalt: dark binder around ~8 mm aggregate, a fraction ``exposed`` of stones showing their
    ``stone`` colour; optional rectangular repairs with tar-sealed edges, cracks, oil stains."""
    cells = int(min(size / 1.6, scale / 0.008 * 1.2))
    stone_px = size / cells
    count = cells * cells
    cell, _, edge = worley(size, cell_offsets(cells, cells, 1.0, rng))
    tone = rng.normal(0.0, 1.0, count)
    binder = hex_to_linear(color) * (grain(size, rng, 0.08, stain) * (1 + 0.1 * tone[cell]))[..., None]
    mask = (rng.random(count) < exposed)[cell] * smoothstep(0.3, 1.0, edge)
    albedo = mix(binder, hex_to_linear(stone) * (1 + 0.15 * tone[cell])[..., None], mask)
    height = 0.002 * smoothstep(0.0, stone_px * 0.5, edge) + 0.0005 * fractal_noise(size, rng, 2.5)
    rough = 0.9 - 0.12 * mask + 0.03 * fractal_noise(size, rng, 1.0)
    if patches:
        rects = [
            (*(rng.integers(0, size, 2)), *(rng.integers(size // 5, size // 2, 2))) for _ in range(patches)
        ]
        inside, border = paint_rects(size, rects)
        fill = (inside >= 0) * 0.85
        albedo = mix(albedo, binder * 0.6, fill)
        seal = (inside >= 0) * (1 - smoothstep(1.5, 3.0, border))
        albedo = mix(albedo, np.full(3, 0.018), seal)
        rough = rough - 0.3 * seal
    if cracks:
        c = crack_mask(size, rng, cracks, 1.6 * size / 256, 0.65)
        albedo, height = albedo * (1 - 0.8 * c)[..., None], height - 0.004 * c
    if oil:
        o = smoothstep(0.8, 2.0, fractal_noise(size, rng, 3.0, low=2)) * oil
        albedo, rough = albedo * (1 - 0.6 * o)[..., None], rough - 0.35 * o
    return Surface(albedo, height, rough)


def marking(size, rng, scale, kind, paint, width, wear=0.1):
    """Road paint over worn asphalt. Stripes run along the tile's y axis: ``solid`` / ``dashed``
    (dash = half the tile) / ``double`` (gap = ``width``) centred lines ``width`` m wide; ``zebra``
    bars ``width`` m wide, one per tile; ``ladder`` adds a cross bar. ``wear``: fraction worn off."""
    base = asphalt(size, rng, scale, "#4a4948", exposed=0.3)
    px = scale / size
    coord = (np.arange(size) + 0.5) * px
    x, y = np.meshgrid(coord, coord)

    def band(u, centre, w):
        return smoothstep(-px, px, w / 2 - np.abs(u - centre))

    mid = scale / 2
    m = {
        "solid": lambda: band(x, mid, width),
        "dashed": lambda: band(x, mid, width) * band(y, mid, mid),
        "double": lambda: band(x, mid - width, width) + band(x, mid + width, width),
        "zebra": lambda: band(x, mid, width),
        "ladder": lambda: np.maximum(band(x, mid, width), band(y, mid, 0.2)),
    }[kind]()
    wear_field = fractal_noise(size, rng, 2.5, low=2) + 0.35 * fractal_noise(size, rng, 0.5)
    m = m * smoothstep(-0.2, 0.2, wear_field + ndtri(1 - wear))
    paint_col = hex_to_linear(paint) * grain(size, rng, 0.05, 0.04)[..., None]
    albedo = mix(base.albedo, paint_col, m)
    return Surface(albedo, base.height + 0.0015 * m, base.roughness + (0.55 - base.roughness) * m)


def concrete(size, rng, scale, color, finish="smooth"):
    """Cast concrete: fine grain and soft blotches; ``finish``: ``smooth``, ``broom`` (streaks along x),
    ``stained`` (dark blotches, gum spots), ``aggregate`` (exposed pebbles), ``terrazzo`` (polished chips)."""
    albedo = hex_to_linear(color) * grain(size, rng, 0.05, 0.06)[..., None]
    height = 0.0003 * fractal_noise(size, rng, 1.0, low=4)
    rough = 0.85 + 0.04 * fractal_noise(size, rng, 1.5)
    if finish == "broom":
        streak = fractal_noise(size, rng, 0.8, low=4, stretch=14.0)
        albedo, height = albedo * (1 + 0.05 * streak)[..., None], height + 0.0006 * streak
    elif finish == "stained":
        blot = smoothstep(0.3, 1.6, fractal_noise(size, rng, 3.0))
        cell, f1, _ = worley(size, cell_offsets(24, 24, 0.8, rng))
        gum = (rng.random(24 * 24) < 0.15)[cell] * smoothstep(
            2.5, 1.5, f1 * rng.uniform(0.7, 1.6, 24 * 24)[cell]
        )
        albedo = mix(albedo * (1 - 0.25 * blot)[..., None], np.array([0.04, 0.04, 0.035]), gum)
    elif finish in ("aggregate", "terrazzo"):
        terrazzo = finish == "terrazzo"
        palette = (
            ["#e8e2d6", "#3c3a38", "#b5584a", "#6e8a73", "#d9c7a0"]
            if terrazzo
            else ["#a08a6e", "#6d655c", "#c2b29a", "#8a7a68", "#4f4a45"]
        )
        mask, cols, edge = chips(size, rng, 47 if terrazzo else 42, 0.45 if terrazzo else 0.8, palette, 0.6)
        albedo = mix(albedo, cols * grain(size, rng, 0.05, 0.0)[..., None], mask)
        if terrazzo:
            rough = 0.25 + 0.05 * fractal_noise(size, rng, 1.0)
        else:
            height = height + 0.002 * mask * np.sqrt(smoothstep(0.6, 3.0, edge))
    return Surface(albedo, height, rough)


_UNIT_SURFACE = {  # surface -> (joint depth m, bevel px, roughness, grain fine, grain coarse)
    "concrete": (0.006, 1.5, 0.85, 0.07, 0.04),
    "brick": (0.008, 2.0, 0.82, 0.09, 0.06),
    "stone": (0.012, 3.0, 0.65, 0.14, 0.05),
    "granite": (0.002, 0.6, 0.35, 0.16, 0.03),
}


def units(size, rng, scale, pattern, joint, colors, joint_color, surface, tone, nx=4, ny=4, unit=16):
    """Laid units (slabs, pavers, bricks, setts) with joints ``joint`` wide. ``pattern``: ``grid``,
    ``running`` (half-unit offset), ``setts`` (irregular lengths), ``herringbone``, ``basket`` (units of
    ``2 * unit`` by ``unit`` px), ``hex`` (``nx`` by ``ny`` hexagons; 7 x 8 keeps them regular).
    ``colors``: per-unit palette; ``tone``: per-unit brightness spread. ``joint`` and ``unit`` are pixels
    at the default 256 px size (scaled with ``size``)."""
    joint, unit = joint * size / DEFAULT_SIZE, unit * size // DEFAULT_SIZE
    if pattern == "hex":
        j = np.mgrid[0:ny, 0:nx][0]
        cell, _, edge = worley(size, np.stack([0.25 + 0.5 * (j % 2), np.full(j.shape, 0.5)], -1))
    else:
        rects = {
            "grid": lambda: row_rects(size, ny, nx, 0.0),
            "running": lambda: row_rects(size, ny, nx, 0.5),
            "setts": lambda: row_rects(size, ny, nx, 0.37, rng),
            "herringbone": lambda: herringbone_rects(size, unit),
            "basket": lambda: basketweave_rects(size, unit),
        }[pattern]()
        cell, edge = paint_rects(size, rects)
    depth, bevel, rough0, fine, coarse = _UNIT_SURFACE[surface]
    bevel = bevel * size / DEFAULT_SIZE
    count = int(cell.max()) + 1
    palette = np.stack([hex_to_linear(c) for c in colors])
    unit_col = palette[rng.integers(len(colors), size=count)] * (1 + tone * rng.standard_normal((count, 1)))
    speck = fractal_noise(size, rng, 0.0)
    albedo = unit_col[cell] * grain(size, rng, fine, coarse)[..., None]
    if surface in ("brick", "granite"):
        albedo = (
            albedo * (1 - 0.35 * smoothstep(2.2, 2.8, speck) + 0.25 * smoothstep(2.4, 3.0, -speck))[..., None]
        )
    j = 1 - smoothstep(joint / 2 - 0.5, joint / 2 + 0.5, edge)
    albedo = mix(albedo, hex_to_linear(joint_color) * grain(size, rng, 0.1, 0.05)[..., None], j)
    tilt = rng.normal(0.0, depth * 0.15, count)[cell] if surface == "stone" else 0.0
    height = (
        depth * smoothstep(joint / 2, joint / 2 + bevel, edge) + tilt + 0.0003 * fractal_noise(size, rng, 1)
    )
    rough = rough0 + 0.04 * fractal_noise(size, rng, 1.5)
    return Surface(albedo, height, rough + (0.95 - rough) * j)


def stones(size, rng, scale, cells, jitter, joint, colors, joint_color, dome):
    """Rounded stones (cobbles, gravel, rubber granules): a warped ``cells x cells`` jittered Voronoi
    pattern, stones from ``colors`` domed up to ``dome`` m, gaps of ``joint_color`` ``joint`` px wide (at
    256 px)."""
    joint = joint * size / DEFAULT_SIZE
    warp = np.stack([fractal_noise(size, rng, 4.0, low=1) for _ in range(2)], -1) * (0.08 * size / cells)
    cell, _, edge = worley(size, cell_offsets(cells, cells, jitter, rng), warp)
    count = cells * cells
    palette = np.stack([hex_to_linear(c) for c in colors])
    col = palette[rng.integers(len(colors), size=count)] * rng.uniform(0.85, 1.15, (count, 1))
    profile = smoothstep(joint / 2, joint / 2 + 0.3 * size / cells, edge)
    albedo = col[cell] * (grain(size, rng, 0.1, 0.04) * (0.8 + 0.2 * profile))[..., None]
    j = 1 - smoothstep(joint / 2 - 0.5, joint / 2 + 0.5, edge)
    albedo = mix(albedo, hex_to_linear(joint_color) * grain(size, rng, 0.1, 0.1)[..., None], j)
    rough = 0.7 + 0.2 * (1 - profile) + 0.03 * fractal_noise(size, rng, 1.0)
    return Surface(albedo, dome * np.sqrt(profile), rough)


def tactile(size, rng, scale, kind, color):
    """One 300 mm tactile slab per tile: 5 x 5 truncated domes (25 mm top, 35 mm base, 5 mm high) or
    4 bars (35 mm wide, 75 mm apart) running along y; 2 mm joints at the slab edge."""
    base = concrete(size, rng, scale, color)
    px = scale / size
    x, y = pixel_grid(size)[..., 0] * px, pixel_grid(size)[..., 1] * px
    if kind == "dots":
        pitch = scale / 5
        d = np.hypot((x % pitch) - pitch / 2, (y % pitch) - pitch / 2)
        relief = smoothstep(0.0175, 0.0125, d)
    else:
        pitch = scale / 4
        relief = smoothstep(0.0175, 0.0125, np.abs((x % pitch) - pitch / 2)) * smoothstep(0.0, 0.02, y)
        relief = relief * smoothstep(scale, scale - 0.02, y)
    border = np.minimum(np.minimum(x, scale - x), np.minimum(y, scale - y))
    j = 1 - smoothstep(0.001, 0.001 + px, border)
    ring = relief * (1 - relief) * 4  # grime collects where the relief meets the slab
    albedo = base.albedo * (1 + 0.12 * relief - 0.35 * ring)[..., None]
    albedo = mix(albedo, np.array([0.05, 0.05, 0.045]), j)
    return Surface(albedo, 0.005 * relief + base.height - 0.004 * j, base.roughness - 0.1 * relief)


def grass(size, rng, scale, color, tip, dry, bare, stripes=0):
    """Grass seen from above: elongated blade noise in four directions between dark roots, light
    ``tip`` colour and straw; ``dry``: share of straw tint; ``bare``: share of soil showing;
    ``stripes``: mowing stripes (pairs per tile)."""
    blades = (
        sum(fractal_noise(size, rng, 0.8, low=12, stretch=5.0, angle=a) for a in rng.uniform(0, np.pi, 4)) / 2
    )
    albedo = mix(hex_to_linear(color) * 0.35, hex_to_linear(color), smoothstep(-2.0, 0.0, blades))
    albedo = mix(albedo, hex_to_linear(tip), smoothstep(0.3, 2.0, blades))
    straw = smoothstep(-0.8, 0.8, fractal_noise(size, rng, 3.0) + ndtri(max(dry, 1e-3))) * dry
    albedo = mix(albedo, hex_to_linear("#a3945a") * (0.6 + 0.25 * blades[..., None].clip(-1, 2)), straw * 0.8)
    if bare > 0:
        soil = smoothstep(-0.5, 0.5, fractal_noise(size, rng, 3.0) + ndtri(bare) - 0.4 * blades)
        albedo = mix(albedo, hex_to_linear("#6b5442") * grain(size, rng, 0.1, 0.1)[..., None], soil)
    if stripes:
        x = (np.arange(size) + 0.5) / size
        albedo = albedo * (1 + 0.1 * np.tanh(4 * np.sin(2 * np.pi * stripes * x)))[None, :, None]
    return Surface(albedo, 0.004 * blades, 0.92 + 0.03 * fractal_noise(size, rng, 1.0))


def soil(size, rng, scale, color, pebbles=0.2, cracks=0):
    """Bare earth: blotchy grain, scattered small pebbles (``pebbles``: share of chip cells filled),
    optional dried-mud ``cracks`` (cells per tile)."""
    albedo = hex_to_linear(color) * grain(size, rng, 0.12, 0.12)[..., None]
    height = 0.002 * fractal_noise(size, rng, 2.0)
    mask, cols, edge = chips(size, rng, 39, pebbles, ["#8a8179", "#a39580", "#6b625a"], 1.0)
    albedo = mix(albedo, cols, mask)
    height = height + 0.003 * mask * np.sqrt(smoothstep(1.0, 3.0, edge))
    rough = 0.95 - 0.2 * mask
    if cracks:
        c = crack_mask(size, rng, cracks, 2.5 * size / 256, 0.9)
        albedo, height = albedo * (1 - 0.6 * c)[..., None], height - 0.006 * c
    return Surface(albedo, height, rough)


def mulch(size, rng, scale, color):
    """Shredded bark: six layers of elongated noise at random angles; the top layer at each pixel is a
    chip with its own tone, deep gaps between chips are dark."""
    layers = np.stack(
        [fractal_noise(size, rng, 1.2, low=10, stretch=4.0, angle=a) for a in rng.uniform(0, np.pi, 6)]
    )
    top, val = layers.argmax(0), layers.max(0)
    tones = rng.uniform(0.55, 1.4, 6)[top] * (0.6 + 0.4 * smoothstep(0.0, 2.5, val))
    albedo = hex_to_linear(color) * (tones * (1 - 0.6 * smoothstep(0.6, 0.0, val)))[..., None]
    return Surface(albedo, 0.012 * smoothstep(-0.5, 2.5, val), 0.93 + 0.02 * fractal_noise(size, rng, 1.0))


def sand(size, rng, scale, color):
    """Sand: fine light/dark grains and wind ripples (7 per tile, warped) across y."""
    grains = fractal_noise(size, rng, 0.0)
    albedo = hex_to_linear(color) * (grain(size, rng, 0.05, 0.06) * (1 + 0.08 * np.tanh(grains)))[..., None]
    y = pixel_grid(size)[..., 1] / size
    ripple = np.sin(2 * np.pi * (7 * y + 0.25 * fractal_noise(size, rng, 3.0, low=1)))
    return Surface(albedo, 0.003 * ripple + 0.0003 * grains, 0.95 + 0.02 * grains.clip(-1, 1))


def wood(size, rng, scale, color):
    """Deck boards along x (8 per tile, 8 mm gaps, staggered butt joints) with long grain and knots."""
    cell, edge = paint_rects(size, row_rects(size, 8, 1, 0.37))
    count = int(cell.max()) + 1
    grain_a = fractal_noise(size, rng, 1.5, low=2, stretch=25.0)
    grain_b = fractal_noise(size, rng, 1.5, low=2, stretch=25.0)
    w = rng.random(count)[cell]
    g = grain_a * w + grain_b * (1 - w)
    tone = rng.uniform(0.8, 1.2, count)[cell] * (1 + 0.15 * np.tanh(g))
    albedo = hex_to_linear(color) * tone[..., None]
    gap = 1 - smoothstep(0.8 * size / DEFAULT_SIZE, 1.6 * size / DEFAULT_SIZE, edge)
    albedo = mix(albedo, np.array([0.02, 0.015, 0.01]), gap)
    return Surface(albedo, 0.0005 * g - 0.01 * gap, 0.7 + 0.05 * g.clip(-1, 1) + 0.2 * gap)


RECIPES = {
    f.__name__: f
    for f in (asphalt, marking, concrete, units, stones, tactile, grass, soil, mulch, sand, wood)
}
