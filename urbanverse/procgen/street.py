"""``generate_street``: a procedural street scene written as a self-contained scene folder.

Layout from ``layout.py``; objects placed by urban rules (trees and lamps spaced along the curb,
benches and bins facing the street, parked cars in the parking lanes, signs at crosswalks and
corners, buildings packed along the lots), assets drawn from the procedural catalogue and
copied into the scene's ``assets/``; ground materials and a sky from the generated libraries.
Placements never overlap (footprints are checked with shapely) and stay on their ground. People
walk the sidewalks and crossings (``agents``, :mod:`urbanverse.procgen.people`) with the ``flow`` field
of their walking; they come from a random stream of their own, so the same seed gives the same
street with or without them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
import shapely
from shapely import affinity

from urbanverse.assets.catalogue import CatalogueEntry, build_parts, record_of
from urbanverse.assets.ground_materials import materials_for
from urbanverse.assets.record import Asset
from urbanverse.assets.skies import SKIES
from urbanverse.errors import InputError
from urbanverse.procgen.layout import Layout, Line, intersection, straight_street
from urbanverse.procgen.people import PeopleCfg, street_people
from urbanverse.render.thumbnail import library_thumbnail
from urbanverse.scene.agents import flow_field
from urbanverse.scene.library_refs import install_asset, install_ground_material, install_sky
from urbanverse.scene.record import (
    DEFAULT_CURB_HEIGHT,
    AssetRef,
    GroundRegion,
    Scene,
    SceneObject,
    SceneSource,
    Sky,
    save_scene,
)

Style = Literal["residential", "commercial", "plaza", "intersection"]
STYLES: tuple[str, ...] = ("residential", "commercial", "plaza", "intersection")

# Generator names per role (see urbanverse.assets.generators).
TREES = ("tree_broadleaf", "tree_columnar", "tree_young_staked")
PARK_TREES = (*TREES, "tree_weeping", "tree_umbrella_pine", "tree_conifer")
LAMPS = ("street_lamp_cobra", "lamp_post_heritage", "street_lamp_double_arm")
CARS = (
    "car_sedan",
    "car_hatchback",
    "car_suv",
    "car_station_wagon",
    "car_minivan",
    "car_taxi",
    "van",
    "pickup_truck",
    "car_coupe",
)
HOUSES = ("house_gabled", "building_residential")
SHOPS = ("building_commercial", "facade_slab", "building_office_tower")
_ROAD_MATERIALS = ("asphalt_fresh", "asphalt_worn", "asphalt_faded", "asphalt_patched", "asphalt_cracked")
#: Second entropy word of the people's random stream (the first is the street's seed).
PEOPLE_STREAM = 1
_DAY_SKIES = tuple(n for n in SKIES if n.startswith(("clear", "partly_cloudy", "hazy", "mostly_cloudy")))


@dataclasses.dataclass(frozen=True, kw_only=True)
class StreetCfg:
    """``length`` m of street (or of each intersection arm x 2), ``lanes`` of 3.2 m, ``sidewalk`` m wide,
    and the ``people`` walking it. The defaults are procgen's own city; :mod:`urbanverse.procgen.city`
    draws other cities' streets by changing them."""

    style: Style = "residential"
    seed: int = 0
    length: float = 80.0
    lanes: int = 2
    sidewalk: float = 4.0
    curb: float = DEFAULT_CURB_HEIGHT
    """Height (m) of the sidewalks above the road."""
    clutter: float = 1.0
    """Density of the street furniture on the sidewalks (seating, bins, kiosks, signs): 2 places twice
    as many, 0.5 half as many. Trees, lamps and parked cars keep their spacing."""
    curb_bollards: float = 0.0
    """Spacing (m) of bollard rows along the curbs, as old town centres keep cars off the pavement
    (0: bollards at the crosswalks only)."""
    setback: float = 0.5
    """Distance (m) from the back of the sidewalk to the building fronts (a front yard or forecourt)."""
    plaza_depth: float = 18.0
    """Depth (m) of the plaza behind the north sidewalk of a ``plaza`` street."""
    people: PeopleCfg = dataclasses.field(default_factory=PeopleCfg)

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise InputError(f"style: expected one of {', '.join(STYLES)}, got {self.style!r}")
        if not 30.0 <= self.length <= 400.0:
            raise InputError(f"length: expected 30..400 m, got {self.length}")
        if self.lanes not in (1, 2, 3, 4):
            raise InputError(f"lanes: expected 1..4, got {self.lanes}")
        if not 2.5 <= self.sidewalk <= 10.0:
            raise InputError(f"sidewalk: expected 2.5..10 m, got {self.sidewalk}")
        if not 0.05 <= self.curb <= 0.3:
            raise InputError(f"curb: expected 0.05..0.3 m, got {self.curb}")
        if not 0.25 <= self.clutter <= 4.0:
            raise InputError(f"clutter: expected 0.25..4, got {self.clutter}")
        if self.curb_bollards and not 2.0 <= self.curb_bollards <= 50.0:
            raise InputError(f"curb_bollards: expected 0 or 2..50 m, got {self.curb_bollards}")
        if not 0.0 <= self.setback <= 10.0:
            raise InputError(f"setback: expected 0..10 m, got {self.setback}")
        if not 6.0 <= self.plaza_depth <= 40.0:
            raise InputError(f"plaza_depth: expected 6..40 m, got {self.plaza_depth}")


