"""Procedural texture helpers shared by ground materials and skies.

Everything here is deterministic given a ``numpy.random.Generator`` and works on square,
*periodic* pixel grids: every field wraps around its edges without a seam (noise is
filtered white noise in the Fourier domain; cell patterns use periodic distances), so a
texture built from these pieces tiles. Pixel coordinates are ``(x, y)`` = (column, row),
pixel centres at ``i + 0.5``. Colours: ``srgb`` means display-encoded values in [0, 1],
``linear`` means linear-light RGB.

Also here: colour conversions (sRGB <-> linear, CIE Lab, HSV), soft (linearly
interpolated) histograms with an L1 norm of 1, the Hellinger distance between them, and a
local-binary-pattern + gradient texture descriptor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from scipy.special import ndtri

from urbanverse.colour import srgb8_to_lab
from urbanverse.records import atomic_path

# --------------------------------------------------------------------------- colour


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    """sRGB-encoded values in [0, 1] -> linear light (IEC 61966-2-1), same shape."""
    c = np.asarray(c, dtype=np.float64)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def linear_to_srgb(c: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] (clipped) -> sRGB-encoded values in [0, 1], same shape."""
    c = np.clip(np.asarray(c, dtype=np.float64), 0.0, 1.0)
    return np.where(c <= 0.0031308, c * 12.92, 1.055 * c ** (1 / 2.4) - 0.055)


def hex_to_linear(code: str) -> np.ndarray:
    """``"#rrggbb"`` (sRGB) -> linear RGB, shape (3,)."""
    code = code.lstrip("#")
    return srgb_to_linear(np.array([int(code[i : i + 2], 16) for i in (0, 2, 4)]) / 255.0)


def to_uint8(c: np.ndarray) -> np.ndarray:
    """Values in [0, 1] -> uint8 with rounding, same shape."""
    return np.round(np.clip(c, 0.0, 1.0) * 255.0).astype(np.uint8)


def rgb8_to_lab(rgb: np.ndarray) -> np.ndarray:
    """uint8 sRGB ``(..., 3)`` -> CIE L*a*b* (D65) ``(..., 3)``: L in [0, 100], a, b about [-128, 127]
    (:func:`urbanverse.colour.srgb8_to_lab`, the package's one Lab conversion)."""
    return srgb8_to_lab(rgb)


def rgb8_to_hsv(rgb: np.ndarray) -> np.ndarray:
    """uint8 sRGB ``(..., 3)`` -> HSV ``(..., 3)``, each channel in [0, 1] (hue wraps at 1)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    mx, mn = c.max(-1), c.min(-1)
    delta = mx - mn
    safe = np.where(delta > 0, delta, 1.0)
    r, g, b = c[..., 0], c[..., 1], c[..., 2]
    h = np.where(mx == r, (g - b) / safe % 6, np.where(mx == g, (b - r) / safe + 2, (r - g) / safe + 4))
    h = np.where(delta > 0, h / 6.0, 0.0)
    s = np.where(mx > 0, delta / np.where(mx > 0, mx, 1.0), 0.0)
    return np.stack([h % 1.0, s, mx], -1)


def luminance(linear_rgb: np.ndarray) -> np.ndarray:
    """Rec. 709 luminance of linear RGB ``(..., 3)`` -> ``(...)``."""
    return np.asarray(linear_rgb) @ np.array([0.2126, 0.7152, 0.0722])


# --------------------------------------------------------------------------- histograms


def soft_histogram(
    coords: np.ndarray, bins: tuple[int, ...], circular: tuple[bool, ...], weights: np.ndarray | None = None
) -> np.ndarray:
    """Multi-dimensional histogram with linear interpolation between neighbouring bins.

    ``coords``: ``(N, D)`` positions in [0, 1] per dimension (clipped; circular dimensions wrap).
    Each sample's weight is split between the two nearest bin centres in every dimension, so a
    small colour shift moves mass smoothly instead of jumping bins. Returns the flattened
    ``prod(bins)`` histogram, L1-normalised (all zeros when the total weight is zero).
    """
    coords = np.asarray(coords, dtype=np.float64)
    n = coords.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    index = [np.zeros(n, dtype=np.int64)]
    mass = [w]
    for d, (nb, circ) in enumerate(zip(bins, circular, strict=True)):
        pos = coords[:, d] * nb - 0.5
        if circ:
            lo = np.floor(pos)
            frac = pos - lo
            pairs = ((lo % nb).astype(np.int64), 1 - frac), (((lo + 1) % nb).astype(np.int64), frac)
        else:
            pos = np.clip(pos, 0.0, nb - 1.0)
            lo = np.minimum(np.floor(pos), nb - 2 if nb > 1 else 0)
            frac = pos - lo
            pairs = (lo.astype(np.int64), 1 - frac), (np.minimum(lo + 1, nb - 1).astype(np.int64), frac)
        index = [i * nb + b for i in index for b, _ in pairs]
        mass = [m * f for m in mass for _, f in pairs]
    hist = np.bincount(np.concatenate(index), np.concatenate(mass), minlength=int(np.prod(bins)))
    total = hist.sum()
    return hist / total if total > 0 else hist


def hellinger(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hellinger distance in [0, 1] between L1-normalised histograms along the last axis (broadcasts)."""
    bc = np.sum(np.sqrt(np.asarray(p) * np.asarray(q)), axis=-1)
    return np.sqrt(np.clip(1.0 - bc, 0.0, 1.0))


