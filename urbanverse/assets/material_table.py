"""Physical properties of the materials that assets are made of.

Sources (typical room-temperature values; ranges collapsed to a representative value):
densities from The Engineering ToolBox, "Densities of Solids" and "Wood Species - Densities";
Young's moduli from The Engineering ToolBox, "Young's Modulus, Tensile and Yield Strength";
dry friction against concrete/asphalt from The Engineering ToolBox, "Friction and Friction
Coefficients" and tyre/pavement data (rubber ~0.7-0.8); restitution from drop-test tables for
common engineering materials (values for impacts on a hard floor); hardness on the Mohs scale
(wood, plastics and textiles placed by their scratch behaviour, below 3).

Hollow objects: metal poles, vehicle bodies, plastic bins and concrete buildings are shells,
not solids. ``shell_thickness`` (m) caps a part's material volume at ``surface area x
thickness``; small solid parts (thinner than twice the shell) keep their full volume.
Bulk "foliage" is a tree crown's mass per crown volume (leaves and twigs), not leaf tissue.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MaterialProps:
    """``density`` kg/m^3, ``friction`` dry coefficient on pavement, ``restitution`` 0..1,
    ``youngs_modulus`` MPa, ``hardness`` Mohs, ``roughness`` 0..1, ``shell_thickness`` m or None (solid)."""

    density: float
    friction: float
    restitution: float
    youngs_modulus: float
    hardness: float
    roughness: float
    shell_thickness: float | None = None


# fmt: off
MATERIALS: dict[str, MaterialProps] = {
    "steel":           MaterialProps(7850, 0.50, 0.30, 200_000, 4.5, 0.30, 0.005),
    "stainless_steel": MaterialProps(8000, 0.45, 0.30, 193_000, 5.5, 0.20, 0.002),
    "cast_iron":       MaterialProps(7200, 0.50, 0.25, 110_000, 4.0, 0.60, 0.015),
    "aluminium":       MaterialProps(2700, 0.45, 0.30,  69_000, 2.8, 0.30, 0.003),
    "painted_metal":   MaterialProps(7850, 0.45, 0.30, 200_000, 3.0, 0.40, 0.002),
    "wood":            MaterialProps(550,  0.50, 0.40,  11_000, 1.5, 0.70),
    "hardwood":        MaterialProps(750,  0.50, 0.40,  14_000, 2.0, 0.50),
    "plastic":         MaterialProps(1000, 0.40, 0.45,   2_300, 2.0, 0.40, 0.004),
    "hdpe":            MaterialProps(950,  0.35, 0.45,   1_000, 1.5, 0.50, 0.006),
    "rubber":          MaterialProps(1100, 0.80, 0.60,      50, 1.0, 0.80, 0.010),
    "glass":           MaterialProps(2500, 0.40, 0.20,  70_000, 5.5, 0.05, 0.006),
    "concrete":        MaterialProps(2400, 0.60, 0.20,  30_000, 5.0, 0.80, 0.25),
    "stone":           MaterialProps(2600, 0.60, 0.20,  50_000, 6.0, 0.80, 0.30),
    "granite":         MaterialProps(2700, 0.55, 0.20,  60_000, 6.5, 0.60, 0.30),
    "brick":           MaterialProps(1900, 0.65, 0.20,  15_000, 5.5, 0.85, 0.20),
    "asphalt":         MaterialProps(2300, 0.70, 0.15,   3_000, 2.5, 0.90),
    "ceramic":         MaterialProps(2400, 0.50, 0.25,  70_000, 7.0, 0.30, 0.008),
    "fabric":          MaterialProps(400,  0.50, 0.10,   1_000, 1.0, 0.90, 0.001),
    "foliage":         MaterialProps(25,   0.60, 0.05,      10, 1.0, 0.90),
    "bark":            MaterialProps(650,  0.60, 0.30,  11_000, 1.5, 0.95),
    "soil":            MaterialProps(1500, 0.60, 0.05,      20, 1.5, 0.95),
    "water":           MaterialProps(1000, 0.10, 0.00,       0, 0.0, 0.05),
    "fibreglass":      MaterialProps(1800, 0.45, 0.35,  20_000, 4.0, 0.40, 0.004),
    "carbon_fibre":    MaterialProps(1600, 0.45, 0.35,  70_000, 5.0, 0.30, 0.003),
    "leather":         MaterialProps(860,  0.60, 0.20,     200, 1.0, 0.60, 0.003),
    "foam":            MaterialProps(30,   0.60, 0.10,       5, 0.5, 0.80),
    "cardboard":       MaterialProps(700,  0.50, 0.20,   3_000, 1.0, 0.80, 0.004),
    "paper":           MaterialProps(800,  0.45, 0.15,   3_000, 1.0, 0.70, 0.001),
    "marble":          MaterialProps(2700, 0.50, 0.20,  55_000, 3.0, 0.20, 0.30),
    "bronze":          MaterialProps(8800, 0.45, 0.30, 110_000, 3.0, 0.40, 0.010),
}
# fmt: on


def material(name: str) -> MaterialProps:
    """Properties of ``name``; ``ValueError`` listing the known materials when unknown."""
    try:
        return MATERIALS[name]
    except KeyError:
        raise ValueError(f"unknown material {name!r}; known: {', '.join(sorted(MATERIALS))}") from None