class _Placer:
    """Draws assets, checks footprints, and collects scene objects."""

    def __init__(self, rng: np.random.Generator, scene_dir: Path, zones: dict[str, shapely.Geometry]):
        self.rng, self.scene_dir, self.zones = rng, scene_dir, zones
        self.taken: list[shapely.Polygon] = []
        self.objects: list[SceneObject] = []
        self._assets: dict[str, Asset] = {}
        self._bases: dict[str, tuple[float, float, float, float]] = {}
        self._refs: dict[str, AssetRef] = {}

    def asset(self, generators: Sequence[str]) -> Asset:
        entry = CatalogueEntry(str(self.rng.choice(generators)), int(self.rng.integers(0, 5000)))
        if entry.uid not in self._assets:
            asset = record_of(entry)
            # What stands on the ground: parts touching it, below 0.5 m (trunks, posts, wheels; not crowns).
            parts = build_parts(entry)[1]
            low = np.vstack([p.mesh.vertices for p in parts if p.mesh.vertices[:, 2].min() < 0.05])
            low = low[low[:, 2] < 0.5]
            self._bases[asset.uid] = (*low[:, :2].min(0), *low[:, :2].max(0))
            self._refs[asset.uid] = install_asset(asset, self.scene_dir, thumbnail=library_thumbnail)
            self._assets[entry.uid] = asset
        return self._assets[entry.uid]

    def footprint(self, asset: Asset, xy, yaw: float, margin: float, base: bool = False) -> shapely.Polygon:
        """The asset's footprint grown by ``margin`` m and placed at ``xy``: the whole asset seen from above,
        or (``base``) only what stands on the ground (parts touching it, below 0.5 m: trunks, posts)."""
        if base:
            x0, y0, x1, y1 = self._bases[asset.uid]
        else:
            x0, y0, x1, y1 = -asset.length / 2, -asset.width / 2, asset.length / 2, asset.width / 2
        box = shapely.box(x0 - margin, y0 - margin, x1 + margin, y1 + margin)
        return affinity.translate(affinity.rotate(box, yaw, use_radians=True, origin=(0, 0)), *xy)

    def place(
        self, asset: Asset, xy, yaw: float, z: float, zone: str | None = "raised", margin: float = 0.15
    ) -> bool:
        """Add ``asset`` at ``xy`` (m) and ``yaw`` (rad) with its base at ``z``, unless it would overlap
        another object or leave its ``zone`` (``raised``: sidewalks and plazas, ``road``; None: anywhere)."""
        shape = self.footprint(asset, xy, yaw, margin)
        # The base must stay on its zone (a crown may overhang the road); whole footprints may not overlap,
        # since the physics check collides crowns and lamp arms too.
        if zone is not None and not self.zones[zone].contains(self.footprint(asset, xy, yaw, 0.0, base=True)):
            return False
        if any(shape.intersects(t) for t in self.taken):
            return False
        self.taken.append(shape)
        self.objects.append(
            SceneObject(
                id=f"{asset.category}_{len(self.objects):03d}",
                category=asset.category,
                asset=self._refs[asset.uid],
                position=(float(xy[0]), float(xy[1]), z),
                yaw=float(math.remainder(yaw, 2 * math.pi)),
                size=(asset.length, asset.width, asset.height),
                body_type="dynamic" if asset.movable else "kinematic",
                mass=asset.mass,
                friction=asset.friction_coefficient,
                restitution=asset.bounciness,
                confidence=1.0,
            )
        )
        return True

    def along(
        self,
        line: Line,
        generators: Sequence[str],
        spacing: float,
        jitter: float = 0.5,
        yaw_jitter: float = 0.0,
        probability: float = 1.0,
        zone: str = "raised",
    ) -> None:
        for xy in line.points(spacing, self.rng, jitter):
            if self.rng.random() < probability:
                yaw = line.facing + self.rng.uniform(-yaw_jitter, yaw_jitter)
                self.place(self.asset(generators), xy, yaw, line.elevation, zone)

    def buildings(self, line: Line, generators: Sequence[str], setback: float) -> None:
        """Pack buildings along ``line`` with their fronts ``setback`` m behind it, away from the road."""
        a, b = np.asarray(line.start), np.asarray(line.end)
        direction = (b - a) / np.linalg.norm(b - a)
        to_road = np.array([math.cos(line.facing), math.sin(line.facing)])
        cursor, total = float(self.rng.uniform(0, 3)), float(np.linalg.norm(b - a))
        for _ in range(60):  # bounded: a drawn building may not fit the space left, then try another
            asset = self.asset(generators)
            if cursor + asset.width > total:
                continue
            centre = a + direction * (cursor + asset.width / 2) - to_road * (asset.length / 2 + setback)
            if self.place(asset, centre, line.facing, line.elevation, zone=None, margin=0.05):
                cursor += asset.width + float(self.rng.uniform(0.0, 2.5))