#: Texture descriptor length: 10 rotation-invariant uniform LBP codes + 8 gradient-magnitude bins.
TEXTURE_BINS = 18


def texture_descriptor(gray: np.ndarray) -> np.ndarray:
    """Texture descriptor of a grey image ``(H, W)`` in [0, 1] (H, W >= 3) -> ``(TEXTURE_BINS,)``, L1 = 1.

    Half the mass: a histogram of rotation-invariant uniform local binary patterns (radius 1,
    8 neighbours; codes 0..8 = number of brighter neighbours of a uniform pattern, 9 = not
    uniform), with a 0.01 tolerance so flat noise-free areas count as uniform. Other half: a
    histogram of log2 gradient magnitude (central differences, per pixel) over 8 bins from
    2^-9 to 2^-1. Pixel-scale dependent: compare patches seen at similar metres per pixel.
    """
    g = np.asarray(gray, dtype=np.float64)
    c = g[1:-1, 1:-1]
    offsets = [(-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1)]
    bits = np.stack(
        [g[1 + dy : g.shape[0] - 1 + dy, 1 + dx : g.shape[1] - 1 + dx] >= c + 0.01 for dy, dx in offsets]
    )
    transitions = np.sum(bits != np.roll(bits, 1, axis=0), axis=0)
    codes = np.where(transitions <= 2, bits.sum(0), 9).ravel()
    lbp = np.bincount(codes, minlength=10).astype(np.float64)
    gy, gx = g[2:, 1:-1] - g[:-2, 1:-1], g[1:-1, 2:] - g[1:-1, :-2]
    mag = np.log2(np.hypot(gx, gy).ravel() * 0.5 + 2.0**-10)
    grad = soft_histogram(((mag + 9.0) / 8.0)[:, None], (8,), (False,))
    return np.concatenate([lbp / lbp.sum(), grad]) * 0.5


# --------------------------------------------------------------------------- noise


def fractal_noise(
    size: int,
    rng: np.random.Generator,
    beta: float = 2.0,
    low: float = 1.0,
    high: float | None = None,
    stretch: float = 1.0,
    angle: float = 0.0,
) -> np.ndarray:
    """Periodic fractal noise ``(size, size)``, zero mean, unit standard deviation.

    White noise shaped in the Fourier domain by a power spectrum ``k^-beta`` (beta = 2: smooth,
    cloud-like; beta = 0: white), band-limited to ``low <= k <= high`` cycles per tile.
    ``stretch > 1`` elongates features by that factor along direction ``angle`` (radians from
    +x), e.g. for broom marks or grass blades. Tiles seamlessly by construction.
    """
    white = np.fft.rfft2(rng.standard_normal((size, size)))
    fy = np.fft.fftfreq(size)[:, None] * size
    fx = np.fft.rfftfreq(size)[None, :] * size
    ca, sa = np.cos(angle), np.sin(angle)
    along, across = fx * ca + fy * sa, -fx * sa + fy * ca
    k = np.hypot(along * stretch, across)
    keep = (np.hypot(fx, fy) >= low) & (np.hypot(fx, fy) <= (high if high is not None else size))
    amp = np.where(keep, np.maximum(k, 1e-9) ** (-beta / 2.0), 0.0)
    out = np.fft.irfft2(white * amp, s=(size, size))
    out -= out.mean()
    std = out.std()
    return out / std if std > 0 else out


