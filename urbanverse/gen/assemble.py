"""The generated scene: ground regions, placed cousins, sky and camera path as scene.json + USD.

The ground is the street model fitted to what the video saw (:mod:`urbanverse.layout.street_fit`),
each region with a library material matched to the colours observed for its type. Each object is
placed with its best cousin (its base on the ground region under it); all cousins are copied into the
scene so they can be swapped. The physics check then moves apart anything that interpenetrates.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from urbanverse.assets.jobs import open_library
from urbanverse.assets.store import AssetStore
from urbanverse.layout.lift import LiftedObjects, front_anchored
from urbanverse.layout.people import LiftedPeople
from urbanverse.layout.stage import FittedStreet
from urbanverse.layout.street_regions import ModelRegion
from urbanverse.recon.record import Reconstruction
from urbanverse.render.thumbnail import library_thumbnail
from urbanverse.retrieval.cousins import CousinSet
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.library_refs import install_asset, install_ground_material, install_sky
from urbanverse.scene.record import (
    CameraPose,
    GroundRegion,
    Scene,
    SceneObject,
    SceneSource,
)

#: Ground types people walk on (the scene's walkable area).
WALKABLE = ("sidewalk", "crosswalk", "plaza")
#: How far a building front's asset may be stretched or squeezed along the front to the measured
#: length (the library's facades come in steps of 1-2 m; more would stretch its windows visibly).
FRONT_STRETCH = (0.8, 1.25)


def _quat_wxyz(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (w, x, y, z) of a 3x3 rotation."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(rotation).as_quat()
    return (float(w), float(x), float(y), float(z))


def camera_trajectory(recon: Reconstruction, lift_z: float = 0.0) -> tuple[CameraPose, ...]:
    """The registered keyframes' poses as scene camera poses, raised by ``lift_z`` (m)."""
    out = []
    for k in recon.registered:
        m = np.asarray(k.world_from_camera).copy()
        m[2, 3] += lift_z
        out.append(
            CameraPose(
                frame=k.frame,
                time_s=k.time_s,
                position=tuple(float(v) for v in m[:3, 3]),
                quat_wxyz=_quat_wxyz(m[:3, :3]),
            )
        )
    return tuple(out)


def ground_regions(
    model: tuple[ModelRegion, ...], materials: dict[str, str], scene_dir: Path
) -> list[GroundRegion]:
    """Scene ground regions from the fitted model, with the chosen material per type installed."""
    used = {region.type for region in model}
    installed = {kind: install_ground_material(materials[kind], scene_dir) for kind in used}
    regions = []
    for k, region in enumerate(model):
        material, friction = installed[region.type]
        regions.append(
            GroundRegion(
                id=f"{region.id}_{k:02d}",
                type=region.type,  # type: ignore[arg-type]
                polygon=region.polygon,
                elevation=region.elevation,
                vertex_elevation=region.vertex_elevation,
                material=material,
                friction=friction,
                inferred_share=round(region.inferred_share, 4),
            )
        )
    return regions


def place_objects(
    lifted: LiftedObjects, cousins: CousinSet, regions: list[GroundRegion], scene_dir: Path, store: AssetStore
) -> tuple[list[SceneObject], list[str]]:
    """One scene object per lifted object that has a cousin (assets of ``store``, the library retrieval
    ranked them from); warnings for those that do not."""
    by_track = {c.track_id: c for c in cousins.objects}
    objects, warnings = [], []
    for obj in lifted.objects:
        match = by_track.get(obj.track_id)
        if match is None or not match.uids:
            warnings.append(f"track {obj.track_id} ({obj.category}): no library asset of this class")
            continue
        assets = [store.get(uid) for uid in match.uids]
        refs = [install_asset(a, scene_dir, thumbnail=library_thumbnail, library=store.root) for a in assets]
        chosen = assets[0]
        xy = front_anchored(obj, chosen.length)
        # A front's length is measured (its depth is not): the asset is stretched along it, within
        # FRONT_STRETCH, so the street wall has no gaps where the library had no asset that long.
        stretch = float(np.clip(obj.size[1] / chosen.width, *FRONT_STRETCH)) if obj.front_only else 1.0
        z = float(top_height_at(regions, np.asarray(xy))[0])
        objects.append(
            SceneObject(
                id=f"{obj.category}_{len(objects):03d}",
                category=chosen.category,
                asset=refs[0],
                cousins=tuple(refs[1:]),
                position=(xy[0], xy[1], z),
                yaw=float(math.remainder(obj.yaw, 2 * math.pi)),
                scale=(1.0, stretch, 1.0),
                size=(chosen.length, chosen.width * stretch, chosen.height),
                body_type="dynamic" if chosen.movable else "kinematic",
                mass=chosen.mass,
                friction=chosen.friction_coefficient,
                restitution=chosen.bounciness,
                confidence=float(min(1.0, obj.score)),
                source_track=obj.track_id,
            )
        )
    return objects, warnings


def assemble_scene(
    name: str,
    source_sha256: str,
    frames_used: tuple[int, ...],
    street: FittedStreet,
    cousins: CousinSet,
    ground_materials: dict[str, str],
    sky_name: str,
    recon: Reconstruction,
    scene_dir: Path,
    library: Path | None = None,
    people: LiftedPeople | None = None,
) -> tuple[Scene, list[str]]:
    """Install every library file into ``scene_dir`` and build the Scene record (not yet saved); the
    cousins are assets of the ``library`` folder (default: the default library); the ``people`` seen
    become its agents and flow field."""
    regions = ground_regions(street.model.regions, ground_materials, scene_dir)
    with open_library(library, must_exist=False) as store:
        objects, warnings = place_objects(street.objects, cousins, regions, scene_dir, store)
    scene = Scene(
        name=name,
        source=SceneSource(kind="video", video_sha256=source_sha256, frames_used=frames_used),
        ground=tuple(regions),
        objects=tuple(objects),
        sky=install_sky(sky_name, scene_dir),
        camera_trajectory=camera_trajectory(recon, street.camera_ground_m),
        walkable_area=tuple(r.polygon for r in regions if r.type in WALKABLE),
        agents=people.agents if people else (),
        flow=people.flow if people else None,
    )
    return scene, warnings
