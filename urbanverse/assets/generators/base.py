"""Generator interface, the ``Part`` record, a part builder, a colour palette and parameter helpers.

Asset frame for every generator: metres, Z-up, front along +X, base at z = 0, footprint (the
axis-aligned bounding box in x and y) centred on x = y = 0. Every part is one convex, watertight
mesh, so the parts double as collision pieces.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np
import trimesh

from urbanverse.assets.generators import shapes
from urbanverse.assets.generators.shapes import Geom
from urbanverse.assets.textures import hex_to_linear

Params = dict[str, float | int | str | bool]
RGB = tuple[float, float, float]


@dataclass(frozen=True)
class Part:
    """One convex piece of an asset: a name unique within the asset, its mesh, material and colour.

    ``mesh`` is convex and watertight, in the asset frame (metres). ``material`` is a key of the
    material table; ``rgb`` is linear RGB in [0, 1].
    """

    name: str
    mesh: trimesh.Trimesh
    material: str
    rgb: RGB


_PALETTE_SRGB = {
    "black": "1e1e1e",
    "charcoal": "3a3d40",
    "dark_grey": "55595c",
    "grey": "8a8d8f",
    "light_grey": "b9bbbc",
    "white": "ecedea",
    "off_white": "ddd8c8",
    "silver": "a9adb0",
    "forest_green": "2f5233",
    "dark_green": "1f3b2a",
    "olive": "6b6b3a",
    "sage": "8fa58a",
    "navy": "1f2f55",
    "royal_blue": "2a54a8",
    "sky_blue": "6aa2d8",
    "teal": "1f7a78",
    "red": "b02a25",
    "dark_red": "6e1f1b",
    "orange": "e06a1b",
    "safety_orange": "ff5a00",
    "yellow": "e8c21a",
    "school_yellow": "f2b705",
    "cream": "e9dfc0",
    "beige": "c9b48f",
    "brown": "6b4a2f",
    "dark_brown": "3f2a1b",
    "tan": "a98456",
    "terracotta": "b2603c",
    "sand": "cdb78c",
    "purple": "5b3a79",
    "pink": "d9849b",
    "bronze_tone": "7a5a32",
    "copper_green": "4f8a76",
    "concrete_grey": "a4a29c",
    "asphalt_grey": "4a4a4a",
    "brick_red": "8c3b2a",
    "brick_brown": "7a4b35",
    "stone_beige": "b8ab90",
    "glass_blue": "7c9fb3",
    "glass_dark": "2d3c45",
    "leaf_green": "4f7d32",
    "leaf_dark": "2e5a2a",
    "leaf_light": "7aa348",
    "leaf_autumn": "b36b24",
    "conifer_green": "244a33",
    "palm_green": "5f8a3a",
    "bark_brown": "5a4433",
    "bark_grey": "7d7368",
    "soil_brown": "4b3a2a",
    "water_blue": "3f7fa0",
    "rubber_black": "161616",
    "skin_light": "e0b59a",
    "skin_medium": "b5835f",
    "skin_dark": "6e4a33",
    "denim": "3b5070",
    "amber": "ffb000",
    "signal_red": "d01010",
    "signal_green": "10b050",
    "lamp_white": "fff4d6",
}

#: Named colours, linear RGB in [0, 1]. Parameters store the name, parts store the value.
PALETTE: dict[str, RGB] = {
    k: tuple(round(float(c), 4) for c in hex_to_linear(v)) for k, v in _PALETTE_SRGB.items()
}


def rgb(name: str) -> RGB:
    """Linear RGB of a palette colour name."""
    return PALETTE[name]


def uni(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Uniform float in [lo, hi], rounded to 3 decimals (JSON-friendly parameter)."""
    return round(float(rng.uniform(lo, hi)), 3)


def pick(rng: np.random.Generator, options):
    """One element of ``options`` (strings or ints), as a plain Python value."""
    value = options[int(rng.integers(len(options)))]
    return value.item() if isinstance(value, np.generic) else value


def coin(rng: np.random.Generator, p: float = 0.5) -> bool:
    """True with probability ``p``."""
    return bool(rng.random() < p)


def seed(rng: np.random.Generator) -> int:
    """An integer sub-seed for deterministic per-part jitter inside ``build``."""
    return int(rng.integers(0, 2**31 - 1))


