"""What the viewer draws, as plain data (numpy, trimesh, PIL): no viser here, so it is testable alone.

World frame as in ``scene.json``: metres, Z-up, yaw about +Z. Colours leave this module as
8-bit sRGB (what a browser displays); records store linear RGB.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

from urbanverse.assets.record import Asset, load_visual_parts
from urbanverse.scene.ground import ground_mesh, planar_uv, top_triangles
from urbanverse.scene.record import GroundRegion, Material, Scene, SceneObject, Sky, resolve_inside
from urbanverse.viewer.topdown import scene_bounds, srgb255

#: Vertical field of view of the viewer's camera (radians).
CAMERA_FOV = math.radians(55.0)
#: Height (m) of overlay layers above the highest ground top under them.
OVERLAY_LIFT = 0.03


def yaw_wxyz(yaw: float) -> tuple[float, float, float, float]:
    """Quaternion (w, x, y, z) of a rotation by ``yaw`` radians about +Z."""
    return (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))


def ground_display_mesh(region: GroundRegion, scene_dir) -> trimesh.Trimesh:
    """The region's mesh (top and curb walls) with its material: the texture tiled every
    ``texture_scale`` metres when the material has one, else the flat base colour."""
    mesh = ground_mesh(region)
    mat = region.material
    if mat.texture is not None:
        path = resolve_inside(scene_dir, mat.texture, f"ground {region.id} texture")
        image = Image.open(path).convert("RGB")
        uv = planar_uv(np.asarray(mesh.vertices), mat.texture_scale)
        material = trimesh.visual.material.SimpleMaterial(image=image, diffuse=(255, 255, 255, 255))
        mesh.visual = trimesh.visual.TextureVisuals(uv=uv, image=image, material=material)
    else:
        rgba = np.array([*srgb255(mat.base_color), 255], dtype=np.uint8)
        mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=np.tile(rgba, (len(mesh.faces), 1)))
    return mesh


def object_glb(asset_dir: Path, asset: Asset) -> bytes:
    """The asset's visual mesh as GLB bytes for the browser.

    A file with its own glTF materials (ingested assets) is sent as it is. Generated assets store
    one colour per part as vertex colours without a material, which browsers' glTF loaders may draw
    white, so they are re-exported with one PBR material per part (linear base colour).
    """
    path = resolve_inside(asset_dir, asset.visual_mesh, f"asset {asset.uid} visual mesh")
    data = path.read_bytes()
    if _glb_has_materials(data):
        return data
    scene = trimesh.Scene()
    for part in load_visual_parts(asset_dir, asset):
        mesh = part.mesh.copy()
        material = trimesh.visual.material.PBRMaterial(
            baseColorFactor=[*part.rgb, 1.0], metallicFactor=0.0, roughnessFactor=0.8
        )
        mesh.visual = trimesh.visual.TextureVisuals(material=material)
        scene.add_geometry(mesh, node_name=part.name, geom_name=part.name)
    return scene.export(file_type="glb")


def _glb_has_materials(data: bytes) -> bool:
    """Whether a GLB's JSON chunk declares glTF materials."""
    if len(data) < 20 or data[:4] != b"glTF":
        return False
    (length,) = struct.unpack_from("<I", data, 12)
    return bool(json.loads(data[20 : 20 + length]).get("materials"))


def flat_overlay(polygon, z: float) -> tuple[np.ndarray, np.ndarray]:
    """A polygon as a flat triangle mesh at height ``z``: vertices ``(P, 3)``, faces ``(T, 3)``."""
    region = GroundRegion(
        id="overlay",
        type="plaza",
        polygon=tuple(tuple(p) for p in polygon),
        elevation=0.0,
        material=Material(name="overlay", base_color=(0.0, 0.0, 0.0)),
    )
    verts, faces = top_triangles(region)
    verts[:, 2] = z
    return verts, faces


def overlay_height(scene: Scene) -> float:
    """A height just above every ground top (m), for flat overlays such as the walkable area."""
    tops = [h for r in scene.ground for h in r.top_heights()]
    return (max(tops) if tops else 0.0) + OVERLAY_LIFT