def value_noise(x: np.ndarray, y: np.ndarray, lattice: np.ndarray) -> np.ndarray:
    """Smooth value noise at float coordinates: random ``lattice (P, P)`` values, wrapping with period P,
    interpolated with a smoothstep. ``x``, ``y``: any matching shapes, in lattice cells."""
    p = lattice.shape[0]
    x0, y0 = np.floor(x), np.floor(y)
    fx, fy = x - x0, y - y0
    fx, fy = fx * fx * (3 - 2 * fx), fy * fy * (3 - 2 * fy)
    flat = lattice.ravel()
    xi, yi = x0.astype(np.int64) % p, (y0.astype(np.int64) % p) * p
    xj, yj = (xi + 1) % p, (yi + p) % (p * p)
    top = flat[yi + xi] + (flat[yi + xj] - flat[yi + xi]) * fx
    bottom = flat[yj + xi] + (flat[yj + xj] - flat[yj + xi]) * fx
    return top + (bottom - top) * fy


def fbm(
    x: np.ndarray, y: np.ndarray, rng: np.random.Generator, octaves: int = 5, gain: float = 0.5
) -> np.ndarray:
    """Fractal sum of ``octaves`` value-noise layers (lacunarity 2) at float coordinates -> values
    roughly in [0, 1] (mean 0.5). Coordinates are in base-octave cells."""
    total = np.zeros(np.broadcast(x, y).shape)
    amp, norm = 1.0, 0.0
    for octave in range(octaves):
        lattice = rng.random((64, 64))
        scale = 2.0**octave
        total += amp * value_noise(x * scale + 17.3 * octave, y * scale - 9.1 * octave, lattice)
        norm += amp
        amp *= gain
    return total / norm


def normalize01(a: np.ndarray) -> np.ndarray:
    """Rescale to [0, 1] (min -> 0, max -> 1); a constant array gives zeros."""
    lo, hi = a.min(), a.max()
    return (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)


