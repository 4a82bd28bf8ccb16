"""Small PNG renders of assets for browsing, made with the scene rasterizer.

A 3/4 view from the front-right and above, the asset standing on a light ground square under a
sun with shadows (so floating parts show), its parts dressed as in scene renders. Rendered at
twice the size and downsampled, for anti-aliasing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from urbanverse.assets.record import THUMBNAIL_SIZE
from urbanverse.render.appearance import add_asset_meshes, detail_texture_name
from urbanverse.render.raster import Lighting, PinholeCamera, SceneBuilder, look_at

SS = 2  # supersampling factor
#: Background (sky) and sun of the thumbnail studio, display colours.
_STUDIO = Lighting(
    sun_direction=(-0.45, 0.35, -0.82),
    sun_color=(0.62, 0.61, 0.58),
    ambient_color=(0.45, 0.46, 0.48),
    sky_zenith=(0.93, 0.93, 0.94),
    sky_horizon=(0.93, 0.93, 0.94),
    shadow_map=1024,
)


def render_thumbnail(parts: Sequence, size: int = 256) -> Image.Image:
    """Render parts (``mesh`` + linear ``rgb``; asset frame, Z-up, front +X) as a ``size``-pixel square."""
    verts = np.concatenate([np.asarray(p.mesh.vertices) for p in parts])
    lo, hi = verts.min(axis=0), verts.max(axis=0)
    builder = SceneBuilder()
    meshes = add_asset_meshes(builder, "asset", parts, (1.0, 1.0, 1.0))
    bounds = np.array([lo, hi])
    for mesh in meshes:
        builder.add_instance(
            mesh.name,
            position=(0, 0, 0),
            quat_wxyz=(1, 0, 0, 0),
            rgba=mesh.rgba,
            texture=mesh.texture,
            instance_id=1,
            semantic_id=1,
            bounds=bounds,
        )
    half = max(hi[0] - lo[0], hi[1] - lo[1]) * 0.65 + 0.05
    centre_xy = (lo[:2] + hi[:2]) / 2
    corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]])
    square = corners * [half, half, 0] + [*centre_xy, -0.002]
    builder.add_mesh("ground", square, np.array([[0, 1, 2], [0, 2, 3]]), None)
    builder.add_instance(
        "ground",
        position=(0, 0, 0),
        quat_wxyz=(1, 0, 0, 0),
        rgba=(0.8, 0.81, 0.78, 1.0),
        texture=detail_texture_name(builder, "grain"),
        instance_id=0,
        semantic_id=0,
        bounds=np.array([square.min(axis=0), square.max(axis=0)]),
    )
    res = size * SS
    centre = np.array([*centre_xy, (lo[2] + hi[2]) / 2])
    radius = 0.5 * float(np.linalg.norm(np.maximum(hi - lo, 0.05)))
    view = np.array([np.cos(np.radians(-35)), np.sin(np.radians(-35)), np.tan(np.radians(25))])
    camera = PinholeCamera.from_hfov(res, res, 35.0)
    distance = radius / np.sin(np.radians(35.0 / 2)) * 1.05
    eye = centre + distance * view / np.linalg.norm(view)
    with builder.build(_STUDIO, res, res) as raster:
        rgb = raster.render(camera, look_at(eye, centre), ids=False).rgb
    return Image.fromarray(rgb).resize((size, size), Image.LANCZOS)


def library_thumbnail(parts: Sequence) -> Image.Image:
    """The thumbnail stored in an asset folder: ``render_thumbnail`` at the library's size.

    Pass it as ``thumbnail=`` to the asset functions that write folders (``materialize``,
    ``asset_folder``, ``ingest``, ``install_asset``): the asset library sits below the renderer, so the
    caller supplies the drawing."""
    return render_thumbnail(parts, THUMBNAIL_SIZE)
