"""Small assets built from primitives, annotated for real (no generators needed)."""

from __future__ import annotations

import pytest
import trimesh

from urbanverse.assets.annotate import annotate
from urbanverse.assets.generators.base import Part
from urbanverse.assets.record import AssetSource


def box(size, center):
    return trimesh.creation.box(extents=size, transform=trimesh.transformations.translation_matrix(center))


def cylinder(radius, height, z0=0.0):
    return trimesh.creation.cylinder(
        radius=radius,
        height=height,
        sections=16,
        transform=trimesh.transformations.translation_matrix((0, 0, z0 + height / 2)),
    )


def bench_parts():
    wood, iron = (0.55, 0.3, 0.12), (0.02, 0.02, 0.02)
    return [
        Part("seat", box((0.45, 1.6, 0.06), (0, 0, 0.45)), "wood", wood),
        Part("back", box((0.05, 1.6, 0.4), (-0.2, 0, 0.7)), "wood", wood),
        Part("leg_l", box((0.45, 0.06, 0.42), (0, -0.7, 0.21)), "cast_iron", iron),
        Part("leg_r", box((0.45, 0.06, 0.42), (0, 0.7, 0.21)), "cast_iron", iron),
    ]


def bin_parts():
    return [Part("body", cylinder(0.28, 0.85), "hdpe", (0.02, 0.1, 0.02))]


def post_parts():
    return [
        Part("base", cylinder(0.18, 0.3), "cast_iron", (0.1, 0.1, 0.1)),
        Part("pole", cylinder(0.07, 4.5, 0.3), "steel", (0.1, 0.1, 0.1)),
    ]


def make_asset(uid, parts, l3, path, style):
    return annotate(
        parts,
        uid=uid,
        category_path=(*path, l3),
        synset=f"{l3}.n.01",
        style=style,
        source=AssetSource(kind="procedural", generator="test", seed=0),
    )


@pytest.fixture(scope="session")
def small_assets():
    return [
        make_asset(
            "bench-1", bench_parts(), "bench", ("street_furniture", "seating"), "wooden bench with backrest"
        ),
        make_asset(
            "bin-1", bin_parts(), "trash_bin", ("street_furniture", "waste"), "round plastic litter bin"
        ),
        make_asset(
            "post-1", post_parts(), "street_lamp", ("lighting", "street_lighting"), "tall steel lamp post"
        ),
    ]
