"""The Asset record and the asset folder on disk.

An asset folder holds ``asset.json`` (this record), the visual mesh (GLB, one node per
coloured part), the collision parts (GLB, one node per convex piece) and a PNG thumbnail, all in the
asset's own frame: metres, Z-up, front along +X, base at z = 0, centred in x and y.
Field names follow UrbanVerse-100K ``std_<uid>.json`` where they exist.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError

from urbanverse.assets import limits
from urbanverse.errors import InputError
from urbanverse.records import Vec3, load_record, record, save_json

if TYPE_CHECKING:
    from PIL import Image

ASSET_SCHEMA_VERSION = 1
ASSET_FILE = "asset.json"
THUMBNAIL_FILE = "thumbnail.png"
#: Library thumbnails are this many pixels square.
THUMBNAIL_SIZE = 128

#: Draws an asset's coloured parts (each with ``mesh`` and linear ``rgb``, in the asset frame) as a
#: ``THUMBNAIL_SIZE`` square image. The caller passes ``urbanverse.render.thumbnail.library_thumbnail``:
#: the library sits below the renderer, so it cannot draw by itself.
ThumbnailRenderer = Callable[[Sequence], "Image.Image"]

#: How a physical value was obtained: computed from geometry, looked up from a material
#: table, or read from an annotation file.
ValueOrigin = Literal["measured", "derived", "annotated"]


@record
class AssetSource:
    """Provenance: a generator with its parameters and seed, or an ingested file with its hash (and,
    for an UrbanVerse-100K pair with an annotated front, ``parameters`` ``front_yaw_deg``: the turn
    about +Z applied to bring the front to +X, degrees counter-clockwise seen from above, and
    ``front_from``: the annotation field that gave it)."""

    kind: Literal["procedural", "ingested"]
    generator: str | None = None
    parameters: dict[str, float | int | str | bool] | None = None
    seed: int | None = None
    file: str | None = None
    sha256: str | None = None


Traversability = Literal["pass_through", "push_through", "obstacle"]


@record
class Asset:
    """One library entry, with the UrbanVerse-100K attribute names.

    Geometry in metres (``length`` along x, ``width`` along y, ``height`` along z; ``volume`` in
    m^3), ``mass`` in kg, ``youngs_modulus`` in MPa, ``surface_hardness`` on the Mohs scale,
    ``surface_roughness`` in [0, 1], ``required_force`` in N (to slide it on dry ground),
    ``recommended_clearance`` in m, ``quality`` in 0..10 (``load_asset`` checks each against
    ``ASSET_LIMITS``, the ranges of ``urbanverse.assets.limits``). ``value_origin`` tells, per physical
    field, whether it was ``measured`` from geometry, ``derived`` from the material table and
    rules, or ``annotated`` in an input file.
    """

    schema_version: int = ASSET_SCHEMA_VERSION
    uid: str
    category: str
    category_path: tuple[str, str, str]
    synset: str = ""
    description: str = ""
    description_long: str = ""
    length: float
    width: float
    height: float
    max_dimension: float
    volume: float
    materials: tuple[str, ...] = ()
    materials_composition: tuple[float, ...] = ()
    colors: tuple[str, ...] = ()
    colors_composition: tuple[float, ...] = ()
    mass: float
    center_of_mass: Vec3 = (0.0, 0.0, 0.0)
    friction_coefficient: float
    bounciness: float
    youngs_modulus: float = 0.0
    surface_hardness: float = 0.0
    surface_roughness: float = 0.5
    movable: bool
    required_force: float = 0.0
    walkable: bool = False
    enterable: bool = False
    receptacle: bool = False
    support_surface: bool = False
    affordances: tuple[str, ...] = ()
    traversability: Traversability = "obstacle"
    traversable_by: tuple[str, ...] = ()
    recommended_clearance: float = 0.5
    quality: int = 5
    asset_composition_type: Literal["single", "group", "scene"] = "single"
    license_info: str = ""
    visual_mesh: str = "visual.glb"
    collision_parts: str = "collision.glb"
    collision_approximation: Literal["convexHull", "convexDecomposition"] = "convexHull"
    thumbnail: str | None = None
    value_origin: dict[str, ValueOrigin]
    source: AssetSource


@dataclass(frozen=True)
class VisualPart:
    """A coloured piece of an asset's visual mesh. ``rgb``: linear colour in [0, 1]^3."""

    name: str
    mesh: trimesh.Trimesh
    rgb: tuple[float, float, float]


def _load_glb_parts(path: Path) -> list[tuple[str, trimesh.Trimesh]]:
    if not path.is_file():
        raise InputError(f"{path}: mesh file not found")
    try:
        scene = trimesh.load(path, force="scene")
        parts = [(name, mesh) for name, mesh in zip(scene.graph.nodes_geometry, scene.dump(), strict=True)]
    except Exception as exc:  # trimesh raises many types for corrupt files
        raise InputError(f"{path}: cannot read mesh ({type(exc).__name__}: {exc})") from None
    if not parts or any(len(m.faces) == 0 for _, m in parts):
        raise InputError(f"{path}: mesh file has no triangles")
    for name, mesh in parts:
        # The asset frame is centred with its base at z = 0, so no vertex lies farther out than the
        # largest asset size; anything else is a mesh in other units or garbage.
        extent = float(np.abs(mesh.vertices).max()) if np.isfinite(mesh.vertices).all() else math.inf
        if extent > limits.SIZE.hi:
            raise InputError(
                f"{path}: part {name!r} has a vertex {extent:g} m from the asset origin "
                f"(the asset frame allows {limits.SIZE.hi:g} m)"
            )
    return parts