def _layout(cfg: StreetCfg, rng: np.random.Generator) -> Layout:
    if cfg.style == "intersection":
        return intersection(rng, cfg.length / 2, cfg.lanes, cfg.sidewalk, cfg.curb)
    crosswalk = float(rng.uniform(-cfg.length / 6, cfg.length / 6))
    return straight_street(
        rng,
        cfg.length,
        cfg.lanes,
        cfg.sidewalk,
        parking=cfg.style != "plaza",
        crosswalk_at=crosswalk,
        plaza_depth=cfg.plaza_depth if cfg.style == "plaza" else 0.0,
        curb=cfg.curb,
    )


def _materials(layout: Layout, rng: np.random.Generator, scene_dir: Path) -> list[GroundRegion]:
    """Pick one ground material per region type and copy its texture into the scene."""
    choice = {
        "road": str(rng.choice(_ROAD_MATERIALS)),
        "sidewalk": str(rng.choice([m for m in materials_for("sidewalk") if not m.startswith("tactile")])),
        "crosswalk": str(rng.choice(["marking_zebra_white", "marking_zebra_worn", "marking_ladder_white"])),
        "ramp": str(rng.choice(["tactile_dots_yellow", "tactile_dots_grey", "tactile_dots_red"])),
        "terrain": str(rng.choice(["grass_lush", "grass_mown_park", "grass_patchy", "gravel_grey"])),
        "plaza": str(
            rng.choice([m for m in materials_for("plaza") if "grass" not in m and "rubber" not in m])
        ),
    }
    materials = {kind: install_ground_material(name, scene_dir) for kind, name in choice.items()}
    return [
        GroundRegion(
            id=r.id,
            type=r.kind,
            polygon=r.polygon,
            elevation=r.elevation,
            vertex_elevation=r.vertex_elevation,
            material=materials[r.kind][0],
            friction=materials[r.kind][1],
        )
        for r in layout.regions
    ]


def _sky(rng: np.random.Generator, scene_dir: Path) -> Sky:
    return install_sky(str(rng.choice(_DAY_SKIES)), scene_dir)