def smoothstep(e0: float, e1: float, x: np.ndarray) -> np.ndarray:
    """Hermite step: 0 below ``e0``, 1 above ``e1``, smooth in between (elementwise)."""
    t = np.clip((np.asarray(x) - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3 - 2 * t)


# --------------------------------------------------------------------------- cell patterns


def pixel_grid(size: int) -> np.ndarray:
    """Pixel centres ``(size, size, 2)`` as (x, y) in pixels."""
    ys, xs = np.mgrid[0:size, 0:size] + 0.5
    return np.stack([xs, ys], -1)


def worley(
    size: int, offsets: np.ndarray, warp: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Periodic cellular (Worley / Voronoi) pattern with one feature point per grid cell.

    ``offsets (ny, nx, 2)``: each point's (x, y) position inside its cell, in cell units [0, 1)
    (see ``cell_offsets``); cells are ``size / nx`` by ``size / ny`` px. ``warp``: optional
    periodic displacement ``(size, size, 2)`` (px) of the lookup positions, bending the borders
    (cracks, irregular stones). Nearest points are searched in the 3 x 3 neighbouring cells.
    Returns ``cell (size, size)``: index ``j * nx + i`` of the nearest point; ``f1``: distance
    to it (px); ``edge``: distance (px) to the border with the second-nearest point.
    """
    ny, nx = offsets.shape[:2]
    pos = pixel_grid(size) if warp is None else pixel_grid(size) + warp
    cw, ch = size / nx, size / ny
    x, y = pos[..., 0], pos[..., 1]
    ci, cj = np.floor(x / cw).astype(np.int64), np.floor(y / ch).astype(np.int64)
    f1, f2 = np.full(x.shape, np.inf), np.full(x.shape, np.inf)
    x1, y1, x2, y2 = (np.zeros(x.shape) for _ in range(4))
    cell = np.zeros(x.shape, dtype=np.int64)
    for dj in (-1, 0, 1):
        for di in (-1, 0, 1):
            i, j = (ci + di) % nx, (cj + dj) % ny
            px = (ci + di + offsets[j, i, 0]) * cw
            py = (cj + dj + offsets[j, i, 1]) * ch
            d = np.hypot(px - x, py - y)
            first = d < f1
            second = ~first & (d < f2)
            f2 = np.where(first, f1, np.where(second, d, f2))
            x2 = np.where(first, x1, np.where(second, px, x2))
            y2 = np.where(first, y1, np.where(second, py, y2))
            f1 = np.where(first, d, f1)
            x1, y1 = np.where(first, px, x1), np.where(first, py, y1)
            cell = np.where(first, j * nx + i, cell)
    sep = np.maximum(np.hypot(x2 - x1, y2 - y1), 1e-6)
    return cell, f1, (f2**2 - f1**2) / (2 * sep)


def cell_offsets(nx: int, ny: int, jitter: float, rng: np.random.Generator) -> np.ndarray:
    """Feature-point offsets ``(ny, nx, 2)`` for ``worley``: cell centres moved by up to ``jitter / 2``
    cell widths (``jitter = 1``: anywhere in the cell)."""
    return 0.5 + (rng.random((ny, nx, 2)) - 0.5) * min(jitter, 0.999)


def paint_rects(size: int, rects: list[tuple[int, int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Rasterise axis-aligned rectangles ``(x0, y0, w, h)`` in pixels, wrapping at the tile edges.

    Returns ``cell (size, size)``: index of the rectangle covering each pixel (-1 where none;
    later rectangles win) and ``edge``: distance (px) from the pixel centre to that
    rectangle's border (0 where none).
    """
    cell = np.full((size, size), -1, dtype=np.int64)
    edge = np.zeros((size, size))
    for k, (x0, y0, w, h) in enumerate(rects):
        lx, ly = np.arange(w) + 0.5, np.arange(h) + 0.5
        ex, ey = np.minimum(lx, w - lx), np.minimum(ly, h - ly)
        rows, cols = np.ix_((np.arange(h) + y0) % size, (np.arange(w) + x0) % size)
        cell[rows, cols] = k
        edge[rows, cols] = np.minimum(ey[:, None], ex[None, :])
    return cell, edge


def row_rects(size: int, rows: int, cols: float, offset: float, rng: np.random.Generator | None = None):
    """Rectangles for courses of units: ``rows`` courses, ``cols`` units per course on average; course r
    shifted by ``r * offset`` unit lengths (0.5 = running bond). With ``rng``, unit lengths vary
    randomly between 0.6 and 1.4 of the mean (irregular setts). Returns a list for ``paint_rects``."""
    rects = []
    ybounds = np.round(np.linspace(0, size, rows + 1)).astype(int)
    unit = size / cols
    for r in range(rows):
        if rng is None:
            bounds = np.arange(int(round(cols)) + 1) * unit
        else:
            lengths = rng.uniform(0.6, 1.4, int(round(cols)))
            bounds = np.concatenate([[0.0], np.cumsum(lengths / lengths.sum() * size)])
        xb = np.round(bounds + (r * offset % 1.0) * unit).astype(int)
        rects += [
            (xb[i], ybounds[r], xb[i + 1] - xb[i], ybounds[r + 1] - ybounds[r]) for i in range(len(xb) - 1)
        ]
    return rects


def herringbone_rects(size: int, unit: int) -> list[tuple[int, int, int, int]]:
    """90-degree herringbone of 2:1 units (``2 * unit`` by ``unit`` px); ``size`` must be a multiple of
    ``4 * unit``. Staircases of one horizontal then one vertical unit, repeated every 4 units in x."""
    if size % (4 * unit):
        raise ValueError(f"herringbone needs size % (4 * unit) == 0, got size={size}, unit={unit}")
    rects = []
    for n in range(size // unit):
        for k in range(size // (4 * unit)):
            x = n * unit + 4 * k * unit
            rects.append((x, n * unit, 2 * unit, unit))
            rects.append((x, (n + 1) * unit, unit, 2 * unit))
    return rects


def basketweave_rects(size: int, unit: int) -> list[tuple[int, int, int, int]]:
    """Basket weave: squares of two 2:1 units (``2 * unit`` by ``unit`` px), horizontal and vertical pairs
    alternating like a chessboard; ``size`` must be a multiple of ``4 * unit``."""
    if size % (4 * unit):
        raise ValueError(f"basket weave needs size % (4 * unit) == 0, got size={size}, unit={unit}")
    rects = []
    for by in range(size // (2 * unit)):
        for bx in range(size // (2 * unit)):
            x, y = 2 * bx * unit, 2 * by * unit
            if (bx + by) % 2:
                rects += [(x, y, unit, 2 * unit), (x + unit, y, unit, 2 * unit)]
            else:
                rects += [(x, y, 2 * unit, unit), (x, y + unit, 2 * unit, unit)]
    return rects


# --------------------------------------------------------------------------- surface pieces


def mix(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Blend colours ``a`` and ``b`` (broadcastable to (N, N, 3)) by weights ``t (N, N)``."""
    return a + (b - a) * t[..., None]


def grain(size: int, rng: np.random.Generator, fine: float, coarse: float) -> np.ndarray:
    """Multiplicative tone field ``(N, N)`` around 1: white-ish grain plus large, soft blotches."""
    return 1 + fine * fractal_noise(size, rng, 0.6, low=8) + coarse * fractal_noise(size, rng, 2.5)


def crack_mask(size: int, rng: np.random.Generator, cells: int, width: float, keep: float) -> np.ndarray:
    """Crack mask ``(N, N)`` in [0, 1]: borders of a warped ``cells x cells`` Voronoi pattern, ``width`` px
    wide, about a fraction ``keep`` of them visible."""
    warp = np.stack([fractal_noise(size, rng, 3.0, low=1) for _ in range(2)], -1) * (0.12 * size / cells)
    edge = worley(size, cell_offsets(cells, cells, 0.9, rng), warp)[2]
    visible = smoothstep(-0.3, 0.3, fractal_noise(size, rng, 2.5) + ndtri(keep))
    return (1 - smoothstep(width * 0.3, width, edge)) * visible


def chips(size: int, rng: np.random.Generator, cells: int, fraction: float, palette: list[str], gap: float):
    """Scattered angular chips: a ``cells x cells`` random Voronoi pattern, a ``fraction`` of the cells filled
    with a palette colour, shrunk by ``gap`` px. Returns ``mask (N, N)`` in [0, 1], ``colour (N, N, 3)``
    linear and ``edge (N, N)`` (px to the cell border)."""
    cell, _, edge = worley(size, cell_offsets(cells, cells, 1.0, rng))
    count = cells * cells
    chosen = rng.random(count) < fraction
    cols = np.stack([hex_to_linear(c) for c in palette])[rng.integers(len(palette), size=count)]
    cols = cols * rng.uniform(0.85, 1.15, (count, 1))
    return chosen[cell] * smoothstep(gap, gap + 1.0, edge), cols[cell], edge


# --------------------------------------------------------------------------- maps


def height_to_normal(height_m: np.ndarray, pixel_m: float) -> np.ndarray:
    """Tangent-space normal map (uint8 RGB ``(H, W, 3)``) from a periodic height field in metres.

    OpenGL convention (+X right = red, +Y up the image = green, +Z out = blue), as USD
    Preview Surface and MDL expect; slopes use wrapped central differences, so the map tiles.
    """
    dx = (np.roll(height_m, -1, 1) - np.roll(height_m, 1, 1)) / (2 * pixel_m)
    dy = (np.roll(height_m, 1, 0) - np.roll(height_m, -1, 0)) / (2 * pixel_m)
    n = np.stack([-dx, -dy, np.ones_like(dx)], -1)
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    return to_uint8(n * 0.5 + 0.5)


def save_png(path: Path, array: np.ndarray) -> None:
    """Write a uint8 ``(H, W)`` or ``(H, W, 3)`` array as PNG (deterministic bytes), atomically."""
    with atomic_path(Path(path)) as tmp:
        Image.fromarray(array).save(tmp, format="PNG", compress_level=1)
