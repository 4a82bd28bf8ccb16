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


def _studio(parts: Sequence, with_ground: bool) -> tuple[SceneBuilder, np.ndarray, np.ndarray]:
    """The parts (instance id 1) in the thumbnail studio, on a light ground square (instance id 0)
    when ``with_ground``; with the parts' bounds ``lo``, ``hi`` (m, asset frame)."""
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
    if with_ground:
        half = max(hi[0] - lo[0], hi[1] - lo[1]) * 0.65 + 0.05
        corners = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]])
        square = corners * [half, half, 0] + [*(lo[:2] + hi[:2]) / 2, -0.002]
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
    return builder, lo, hi


def _view_pose(
    lo: np.ndarray, hi: np.ndarray, camera_hfov_deg: float, azimuth_deg: float, elevation_deg: float
):
    """Camera pose looking at the bounds' centre from ``azimuth_deg`` (from +X, the front, counter-clockwise
    seen from above) and ``elevation_deg`` above the horizon, far enough to frame the whole box."""
    centre = (lo + hi) / 2
    radius = 0.5 * float(np.linalg.norm(np.maximum(hi - lo, 0.05)))
    az, el = np.radians(azimuth_deg), np.radians(elevation_deg)
    view = np.array([np.cos(az) * np.cos(el), np.sin(az) * np.cos(el), np.sin(el)])
    distance = radius / np.sin(np.radians(camera_hfov_deg / 2)) * 1.05
    return look_at(centre + distance * view, centre)


def render_thumbnail(parts: Sequence, size: int = 256) -> Image.Image:
    """Render parts (``mesh`` + linear ``rgb``; asset frame, Z-up, front +X) as a ``size``-pixel square."""
    builder, lo, hi = _studio(parts, with_ground=True)
    res = size * SS
    camera = PinholeCamera.from_hfov(res, res, 35.0)
    # From the front-right (35 degrees clockwise from the front), 25 degrees above the horizon.
    pose = _view_pose(lo, hi, 35.0, -35.0, 25.0)
    with builder.build(_STUDIO, res, res) as raster:
        rgb = raster.render(camera, pose, ids=False).rgb
    return Image.fromarray(rgb).resize((size, size), Image.LANCZOS)


def render_views(
    parts: Sequence, size: int, azimuths_deg: Sequence[float], elevation_deg: float = 15.0
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The parts seen from each azimuth (degrees from the front, counter-clockwise from above) at
    ``elevation_deg``, as a pedestrian sees street objects: per view the RGB image ``(size, size, 3)``
    uint8 on the studio's plain light background, and the mask ``(size, size)`` bool of the asset's
    pixels. No ground square, so that the background is uniform and the mask is the asset alone."""
    builder, lo, hi = _studio(parts, with_ground=False)
    camera = PinholeCamera.from_hfov(size, size, 35.0)
    out = []
    with builder.build(_STUDIO, size, size) as raster:
        for azimuth in azimuths_deg:
            frame = raster.render(camera, _view_pose(lo, hi, 35.0, azimuth, elevation_deg), ids=True)
            out.append((frame.rgb, frame.instance == 1))
    return out


def library_thumbnail(parts: Sequence) -> Image.Image:
    """The thumbnail stored in an asset folder: ``render_thumbnail`` at the library's size.

    Pass it as ``thumbnail=`` to the asset functions that write folders (``materialize``,
    ``asset_folder``, ``ingest``, ``install_asset``): the asset library sits below the renderer, so the
    caller supplies the drawing."""
    return render_thumbnail(parts, THUMBNAIL_SIZE)
