"""Build ``scenes/example``: a small hand-made street used by the tests and the README.

A 40 m two-lane road (asphalt) crossed by a zebra crosswalk, two sidewalks raised 15 cm
with curbs and curb ramps at the crosswalk, and a few objects made of trimesh primitives
(benches, bins, lamp posts, trees, bollards, a hydrant, a parked car). Textures are
generated here from a fixed seed. Run: ``python tools/make_example_scene.py [-o DIR]``.
"""

from __future__ import annotations

import argparse
import math
import shutil
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

from urbanverse.assets.annotate import annotate
from urbanverse.assets.generators.base import Part
from urbanverse.assets.record import Asset, AssetSource, save_asset
from urbanverse.assets.taxonomy import get_class
from urbanverse.scene.record import (
    DEFAULT_CURB_HEIGHT,
    AssetRef,
    GroundRegion,
    Material,
    Scene,
    SceneObject,
    SceneSource,
    save_scene,
)
from urbanverse.scene.usd_writer import write_usd

CURB = DEFAULT_CURB_HEIGHT
ROAD_HALF_WIDTH = 3.5
SIDEWALK_WIDTH = 3.0
HALF_LENGTH = 20.0
CROSSWALK_HALF_WIDTH = 2.0
RAMP_DEPTH = 1.2


def _box(size, center) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=size, transform=trimesh.transformations.translation_matrix(center))


def _cylinder(radius, height, base=(0.0, 0.0, 0.0)) -> trimesh.Trimesh:
    center = (base[0], base[1], base[2] + height / 2)
    return trimesh.creation.cylinder(
        radius=radius,
        height=height,
        sections=24,
        transform=trimesh.transformations.translation_matrix(center),
    )


def _sphere(radius, center) -> trimesh.Trimesh:
    mesh = trimesh.creation.icosphere(subdivisions=2, radius=radius)
    return mesh.apply_translation(center)


# fmt: off
WOOD, METAL, DARK, GREEN, BARK, RED, BLUE, GLASS = (
    (0.55, 0.35, 0.2), (0.35, 0.37, 0.4), (0.08, 0.08, 0.08), (0.2, 0.45, 0.18),
    (0.35, 0.25, 0.15), (0.75, 0.1, 0.08), (0.15, 0.25, 0.6), (0.2, 0.3, 0.35),
)

# uid -> (L1/L2/L3, synset, style, [(part name, mesh, material, rgb)]); every part is convex.
ASSETS = {
    "bench_wood_a": ("bench", "bench.n.01", "wooden bench with backrest", [
        ("seat", _box((1.6, 0.45, 0.06), (0, 0, 0.45)), "wood", WOOD),
        ("back", _box((1.6, 0.05, 0.4), (0, 0.2, 0.7)), "wood", WOOD),
        ("leg_left", _box((0.06, 0.45, 0.42), (-0.7, 0, 0.21)), "cast_iron", METAL),
        ("leg_right", _box((0.06, 0.45, 0.42), (0.7, 0, 0.21)), "cast_iron", METAL),
    ]),
    "bin_round_a": ("trash_bin", "ashcan.n.01", "round bin", [
        ("body", _cylinder(0.28, 0.85), "hdpe", DARK),
    ]),
    "lamp_post_a": ("street_lamp", "street_lamp.n.01", "single-arm lamp", [
        ("base", _cylinder(0.18, 0.4), "cast_iron", METAL),
        ("pole", _cylinder(0.07, 4.6, (0, 0, 0.4)), "steel", METAL),
        ("head", _box((0.6, 0.25, 0.15), (0.2, 0, 5.05)), "aluminium", DARK),
    ]),
    "tree_round_a": ("broadleaf_tree", "tree.n.01", "round-crowned tree", [
        ("trunk", _cylinder(0.15, 2.6), "bark", BARK),
        ("crown", _sphere(1.4, (0, 0, 3.6)), "foliage", GREEN),
    ]),
    "bollard_a": ("bollard", "bollard.n.02", "round steel bollard", [
        ("post", _cylinder(0.1, 0.9), "cast_iron", METAL),
    ]),
    "hydrant_a": ("fire_hydrant", "fireplug.n.01", "pillar hydrant", [
        ("barrel", _cylinder(0.13, 0.6), "cast_iron", RED),
        ("cap", _cylinder(0.1, 0.12, (0, 0, 0.6)), "cast_iron", RED),
    ]),
    "car_sedan_a": ("sedan", "sedan.n.01", "four-door sedan", [
        ("body", _box((4.3, 1.8, 0.75), (0, 0, 0.7)), "painted_metal", BLUE),
        ("cabin", _box((2.3, 1.6, 0.55), (-0.2, 0, 1.35)), "glass", GLASS),
        *[(f"wheel_{i}", _cylinder(0.32, 0.25).apply_transform(
            trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0))).apply_translation(
            (x, y, 0.32)), "rubber", DARK) for i, (x, y) in enumerate(
            [(-1.4, 0.78), (-1.4, -0.78), (1.4, 0.78), (1.4, -0.78)])],
    ]),
}
# fmt: on


