"""Bring library items into a scene folder: assets, ground materials and skies, as scene records.

Shared by every scene maker (procedural streets, ``urbanverse gen``): files are copied into the
scene folder so it is self-contained, and the records point at them with relative paths.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from urbanverse.assets.catalogue import asset_folder, materialize
from urbanverse.assets.ground_materials import ground_material
from urbanverse.assets.record import Asset, ThumbnailRenderer
from urbanverse.assets.skies import sky_map
from urbanverse.records import atomic_dir
from urbanverse.scene.record import AssetRef, Material, Sky


def install_asset(
    asset: Asset, scene_dir: Path, *, thumbnail: ThumbnailRenderer, library: Path | None = None
) -> AssetRef:
    """Copy an asset's folder into ``scene_dir/assets/<uid>`` (once): an ingested asset's folder in the
    ``library`` folder it was ingested into, or a generated asset's folder in the mesh cache.

    A generated folder is made on first use, ``thumbnail`` drawing its thumbnail (pass
    ``urbanverse.render.thumbnail.library_thumbnail``). The copy is written whole or not at all, so a
    process killed while copying leaves no folder that a later run would take for the asset."""
    target = Path(scene_dir) / "assets" / asset.uid
    if not target.exists():
        with atomic_dir(target) as partial:
            if asset.source.kind == "ingested" and library is None:
                raise ValueError(f"asset {asset.uid} is ingested: name the library that holds its folder")
            folder = (
                asset_folder(asset, library, thumbnail=thumbnail)
                if library
                else materialize(asset, thumbnail=thumbnail)
            )
            shutil.copytree(folder, partial, dirs_exist_ok=True)
    return AssetRef(uid=asset.uid, path=f"assets/{asset.uid}")


def install_ground_material(name: str, scene_dir: Path) -> tuple[Material, float]:
    """Copy a ground material's base colour map into ``scene_dir/textures``; the Material and its friction."""
    built = ground_material(name)
    (Path(scene_dir) / "textures").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(built.base_color_map, Path(scene_dir) / "textures" / f"{name}.png")
    material = Material(
        name=name,
        base_color=tuple(float(c) for c in built.base_color),
        roughness=float(built.roughness),
        texture=f"textures/{name}.png",
        texture_scale=built.texture_scale_m,
    )
    return material, float(built.friction)


def install_sky(name: str, scene_dir: Path) -> Sky:
    """Copy a sky's HDR map into ``scene_dir/sky``; the Sky record with its colours and sun."""
    sky = sky_map(name)
    (Path(scene_dir) / "sky").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sky.hdri, Path(scene_dir) / "sky" / f"{sky.name}.hdr")
    return Sky(
        zenith_color=sky.zenith_color,
        horizon_color=sky.horizon_color,
        hdri=f"sky/{sky.name}.hdr",
        intensity=sky.intensity,
        sun_direction=sky.sun_direction,
        sun_intensity=sky.sun_intensity,
    )
