"""Vegetation: broadleaf, columnar, weeping, conifer, umbrella-pine, palm and young street trees,
shrubs, hedges, topiary, potted plants and grasses (boulders and stumps: ``rocks``).

Lengths in metres. Crowns are built from ellipsoid blobs arranged with even rotational symmetry
so the centre of mass stays over the trunk; trunks stand on a root flare that forms the footprint.
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, seed, uni

LEAVES = ("leaf_green", "leaf_dark", "leaf_light", "leaf_autumn")


def _trunk(b: Builder, radius: float, height: float, flare: float, bark: str = "bark_brown") -> None:
    """Root flare (a squat cone, ``flare`` times the trunk radius at the ground) plus a tapered trunk."""
    b.cyl("root_flare", radius * flare, radius * 3.0, (0, 0, 0), "bark", bark, r_top=radius, sections=12)
    b.cyl("trunk", radius, height, (0, 0, 0), "bark", bark, r_top=radius * 0.7, sections=12)


def _blob_ring(b: Builder, name: str, count: int, ring_r: float, z: float, radii, colour: str, phase=0.0):
    """``count`` (even) equal ellipsoid blobs evenly spaced on a horizontal ring of radius ``ring_r``."""
    for k in range(count):
        a = phase + 2 * np.pi * k / count
        b.ball(f"{name}_{k}", radii, (ring_r * np.cos(a), ring_r * np.sin(a), z), "foliage", colour)


class BroadleafTree(Generator):
    """Deciduous tree: flared trunk, two to four main limbs, and a rounded crown of foliage blobs."""

    name, l3 = "tree_broadleaf", "broadleaf_tree"

    def sample_params(self, rng):
        h = uni(rng, 4.0, 16.0)
        return {
            "height": h,
            "crown_ratio": uni(rng, 0.45, 0.7),
            "crown_width": uni(rng, 0.5, 0.9),
            "trunk_radius": round(h * uni(rng, 0.018, 0.03), 3),
            "ring_blobs": pick(rng, (4, 6, 8)),
            "limbs": pick(rng, (2, 3, 4)),
            "leaves": pick(rng, LEAVES),
        }

    def build(self, p):
        b = Builder()
        H, r = p["height"], p["trunk_radius"]
        crown_h = H * p["crown_ratio"]
        cw = crown_h * p["crown_width"] * 1.2
        base = H - crown_h
        _trunk(b, r, base + crown_h * 0.3, 2.6)
        for k in range(p["limbs"]):
            a = 2 * np.pi * k / p["limbs"] + 0.4
            b.rod(
                f"limb_{k}",
                (0, 0, base),
                (cw * 0.25 * np.cos(a), cw * 0.25 * np.sin(a), base + crown_h * 0.45),
                r * 0.55,
                "bark",
                "bark_brown",
                sections=6,
            )
        n = p["ring_blobs"]
        rb = cw / 2 / (1.0 + 0.9 * np.sin(np.pi / n) + 0.3)
        _blob_ring(
            b, "crown_ring", n, cw / 2 - rb, base + crown_h * 0.42, (rb, rb, crown_h * 0.3), p["leaves"]
        )
        b.ball(
            "crown_core",
            (cw * 0.4, cw * 0.4, crown_h * 0.38),
            (0, 0, base + crown_h * 0.58),
            "foliage",
            p["leaves"],
        )
        b.ball(
            "crown_top",
            (cw * 0.28, cw * 0.28, crown_h * 0.25),
            (0, 0, H - crown_h * 0.25),
            "foliage",
            p["leaves"],
        )
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m broadleaf tree with a rounded {p['leaves'].replace('leaf_', '')} crown"


class ColumnarTree(Generator):
    """Fastigiate tree (poplar, cypress-like): short trunk and a tall narrow crown of stacked blobs."""

    name, l3 = "tree_columnar", "columnar_tree"

    def sample_params(self, rng):
        h = uni(rng, 5.0, 20.0)
        return {
            "height": h,
            "width_ratio": uni(rng, 0.12, 0.22),
            "segments": int(rng.integers(2, 5)),
            "trunk_radius": round(h * uni(rng, 0.015, 0.022), 3),
            "leaves": pick(rng, ("leaf_green", "leaf_dark", "conifer_green")),
        }

    def build(self, p):
        b = Builder()
        H, r, n = p["height"], p["trunk_radius"], p["segments"]
        w = H * p["width_ratio"]
        base = H * 0.12
        _trunk(b, r, base + 0.5, 2.8)
        seg = (H - base) / n
        for k in range(n):
            scale = 1.0 - 0.25 * abs(k - (n - 1) * 0.35) / n
            b.ball(
                f"crown_{k}",
                (w / 2 * scale, w / 2 * scale, seg * 0.75),
                (0, 0, base + seg * (k + 0.5)),
                "foliage",
                p["leaves"],
            )
        b.cyl(
            "crown_tip",
            w * 0.2,
            seg * 0.4,
            (0, 0, H - seg * 0.42),
            "foliage",
            p["leaves"],
            r_top=0.0,
            sections=8,
        )
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m columnar tree"


class WeepingTree(Generator):
    """Weeping tree (willow-like): a dome crown with a curtain of hanging foliage around it."""

    name, l3 = "tree_weeping", "weeping_tree"

    def sample_params(self, rng):
        h = uni(rng, 5.0, 13.0)
        return {
            "height": h,
            "width_ratio": uni(rng, 0.8, 1.05),
            "curtain": pick(rng, (6, 8, 10)),
            "drop": uni(rng, 0.45, 0.7),
            "trunk_radius": round(h * uni(rng, 0.03, 0.04), 3),
            "leaves": pick(rng, ("leaf_light", "leaf_green", "sage")),
        }

    def build(self, p):
        b = Builder()
        H, r = p["height"], p["trunk_radius"]
        cw = H * p["width_ratio"]
        _trunk(b, r, H * 0.65, 2.5)
        b.ball("dome", (cw * 0.4, cw * 0.4, H * 0.25), (0, 0, H * 0.75), "foliage", p["leaves"])
        n = p["curtain"]
        hang = H * p["drop"] * 0.5
        rb = min(cw * 0.5 * np.pi / n, cw * 0.16)
        _blob_ring(b, "curtain", n, cw / 2 - rb, H * 0.72 - hang * 0.8, (rb, rb, hang), p["leaves"])
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m weeping tree with hanging foliage"


class ConiferTree(Generator):
    """Conifer: flared trunk and a cone of stacked tiers (spruce/fir) or one slim cone (cypress-like)."""

    name, l3 = "tree_conifer", "conifer_tree"

    def sample_params(self, rng):
        h = uni(rng, 3.5, 25.0)
        return {
            "height": h,
            "width_ratio": uni(rng, 0.3, 0.5),
            "tiers": int(rng.integers(1, 7)),
            "bare_trunk": uni(rng, 0.05, 0.2),
            "trunk_radius": round(h * uni(rng, 0.015, 0.025), 3),
            "leaves": pick(rng, ("conifer_green", "leaf_dark", "dark_green", "sage")),
        }

    def build(self, p):
        b = Builder()
        H, r, n = p["height"], p["trunk_radius"], p["tiers"]
        w = H * p["width_ratio"]
        base = H * p["bare_trunk"]
        _trunk(b, r, base + 0.3, 2.5)
        step = (H - base) / (n + 1)
        for k in range(n):
            z = base + k * step * 0.95
            rad = w / 2 * (1.0 - k / (n + 1.2))
            b.cyl(
                f"tier_{k}",
                rad,
                H - z if n == 1 else step * 2.0,
                (0, 0, z),
                "foliage",
                p["leaves"],
                r_top=0.0 if n == 1 else rad * 0.25,
                sections=10,
            )
        if n > 1:
            z = base + n * step * 0.95
            b.cyl("tip", w / 2 * 0.35, H - z, (0, 0, z), "foliage", p["leaves"], r_top=0.0, sections=10)
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m conifer with {p['tiers']} foliage tiers"


class UmbrellaPine(Generator):
    """Stone pine: tall bare trunk forking into limbs under a flat, wide umbrella crown."""

    name, l3 = "tree_umbrella_pine", "umbrella_pine"

    def sample_params(self, rng):
        h = uni(rng, 6.0, 17.0)
        return {
            "height": h,
            "width_ratio": uni(rng, 0.75, 0.95),
            "limbs": pick(rng, (3, 4, 5)),
            "crown_depth": uni(rng, 0.18, 0.3),
            "trunk_radius": round(h * uni(rng, 0.022, 0.03), 3),
        }

    def build(self, p):
        b = Builder()
        H, r = p["height"], p["trunk_radius"]
        cw, cd = H * p["width_ratio"], H * p["crown_depth"]
        fork = H - cd * 1.4
        _trunk(b, r, fork, 2.6, "bark_grey")
        for k in range(p["limbs"]):
            a = 2 * np.pi * k / p["limbs"]
            b.rod(
                f"limb_{k}",
                (0, 0, fork - 0.2),
                (cw * 0.22 * np.cos(a), cw * 0.22 * np.sin(a), H - cd * 0.6),
                r * 0.5,
                "bark",
                "bark_grey",
                sections=6,
            )
        b.ball("canopy", (cw / 2, cw / 2, cd * 0.5), (0, 0, H - cd * 0.5), "foliage", "conifer_green")
        _blob_ring(b, "canopy_lobe", 6, cw * 0.3, H - cd * 0.55, (cw * 0.2, cw * 0.2, cd * 0.4), "leaf_dark")
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m umbrella pine with a flat crown"


class PalmTree(Generator):
    """Palm: ringed trunk on a root bulb, a crown shaft and a rosette of arching fronds."""

    name, l3 = "tree_palm", "palm_tree"

    def sample_params(self, rng):
        h = uni(rng, 3.5, 20.0)
        return {
            "height": h,
            "fronds": pick(rng, (8, 10, 12)),
            "frond_length": uni(rng, 1.8, 4.0),
            "trunk_radius": uni(rng, 0.15, 0.3),
            "rings": int(rng.integers(4, 9)),
            "leaves": pick(rng, ("palm_green", "leaf_green", "olive")),
        }

    def build(self, p):
        b = Builder()
        H, r, fl = p["height"], p["trunk_radius"], p["frond_length"]
        top = H - fl * 0.35
        b.cyl("root_bulb", r * 2.2, 0.4, (0, 0, 0), "bark", "bark_grey", r_top=r * 1.05)
        n = p["rings"]
        seg = (top - 0.4) / n
        for k in range(n):
            rk = r * (1.05 - 0.25 * k / n)
            b.cyl(
                f"trunk_{k}",
                rk,
                seg,
                (0, 0, 0.4 + k * seg),
                "bark",
                "bark_grey" if k % 2 else "bark_brown",
                r_top=rk * 0.93,
                sections=10,
            )
        b.ball("crown_shaft", (r * 1.2, r * 1.2, 0.5), (0, 0, top + 0.2), "foliage", "olive")
        m = p["fronds"]
        for k in range(m):
            a = 2 * np.pi * k / m
            d = np.array([np.cos(a), np.sin(a), 0.0])
            s = np.array([-np.sin(a), np.cos(a), 0.0]) * 0.12 * fl
            p0 = np.array([0.0, 0.0, top + 0.3])
            p1 = p0 + d * fl * 0.55 + [0, 0, fl * 0.3]
            p2 = p0 + d * fl + [0, 0, -fl * 0.05]
            b.hull(
                f"frond_{k}_in",
                [p0, p0 + [0, 0, 0.03], p1 + s, p1 - s, p1 + s + [0, 0, 0.03]],
                "foliage",
                p["leaves"],
            )
            b.hull(
                f"frond_{k}_out",
                [p1 + s, p1 - s, p1 + [0, 0, 0.03], p2, p2 + [0, 0, 0.02]],
                "foliage",
                p["leaves"],
            )
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m palm with {p['fronds']} fronds"


class YoungStreetTree(Generator):
    """Newly planted street tree: slim trunk tied to two or three stakes, small crown, on a tree grate."""

    name, l3 = "tree_young_staked", "young_street_tree"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 2.6, 5.5),
            "stakes": pick(rng, (2, 3)),
            "crown_width": uni(rng, 0.8, 2.0),
            "grate": uni(rng, 0.9, 1.5),
            "crown": pick(rng, ("round", "oval")),
            "leaves": pick(rng, LEAVES[:3]),
        }

    def build(self, p):
        b = Builder()
        H, cw, g = p["height"], p["crown_width"], p["grate"]
        b.slab("tree_grate", (g, g, 0.02), (0, 0, 0), "cast_iron", "charcoal")
        ch = min(cw * (1.0 if p["crown"] == "round" else 1.6), H * 0.5)
        b.cyl("trunk", 0.05, H - ch * 0.5, (0, 0, 0.02), "bark", "bark_brown", r_top=0.035, sections=8)
        b.ball("crown", (cw / 2, cw / 2, ch / 2), (0, 0, H - ch / 2), "foliage", p["leaves"])
        n = p["stakes"]
        for k in range(n):
            a = 2 * np.pi * k / n
            x, y = 0.25 * np.cos(a), 0.25 * np.sin(a)
            b.cyl(f"stake_{k}", 0.03, 1.6, (x, y, 0.02), "wood", "tan", sections=6)
            b.rod(f"tie_{k}", (x, y, 1.3), (0.0, 0.0, 1.3), 0.012, "rubber", "black", sections=6)
        return b.finish()

    def describe(self, p):
        return f"young staked street tree, {p['height']:.1f} m"


class Shrub(Generator):
    """Free-form shrub: three to seven flat-bottomed foliage blobs clustered on the ground."""

    name, l3 = "shrub_cluster", "shrub"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 0.5, 3.0),
            "height_ratio": uni(rng, 0.5, 0.9),
            "blobs": int(rng.integers(3, 8)),
            "leaves": pick(rng, LEAVES + ("sage", "olive")),
            "flowers": coin(rng, 0.25),
            "seed": seed(rng),
        }

    def build(self, p):
        b = Builder()
        rng = np.random.default_rng(p["seed"])
        W = p["width"]
        H = W * p["height_ratio"]
        for k in range(p["blobs"]):
            r = W * rng.uniform(0.22, 0.35)
            a, d = rng.uniform(0, 2 * np.pi), rng.uniform(0, W / 2 - r)
            c = (d * np.cos(a), d * np.sin(a), H * rng.uniform(0.3, 0.5))
            b.ball(f"blob_{k}", (r, r, H * rng.uniform(0.45, 0.55)), c, "foliage", p["leaves"], z_floor=0.0)
            if p["flowers"]:
                b.ball(
                    f"bloom_{k}", (r * 0.3, r * 0.3, r * 0.2), (c[0], c[1], c[2] + H * 0.4), "foliage", "pink"
                )
        return b.finish()

    def describe(self, p):
        fl = " flowering" if p["flowers"] else ""
        return f"{p['width']:.1f} m{fl} shrub"


class Hedge(Generator):
    """Clipped hedge: a run of bevelled foliage blocks of slightly varying height."""

    name, l3 = "hedge_clipped", "hedge"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 1.5, 10.0),
            "depth": uni(rng, 0.5, 1.4),
            "height": uni(rng, 0.5, 2.4),
            "bevel": uni(rng, 0.05, 0.25),
            "leaves": pick(rng, ("leaf_dark", "dark_green", "leaf_green")),
            "seed": seed(rng),
        }

    def build(self, p):
        b = Builder()
        L, D, H, bev = p["length"], p["depth"], p["height"], p["bevel"] * p["depth"]
        n = max(1, int(L / 1.5))
        seg = L / n
        jitter = np.random.default_rng(p["seed"]).uniform(-0.04, 0.04, n)
        for k in range(n):
            y0, y1 = -L / 2 + k * seg, -L / 2 + (k + 1) * seg
            h = H * (1.0 + jitter[k])
            b.hull(
                f"block_{k}",
                [
                    [x, y, z]
                    for y in (y0, y1)
                    for x, z in (
                        (-D / 2, 0),
                        (D / 2, 0),
                        (-D / 2, h - bev),
                        (D / 2, h - bev),
                        (-D / 2 + bev, h),
                        (D / 2 - bev, h),
                    )
                ],
                "foliage",
                p["leaves"],
            )
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m clipped hedge, {p['height']:.1f} m tall"


class Topiary(Generator):
    """Topiary in a pot: a ball, a double ball on a stem, a cone, or a cube."""

    name, l3 = "topiary_potted", "topiary"

    def sample_params(self, rng):
        return {
            "shape": pick(rng, ("ball", "double_ball", "cone", "cube")),
            "size": uni(rng, 0.4, 1.4),
            "pot": pick(rng, ("terracotta", "charcoal", "white", "concrete_grey")),
        }

    def build(self, p):
        b = Builder()
        s = p["size"]
        ph = 0.25 + 0.25 * s
        b.cyl("pot", s * 0.35, ph, (0, 0, 0), "ceramic", p["pot"], r_top=s * 0.42, sections=12)
        b.cyl("soil", s * 0.4, 0.02, (0, 0, ph - 0.01), "soil", "soil_brown", sections=12)
        if p["shape"] == "ball":
            b.ball("ball", (s / 2, s / 2, s / 2), (0, 0, ph + s / 2), "foliage", "leaf_dark")
        elif p["shape"] == "double_ball":
            b.cyl("stem", 0.03, s * 0.6, (0, 0, ph), "bark", "bark_brown", sections=6)
            b.ball("ball_low", (s * 0.45,) * 3, (0, 0, ph + s * 0.45), "foliage", "leaf_dark")
            b.ball("ball_high", (s * 0.3,) * 3, (0, 0, ph + s * 1.3), "foliage", "leaf_dark")
        elif p["shape"] == "cone":
            b.cyl("cone", s * 0.45, s * 1.8, (0, 0, ph), "foliage", "leaf_dark", r_top=0.0, sections=12)
        else:
            b.slab("cube", (s * 0.65, s * 0.65, s * 0.65), (0, 0, ph), "foliage", "leaf_dark")
        return b.finish()

    def describe(self, p):
        return f"{p['shape'].replace('_', ' ')} topiary in a {p['pot'].replace('_', ' ')} pot"


class PottedPlant(Generator):
    """Potted plant: a tapered pot with a bushy ball, a fan of strap leaves, or a small standard tree."""

    name, l3 = "potted_plant", "potted_plant"

    def sample_params(self, rng):
        return {
            "pot_radius": uni(rng, 0.12, 0.45),
            "pot_height": uni(rng, 0.2, 0.7),
            "plant": pick(rng, ("bush", "fan", "standard")),
            "leaves": pick(rng, LEAVES[:3]),
            "pot": pick(rng, ("terracotta", "white", "charcoal", "beige")),
        }

    def build(self, p):
        b = Builder()
        r, h = p["pot_radius"], p["pot_height"]
        b.cyl("pot", r * 0.75, h, (0, 0, 0), "ceramic", p["pot"], r_top=r, sections=12)
        b.cyl("soil", r * 0.95, 0.02, (0, 0, h - 0.01), "soil", "soil_brown", sections=12)
        if p["plant"] == "bush":
            b.ball(
                "bush", (r * 1.3, r * 1.3, r * 1.1), (0, 0, h + r * 0.8), "foliage", p["leaves"], z_floor=h
            )
        elif p["plant"] == "fan":
            for k in range(8):
                a = 2 * np.pi * k / 8
                tip = (r * 2.2 * np.cos(a), r * 2.2 * np.sin(a), h + r * 3.0)
                b.rod(f"leaf_{k}", (0, 0, h), tip, r * 0.12, "foliage", p["leaves"], sections=4)
        else:
            b.cyl("stem", 0.025, r * 3, (0, 0, h), "bark", "bark_brown", sections=6)
            b.ball("crown", (r * 1.4,) * 3, (0, 0, h + r * 3 + r * 1.1), "foliage", p["leaves"])
        return b.finish()

    def describe(self, p):
        return f"potted {p['plant']} plant in a {p['pot']} pot"


class OrnamentalGrass(Generator):
    """Clump of ornamental grass: a low tuft with arching blades fanning out evenly."""

    name, l3 = "ornamental_grass", "ornamental_grass"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.4, 1.8),
            "spread": uni(rng, 0.5, 1.0),
            "blades": pick(rng, (8, 12, 16)),
            "colour": pick(rng, ("sage", "olive", "leaf_light", "sand")),
        }

    def build(self, p):
        b = Builder()
        H, n = p["height"], p["blades"]
        R = H * p["spread"] * 0.5
        b.cyl("tuft", R * 0.35, H * 0.2, (0, 0, 0), "foliage", p["colour"], r_top=R * 0.25, sections=10)
        for k in range(n):
            a = 2 * np.pi * k / n
            tall = H * (1.0 if k % 2 else 0.8)
            b.rod(
                f"blade_{k}",
                (0, 0, H * 0.1),
                (R * np.cos(a), R * np.sin(a), tall),
                0.02,
                "foliage",
                p["colour"],
                sections=4,
            )
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.1f} m clump of ornamental grass"


GENERATORS: list[Generator] = [
    BroadleafTree(),
    ColumnarTree(),
    WeepingTree(),
    ConiferTree(),
    UmbrellaPine(),
    PalmTree(),
    YoungStreetTree(),
    Shrub(),
    Hedge(),
    Topiary(),
    PottedPlant(),
    OrnamentalGrass(),
]
