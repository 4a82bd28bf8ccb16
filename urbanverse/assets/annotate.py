"""Physical and semantic annotation of an asset from its geometry, its materials and rules.

Nothing here is guessed by a language model: dimensions, volume, areas and centre of mass are
measured on the meshes; mass, friction, restitution, stiffness, hardness and roughness come
from ``material_table`` weighted by each part's share; affordances and traversability follow
from size, mass and category rules written out below.
"""

from __future__ import annotations

import colorsys
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import trimesh
from scipy.spatial import ConvexHull, QhullError

from urbanverse.assets.material_table import material
from urbanverse.assets.record import Asset, AssetSource
from urbanverse.assets.textures import linear_to_srgb

GRAVITY = 9.81
LICENSE = "CC0-1.0 (generated procedurally by urbanverse)"

# Hue bins (degrees, sRGB HSV) for naming part colours with plain words, as UrbanVerse-100K does.
_HUE_NAMES = (
    (15, "red"),
    (40, "orange"),
    (70, "yellow"),
    (165, "green"),
    (195, "teal"),
    (255, "blue"),
    (290, "purple"),
    (345, "pink"),
    (360, "red"),
)

# Category rules, matched as words of the L3 name (so "trash_bin" matches "bin").
_ANCHORED = {
    "bench",
    "post",
    "pole",
    "lamp",
    "light",
    "hydrant",
    "bollard",
    "sign",
    "signal",
    "meter",
    "tree",
    "palm",
    "shelter",
    "stop",
    "kiosk",
    "booth",
    "building",
    "facade",
    "wall",
    "fence",
    "stairs",
    "ramp",
    "fountain",
    "statue",
    "billboard",
    "clock",
    "pillar",
    "column",
    "hedge",
    "manhole",
    "rack",
}
_ENTERABLE = {
    "shelter",
    "kiosk",
    "booth",
    "building",
    "bus",
    "tram",
    "van",
    "car",
    "sedan",
    "hatchback",
    "suv",
    "pickup",
    "truck",
    "toilet",
    "pavilion",
    "gazebo",
    "garage",
}
_RECEPTACLE = {
    "bin",
    "can",
    "ashcan",
    "dumpster",
    "planter",
    "pot",
    "mailbox",
    "box",
    "container",
    "basket",
    "fountain",
    "recycling",
}
_WALKABLE = {"stairs", "steps", "ramp", "platform", "deck", "manhole", "curb", "grate"}
_VEHICLE = {"car", "sedan", "hatchback", "suv", "pickup", "van", "bus", "truck", "motorcycle", "tram", "taxi"}
_AFFORDANCES = {
    "sit": {"bench", "chair", "stool", "seat", "sofa"},
    "place_on": {"table", "counter", "ledge"},
    "throw_away": {"bin", "can", "ashcan", "dumpster", "recycling"},
    "drive": _VEHICLE,
    "ride": {"bicycle", "bike", "scooter", "motorcycle"},
    "shelter": {"shelter", "umbrella", "canopy", "awning"},
    "lock_bike": {"rack"},
    "post_letter": {"mailbox"},
    "climb": {"stairs", "steps"},
    "open": {"door", "mailbox"},
}


class PartLike(Protocol):
    """What annotation needs of a part: a convex watertight mesh, a material key and a linear RGB colour."""

    name: str
    mesh: trimesh.Trimesh
    material: str
    rgb: tuple[float, float, float]


@functools.lru_cache(maxsize=4096)
def _color_name(rgb_linear: tuple[float, float, float]) -> str:
    r, g, b = linear_to_srgb(rgb_linear)
    hue, sat, val = colorsys.rgb_to_hsv(r, g, b)
    if sat < 0.15 or val < 0.12:
        for limit, word in ((0.2, "black"), (0.45, "dark grey"), (0.7, "grey"), (0.88, "light grey")):
            if val < limit:
                return word
        return "white"
    name = next(word for limit, word in _HUE_NAMES if hue * 360 < limit)
    if name in ("orange", "red", "yellow") and val < 0.6 and sat > 0.3:
        return "brown"
    if name in ("orange", "yellow") and sat < 0.45:
        return "beige"
    if val < 0.4:
        return {"blue": "navy"}.get(name, f"dark {name}")
    if val > 0.85 and sat < 0.5:
        return f"light {name}"
    return name


def color_name(rgb_linear: Sequence[float]) -> str:
    """A colour word for a linear-RGB colour in [0, 1]^3, from its sRGB hue, saturation and value."""
    return _color_name(tuple(float(c) for c in rgb_linear))


def _words(l3: str) -> set[str]:
    return set(l3.lower().replace("-", "_").split("_"))


