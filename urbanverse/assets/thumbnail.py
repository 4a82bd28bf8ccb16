"""Small PNG renders of assets for browsing: a CPU painter's algorithm with PIL, no GPU or display.

Orthographic 3/4 view from the front-right, flat Lambert shading, a drop shadow on a ground
square (so floating parts show). Parts are drawn far to near by centroid depth, each with its
back faces culled; that is exact for separated convex parts and close enough for a thumbnail.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from urbanverse.assets.textures import linear_to_srgb

THUMBNAIL_FILE = "thumbnail.png"
#: Library thumbnails are this many pixels square.
THUMBNAIL_SIZE = 128
SS = 2  # supersampling factor
LIGHT = np.array([0.45, -0.35, 0.82]) / np.linalg.norm([0.45, -0.35, 0.82])


def _camera(azimuth_deg: float = -35.0, elevation_deg: float = 25.0) -> tuple[np.ndarray, ...]:
    """Orthographic camera basis: ``right``, ``up`` and ``forward`` (pointing away from the viewer)."""
    az, el = np.radians(azimuth_deg), np.radians(elevation_deg)
    eye = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    fwd = -eye
    right = np.cross(fwd, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    return right, np.cross(right, fwd), fwd


def render_thumbnail(parts: Sequence, size: int = 256) -> Image.Image:
    """Render parts (``mesh`` + linear ``rgb``; asset frame, Z-up, front +X) as a ``size``-pixel square."""
    right, up, fwd = _camera()
    res = size * SS
    img = Image.new("RGB", (res, res), (236, 238, 240))
    draw = ImageDraw.Draw(img)
    verts = np.concatenate([p.mesh.vertices for p in parts])
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    g = max(hi[0] - lo[0], hi[1] - lo[1]) * 0.65 + 0.05
    ground = np.array([[-g, -g, 0.0], [g, -g, 0.0], [g, g, 0.0], [-g, g, 0.0]])
    extent = np.concatenate([verts, ground])
    uv = np.stack([extent @ right, extent @ up], axis=1)
    uv_lo, uv_hi = uv.min(axis=0), uv.max(axis=0)
    scale = 0.9 * res / max(uv_hi - uv_lo)
    offset = res / 2 - scale * (uv_lo + uv_hi) / 2

    def project(p: np.ndarray) -> np.ndarray:
        q = np.stack([p @ right, p @ up], axis=-1) * scale + offset
        q[..., 1] = res - q[..., 1]
        return q

    draw.polygon([tuple(q) for q in project(ground)], fill=(200, 204, 196))
    shadow_dir = LIGHT / LIGHT[2]
    for p in parts:
        v, f = p.mesh.vertices, p.mesh.faces
        for t in project((v - np.outer(v[:, 2], shadow_dir))[f]):
            draw.polygon([tuple(q) for q in t], fill=(150, 152, 148))
    # painter's algorithm per part: parts are convex, so their back-face-culled triangles never overlap
    # each other; parts are drawn far to near by centroid depth (robust for thin decals on plates)
    for i in np.argsort([-(p.mesh.vertices.mean(axis=0) @ fwd) for p in parts]):
        p = parts[i]
        tri = p.mesh.vertices[p.mesh.faces]
        n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        n /= np.linalg.norm(n, axis=1, keepdims=True) + 1e-12
        visible = n @ fwd < 0.0
        shade = 0.35 + 0.65 * np.clip(n[visible] @ LIGHT, 0.0, 1.0)
        cols = linear_to_srgb(np.outer(shade, p.rgb))
        for t, c in zip(project(tri[visible]), cols, strict=True):
            c = tuple(int(x * 255) for x in c)
            draw.polygon([tuple(q) for q in t], fill=c, outline=c)
    return img.resize((size, size), Image.LANCZOS)
