"""Barriers: bollards, traffic cones and drums, jersey and crowd barriers, and fence sections.

Lengths in metres; front along +X (fences and barriers run along Y, facing +X).
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni


class Bollard(Generator):
    """Bollard: steel tube with a cap, cast-iron post with a collar, or a concrete/granite block."""

    name, l3 = "bollard_post", "bollard"

    def sample_params(self, rng):
        return {
            "style": pick(rng, ("steel_tube", "cast_iron", "concrete", "granite_block")),
            "height": uni(rng, 0.6, 1.1),
            "width": uni(rng, 0.12, 0.35),
            "reflective_band": coin(rng, 0.5),
            "colour": pick(rng, ("black", "silver", "dark_grey", "forest_green", "yellow")),
        }

    def build(self, p):
        b = Builder()
        H, w, col, st = p["height"], p["width"], p["colour"], p["style"]
        if st == "steel_tube":
            b.cyl("post", w / 2, H - 0.03, (0, 0, 0), "stainless_steel", col, sections=14)
            b.cyl(
                "cap", w / 2, 0.03, (0, 0, H - 0.03), "stainless_steel", col, r_top=w / 2 * 0.7, sections=14
            )
        elif st == "cast_iron":
            b.cyl("foot", w * 0.7, 0.12, (0, 0, 0), "cast_iron", col, r_top=w / 2, sections=12)
            b.cyl("post", w / 2, H - 0.25, (0, 0, 0.12), "cast_iron", col, r_top=w * 0.42, sections=12)
            b.cyl("collar", w * 0.55, 0.04, (0, 0, H - 0.25), "cast_iron", col, sections=12)
            b.ball("knob", (w * 0.45, w * 0.45, 0.09), (0, 0, H - 0.09), "cast_iron", col)
        elif st == "concrete":
            b.cyl("post", w * 0.7, H, (0, 0, 0), "concrete", "concrete_grey", r_top=w * 0.55, sections=12)
        else:
            b.hull(
                "block",
                [[sx * w, sy * w, z] for sx in (-1, 1) for sy in (-1, 1) for z in (0.0, H * 0.8)]
                + [[sx * w * 0.6, sy * w * 0.6, H] for sx in (-1, 1) for sy in (-1, 1)],
                "granite",
                "light_grey",
            )
        if p["reflective_band"] and st != "granite_block":
            r = w / 2 if st != "concrete" else w * 0.58
            b.cyl("band", r + 0.003, 0.06, (0, 0, H - 0.2), "plastic", "white", sections=14)
        return b.finish()

    def describe(self, p):
        return f"{p['style'].replace('_', ' ')} bollard, {p['height']:.2f} m"


class TrafficCone(Generator):
    """Traffic cone: square rubber base, orange cone, and one or two white reflective collars."""

    name, l3 = "traffic_cone", "traffic_cone"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.3, 1.0),
            "bands": pick(rng, (1, 2)),
            "colour": pick(rng, ("safety_orange", "orange", "yellow")),
        }

    def build(self, p):
        b = Builder()
        H = p["height"]
        base = H * 0.5
        b.slab("base", (base, base, 0.03), (0, 0, 0), "rubber", "black")
        r0, r1 = base * 0.38, H * 0.04
        b.cyl("cone", r0, H - 0.03, (0, 0, 0.03), "plastic", p["colour"], r_top=r1, sections=14)
        for k in range(p["bands"]):
            z0 = 0.03 + (H - 0.03) * (0.45 + 0.22 * k)
            h = (H - 0.03) * 0.12
            f0, f1 = (z0 - 0.03) / (H - 0.03), (z0 + h - 0.03) / (H - 0.03)
            b.cyl(
                f"band_{k}",
                r0 + (r1 - r0) * f0 + 0.003,
                h,
                (0, 0, z0),
                "plastic",
                "white",
                r_top=r0 + (r1 - r0) * f1 + 0.003,
                sections=14,
            )
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.2f} m traffic cone with {p['bands']} reflective band(s)"


class TrafficDrum(Generator):
    """Channelising drum: orange drum with alternating white stripes on a heavy rubber ring base."""

    name, l3 = "traffic_drum", "traffic_drum"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.85, 1.05),
            "radius": uni(rng, 0.22, 0.28),
            "stripes": pick(rng, (2, 3, 4)),
        }

    def build(self, p):
        b = Builder()
        H, R, n = p["height"], p["radius"], p["stripes"]
        b.cyl("base_ring", R * 1.35, 0.08, (0, 0, 0), "rubber", "black", r_top=R * 1.2, sections=14)
        seg = (H - 0.08) / (2 * n)
        for k in range(2 * n):
            b.cyl(
                f"band_{k}",
                R * (1.0 - 0.1 * k / (2 * n)),
                seg,
                (0, 0, 0.08 + k * seg),
                "hdpe",
                "safety_orange" if k % 2 == 0 else "white",
                r_top=R * (1.0 - 0.1 * (k + 1) / (2 * n)),
                sections=14,
            )
        return b.finish()

    def describe(self, p):
        return f"orange channelising drum with {p['stripes']} white stripes"


class JerseyBarrier(Generator):
    """Jersey barrier: the safety-shape profile (convex), in concrete or water-fillable plastic."""

    name, l3 = "jersey_barrier", "jersey_barrier"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 1.0, 3.8),
            "height": uni(rng, 0.8, 1.07),
            "base": uni(rng, 0.55, 0.8),
            "material": pick(rng, ("concrete", "hdpe")),
            "colour": pick(rng, ("safety_orange", "white", "red")),
        }

    def build(self, p):
        b = Builder()
        L, H, B = p["length"], p["height"], p["base"]
        prof = [
            (-B / 2, 0.0),
            (B / 2, 0.0),
            (B / 2, 0.08),
            (B * 0.3, 0.3),
            (0.12, H),
            (-0.12, H),
            (-B * 0.3, 0.3),
            (-B / 2, 0.08),
        ]
        col = "concrete_grey" if p["material"] == "concrete" else p["colour"]
        b.hull("barrier", [[x, y, z] for x, z in prof for y in (-L / 2, L / 2)], p["material"], col)
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m {p['material']} jersey barrier"


class CrowdBarrier(Generator):
    """Crowd-control barrier: a tube frame with vertical bars on two flat splayed feet."""

    name, l3 = "crowd_barrier", "crowd_barrier"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 2.0, 2.5),
            "height": uni(rng, 1.0, 1.15),
            "bars": int(rng.integers(10, 18)),
            "colour": pick(rng, ("silver", "royal_blue", "red", "yellow")),
        }

    def build(self, p):
        b = Builder()
        L, H, n, col = p["length"], p["height"], p["bars"], p["colour"]
        z0 = 0.12
        for s in (-1, 1):
            y = s * (L / 2 - 0.05)
            b.slab(f"foot_{'lr'[s > 0]}", (0.7, 0.05, 0.02), (0, y, 0), "steel", col)
            b.rod(f"upright_{'lr'[s > 0]}", (0, y, 0.02), (0, y, H), 0.02, "steel", col)
        for nm, z in (("bottom_rail", z0), ("top_rail", H - 0.02)):
            b.rod(nm, (0, -L / 2 + 0.05, z), (0, L / 2 - 0.05, z), 0.02, "steel", col)
        for k in range(n):
            y = -L / 2 + 0.05 + (L - 0.1) * (k + 1) / (n + 1)
            b.rod(f"bar_{k}", (0, y, z0), (0, y, H - 0.02), 0.008, "steel", col, sections=6)
        return b.finish()

    def describe(self, p):
        return f"{p['colour']} steel crowd barrier with {p['bars']} bars"


class Fence(Generator):
    """Fence section between posts on footings: picket, chain-link, close-boarded or railing infill."""

    def __init__(self, name: str, l3: str, infill: str) -> None:
        self.name, self.l3, self.infill = name, l3, infill

    def sample_params(self, rng):
        hr = {"picket": (0.8, 1.3), "chainlink": (1.2, 2.6), "boarded": (1.2, 2.0), "railing": (0.9, 1.2)}[
            self.infill
        ]
        return {
            "length": uni(rng, 1.8, 4.0),
            "height": uni(rng, *hr),
            "posts": int(rng.integers(2, 4)),
            "colour": pick(
                rng,
                {
                    "picket": ("white", "cream", "tan"),
                    "chainlink": ("silver", "forest_green"),
                    "boarded": ("brown", "tan", "dark_brown"),
                    "railing": ("black", "forest_green", "silver"),
                }[self.infill],
            ),
        }

    def build(self, p):
        b = Builder()
        L, H, col = p["length"], p["height"], p["colour"]
        wood = self.infill in ("picket", "boarded")
        mat = "wood" if wood else "steel"
        ys = np.linspace(-L / 2, L / 2, p["posts"])
        for i, y in enumerate(ys):
            b.slab(f"footing_{i}", (0.3, 0.3, 0.1), (0, y, 0), "concrete", "concrete_grey")
            if wood:
                b.slab(f"post_{i}", (0.09, 0.09, H), (-0.06, y, 0.1), "wood", col)
            else:
                b.cyl(f"post_{i}", 0.03, H, (-0.03, y, 0.1), "steel", col, sections=8)
        for k, z in enumerate((0.3, H - 0.1)):
            b.slab(f"rail_{k}", (0.04, L, 0.06), (0, 0, z), mat, col)
        if self.infill == "picket":
            n = int(L / 0.14)
            for k in range(n):
                y = -L / 2 + (k + 0.5) * L / n
                b.hull(
                    f"picket_{k}",
                    [
                        [x, y + dy, z]
                        for x in (0.02, 0.04)
                        for dy, z in ((-0.04, 0.15), (0.04, 0.15), (-0.04, H - 0.05), (0.04, H - 0.05))
                    ]
                    + [[x, y, H + 0.05] for x in (0.02, 0.04)],
                    "wood",
                    col,
                )
        elif self.infill == "boarded":
            b.slab("boards", (0.025, L, H - 0.1), (0.035, 0, 0.15), "wood", col)
        elif self.infill == "chainlink":
            b.slab("mesh", (0.01, L, H - 0.15), (0.0, 0, 0.15), "steel", "light_grey")
        else:
            n = int(L / 0.12)
            for k in range(n):
                y = -L / 2 + (k + 0.5) * L / n
                b.slab(f"baluster_{k}", (0.02, 0.02, H - 0.4), (0, y, 0.33), "steel", col)
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m {self.infill} fence section, {p['height']:.1f} m high"


GENERATORS: list[Generator] = [
    Bollard(),
    TrafficCone(),
    TrafficDrum(),
    JerseyBarrier(),
    CrowdBarrier(),
    Fence("fence_picket", "picket_fence", "picket"),
    Fence("fence_chainlink", "chainlink_fence", "chainlink"),
    Fence("fence_boarded", "wooden_fence", "boarded"),
    Fence("railing_balustered", "railing", "railing"),
]
