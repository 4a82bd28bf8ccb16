"""Annotation from geometry: measured sizes, masses from the material table, rules, colour words."""

from __future__ import annotations

import math

import pytest

from tests.assets.conftest import bench_parts, bin_parts, make_asset, post_parts
from urbanverse.assets.annotate import color_name, com_inside_support, part_masses, support_polygon
from urbanverse.assets.material_table import MATERIALS


def test_dimensions_and_volume_are_measured():
    bench = make_asset("b", bench_parts(), "bench", ("street_furniture", "seating"), "bench")
    assert (bench.length, bench.width, bench.height) == pytest.approx((0.45, 1.6, 0.9))
    assert bench.max_dimension == pytest.approx(1.6)
    expected_volume = 0.45 * 1.6 * 0.06 + 0.05 * 1.6 * 0.4 + 2 * 0.45 * 0.06 * 0.42
    assert bench.volume == pytest.approx(expected_volume, rel=1e-6)
    assert bench.value_origin["height"] == "measured" and bench.value_origin["mass"] == "derived"


def test_mass_uses_density_and_shells():
    # A bin is a 6 mm HDPE shell, not a solid plastic cylinder: about 11 kg, not 200 kg.
    (part,) = bin_parts()
    shell = part.mesh.area * MATERIALS["hdpe"].shell_thickness * MATERIALS["hdpe"].density
    assert part_masses(bin_parts())[0] == pytest.approx(shell)
    assert 5 < shell < 20
    # A small solid wooden slab keeps its full volume.
    seat = bench_parts()[0]
    assert part_masses([seat])[0] == pytest.approx(seat.mesh.volume * MATERIALS["wood"].density)


def test_rules_movable_traversable_affordances():
    bench = make_asset("b", bench_parts(), "bench", ("street_furniture", "seating"), "bench")
    litter = make_asset("t", bin_parts(), "trash_bin", ("street_furniture", "waste"), "bin")
    lamp = make_asset("l", post_parts(), "street_lamp", ("lighting", "street_lighting"), "lamp")
    assert litter.movable and litter.receptacle and "throw_away" in litter.affordances
    assert litter.traversability == "push_through"
    assert not lamp.movable and lamp.traversability == "obstacle" and lamp.traversable_by == ()
    assert "sit" in bench.affordances and bench.support_surface
    assert bench.required_force == pytest.approx(bench.friction_coefficient * bench.mass * 9.81)
    assert math.isclose(sum(bench.materials_composition), 1.0, abs_tol=0.01)
    assert bench.materials[0] == "wood"


def test_centre_of_mass_and_support():
    parts = post_parts()
    polygon = support_polygon(parts)
    assert com_inside_support([0.0, 0.0], polygon)
    assert not com_inside_support([0.5, 0.0], polygon)
    lamp = make_asset("l", parts, "street_lamp", ("lighting", "street_lighting"), "lamp")
    assert lamp.quality == 10


@pytest.mark.parametrize(
    ("rgb", "word"),
    [
        ((0.8, 0.02, 0.02), "red"),
        ((0.02, 0.3, 0.02), "green"),
        ((0.01, 0.02, 0.3), "blue"),
        ((0.9, 0.9, 0.9), "white"),
        ((0.01, 0.01, 0.01), "black"),
        ((0.2, 0.2, 0.2), "grey"),
        ((0.2, 0.06, 0.01), "brown"),
    ],
)
def test_colour_words(rgb, word):
    assert color_name(rgb) == word
