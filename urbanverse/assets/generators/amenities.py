"""Public amenities: bus shelters, kiosks, fountains, drinking fountains, statues on plinths, planters
and bike racks.

Lengths in metres; front along +X (the open side of a shelter, the counter of a kiosk).
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, seed, uni


class BusShelter(Generator):
    """Bus shelter: posts, a glazed back wall, optional glazed ends, a flat or curved roof, a bench and an
    advertising panel at one end."""

    name, l3 = "bus_shelter", "bus_shelter"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 3.0, 7.0),
            "depth": uni(rng, 1.3, 2.0),
            "height": uni(rng, 2.4, 2.9),
            "end_panels": pick(rng, (0, 1, 2)),
            "roof": pick(rng, ("flat", "curved")),
            "ad_panel": coin(rng, 0.6),
            "colour": pick(rng, ("silver", "dark_grey", "forest_green", "black")),
        }

    def build(self, p):
        b = Builder()
        L, D, H, col = p["length"], p["depth"], p["height"], p["colour"]
        b.slab("floor", (D, L, 0.05), (0, 0, 0), "concrete", "concrete_grey")
        n = max(2, int(L / 1.8) + 1)
        for k, y in enumerate(np.linspace(-L / 2 + 0.05, L / 2 - 0.05, n)):
            b.slab(f"post_{k}", (0.08, 0.08, H - 0.05), (-D / 2 + 0.05, y, 0.05), "aluminium", col)
        b.slab("back_glass", (0.02, L - 0.1, H - 0.5), (-D / 2 + 0.05, 0, 0.25), "glass", "glass_blue")
        for e in range(p["end_panels"]):
            s = 1 if e == 0 else -1
            b.slab(
                f"end_glass_{e}",
                (D * 0.75, 0.02, H - 0.5),
                (-D / 2 + D * 0.375, s * (L / 2 - 0.05), 0.25),
                "glass",
                "glass_blue",
            )
            b.slab(
                f"end_post_{e}",
                (0.06, 0.06, H - 0.05),
                (-D / 2 + D * 0.75, s * (L / 2 - 0.05), 0.05),
                "aluminium",
                col,
            )
        if p["roof"] == "flat":
            b.slab("roof", (D + 0.2, L + 0.2, 0.1), (0.05, 0, H), "aluminium", col)
        else:
            b.hull(
                "roof",
                [
                    [x, y, H + z]
                    for y in (-L / 2 - 0.1, L / 2 + 0.1)
                    for x, z in (
                        (-D / 2 - 0.1, 0.0),
                        (0.0, 0.25),
                        (D / 2 + 0.15, 0.02),
                        (D / 2 + 0.15, -0.03),
                        (-D / 2 - 0.1, -0.05),
                    )
                ],
                "glass",
                "glass_blue",
            )
        b.slab("bench", (0.35, L * 0.5, 0.04), (-D / 2 + 0.25, -L * 0.1, 0.45), "wood", "tan")
        for s in (-1, 1):
            b.slab(
                f"bench_leg_{'lr'[s > 0]}",
                (0.3, 0.05, 0.4),
                (-D / 2 + 0.25, -L * 0.1 + s * L * 0.22, 0.05),
                "steel",
                col,
            )
        if p["ad_panel"]:
            b.slab("ad_panel", (0.25, 1.3, 1.9), (-D / 2 + 0.4, L / 2 - 0.75, 0.05), "aluminium", col)
            b.slab("ad_poster", (0.01, 1.15, 1.7), (-D / 2 + 0.53, L / 2 - 0.75, 0.15), "paper", "orange")
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m bus shelter with a {p['roof']} roof"


class Kiosk(Generator):
    """Street kiosk: a box with a serving window and awning on the front, a roof overhang, and a sign."""

    name, l3 = "kiosk_booth", "kiosk"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 1.8, 4.0),
            "depth": uni(rng, 1.6, 3.0),
            "height": uni(rng, 2.4, 3.0),
            "roof": pick(rng, ("flat", "hipped")),
            "colour": pick(rng, ("forest_green", "dark_red", "navy", "cream", "white", "yellow")),
            "awning": pick(rng, ("red", "forest_green", "navy", "orange")),
        }

    def build(self, p):
        b = Builder()
        W, D, H, col = p["width"], p["depth"], p["height"], p["colour"]
        b.slab("body", (D, W, H), (0, 0, 0), "painted_metal", col)
        b.slab("window", (0.03, W * 0.7, H * 0.35), (D / 2 + 0.015, 0, H * 0.4), "glass", "glass_dark")
        b.slab("counter", (0.35, W * 0.75, 0.05), (D / 2 + 0.17, 0, H * 0.38), "wood", "tan")
        b.hull(
            "awning",
            [
                [x, y, z]
                for y in (-W * 0.42, W * 0.42)
                for x, z in (
                    (D / 2, H * 0.85),
                    (D / 2 + 0.7, H * 0.68),
                    (D / 2 + 0.7, H * 0.66),
                    (D / 2, H * 0.8),
                )
            ],
            "fabric",
            p["awning"],
        )
        if p["roof"] == "flat":
            b.slab("roof", (D + 0.4, W + 0.4, 0.15), (0, 0, H), "painted_metal", "charcoal")
        else:
            b.hull(
                "roof",
                [[sx * (D / 2 + 0.2), sy * (W / 2 + 0.2), H] for sx in (-1, 1) for sy in (-1, 1)]
                + [[sx * 0.2, sy * 0.2, H + 0.7] for sx in (-1, 1) for sy in (-1, 1)],
                "painted_metal",
                "charcoal",
            )
        b.slab("sign", (0.05, W * 0.8, 0.35), (D / 2 + 0.02, 0, H - 0.4), "plastic", "white")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} street kiosk with an awning"


class Fountain(Generator):
    """Fountain: a round or polygonal basin (rim built from segments), water surface, a central column
    with one to three tiered bowls and a jet."""

    name, l3 = "fountain_tiered", "fountain"

    def sample_params(self, rng):
        return {
            "radius": uni(rng, 1.0, 3.5),
            "sides": pick(rng, (8, 12, 16)),
            "tiers": int(rng.integers(1, 4)),
            "rim_height": uni(rng, 0.35, 0.6),
            "stone": pick(rng, ("stone", "granite", "concrete")),
        }

    def build(self, p):
        b = Builder()
        R, n, k, h = p["radius"], p["sides"], p["tiers"], p["rim_height"]
        col = {"stone": "stone_beige", "granite": "light_grey", "concrete": "concrete_grey"}[p["stone"]]
        b.cyl("basin_floor", R, 0.1, (0, 0, 0), p["stone"], col, sections=n)
        b.cyl("water", R - 0.15, h - 0.15, (0, 0, 0.1), "water", "water_blue", sections=n)
        for i in range(n):
            a = 2 * np.pi * (i + 0.5) / n
            seg = 2 * R * np.sin(np.pi / n)
            b.box(
                f"rim_{i}",
                (0.3, seg + 0.02, h),
                ((R - 0.15) * np.cos(a), (R - 0.15) * np.sin(a), h / 2),
                p["stone"],
                col,
                yaw=a,
            )
        z = 0.1
        for t in range(k):
            col_h = 0.7 - 0.15 * t
            br = R * (0.45 - 0.12 * t)
            b.cyl(f"column_{t}", 0.15 - 0.03 * t, col_h, (0, 0, z), p["stone"], col, sections=10)
            z += col_h
            b.cyl(f"bowl_{t}", br * 0.4, 0.2, (0, 0, z), p["stone"], col, r_top=br, sections=n)
            b.cyl(f"bowl_water_{t}", br * 0.9, 0.02, (0, 0, z + 0.19), "water", "water_blue", sections=n)
            z += 0.2
        b.cyl("jet", 0.05, 0.5, (0, 0, z), "water", "water_blue", r_top=0.01, sections=8)
        return b.finish()

    def describe(self, p):
        return f"{p['tiers']}-tier {p['stone']} fountain, {2 * p['radius']:.1f} m basin"


class DrinkingFountain(Generator):
    """Drinking fountain: a pedestal or column with a bowl and spout, optionally with a dog bowl."""

    name, l3 = "drinking_fountain", "drinking_fountain"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.85, 1.1),
            "style": pick(rng, ("column", "pedestal")),
            "dog_bowl": coin(rng, 0.3),
            "material": pick(rng, ("stainless_steel", "cast_iron", "concrete")),
        }

    def build(self, p):
        b = Builder()
        H, mat = p["height"], p["material"]
        col = {"stainless_steel": "silver", "cast_iron": "forest_green", "concrete": "concrete_grey"}[mat]
        b.slab("base", (0.5, 0.5, 0.05), (0, 0, 0), "concrete", "concrete_grey")
        if p["style"] == "column":
            b.cyl("column", 0.12, H - 0.15, (0, 0, 0.05), mat, col, sections=12)
        else:
            b.slab("column", (0.3, 0.3, H - 0.15), (0, 0, 0.05), mat, col)
        b.cyl("bowl", 0.12, 0.1, (0.1, 0, H - 0.1), mat, col, r_top=0.2, sections=12)
        b.cyl("spout", 0.015, 0.08, (0.1, 0, H), "stainless_steel", "silver", sections=6)
        if p["dog_bowl"]:
            b.cyl(
                "dog_bowl", 0.15, 0.08, (0.0, 0.0, 0.05), "stainless_steel", "silver", r_top=0.18, sections=12
            )
        return b.finish()

    def describe(self, p):
        return f"{p['material'].replace('_', ' ')} drinking fountain on a {p['style']}"


class Statue(Generator):
    """Statue: a stepped plinth with a stylised standing figure (legs, torso, arms, head), or a bust."""

    name, l3 = "statue_on_plinth", "statue"

    def sample_params(self, rng):
        return {
            "plinth": uni(rng, 0.8, 2.5),
            "plinth_width": uni(rng, 0.7, 1.6),
            "figure": uni(rng, 1.0, 3.0),
            "pose": pick(rng, ("standing", "raised_arm", "bust")),
            "material": pick(rng, ("bronze", "marble")),
            "stone": pick(rng, ("granite", "stone")),
        }

    def build(self, p):
        b = Builder()
        P, w, F = p["plinth"], p["plinth_width"], p["figure"]
        mat = p["material"]
        col = "copper_green" if mat == "bronze" else "off_white"
        scol = "grey" if p["stone"] == "granite" else "stone_beige"
        b.slab("step", (w * 1.3, w * 1.3, 0.2), (0, 0, 0), p["stone"], scol)
        b.slab("plinth", (w, w, P - 0.3), (0, 0, 0.2), p["stone"], scol)
        b.slab("cap", (w * 1.1, w * 1.1, 0.1), (0, 0, P - 0.1), p["stone"], scol)
        z = P
        if p["pose"] == "bust":
            b.hull(
                "bust_chest",
                [[x, y, z + dz] for x in (-0.2, 0.2) for y in (-0.35, 0.35) for dz in (0, 0.4)]
                + [[0, 0, z + 0.55]],
                mat,
                col,
            )
            b.ball("head", (0.13, 0.11, 0.15), (0, 0, z + 0.7), mat, col)
            return b.finish()
        s = F / 1.8
        b.slab("figure_base", (0.5 * s, 0.5 * s, 0.05), (0, 0, z), mat, col)
        z += 0.05
        for side in (-1, 1):
            b.rod(
                f"leg_{'lr'[side > 0]}",
                (0, side * 0.1 * s, z),
                (0, side * 0.1 * s, z + 0.85 * s),
                0.07 * s,
                mat,
                col,
            )
        b.hull(
            "torso",
            [
                [x, y, z + dz * s]
                for x in (-0.1 * s, 0.1 * s)
                for y, dz in ((-0.15, 0.8), (0.15, 0.8), (-0.22, 1.45), (0.22, 1.45))
            ],
            mat,
            col,
        )
        b.ball("head", (0.1 * s, 0.09 * s, 0.12 * s), (0, 0, z + 1.6 * s), mat, col)
        b.rod("arm_l", (0, -0.24 * s, z + 1.4 * s), (0.05 * s, -0.3 * s, z + 0.85 * s), 0.05 * s, mat, col)
        if p["pose"] == "raised_arm":
            b.rod("arm_r", (0, 0.24 * s, z + 1.4 * s), (0.05 * s, 0.35 * s, z + 1.95 * s), 0.05 * s, mat, col)
        else:
            b.rod("arm_r", (0, 0.24 * s, z + 1.4 * s), (0.05 * s, 0.3 * s, z + 0.85 * s), 0.05 * s, mat, col)
        return b.finish()

    def describe(self, p):
        return f"{p['material']} {p['pose'].replace('_', ' ')} statue on a {p['stone']} plinth"


class Planter(Generator):
    """Street planter: a box, round tub or tapered trough of soil with a shrub, flowers or a small tree."""

    name, l3 = "planter", "planter"

    def sample_params(self, rng):
        return {
            "shape": pick(rng, ("box", "round", "tapered")),
            "size": uni(rng, 0.6, 1.8),
            "aspect": uni(rng, 1.0, 2.0),
            "height": uni(rng, 0.4, 0.9),
            "material": pick(rng, ("concrete", "wood", "steel", "ceramic")),
            "plant": pick(rng, ("shrub", "flowers", "small_tree")),
            "seed": seed(rng),
        }

    def build(self, p):
        b = Builder()
        s, H, mat = p["size"], p["height"], p["material"]
        col = {"concrete": "concrete_grey", "wood": "tan", "steel": "charcoal", "ceramic": "terracotta"}[mat]
        lx, ly = (s, s) if p["shape"] == "round" else (s, s * p["aspect"])
        if p["shape"] == "round":
            b.cyl("tub", s / 2, H, (0, 0, 0), mat, col, sections=16)
            b.cyl("soil", s / 2 - 0.04, 0.02, (0, 0, H - 0.01), "soil", "soil_brown", sections=16)
        else:
            t = 0.15 if p["shape"] == "tapered" else 0.0
            b.hull(
                "trough",
                [
                    [sx * (lx / 2 - t * (z < H / 2)), sy * (ly / 2 - t * (z < H / 2)), z]
                    for sx in (-1, 1)
                    for sy in (-1, 1)
                    for z in (0.0, H)
                ],
                mat,
                col,
            )
            b.slab("soil", (lx - 0.08, ly - 0.08, 0.02), (0, 0, H - 0.01), "soil", "soil_brown")
        rng = np.random.default_rng(p["seed"])
        r = min(lx, ly) / 2 - 0.05
        if p["plant"] == "shrub":
            b.ball(
                "shrub", (r, ly / 2 - 0.05, r * 0.9), (0, 0, H + r * 0.6), "foliage", "leaf_green", z_floor=H
            )
        elif p["plant"] == "flowers":
            cols = ("red", "yellow", "pink", "purple", "white", "orange")
            for k in range(6):
                x, y = rng.uniform(-lx / 2 + 0.12, lx / 2 - 0.12), rng.uniform(-ly / 2 + 0.12, ly / 2 - 0.12)
                b.ball(
                    f"flower_{k}",
                    (0.12, 0.12, 0.15),
                    (x, y, H + 0.08),
                    "foliage",
                    cols[rng.integers(6)],
                    z_floor=H,
                )
            b.slab("leaves", (lx - 0.1, ly - 0.1, 0.1), (0, 0, H), "foliage", "leaf_dark")
        else:
            th = min(1.3, 2.1 - H - 0.5)
            b.cyl("trunk", 0.04, th, (0, 0, H), "bark", "bark_brown", sections=8)
            cr = min(0.45, r + 0.1)
            b.ball("crown", (cr, cr, cr * 1.1), (0, 0, H + th + cr * 0.6), "foliage", "leaf_green")
        return b.finish()

    def describe(self, p):
        return f"{p['shape']} {p['material']} planter with {p['plant'].replace('_', ' ')}"


class BikeRack(Generator):
    """Bicycle parking: a row of Sheffield hoops on ground rails, or a low grid rack for front wheels."""

    name, l3 = "bike_rack", "bike_rack"

    def sample_params(self, rng):
        return {
            "style": pick(rng, ("sheffield", "grid")),
            "bays": int(rng.integers(2, 7)),
            "spacing": uni(rng, 0.5, 1.0),
            "hoop_length": uni(rng, 0.6, 0.9),
            "height": uni(rng, 0.7, 0.9),
            "colour": pick(rng, ("silver", "black", "dark_grey", "royal_blue")),
        }

    def build(self, p):
        b = Builder()
        n, sp, hl, H, col = p["bays"], p["spacing"], p["hoop_length"], p["height"], p["colour"]
        span = sp * (n - 1)
        if p["style"] == "sheffield":
            for i in range(n):
                y = -span / 2 + i * sp
                a, c = hl / 2, 0.1
                pts = [(-a, 0.0), (-a, H - c), (-a + c, H), (a - c, H), (a, H - c), (a, 0.0)]
                for k in range(5):
                    (x0, z0), (x1, z1) = pts[k], pts[k + 1]
                    b.rod(f"hoop_{i}_{k}", (x0, y, z0), (x1, y, z1), 0.025, "steel", col)
            for s in (-1, 1):
                b.slab(f"rail_{'fb'[s > 0]}", (0.06, span + 0.06, 0.012), (s * hl / 2, 0, 0), "steel", col)
        else:
            L = 0.5
            for s in (-1, 1):
                b.slab(f"rail_{'fb'[s > 0]}", (0.04, span + 0.04, 0.04), (s * L / 2, 0, 0), "steel", col)
            b.slab("top_rail", (0.04, span + 0.04, 0.04), (-L / 2, 0, 0.35), "steel", col)
            for i in range(n):
                y = -span / 2 + i * sp
                b.rod(f"loop_front_{i}", (L / 2, y, 0.04), (-L / 2, y, 0.37), 0.012, "steel", col)
                b.rod(f"loop_back_{i}", (-L / 2, y, 0.04), (-L / 2, y, 0.35), 0.012, "steel", col)
        return b.finish()

    def describe(self, p):
        return f"{p['bays']}-bay {p['style']} bike rack"


GENERATORS: list[Generator] = [
    BusShelter(),
    Kiosk(),
    Fountain(),
    DrinkingFountain(),
    Statue(),
    Planter(),
    BikeRack(),
]