class Builder:
    """Collects convex parts, then moves the whole asset so its base is at z = 0 and its footprint
    is centred on x = y = 0. Lengths in metres; colours are palette names.
    """

    def __init__(self) -> None:
        self._items: list[tuple[str, Geom, str, str]] = []

    def add(self, name: str, geom: Geom, material: str, colour: str) -> None:
        """Add a ready-made convex geometry from ``shapes``."""
        self._items.append((name, geom, material, colour))

    def box(self, name: str, size, centre, material: str, colour: str, yaw: float = 0.0) -> None:
        """Box of extents ``size`` (x, y, z) centred at ``centre``, optionally yawed about +Z."""
        self.add(name, shapes.box(size, centre, yaw), material, colour)

    def slab(self, name: str, size, bottom_centre, material: str, colour: str) -> None:
        """Axis-aligned box standing on ``bottom_centre`` (the centre of its bottom face)."""
        self.add(name, shapes.slab(size, bottom_centre), material, colour)

    def cyl(
        self,
        name: str,
        radius: float,
        height: float,
        base,
        material: str,
        colour: str,
        r_top: float | None = None,
        sections: int = 12,
        axis: str = "z",
    ) -> None:
        """Cylinder (frustum with ``r_top``, cone with ``r_top=0``) from the cap centred at ``base``."""
        r1 = radius if r_top is None else r_top
        self.add(name, shapes.frustum(radius, r1, height, base, sections, axis), material, colour)

    def rod(self, name: str, p0, p1, radius: float, material: str, colour: str, sections: int = 8) -> None:
        """Thin cylinder between two points (tubes, legs, spokes, frames)."""
        self.add(name, shapes.rod(p0, p1, radius, sections), material, colour)

    def ball(
        self, name: str, radii, centre, material: str, colour: str, z_floor: float | None = None
    ) -> None:
        """Ellipsoid with semi-axes ``radii``; with ``z_floor`` its bottom is flattened at that height."""
        geom = (
            shapes.ellipsoid(radii, centre)
            if z_floor is None
            else shapes.clipped_ellipsoid(radii, centre, z_floor)
        )
        self.add(name, geom, material, colour)

    def hull(self, name: str, points, material: str, colour: str) -> None:
        """Convex hull of a point set of shape ``(N, 3)``."""
        self.add(name, shapes.hull(points), material, colour)

    def ring(
        self,
        name: str,
        radius: float,
        thickness: float,
        depth: float,
        count: int,
        centre,
        material,
        colour,
        plane: str = "xz",
    ) -> None:
        """A ring of ``count`` box segments (see ``shapes.ring_segments``), named ``name_0..``."""
        for k, geom in enumerate(shapes.ring_segments(radius, thickness, depth, count, centre, plane)):
            self.add(f"{name}_{k}", geom, material, colour)

    def finish(self) -> list[Part]:
        """Recentre the asset (lowest point at z = 0, footprint box centred on x = y = 0) and return parts."""
        if not self._items:
            raise ValueError("a generator produced no parts")
        verts = [g[0] for _, g, _, _ in self._items]
        lo = np.min([v.min(axis=0) for v in verts], axis=0)
        hi = np.max([v.max(axis=0) for v in verts], axis=0)
        shift = np.array([-(lo[0] + hi[0]) / 2.0, -(lo[1] + hi[1]) / 2.0, -lo[2]])
        names = [n for n, _, _, _ in self._items]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate part names: {sorted({n for n in names if names.count(n) > 1})}")
        return [
            Part(
                name, trimesh.Trimesh(v + shift, f, process=False, validate=False), material, PALETTE[colour]
            )
            for name, (v, f), material, colour in self._items
        ]


class Generator(abc.ABC):
    """A procedural asset family producing one taxonomy L3 class.

    ``sample_params`` draws a JSON-serialisable style (proportions in metres, part counts, colour
    names, flags); ``build`` turns those parameters, and nothing else, into convex parts.
    """

    name: str
    l3: str
    version: int = 1

    @property
    def family(self) -> str:
        """The generator module's short name (street_furniture, vegetation, ...), used for grouping."""
        return type(self).__module__.rsplit(".", 1)[-1]

    @abc.abstractmethod
    def sample_params(self, rng: np.random.Generator) -> Params:
        """Draw parameters: floats rounded to 3 decimals, ints, strings, bools."""

    @abc.abstractmethod
    def build(self, params: Params) -> list[Part]:
        """Build the parts, deterministically from ``params`` alone."""

    def describe(self, params: Params) -> str:
        """A short style phrase for the asset, e.g. "slatted wooden bench with backrest"."""
        return self.l3.replace("_", " ")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, l3={self.l3!r})"