def _furnish(cfg: StreetCfg, layout: Layout, placer: _Placer) -> None:
    rng = placer.rng
    commercial = cfg.style in ("commercial", "plaza")
    for a, b in layout.crosswalks:  # bollards and a crossing sign at each crosswalk landing
        for end, sign in ((np.asarray(a), -1.0), (np.asarray(b), 1.0)):
            for dx in (-2.6, 2.6):
                normal = np.array([0.0, sign]) if abs(b[0] - a[0]) < 1e-6 else np.array([sign, 0.0])
                side = np.array([normal[1], normal[0]])
                xy = end + normal * 0.5 + side * dx
                placer.place(placer.asset(["bollard_post"]), xy, 0.0, cfg.curb)
    sparse = 1.0 / cfg.clutter  # spacing factor of the street furniture
    for line in layout.curb_lines:
        if cfg.curb_bollards:
            placer.along(line, ["bollard_post"], spacing=cfg.curb_bollards, jitter=0.1)
        placer.along(line, TREES, spacing=float(rng.uniform(7, 10)), jitter=0.8, yaw_jitter=0.4)
        placer.along(line, LAMPS, spacing=float(rng.uniform(18, 26)), jitter=2.0)
        placer.along(line, ["fire_hydrant"], spacing=35.0, jitter=6.0, probability=0.6)
        signs = ["sign_pedestrian_crossing", "sign_parking", "sign_speed_limit", "sign_no_parking"]
        placer.along(line, signs, spacing=30.0 * sparse, jitter=5.0, probability=0.7)
        if cfg.style == "intersection":
            placer.along(
                line, ["traffic_light_post", "pedestrian_signal_post"], spacing=40.0, probability=0.8
            )
    for line in layout.frontage_lines:
        seating = (
            ["cafe_table", "cafe_chair", "planter", "bench_slatted"] if commercial else ["bench_slatted"]
        )
        placer.along(line, seating, spacing=float(rng.uniform(7, 12)) * sparse, jitter=1.5)
        bins = ["litter_bin", "wheelie_bin", "recycling_station"]
        placer.along(line, bins, spacing=15.0 * sparse, jitter=3.0)
        extras = (
            ["newspaper_box", "kiosk_booth", "bus_shelter", "bike_rack", "mailbox_collection"]
            if commercial
            else ["bike_rack", "mailbox_collection", "planter", "utility_cabinet"]
        )
        placer.along(line, extras, spacing=20.0 * sparse, jitter=4.0, probability=0.7)
    for line in layout.parking_lines:
        placer.along(
            line,
            CARS,
            spacing=float(rng.uniform(6.0, 7.5)),
            jitter=0.4,
            probability=0.7,
            yaw_jitter=0.03,
            zone="road",
        )
    for line in layout.building_lines:
        placer.buildings(line, SHOPS if commercial or cfg.style == "intersection" else HOUSES, cfg.setback)
    if layout.plaza is not None:
        xs, ys = zip(*layout.plaza, strict=True)
        centre = np.array([(min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2])
        placer.place(placer.asset(["fountain_tiered"]), centre, 0.0, cfg.curb)
        for _ in range(40):
            xy = np.array([rng.uniform(min(xs) + 2, max(xs) - 2), rng.uniform(min(ys) + 2, max(ys) - 2)])
            kind = rng.choice(["trees", "bench", "statue", "planter", "bin"], p=[0.35, 0.3, 0.05, 0.2, 0.1])
            gens = {
                "trees": TREES,
                "bench": ["bench_slatted", "bench_backless"],
                "statue": ["statue_on_plinth"],
                "planter": ["planter"],
                "bin": ["litter_bin"],
            }[kind]
            yaw = math.atan2(*(centre - xy)[::-1])  # face the fountain
            placer.place(placer.asset(gens), xy, yaw, cfg.curb)


def generate_street(cfg: StreetCfg, scene_dir: Path) -> Scene:
    """Write a procedural street into ``scene_dir`` (scene.json, assets/, textures/, sky/); returns it."""
    scene_dir = Path(scene_dir)
    if scene_dir.exists() and any(scene_dir.iterdir()):
        raise InputError(f"{scene_dir}: output folder exists and is not empty")
    scene_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(cfg.seed)
    layout = _layout(cfg, rng)
    ground = _materials(layout, rng, scene_dir)
    walk = [r for r in ground if r.type in ("sidewalk", "ramp", "crosswalk", "plaza")]
    zones = {
        name: shapely.union_all([shapely.Polygon(r.polygon) for r in ground if r.type in types]).buffer(-0.05)
        for name, types in (("raised", ("sidewalk", "plaza")), ("road", ("road",)))
    }
    placer = _Placer(rng, scene_dir, zones)
    _furnish(cfg, layout, placer)
    scene = Scene(
        name=scene_dir.name,
        source=SceneSource(kind="procedural", generator=f"urbanverse.procgen:{cfg.style}", seed=cfg.seed),
        ground=tuple(ground),
        objects=tuple(placer.objects),
        sky=_sky(rng, scene_dir),
        walkable_area=tuple(r.polygon for r in walk),
    )
    agents = street_people(scene, cfg.people, np.random.default_rng([cfg.seed, PEOPLE_STREAM]))
    scene = dataclasses.replace(scene, agents=agents, flow=flow_field(agents))
    save_scene(scene, scene_dir)
    return scene