def polyline_segments(points: np.ndarray) -> np.ndarray:
    """Consecutive point pairs of a path ``(T, 3)`` as line segments ``(T - 1, 2, 3)``."""
    points = np.asarray(points, dtype=np.float32)
    return np.stack([points[:-1], points[1:]], axis=1)


def sky_gradient(sky: Sky, height: int = 256) -> np.ndarray:
    """A vertical gradient image ``(height, 4, 3)`` uint8 from the zenith colour (top) to the horizon."""
    t = np.linspace(0.0, 1.0, height)[:, None] ** 0.7
    linear = (1 - t) * np.asarray(sky.zenith_color) + t * np.asarray(sky.horizon_color)
    rows = np.array([srgb255(c) for c in linear], dtype=np.uint8)
    return np.repeat(rows[:, None, :], 4, axis=1)


@dataclass(frozen=True)
class CameraView:
    """A camera: ``position`` and ``look_at`` in world metres, vertical ``fov`` in radians, Z up."""

    position: tuple[float, float, float]
    look_at: tuple[float, float, float]
    fov: float = CAMERA_FOV


def overview_camera(scene: Scene) -> CameraView:
    """Looking at the scene's centre from the south, high enough to see the whole layout."""
    lo, hi = scene_bounds(scene, margin=0.0)
    centre = (lo + hi) / 2
    span = float(max(hi - lo))
    dist = 0.5 * span / math.tan(CAMERA_FOV / 2) * 0.62
    position = (float(centre[0]), float(centre[1] - 0.8 * dist), 0.6 * dist)
    return CameraView(position, (float(centre[0]), float(centre[1]), 0.0))


def object_camera(obj: SceneObject) -> CameraView:
    """Looking at one object from its south-east, at a distance that frames it."""
    size = float(max(obj.size))
    target = np.array(obj.position) + np.array([0.0, 0.0, 0.5 * obj.size[2]])
    eye = target + np.array([0.9, -1.6, 1.0]) * max(size, 1.0) * 1.4
    return CameraView(tuple(float(v) for v in eye), tuple(float(v) for v in target))


def object_attributes(obj: SceneObject, asset: Asset | None) -> list[tuple[str, str]]:
    """(label, value) rows describing a placed object, with its library asset when known."""
    rows = [
        ("object", obj.id),
        ("category", obj.category),
        ("asset uid", obj.asset.uid),
        ("dimensions (l x w x h)", " x ".join(f"{v:.2f}" for v in obj.size) + " m"),
        ("position", ", ".join(f"{v:.2f}" for v in obj.position) + " m"),
        ("yaw", f"{math.degrees(obj.yaw):.1f}°"),
        ("mass", f"{obj.mass:.1f} kg"),
        ("friction", f"{obj.friction:.2f}"),
        ("restitution", f"{obj.restitution:.2f}"),
        ("body type", obj.body_type),
        ("movable", "yes" if obj.body_type == "dynamic" else "no (kinematic)"),
        ("source track", "none (placed by hand)" if obj.source_track is None else str(obj.source_track)),
        ("confidence", f"{obj.confidence:.2f}"),
        ("cousins", ", ".join(c.uid for c in obj.cousins) or "none"),
    ]
    if asset is not None:
        rows += asset_rows(asset)[2:]
    return rows


def asset_rows(asset: Asset) -> list[tuple[str, str]]:
    """(label, value) rows describing a library asset."""
    return [
        ("asset uid", asset.uid),
        ("category", asset.category),
        ("taxonomy", " / ".join(asset.category_path)),
        ("description", asset.description or "-"),
        ("asset size (l x w x h)", f"{asset.length:.2f} x {asset.width:.2f} x {asset.height:.2f} m"),
        ("asset mass", f"{asset.mass:.1f} kg"),
        ("asset friction", f"{asset.friction_coefficient:.2f}"),
        ("materials", ", ".join(asset.materials) or "-"),
        ("asset movable", "yes" if asset.movable else "no"),
        ("traversability", asset.traversability),
        ("source", asset.source.generator or asset.source.file or asset.source.kind),
    ]


def markdown_table(rows: list[tuple[str, str]]) -> str:
    """Rows as a two-column Markdown table (pipes in values escaped)."""
    lines = ["| | |", "|---|---|"]
    lines += [f"| **{k}** | {v.replace('|', '/')} |" for k, v in rows]
    return "\n".join(lines)