def _write_assets(scene_dir: Path) -> dict[str, Asset]:
    """Write every asset folder; returns uid -> Asset record."""
    assets = {}
    for uid, (l3, synset, style, spec) in ASSETS.items():
        cls = get_class(l3)
        path = (cls.l1, cls.l2, cls.l3)
        parts = [Part(name, mesh, mat, rgb) for name, mesh, mat, rgb in spec]
        source = AssetSource(kind="procedural", generator="tools/make_example_scene.py", seed=0)
        asset = annotate(parts, uid=uid, category_path=path, synset=synset, style=style, source=source)
        save_asset(asset, scene_dir / "assets" / uid, parts, [p.mesh for p in parts])
        assets[uid] = asset
    return assets


def _write_textures(scene_dir: Path, rng: np.random.Generator) -> None:
    """Asphalt and concrete noise (features for SfM) and zebra stripes, 128 x 128 px each."""
    tex = scene_dir / "textures"
    tex.mkdir(parents=True, exist_ok=True)
    noise = rng.normal(0, 1, (128, 128, 1))
    asphalt = np.clip(0.5 + 0.12 * noise + 0.05 * rng.normal(0, 1, (128, 128, 1)), 0, 1) * [90, 90, 95]
    Image.fromarray(asphalt.astype(np.uint8)).save(tex / "asphalt.png")
    concrete = np.clip(0.85 + 0.06 * rng.normal(0, 1, (128, 128, 1)), 0, 1) * [200, 195, 185]
    concrete[::32, :] *= 0.6  # paving joints every 32 px
    concrete[:, ::32] *= 0.6
    Image.fromarray(concrete.astype(np.uint8)).save(tex / "concrete.png")
    stripes = np.where((np.arange(128) // 32) % 2 == 0, 235, 70)[None, :, None] * np.ones((128, 1, 3))
    Image.fromarray(stripes.astype(np.uint8)).save(tex / "zebra.png")


def _ground() -> list[GroundRegion]:
    asphalt = Material(
        name="asphalt",
        base_color=(0.2, 0.2, 0.21),
        roughness=0.9,
        texture="textures/asphalt.png",
        texture_scale=2.0,
    )
    concrete = Material(
        name="concrete",
        base_color=(0.7, 0.68, 0.65),
        roughness=0.8,
        texture="textures/concrete.png",
        texture_scale=1.2,
    )
    zebra = Material(
        name="zebra",
        base_color=(0.6, 0.6, 0.6),
        roughness=0.7,
        texture="textures/zebra.png",
        texture_scale=1.0,
    )
    R, S, L, C, D = ROAD_HALF_WIDTH, SIDEWALK_WIDTH, HALF_LENGTH, CROSSWALK_HALF_WIDTH, RAMP_DEPTH
    regions = [
        GroundRegion(
            id="road_west",
            type="road",
            polygon=((-L, -R), (-C, -R), (-C, R), (-L, R)),
            material=asphalt,
            friction=0.9,
        ),
        GroundRegion(
            id="road_east",
            type="road",
            polygon=((C, -R), (L, -R), (L, R), (C, R)),
            material=asphalt,
            friction=0.9,
        ),
        GroundRegion(
            id="crosswalk",
            type="crosswalk",
            polygon=((-C, -R), (C, -R), (C, R), (-C, R)),
            material=zebra,
            friction=0.8,
        ),
    ]
    for side, sign in (("north", 1.0), ("south", -1.0)):

        def pts(coords, s=sign):
            ring = [(x, s * y) for x, y in coords]
            return tuple(ring if s > 0 else ring[::-1])  # keep counter-clockwise after mirroring

        regions.append(
            GroundRegion(
                id=f"sidewalk_{side}",
                type="sidewalk",
                elevation=CURB,
                material=concrete,
                polygon=pts(
                    [(-L, R), (-C, R), (-C, R + D), (C, R + D), (C, R), (L, R), (L, R + S), (-L, R + S)]
                ),
            )
        )
        ramp = [(-C, R), (C, R), (C, R + D), (-C, R + D)]
        heights = [0.0, 0.0, CURB, CURB]
        regions.append(
            GroundRegion(
                id=f"ramp_{side}",
                type="ramp",
                material=concrete,
                polygon=pts(ramp),
                vertex_elevation=tuple(heights if sign > 0 else heights[::-1]),
            )
        )
    return regions


# (id, asset uid, x, y, yaw)
PLACEMENTS = [
    ("bench_1", "bench_wood_a", -8.0, 5.7, 0.0),
    ("bin_1", "bin_round_a", -6.2, 5.9, 0.0),
    ("lamp_1", "lamp_post_a", -12.0, 3.9, -math.pi / 2),
    ("lamp_2", "lamp_post_a", 12.0, 3.9, -math.pi / 2),
    ("tree_1", "tree_round_a", 7.0, 4.4, 0.0),
    ("bollard_1", "bollard_a", -2.5, 3.8, 0.0),
    ("bollard_2", "bollard_a", 2.5, 3.8, 0.0),
    ("hydrant_1", "hydrant_a", 5.0, -4.0, 0.0),
    ("tree_2", "tree_round_a", -10.0, -4.4, 0.0),
    ("bench_2", "bench_wood_a", 10.0, -5.7, math.pi),
    ("car_1", "car_sedan_a", -12.0, -2.2, 0.0),
]


def build_example(scene_dir: Path) -> Scene:
    """Write the example scene folder (assets, textures, scene.json, scene.usda)."""
    if scene_dir.exists():
        shutil.rmtree(scene_dir)
    rng = np.random.default_rng(0)
    assets = _write_assets(scene_dir)
    _write_textures(scene_dir, rng)
    objects = []
    for oid, uid, x, y, yaw in PLACEMENTS:
        asset = assets[uid]
        z = 0.0 if abs(y) < ROAD_HALF_WIDTH else CURB
        objects.append(
            SceneObject(
                id=oid,
                category=asset.category,
                asset=AssetRef(uid=uid, path=f"assets/{uid}"),
                position=(x, y, z),
                yaw=yaw,
                size=(asset.length, asset.width, asset.height),
                body_type="dynamic" if asset.movable else "kinematic",
                mass=asset.mass,
                friction=asset.friction_coefficient,
                restitution=asset.bounciness,
            )
        )
    R, S, L = ROAD_HALF_WIDTH, SIDEWALK_WIDTH, HALF_LENGTH
    scene = Scene(
        name="example",
        source=SceneSource(kind="hand-made", generator="tools/make_example_scene.py", seed=0),
        ground=tuple(_ground()),
        objects=tuple(objects),
        walkable_area=(
            ((-L, R), (L, R), (L, R + S), (-L, R + S)),
            ((-L, -R - S), (L, -R - S), (L, -R), (-L, -R)),
            (
                (-CROSSWALK_HALF_WIDTH, -R),
                (CROSSWALK_HALF_WIDTH, -R),
                (CROSSWALK_HALF_WIDTH, R),
                (-CROSSWALK_HALF_WIDTH, R),
            ),
        ),
    )
    save_scene(scene, scene_dir)
    write_usd(scene, scene_dir)
    return scene


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "-o", "--out", type=Path, default=Path(__file__).resolve().parents[1] / "scenes/example"
    )
    args = parser.parse_args()
    scene = build_example(args.out)
    print(f"wrote {args.out} ({len(scene.ground)} ground regions, {len(scene.objects)} objects)")


if __name__ == "__main__":
    main()
