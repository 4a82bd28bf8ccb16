"""Street furniture: benches, picnic and café tables, chairs, umbrellas and bins.

All lengths in metres; front along +X (the side one sits on or approaches from).
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, Params, Part, coin, pick, seed, uni
from urbanverse.assets.generators.shapes import hull

WOODS = ("tan", "brown", "dark_brown", "beige")
METALS = ("black", "charcoal", "forest_green", "dark_grey", "navy", "dark_red")


def thin_panel(corners, thickness: float):
    """A flat convex plate: the hull of a planar convex polygon ``corners`` (N, 3) and its copy lowered
    by ``thickness`` metres (umbrella gores, roof sheets)."""
    c = np.asarray(corners, dtype=float)
    return hull(np.concatenate([c, c - [0.0, 0.0, thickness]]))


class SlattedBench(Generator):
    """Park bench: wooden seat slats on two or three side frames, optional backrest and armrests."""

    name, l3 = "bench_slatted", "bench"

    def sample_params(self, rng):
        back = coin(rng, 0.8)
        return {
            "length": uni(rng, 1.2, 2.6),
            "depth": uni(rng, 0.42, 0.6),
            "seat_height": uni(rng, 0.4, 0.48),
            "slats": int(rng.integers(3, 7)),
            "backrest": back,
            "back_height": uni(rng, 0.3, 0.5),
            "back_slats": int(rng.integers(2, 5)),
            "armrests": back and coin(rng, 0.5),
            "frame": pick(rng, ("cast_iron", "steel", "concrete")),
            "wood": pick(rng, WOODS),
            "frame_colour": pick(rng, METALS),
        }

    def build(self, p: Params) -> list[Part]:
        b = Builder()
        L, D, H = p["length"], p["depth"], p["seat_height"]
        fmat = "concrete" if p["frame"] == "concrete" else p["frame"]
        fcol = "concrete_grey" if p["frame"] == "concrete" else p["frame_colour"]
        fw = 0.18 if p["frame"] == "concrete" else 0.05
        n_sup = 3 if L > 2.0 else 2
        ys = np.linspace(-L / 2 + 0.15, L / 2 - 0.15, n_sup)
        for i, y in enumerate(ys):
            b.slab(f"support_{i}", (D, fw, H - 0.035), (0, y, 0), fmat, fcol)
            if p["backrest"]:
                b.slab(
                    f"back_post_{i}",
                    (0.05, fw if fw < 0.1 else 0.06, H + p["back_height"]),
                    (-D / 2 + 0.025, y, 0),
                    "steel" if fmat == "concrete" else fmat,
                    p["frame_colour"],
                )
        n = p["slats"]
        w = D / n
        for i in range(n):
            b.slab(
                f"seat_slat_{i}",
                (w * 0.8, L, 0.035),
                (-D / 2 + w * (i + 0.5), 0, H - 0.035),
                "wood",
                p["wood"],
            )
        if p["backrest"]:
            m = p["back_slats"]
            h = p["back_height"] / m
            for i in range(m):
                z = H + 0.05 + h * i
                b.slab(f"back_slat_{i}", (0.03, L, h * 0.75), (-D / 2 - 0.02, 0, z), "wood", p["wood"])
        if p["armrests"]:
            for s, y in (("l", ys[0]), ("r", ys[-1])):
                b.slab(
                    f"armrest_{s}", (D * 0.85, 0.05, 0.04), (-D * 0.05, y, H + 0.2), fmat, p["frame_colour"]
                )
                b.slab(f"armrest_post_{s}", (0.04, 0.04, 0.2), (D * 0.3, y, H), fmat, p["frame_colour"])
        return b.finish()

    def describe(self, p):
        back = "with backrest" if p["backrest"] else "without backrest"
        arms = " and two armrests" if p["armrests"] else ""
        return f"slatted wooden bench {back}{arms} on {p['frame'].replace('_', '-')} frames"


class BacklessBench(Generator):
    """Backless bench: a solid stone block, or a slatted timber top on two blocks."""

    name, l3 = "bench_backless", "backless_bench"

    def sample_params(self, rng):
        return {
            "style": pick(rng, ("block", "slatted_on_blocks", "timber_topped_block")),
            "length": uni(rng, 1.2, 3.0),
            "depth": uni(rng, 0.4, 0.8),
            "height": uni(rng, 0.38, 0.5),
            "stone": pick(rng, ("concrete", "granite")),
            "wood": pick(rng, WOODS),
        }

    def build(self, p):
        b = Builder()
        L, D, H = p["length"], p["depth"], p["height"]
        scol = "concrete_grey" if p["stone"] == "concrete" else "light_grey"
        if p["style"] == "block":
            b.slab("block", (D, L, H), (0, 0, 0), p["stone"], scol)
        elif p["style"] == "timber_topped_block":
            b.slab("block", (D, L, H - 0.05), (0, 0, 0), p["stone"], scol)
            b.slab("timber_top", (D * 0.9, L * 0.95, 0.05), (0, 0, H - 0.05), "hardwood", p["wood"])
        else:
            for i, y in enumerate((-L / 2 + 0.25, L / 2 - 0.25)):
                b.slab(f"block_{i}", (D * 0.8, 0.3, H - 0.04), (0, y, 0), p["stone"], scol)
            n = max(3, int(D / 0.1))
            for i in range(n):
                x = -D / 2 + D * (i + 0.5) / n
                b.slab(f"slat_{i}", (D / n * 0.8, L, 0.04), (x, 0, H - 0.04), "wood", p["wood"])
        return b.finish()

    def describe(self, p):
        return f"backless {p['style'].replace('_', ' ')} bench in {p['stone']}"


class PicnicTable(Generator):
    """Picnic table with attached benches on both long sides and A-frame legs."""

    name, l3 = "picnic_table", "picnic_table"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 1.5, 2.4),
            "top_width": uni(rng, 0.6, 0.8),
            "wood": pick(rng, WOODS),
            "frame": pick(rng, ("wood", "steel")),
        }

    def build(self, p):
        b = Builder()
        L, W = p["length"], p["top_width"]
        fmat, fcol = ("wood", p["wood"]) if p["frame"] == "wood" else ("steel", "dark_grey")
        top_h, seat_h, seat_x = 0.75, 0.45, W / 2 + 0.3
        for i in range(5):
            b.slab(
                f"top_board_{i}",
                (W / 5 * 0.9, L, 0.035),
                (-W / 2 + W * (i + 0.5) / 5, 0, top_h - 0.035),
                "wood",
                p["wood"],
            )
        for s in (-1, 1):
            b.slab(
                f"seat_{'fb'[s > 0]}", (0.28, L, 0.035), (s * seat_x, 0, seat_h - 0.035), "wood", p["wood"]
            )
        for j, y in enumerate((-L / 2 + 0.25, L / 2 - 0.25)):
            for s in (-1, 1):
                b.rod(
                    f"leg_{j}_{'fb'[s > 0]}",
                    (s * (seat_x + 0.05), y, 0.0),
                    (s * 0.12, y, top_h - 0.035),
                    0.035,
                    fmat,
                    fcol,
                )
            b.slab(f"seat_bearer_{j}", (2 * seat_x + 0.3, 0.06, 0.06), (0, y, seat_h - 0.095), fmat, fcol)
        return b.finish()

    def describe(self, p):
        return f"wooden picnic table with {p['frame']} A-frame legs and two attached benches"


class CafeTable(Generator):
    """Café table: round or square top on a pedestal or on four legs."""

    name, l3 = "cafe_table", "cafe_table"

    def sample_params(self, rng):
        return {
            "top": pick(rng, ("round", "square", "rectangular")),
            "size": uni(rng, 0.6, 0.9),
            "height": uni(rng, 0.72, 0.76),
            "base": pick(rng, ("pedestal", "four_legs")),
            "material": pick(rng, ("aluminium", "steel", "wood")),
            "colour": pick(rng, ("silver", "black", "white", "forest_green", "tan")),
        }

    def build(self, p):
        b = Builder()
        s, H = p["size"], p["height"]
        mat = p["material"]
        lx, ly = (s * 1.6, s) if p["top"] == "rectangular" else (s, s)
        if p["top"] == "round":
            b.cyl("top", s / 2, 0.03, (0, 0, H - 0.03), mat, p["colour"], sections=16)
        else:
            b.slab("top", (lx, ly, 0.03), (0, 0, H - 0.03), mat, p["colour"])
        if p["base"] == "pedestal":
            b.cyl("foot", min(lx, ly) * 0.38, 0.03, (0, 0, 0), "cast_iron", "black", sections=16)
            b.cyl("column", 0.035, H - 0.06, (0, 0, 0.03), "steel", "black")
        else:
            for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
                b.slab(
                    f"leg_{i}",
                    (0.04, 0.04, H - 0.03),
                    (sx * (lx / 2 - 0.05), sy * (ly / 2 - 0.05), 0),
                    mat,
                    p["colour"],
                )
        return b.finish()

    def describe(self, p):
        return f"{p['top']} {p['material']} café table on {p['base'].replace('_', ' ')}"


class CafeChair(Generator):
    """Outdoor café chair: four legs, a seat, a reclined backrest and optional armrests."""

    name, l3 = "cafe_chair", "outdoor_chair"

    def sample_params(self, rng):
        return {
            "seat_width": uni(rng, 0.42, 0.55),
            "seat_depth": uni(rng, 0.4, 0.5),
            "seat_height": uni(rng, 0.43, 0.47),
            "back_height": uni(rng, 0.35, 0.5),
            "armrests": coin(rng, 0.3),
            "material": pick(rng, ("aluminium", "plastic", "wood")),
            "colour": pick(rng, ("silver", "white", "black", "forest_green", "tan", "terracotta")),
        }

    def build(self, p):
        b = Builder()
        W, D, H, BH = p["seat_width"], p["seat_depth"], p["seat_height"], p["back_height"]
        mat, col = p["material"], p["colour"]
        for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            b.rod(
                f"leg_{i}",
                (sx * (D / 2 - 0.02), sy * (W / 2 - 0.02), 0.0),
                (sx * (D / 2 - 0.04), sy * (W / 2 - 0.04), H - 0.03),
                0.015,
                mat,
                col,
            )
        b.slab("seat", (D, W, 0.03), (0, 0, H - 0.03), mat, col)
        x0 = -D / 2
        b.hull(
            "backrest",
            [
                [x0 + dx, y, z]
                for y in (-W / 2, W / 2)
                for dx, z in ((0.0, H), (0.03, H), (-0.08, H + BH), (-0.05, H + BH))
            ],
            mat,
            col,
        )
        if p["armrests"]:
            for s in (-1, 1):
                b.slab(
                    f"armrest_{'lr'[s > 0]}",
                    (D * 0.9, 0.04, 0.03),
                    (0, s * (W / 2 - 0.02), H + 0.2),
                    mat,
                    col,
                )
                b.slab(
                    f"armrest_post_{'lr'[s > 0]}",
                    (0.03, 0.03, 0.2),
                    (D / 2 - 0.05, s * (W / 2 - 0.02), H),
                    mat,
                    col,
                )
        return b.finish()

    def describe(self, p):
        arms = " with armrests" if p["armrests"] else ""
        return f"{p['colour'].replace('_', ' ')} {p['material']} café chair{arms}"


class PatioUmbrella(Generator):
    """Market umbrella: weighted base, pole, and a canopy of thin fabric gores."""

    name, l3 = "patio_umbrella", "patio_umbrella"

    def sample_params(self, rng):
        return {
            "radius": uni(rng, 1.0, 1.9),
            "height": uni(rng, 2.2, 2.6),
            "gores": pick(rng, (6, 8)),
            "rise": uni(rng, 0.25, 0.5),
            "base": pick(rng, ("square", "round")),
            "colour": pick(rng, ("white", "cream", "red", "navy", "forest_green", "beige", "terracotta")),
        }

    def build(self, p):
        b = Builder()
        R, H, n = p["radius"], p["height"], p["gores"]
        if p["base"] == "square":
            b.slab("base", (0.5, 0.5, 0.08), (0, 0, 0), "concrete", "concrete_grey")
        else:
            b.cyl("base", 0.28, 0.08, (0, 0, 0), "cast_iron", "charcoal", sections=16)
        b.cyl("pole", 0.024, H + 0.1 - 0.08, (0, 0, 0.08), "aluminium", "silver", sections=8)
        apex = np.array([0.0, 0.0, H])
        rim = H - p["rise"]
        for k in range(n):
            a0, a1 = 2 * np.pi * k / n, 2 * np.pi * (k + 1) / n
            c = [apex, [R * np.cos(a0), R * np.sin(a0), rim], [R * np.cos(a1), R * np.sin(a1), rim]]
            b.add(f"gore_{k}", thin_panel(c, 0.012), "fabric", p["colour"])
        b.cyl("finial", 0.04, 0.08, (0, 0, H), "plastic", "white", r_top=0.0, sections=8)
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} {2 * p['radius']:.1f} m patio umbrella on a {p['base']} base"


class LitterBin(Generator):
    """Public litter bin: round steel drum, slatted timber drum, or square box, with a lid or hood."""

    name, l3 = "litter_bin", "trash_bin"

    def sample_params(self, rng):
        return {
            "style": pick(rng, ("round_steel", "round_slatted", "square", "hooded")),
            "size": uni(rng, 0.4, 0.7),
            "height": uni(rng, 0.75, 1.1),
            "colour": pick(rng, METALS),
            "wood": pick(rng, WOODS),
        }

    def build(self, p):
        b = Builder()
        s, H, col = p["size"], p["height"], p["colour"]
        st = p["style"]
        if st == "round_steel":
            b.cyl("plinth", s / 2 * 0.9, 0.04, (0, 0, 0), "steel", "black", sections=16)
            b.cyl("drum", s / 2, H - 0.12, (0, 0, 0.04), "painted_metal", col, sections=16)
            b.cyl(
                "lid",
                s / 2 + 0.01,
                0.08,
                (0, 0, H - 0.08),
                "painted_metal",
                col,
                r_top=s / 2 * 0.6,
                sections=16,
            )
        elif st == "round_slatted":
            b.cyl("liner", s / 2 * 0.92, H - 0.05, (0, 0, 0), "steel", "dark_grey", sections=12)
            n = 14
            for k in range(n):
                a = 2 * np.pi * k / n
                r = s / 2 * 0.96
                b.box(
                    f"slat_{k}",
                    (0.03, 2 * np.pi * r / n * 0.8, H - 0.1),
                    (r * np.cos(a), r * np.sin(a), H / 2),
                    "wood",
                    p["wood"],
                    yaw=a,
                )
            b.cyl("rim", s / 2, 0.05, (0, 0, H - 0.05), "steel", "black", sections=14)
        elif st == "square":
            b.slab("body", (s, s, H - 0.06), (0, 0, 0), "painted_metal", col)
            b.slab("lid", (s + 0.02, s + 0.02, 0.06), (0, 0, H - 0.06), "painted_metal", col)
            b.slab("slot_panel", (0.01, s * 0.6, 0.12), (s / 2 + 0.005, 0, H - 0.3), "plastic", "black")
        else:
            b.cyl("drum", s / 2, H - 0.25, (0, 0, 0), "painted_metal", col, sections=16)
            b.cyl("hood", s / 2 + 0.02, 0.25, (0, 0, H - 0.25), "painted_metal", col, r_top=0.05, sections=16)
        return b.finish()

    def describe(self, p):
        return f"{p['style'].replace('_', ' ')} litter bin, {p['colour'].replace('_', ' ')}"


class RecyclingBin(Generator):
    """Recycling station: two to four coloured compartments side by side with sorted-waste lids."""

    name, l3 = "recycling_station", "recycling_bin"
    LIDS = ("royal_blue", "yellow", "forest_green", "dark_grey", "red", "brown")

    def sample_params(self, rng):
        return {
            "compartments": int(rng.integers(2, 5)),
            "width": uni(rng, 0.38, 0.45),
            "depth": uni(rng, 0.4, 0.55),
            "height": uni(rng, 0.85, 1.1),
            "body": pick(rng, ("dark_grey", "charcoal", "silver")),
            "seed": seed(rng),
        }

    def build(self, p):
        b = Builder()
        n, w, D, H = p["compartments"], p["width"], p["depth"], p["height"]
        lids = np.random.default_rng(p["seed"]).permutation(len(self.LIDS))
        for i in range(n):
            y = (i - (n - 1) / 2) * w
            b.slab(f"body_{i}", (D, w * 0.97, H - 0.05), (0, y, 0), "painted_metal", p["body"])
            b.slab(f"lid_{i}", (D + 0.02, w * 0.97, 0.05), (0, y, H - 0.05), "hdpe", self.LIDS[lids[i]])
            b.slab(
                f"label_{i}",
                (0.01, w * 0.6, 0.15),
                (D / 2 + 0.005, y, H - 0.35),
                "plastic",
                self.LIDS[lids[i]],
            )
        return b.finish()

    def describe(self, p):
        return f"{p['compartments']}-compartment recycling station"


class WheelieBin(Generator):
    """Wheeled refuse bin (two-wheel 120-360 l, or four-wheel 660-1100 l) with a hinged lid."""

    name, l3 = "wheelie_bin", "wheelie_bin"

    def sample_params(self, rng):
        big = coin(rng, 0.3)
        return {
            "wheels": 4 if big else 2,
            "depth": uni(rng, 1.0, 1.2) if big else uni(rng, 0.55, 0.85),
            "width": uni(rng, 1.2, 1.4) if big else uni(rng, 0.48, 0.6),
            "height": uni(rng, 1.2, 1.35) if big else uni(rng, 0.92, 1.1),
            "colour": pick(rng, ("forest_green", "dark_grey", "royal_blue", "yellow", "brown", "black")),
            "lid": pick(rng, ("same", "yellow", "royal_blue", "red", "forest_green")),
        }

    def build(self, p):
        b = Builder()
        D, W, H, col = p["depth"], p["width"], p["height"], p["colour"]
        lid = col if p["lid"] == "same" else p["lid"]
        r = 0.1
        z0 = 0.06
        top = H - 0.05
        b.hull(
            "body",
            [
                [x, y, z]
                for y in (-W / 2 + 0.02, W / 2 - 0.02)
                for x, z in ((-D / 2 + 0.08, z0), (D / 2 - 0.08, z0), (-D / 2, top), (D / 2, top))
            ],
            "hdpe",
            col,
        )
        b.slab("lid", (D + 0.04, W, 0.05), (0.02, 0, top), "hdpe", lid)
        b.rod(
            "handle",
            (-D / 2 - 0.04, -W / 2 + 0.05, top - 0.04),
            (-D / 2 - 0.04, W / 2 - 0.05, top - 0.04),
            0.018,
            "hdpe",
            col,
        )
        if p["wheels"] == 2:
            for s in (-1, 1):
                b.cyl(
                    f"wheel_{'lr'[s > 0]}",
                    r,
                    0.05,
                    (-D / 2 + 0.05, s * (W / 2 - 0.03), r),
                    "rubber",
                    "rubber_black",
                    axis="y",
                )
            b.slab("front_foot", (0.08, W * 0.7, z0 + 0.01), (D / 2 - 0.1, 0, 0), "hdpe", col)
        else:
            for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
                b.cyl(
                    f"castor_{i}",
                    0.07,
                    0.05,
                    (sx * (D / 2 - 0.15), sy * (W / 2 - 0.15) - 0.025, 0.07),
                    "rubber",
                    "rubber_black",
                    axis="y",
                )
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} {p['wheels']}-wheel wheelie bin"


class Dumpster(Generator):
    """Front-load steel dumpster with a sloped front, two lids and castors or skids."""

    name, l3 = "dumpster", "dumpster"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 1.6, 2.6),
            "depth": uni(rng, 1.1, 1.8),
            "height": uni(rng, 1.1, 1.6),
            "colour": pick(rng, ("forest_green", "royal_blue", "dark_grey", "brown", "orange")),
            "lid": pick(rng, ("black", "forest_green", "dark_grey")),
        }

    def build(self, p):
        b = Builder()
        W, D, H = p["width"], p["depth"], p["height"]
        z0 = 0.12
        b.hull(
            "body",
            [
                [x, y, z]
                for y in (-W / 2, W / 2)
                for x, z in (
                    (-D / 2, z0),
                    (D / 2 - 0.3, z0),
                    (D / 2, H * 0.55),
                    (D / 2, H - 0.05),
                    (-D / 2, H - 0.05),
                )
            ],
            "painted_metal",
            p["colour"],
        )
        for i, s in enumerate((-1, 1)):
            b.slab(f"lid_{i}", (D + 0.03, W / 2 - 0.02, 0.04), (0.015, s * W / 4, H - 0.05), "hdpe", p["lid"])
        for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            b.cyl(
                f"castor_{i}",
                0.06,
                0.05,
                (sx * (D / 2 - 0.25), sy * (W / 2 - 0.15) - 0.025, 0.06),
                "rubber",
                "rubber_black",
                axis="y",
            )
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} steel dumpster with {p['lid'].replace('_', ' ')} lids"


GENERATORS: list[Generator] = [
    SlattedBench(),
    BacklessBench(),
    PicnicTable(),
    CafeTable(),
    CafeChair(),
    PatioUmbrella(),
    LitterBin(),
    RecyclingBin(),
    WheelieBin(),
    Dumpster(),
]
