"""Street life: standing pedestrians (adults and children) and street goods (cardboard boxes, wooden
crates, pallets, drum barrels).

Lengths in metres; front along +X (the way a person faces).
"""

from __future__ import annotations

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni


class Pedestrian(Generator):
    """A standing person (adult or child): shoes, legs, torso, arms, head and optional bag."""

    def __init__(self, name: str, l3: str, child: bool) -> None:
        self.name, self.l3, self.child = name, l3, child

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.95, 1.4) if self.child else uni(rng, 1.55, 1.95),
            "build": uni(rng, 0.9, 1.2),
            "skin": pick(rng, ("skin_light", "skin_medium", "skin_dark")),
            "top": pick(rng, ("red", "navy", "white", "forest_green", "grey", "yellow", "black", "beige")),
            "trousers": pick(rng, ("denim", "black", "charcoal", "beige", "navy")),
            "bag": coin(rng, 0.3),
        }

    def build(self, p):
        b = Builder()
        h, k = p["height"], p["build"]
        s = h / 1.75
        for side in (-1, 1):
            y = side * 0.1 * s * k
            nm = "lr"[side > 0]
            b.slab(f"shoe_{nm}", (0.27 * s, 0.1 * s, 0.07 * s), (0.04 * s, y, 0), "leather", "black")
            b.rod(f"leg_{nm}", (0, y, 0.07 * s), (0, y, 0.9 * s), 0.065 * s * k, "fabric", p["trousers"])
            b.rod(
                f"arm_{nm}",
                (0, side * 0.23 * s * k, 1.42 * s),
                (0.02 * s, side * 0.27 * s * k, 0.85 * s),
                0.045 * s * k,
                "fabric",
                p["top"],
            )
            b.ball(
                f"hand_{nm}", (0.045 * s,) * 3, (0.02 * s, side * 0.27 * s * k, 0.8 * s), "fabric", p["skin"]
            )
        b.hull(
            "torso",
            [
                [x, y, z * s]
                for x in (-0.1 * s * k, 0.1 * s * k)
                for y, z in (
                    (-0.17 * k * s, 0.88),
                    (0.17 * k * s, 0.88),
                    (-0.22 * k * s, 1.45),
                    (0.22 * k * s, 1.45),
                )
            ],
            "fabric",
            p["top"],
        )
        b.cyl("neck", 0.05 * s, 0.08 * s, (0, 0, 1.45 * s), "fabric", p["skin"], sections=8)
        b.ball("head", (0.1 * s, 0.085 * s, 0.12 * s), (0.01 * s, 0, 1.63 * s), "fabric", p["skin"])
        if p["bag"]:
            b.slab("bag", (0.12 * s, 0.3 * s, 0.35 * s), (-0.17 * s * k, 0, 1.05 * s), "fabric", "dark_grey")
        return b.finish()

    def describe(self, p):
        who = "child" if self.child else "adult"
        return f"standing {who}, {p['height']:.2f} m, {p['top']} top and {p['trousers']} trousers"


class Container(Generator):
    """Street goods: a cardboard box, a slatted wooden crate, a shipping pallet or a drum barrel."""

    def __init__(self, name: str, l3: str, kind: str) -> None:
        self.name, self.l3, self.kind = name, l3, kind

    def sample_params(self, rng):
        return {
            "length": uni(rng, 0.3, 0.8),
            "width": uni(rng, 0.3, 0.6),
            "height": uni(rng, 0.25, 0.7),
            "colour": pick(
                rng,
                {
                    "box": ("tan", "sand", "beige"),
                    "crate": ("tan", "beige", "brown"),
                    "pallet": ("tan", "beige"),
                    "barrel": ("royal_blue", "red", "forest_green", "dark_grey", "yellow"),
                }[self.kind],
            ),
        }

    def build(self, p):
        b = Builder()
        L, W, H, col = p["length"], p["width"], p["height"], p["colour"]
        if self.kind == "box":
            b.slab("box", (L, W, H), (0, 0, 0), "cardboard", col)
            b.slab("tape", (L + 0.004, 0.05, 0.004), (0, 0, H), "plastic", "sand")
        elif self.kind == "crate":
            n = max(2, int(H / 0.1))
            for k in range(n):
                z = k * H / n
                for s in (-1, 1):
                    b.slab(
                        f"slat_{k}_{'fb'[s > 0]}",
                        (0.02, W, H / n * 0.7),
                        (s * (L / 2 - 0.01), 0, z),
                        "wood",
                        col,
                    )
                    b.slab(
                        f"slat_{k}_{'lr'[s > 0]}",
                        (L - 0.04, 0.02, H / n * 0.7),
                        (0, s * (W / 2 - 0.01), z),
                        "wood",
                        col,
                    )
            b.slab("bottom", (L - 0.04, W - 0.04, 0.02), (0, 0, 0), "wood", col)
        elif self.kind == "pallet":
            L, W = 1.2, 0.8 + 0.2 * (p["width"] > 0.45)
            for k, y in enumerate((-W / 2 + 0.05, 0.0, W / 2 - 0.05)):
                for j, x in enumerate((-L / 2 + 0.05, 0.0, L / 2 - 0.05)):
                    b.slab(f"block_{k}_{j}", (0.1, 0.1, 0.08), (x, y, 0.02), "wood", col)
                b.slab(f"stringer_{k}", (L, 0.1, 0.02), (0, y, 0), "wood", col)
            for k in range(7):
                b.slab(f"deck_{k}", (0.1, W, 0.02), (-L / 2 + 0.05 + k * (L - 0.1) / 6, 0, 0.1), "wood", col)
        else:
            R, Hb = 0.29, 0.88
            b.cyl("drum", R, Hb, (0, 0, 0), "steel", col, sections=16)
            for k, z in enumerate((Hb / 3, 2 * Hb / 3)):
                b.cyl(f"hoop_{k}", R + 0.01, 0.03, (0, 0, z), "steel", col, sections=16)
            b.cyl("lid_rim", R + 0.005, 0.02, (0, 0, Hb), "steel", "dark_grey", sections=16)
        return b.finish()

    def describe(self, p):
        return {
            "box": "cardboard box",
            "crate": "slatted wooden crate",
            "pallet": "wooden pallet",
            "barrel": f"{p['colour'].replace('_', ' ')} steel drum barrel",
        }[self.kind]


GENERATORS: list[Generator] = [
    Pedestrian("person_adult", "pedestrian", False),
    Pedestrian("person_child", "child", True),
    Container("cardboard_box", "cardboard_box", "box"),
    Container("wooden_crate", "wooden_crate", "crate"),
    Container("pallet_wooden", "pallet", "pallet"),
    Container("drum_barrel", "barrel", "barrel"),
]