def _main_rgb(mesh: trimesh.Trimesh) -> tuple[float, float, float]:
    visual = mesh.visual
    color = visual.main_color if visual.kind in ("vertex", "face") else None
    if color is None and hasattr(visual, "material"):
        color = visual.material.main_color
    if color is None:
        color = (180, 180, 180, 255)
    return tuple(float(c) / 255.0 for c in np.asarray(color)[:3])


#: A file named by an asset record: a plain name inside the asset folder.
FILE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")

#: Physical fields of ``Asset`` and their ranges (``urbanverse.assets.limits``).
ASSET_LIMITS = {
    "length": limits.SIZE,
    "width": limits.SIZE,
    "height": limits.SIZE,
    "max_dimension": limits.SIZE,
    "volume": limits.VOLUME,
    "mass": limits.MASS,
    "friction_coefficient": limits.FRICTION,
    "bounciness": limits.RESTITUTION,
    "youngs_modulus": limits.YOUNGS_MODULUS,
    "surface_hardness": limits.HARDNESS,
    "surface_roughness": limits.UNIT_INTERVAL,
    "required_force": limits.FORCE,
    "recommended_clearance": limits.CLEARANCE,
    "quality": limits.QUALITY,
}


def validate_asset(asset: Asset) -> None:
    """Checks beyond types: the uid, every physical field within its range (``ASSET_LIMITS``), the
    centre of mass within the asset frame, and mesh files named inside the asset folder. Raises
    ``InputError`` naming the field of the first bad value."""
    if asset.schema_version != ASSET_SCHEMA_VERSION:
        version = limits.short_number(asset.schema_version)
        raise InputError(f"schema_version: this urbanverse reads {ASSET_SCHEMA_VERSION}, got {version}")
    limits.check_uid(asset.uid, "uid")
    for name, limit in ASSET_LIMITS.items():
        limits.check(getattr(asset, name), limit, name)
    limits.check_all(
        asset.center_of_mass, limits.Limit(-limits.SIZE.hi, limits.SIZE.hi, "m"), "center_of_mass"
    )
    limits.check_all(asset.materials_composition, limits.UNIT_INTERVAL, "materials_composition")
    limits.check_all(asset.colors_composition, limits.UNIT_INTERVAL, "colors_composition")
    for name in ("visual_mesh", "collision_parts", "thumbnail"):
        file = getattr(asset, name)
        if file is not None and not FILE_NAME.fullmatch(file):
            raise InputError(
                f"{name}: {file[:80]!r} is not a file name in the asset folder (1-128 letters, digits, "
                "'.', '_' or '-', not starting with '.')"
            )


def load_asset(asset_dir: Path) -> Asset:
    """Load and validate ``asset_dir/asset.json`` (types, then ``validate_asset``)."""
    path = Path(asset_dir) / ASSET_FILE
    asset = load_record(Asset, path)
    try:
        validate_asset(asset)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return asset


def load_visual_parts(asset_dir: Path, asset: Asset) -> list[VisualPart]:
    """The visual mesh as coloured parts, in the asset frame."""
    parts = _load_glb_parts(Path(asset_dir) / asset.visual_mesh)
    return [VisualPart(name, mesh, _main_rgb(mesh)) for name, mesh in parts]


def load_collision_parts(asset_dir: Path, asset: Asset) -> list[trimesh.Trimesh]:
    """The convex collision pieces, in the asset frame; ``InputError`` for a flat piece (no volume)."""
    path = Path(asset_dir) / asset.collision_parts
    parts = _load_glb_parts(path)
    for name, mesh in parts:
        try:
            volume = ConvexHull(np.asarray(mesh.vertices)).volume if len(mesh.vertices) >= 4 else 0.0
        except QhullError:
            volume = 0.0
        if volume <= 0.0:
            raise InputError(f"{path}: collision part {name!r} is flat (a convex piece needs a volume)")
    return [mesh for _, mesh in parts]


def _export_parts(parts: list[tuple[str, trimesh.Trimesh]], path: Path) -> None:
    scene = trimesh.Scene()
    for name, mesh in parts:
        scene.add_geometry(mesh, node_name=name, geom_name=name)
    path.write_bytes(scene.export(file_type="glb"))


def save_asset(asset: Asset, asset_dir: Path, visual: list | None, collision: list[trimesh.Trimesh]) -> None:
    """Write an asset folder: meshes first, ``asset.json`` last (so a folder with a json is complete).

    ``visual``: coloured parts (anything with ``name``, ``mesh`` and linear ``rgb``), or None when the
    visual file is already in the folder (ingested files keep their own materials).
    """
    asset_dir = Path(asset_dir)
    asset_dir.mkdir(parents=True, exist_ok=True)
    coloured = []
    for part in visual or ():
        mesh = part.mesh.copy()
        rgba = (np.array([*part.rgb, 1.0]) * 255).round().astype(np.uint8)  # float colours mean 0..1
        mesh.visual = trimesh.visual.ColorVisuals(mesh, face_colors=np.tile(rgba, (len(mesh.faces), 1)))
        coloured.append((part.name, mesh))
    if visual is not None:
        _export_parts(coloured, asset_dir / asset.visual_mesh)
    _export_parts([(f"part_{i:03d}", m) for i, m in enumerate(collision)], asset_dir / asset.collision_parts)
    save_json(asset, asset_dir / ASSET_FILE)
