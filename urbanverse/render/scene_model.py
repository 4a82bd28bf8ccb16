"""Turn a Scene (scene.json + its asset folders and textures) into a rasterizer scene.

Ground regions keep their material textures, tiled every ``texture_scale`` metres; objects look
as ``appearance`` dresses them (colours plus a procedural detail texture), one set of meshes per
asset and scale, shared by every object that uses it.

People (the scene's ``agents``), where asked for, are walking figures (:mod:`urbanverse.render.people`)
posed per frame with :func:`urbanverse.render.people.pose_people`.

Ids: instance id of object ``i`` (scene order) is ``i + 1``, of agent ``k`` ``len(objects) + 1 + k``;
ground and sky have instance 0. Semantic ids: 0 sky, then the ground types, then the taxonomy's L3
classes (see :func:`semantic_classes`); an agent's is that of its ``kind`` (``pedestrian``).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
from PIL import Image

from urbanverse.assets.mujoco_body import yaw_quat
from urbanverse.assets.record import load_asset, load_visual_parts
from urbanverse.assets.taxonomy import TAXONOMY
from urbanverse.render.appearance import AssetMesh, add_asset_meshes, detail_texture_name, srgb
from urbanverse.render.people import add_people
from urbanverse.render.raster import Lighting, Rasterizer, SceneBuilder, triplanar_uv
from urbanverse.scene.ground import ground_mesh
from urbanverse.scene.record import Scene, resolve_inside

GROUND_CLASSES = ("road", "sidewalk", "crosswalk", "ramp", "terrain", "plaza")
#: Semantic id of an object whose category is not a taxonomy L3 class.
OTHER_OBJECT = 15
#: Semantic id of the first L3 class.
FIRST_OBJECT_CLASS = 16
#: Longest side (pixels) of ground textures on upload: finer detail than this is never resolved.
MAX_TEXTURE = 512


def semantic_classes() -> dict[int, str]:
    """Semantic id -> class name: 0 ``sky``, ground types, ``other_object``, then L3 classes."""
    table = {0: "sky"}
    table.update({i + 1: name for i, name in enumerate(GROUND_CLASSES)})
    table[OTHER_OBJECT] = "other_object"
    table.update({FIRST_OBJECT_CLASS + i: name for i, name in enumerate(TAXONOMY)})
    return table


@functools.cache
def _class_ids() -> dict[str, int]:
    return {name: i for i, name in semantic_classes().items()}


def semantic_id(category: str) -> int:
    """Semantic id of a ground type or an object's L3 category."""
    return _class_ids().get(category, OTHER_OBJECT)


def load_texture(path: Path) -> np.ndarray:
    image = Image.open(path).convert("RGB")
    image.thumbnail((MAX_TEXTURE, MAX_TEXTURE))
    return np.asarray(image)


def _add_ground(builder: SceneBuilder, scene: Scene, scene_dir: Path) -> None:
    for k, region in enumerate(scene.ground):
        mat = region.material
        mesh = ground_mesh(region)
        v, f = np.asarray(mesh.vertices), np.asarray(mesh.faces)
        if mat.texture:
            tex = f"ground:{mat.texture}"
            path = resolve_inside(scene_dir, mat.texture, f"ground[{k}].material.texture")
            builder.add_texture(tex, load_texture(path))
            rgba = [1.0, 1.0, 1.0, 1.0]
        else:
            tex = detail_texture_name(builder, "grain")
            rgba = [*srgb(mat.base_color), 1.0]
        name = f"ground{k}"
        builder.add_mesh(name, v, f, triplanar_uv(v, f, mat.texture_scale))
        builder.add_instance(
            name,
            position=(0, 0, 0),
            quat_wxyz=(1, 0, 0, 0),
            rgba=rgba,
            texture=tex,
            instance_id=0,
            semantic_id=semantic_id(region.type),
            bounds=np.array([v.min(axis=0), v.max(axis=0)]),
            specular=0.05,
        )


def _asset_meshes(builder: SceneBuilder, scene_dir: Path, path: str, scale, where: str) -> list[AssetMesh]:
    folder = resolve_inside(scene_dir, path, where)
    return add_asset_meshes(
        builder, f"{path}|{tuple(scale)}", load_visual_parts(folder, load_asset(folder)), scale
    )


def _add_objects(builder: SceneBuilder, scene: Scene, scene_dir: Path) -> None:
    cache: dict[tuple, list[AssetMesh]] = {}
    for i, obj in enumerate(scene.objects):
        key = (obj.asset.path, tuple(obj.scale))
        if key not in cache:
            cache[key] = _asset_meshes(
                builder, scene_dir, obj.asset.path, obj.scale, f"objects[{i}].asset.path"
            )
        half = np.asarray(obj.size) / 2  # size is after scaling (SceneObject)
        radius = float(np.hypot(half[0], half[1]))
        p = np.asarray(obj.position, float)
        bounds = np.array(
            [[p[0] - radius, p[1] - radius, p[2]], [p[0] + radius, p[1] + radius, p[2] + 2 * half[2]]]
        )
        for mesh in cache[key]:
            builder.add_instance(
                mesh.name,
                position=obj.position,
                quat_wxyz=yaw_quat(obj.yaw),
                rgba=mesh.rgba,
                texture=mesh.texture,
                instance_id=i + 1,
                semantic_id=semantic_id(obj.category),
                bounds=bounds,
            )


def scene_lighting(scene: Scene, shadows: bool = True) -> Lighting:
    """Sun from the scene's sky record; sky gradient from its zenith and horizon colours."""
    sky = scene.sky
    elevation = math.asin(
        min(1.0, -sky.sun_direction[2] / max(1e-9, float(np.linalg.norm(sky.sun_direction))))
    )
    sun = 0.35 + 0.45 * min(1.0, math.sin(max(elevation, 0.0)) / math.sin(math.radians(45)))
    return Lighting(
        sun_direction=tuple(sky.sun_direction),
        sun_color=(sun, sun * 0.98, sun * 0.93),
        sky_zenith=tuple(srgb(sky.zenith_color)),
        sky_horizon=tuple(srgb(sky.horizon_color)),
        shadows=shadows,
    )


def build_rasterizer(
    scene: Scene,
    scene_dir: Path,
    max_width: int,
    max_height: int,
    shadows: bool = True,
    max_capsules: int = 0,
    people: bool = False,
) -> Rasterizer:
    """A rasterizer of the whole scene for images up to ``max_width`` x ``max_height`` pixels that
    can draw ``max_capsules`` moving capsules (pedestrians) per view; with ``people``, the scene's
    agents are figures to pose per frame (module docstring)."""
    builder = SceneBuilder()
    _add_ground(builder, scene, Path(scene_dir))
    _add_objects(builder, scene, Path(scene_dir))
    if people:
        add_people(builder, scene.agents, len(scene.objects) + 1, [semantic_id(a.kind) for a in scene.agents])
    return builder.build(scene_lighting(scene, shadows), max_width, max_height, max_capsules)