def _composition(keys: list[str], weights: np.ndarray) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Unique keys ordered by total weight, with their rounded fractions (summing to ~1)."""
    totals: dict[str, float] = {}
    for key, w in zip(keys, weights, strict=True):
        totals[key] = totals.get(key, 0.0) + float(w)
    ordered = sorted(totals.items(), key=lambda kv: -kv[1])
    total = sum(totals.values()) or 1.0
    return tuple(k for k, _ in ordered), tuple(round(v / total, 3) for _, v in ordered)


@dataclass(frozen=True)
class PartGeometry:
    """Per-part measurements, all parts in one vectorised pass (trimesh's per-mesh caches are slower
    than the geometry itself for 100K small assets). ``volumes`` m^3 ``(P,)``, ``areas`` m^2 ``(P,)``,
    ``centroids`` ``(P, 3)`` volume centroids, ``support_area`` m^2 of upward faces at 0.3-1.3 m."""

    volumes: np.ndarray
    areas: np.ndarray
    centroids: np.ndarray
    support_area: float


def measure_parts(parts: Sequence[PartLike]) -> PartGeometry:
    """Volumes, areas and centroids of closed meshes from signed tetrahedra (divergence theorem)."""
    tris = np.concatenate([p.mesh.vertices[p.mesh.faces] for p in parts])  # (T, 3, 3)
    starts = np.cumsum([0] + [len(p.mesh.faces) for p in parts[:-1]])
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    cross = np.cross(b - a, c - a)
    face_area = 0.5 * np.linalg.norm(cross, axis=1)
    tet_volume = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    volumes = np.add.reduceat(tet_volume, starts)
    moments = np.add.reduceat(tet_volume[:, None] * (a + b + c) / 4.0, starts)
    safe = np.where(np.abs(volumes) > 1e-12, volumes, 1.0)[:, None]
    centroids = np.where(np.abs(volumes)[:, None] > 1e-12, moments / safe, tris.reshape(-1, 3).mean(0))
    up = cross[:, 2] > 0.95 * np.maximum(np.linalg.norm(cross, axis=1), 1e-12)
    height = (a[:, 2] + b[:, 2] + c[:, 2]) / 3.0
    support_area = float(face_area[up & (height > 0.3) & (height < 1.3)].sum())
    return PartGeometry(np.abs(volumes), np.add.reduceat(face_area, starts), centroids, support_area)


def part_masses(parts: Sequence[PartLike], geometry: PartGeometry | None = None) -> np.ndarray:
    """Mass (kg) of each part: density x material volume, shells capped at area x shell thickness."""
    geometry = geometry or measure_parts(parts)
    masses = []
    for part, volume, area in zip(parts, geometry.volumes, geometry.areas, strict=True):
        props = material(part.material)
        if props.shell_thickness is not None:
            volume = min(volume, area * props.shell_thickness)
        masses.append(props.density * volume)
    return np.asarray(masses)


def support_polygon(parts: Sequence[PartLike], contact_height: float = 0.01) -> np.ndarray | None:
    """Convex hull ``(K, 2)`` of the vertices within ``contact_height`` m of the ground, or None."""
    pts = np.vstack([p.mesh.vertices[p.mesh.vertices[:, 2] < contact_height, :2] for p in parts])
    if len(pts) < 3:
        return None
    try:
        hull = ConvexHull(pts)
    except QhullError:
        return None
    return pts[hull.vertices]


def com_inside_support(com_xy: np.ndarray, polygon: np.ndarray | None, margin: float = 0.0) -> bool:
    """Whether ``com_xy`` lies inside the CCW convex ``polygon`` by at least ``margin`` metres."""
    if polygon is None:
        return False
    edges = np.roll(polygon, -1, axis=0) - polygon
    rel = np.asarray(com_xy, dtype=np.float64)[None, :] - polygon
    cross = edges[:, 0] * rel[:, 1] - edges[:, 1] * rel[:, 0]
    distance = cross / np.maximum(np.linalg.norm(edges, axis=1), 1e-12)
    return bool(np.all(distance >= margin))


def annotate(
    parts: Sequence[PartLike],
    *,
    uid: str,
    category_path: tuple[str, str, str],
    synset: str,
    style: str,
    source: AssetSource,
    size_range: tuple[Sequence[float], Sequence[float]] | None = None,
) -> Asset:
    """Build the Asset record of ``parts`` (in the asset frame) with every value measured or derived."""
    l3 = category_path[2]
    words = _words(l3)
    vertices = np.concatenate([p.mesh.vertices for p in parts])
    lo, hi = vertices.min(0), vertices.max(0)
    length, width, height = (float(v) for v in hi - lo)
    geometry = measure_parts(parts)
    volumes, areas = geometry.volumes, geometry.areas
    masses = part_masses(parts, geometry)
    mass = float(masses.sum())
    com = (geometry.centroids * masses[:, None]).sum(0) / max(mass, 1e-9)

    surface = areas / areas.sum()
    props = [material(p.material) for p in parts]
    friction = float(sum(w * m.friction for w, m in zip(surface, props, strict=True)))
    restitution = float(sum(w * m.restitution for w, m in zip(surface, props, strict=True)))
    youngs = float(sum(w * m.youngs_modulus for w, m in zip(surface, props, strict=True)))
    hardness = float(sum(w * m.hardness for w, m in zip(surface, props, strict=True)))
    roughness = float(sum(w * m.roughness for w, m in zip(surface, props, strict=True)))
    materials, materials_comp = _composition([p.material for p in parts], areas)
    colors, colors_comp = _composition([color_name(p.rgb) for p in parts], areas)

    anchored = bool(words & _ANCHORED)
    movable = not anchored and mass <= 150.0
    all_foliage = all(p.material in ("foliage",) for p in parts)
    if height < 0.03:
        traversability = "pass_through"
    elif (movable and mass <= 25.0) or (all_foliage and height <= 1.2):
        traversability = "push_through"
    else:
        traversability = "obstacle"
    if traversability == "pass_through":
        traversable_by = ("pedestrian", "legged", "wheeled")
    elif traversability == "push_through":
        traversable_by = ("pedestrian", "legged")
    else:
        traversable_by = tuple(
            agent
            for agent, limit in (("pedestrian", 0.3), ("legged", 0.2), ("wheeled", 0.05))
            if height <= limit
        )
    walkable = bool(words & _WALKABLE) or (height <= 0.25 and length * width >= 0.25 and not all_foliage)
    # A table top, a bench seat or a wall top: an upward face of at least 0.09 m^2 at 0.3-1.3 m.
    support = geometry.support_area >= 0.09
    affordances = sorted(a for a, keys in _AFFORDANCES.items() if words & keys)
    if support and "place_on" not in affordances:
        affordances.append("place_on")
    if walkable:
        affordances.append("walk_on")
    clearance = 0.3 if height < 0.5 else 0.5
    if words & _VEHICLE:
        clearance = 1.0  # doors open into the sidewalk
    stable = com_inside_support(com[:2], support_polygon(parts), margin=0.0)
    quality = 10 - (0 if stable else 4)
    if size_range is not None:
        smin, smax = np.asarray(size_range[0]), np.asarray(size_range[1])
        dims = np.array([length, width, height])
        if np.any(dims < 0.5 * smin) or np.any(dims > 1.5 * smax):
            quality -= 3

    name = l3.replace("_", " ")
    # Lead with the dominant (colour, material) pair by surface and name a second one covering >= 10 %.
    pairs, shares = _composition(
        [f"{color_name(p.rgb)} {p.material.replace('_', ' ')}" for p in parts], areas
    )
    trim = f" with {pairs[1]}" if len(pairs) > 1 and shares[1] >= 0.1 else ""
    description = f"{pairs[0]} {name}{trim}, {style}"
    description_long = (
        f"A {name} ({synset}): {style}; {length:.2f} m long, {width:.2f} m wide and {height:.2f} m tall, "
        f"about {mass:.0f} kg, mostly {materials[0].replace('_', ' ')} ({100 * materials_comp[0]:.0f}% of "
        f"its surface) in {', '.join(colors[:3])}."
    )
    measured = ("length", "width", "height", "max_dimension", "volume", "center_of_mass", "support_surface")
    derived = (
        "mass",
        "friction_coefficient",
        "bounciness",
        "youngs_modulus",
        "surface_hardness",
        "surface_roughness",
        "movable",
        "required_force",
        "walkable",
        "enterable",
        "receptacle",
        "affordances",
        "traversability",
        "traversable_by",
        "recommended_clearance",
        "quality",
    )
    return Asset(
        uid=uid,
        category=l3,
        category_path=category_path,
        synset=synset,
        description=description,
        description_long=description_long,
        length=length,
        width=width,
        height=height,
        max_dimension=max(length, width, height),
        volume=float(volumes.sum()),
        materials=materials,
        materials_composition=materials_comp,
        colors=colors,
        colors_composition=colors_comp,
        mass=mass,
        center_of_mass=tuple(float(c) for c in com),
        friction_coefficient=friction,
        bounciness=restitution,
        youngs_modulus=youngs,
        surface_hardness=hardness,
        surface_roughness=roughness,
        movable=movable,
        required_force=friction * mass * GRAVITY,
        walkable=walkable,
        enterable=bool(words & _ENTERABLE),
        receptacle=bool(words & _RECEPTACLE),
        support_surface=support,
        affordances=tuple(affordances),
        traversability=traversability,
        traversable_by=traversable_by,
        recommended_clearance=clearance,
        quality=quality,
        license_info=LICENSE,
        value_origin={**dict.fromkeys(measured, "measured"), **dict.fromkeys(derived, "derived")},
        source=source,
    )
