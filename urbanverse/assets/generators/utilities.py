"""Street utilities: fire hydrants, utility cabinets, mailboxes, pillar boxes, newspaper boxes, parking
meters, phone booths, manhole covers and drain grates.

Lengths in metres; front along +X (fences and barriers run along Y, facing +X).
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, pick, uni


class FireHydrant(Generator):
    """Fire hydrant: flange, barrel, bonnet with operating nut, two side outlets and a pumper nozzle."""

    name, l3 = "fire_hydrant", "fire_hydrant"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.6, 1.0),
            "radius": uni(rng, 0.09, 0.14),
            "colour": pick(rng, ("red", "yellow", "silver", "signal_red", "forest_green")),
            "cap": pick(rng, ("same", "white", "silver", "royal_blue")),
        }

    def build(self, p):
        b = Builder()
        H, R, col = p["height"], p["radius"], p["colour"]
        cap = col if p["cap"] == "same" else p["cap"]
        b.cyl("flange", R * 1.6, 0.05, (0, 0, 0), "cast_iron", col, sections=12)
        b.cyl("barrel", R, H * 0.72, (0, 0, 0.05), "cast_iron", col, sections=12)
        b.cyl(
            "bonnet",
            R * 1.15,
            H * 0.15,
            (0, 0, 0.05 + H * 0.72),
            "cast_iron",
            cap,
            r_top=R * 0.6,
            sections=12,
        )
        b.cyl("nut", R * 0.3, H * 0.08, (0, 0, 0.05 + H * 0.87), "cast_iron", cap, sections=5)
        zo = 0.05 + H * 0.5
        b.cyl("outlet_r", R * 0.35, R * 0.7, (0, R * 0.8, zo), "cast_iron", cap, axis="y", sections=10)
        b.cyl("outlet_l", R * 0.35, R * 0.7, (0, -R * 1.5, zo), "cast_iron", cap, axis="y", sections=10)
        b.cyl("pumper", R * 0.5, R * 0.8, (R * 0.7, 0, zo - H * 0.1), "cast_iron", cap, axis="x", sections=10)
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} fire hydrant"


class UtilityCabinet(Generator):
    """Roadside utility cabinet on a plinth: one to three door bays, a rain hood and vents."""

    name, l3 = "utility_cabinet", "utility_cabinet"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 0.6, 2.0),
            "depth": uni(rng, 0.3, 0.6),
            "height": uni(rng, 0.9, 1.6),
            "colour": pick(rng, ("light_grey", "sage", "forest_green", "beige", "dark_grey")),
        }

    def build(self, p):
        b = Builder()
        W, D, H, col = p["width"], p["depth"], p["height"], p["colour"]
        b.slab("plinth", (D + 0.1, W + 0.1, 0.12), (0, 0, 0), "concrete", "concrete_grey")
        b.slab("body", (D, W, H - 0.17), (0, 0, 0.12), "painted_metal", col)
        b.slab("hood", (D + 0.06, W + 0.04, 0.05), (0.01, 0, H - 0.05), "painted_metal", col)
        n = max(1, int(W / 0.7))
        for k in range(n):
            y = -W / 2 + (k + 0.5) * W / n
            b.slab(
                f"vent_{k}",
                (0.01, W / n * 0.5, 0.12),
                (D / 2 + 0.005, y, H - 0.4),
                "painted_metal",
                "dark_grey",
            )
            b.slab(
                f"handle_{k}",
                (0.03, 0.02, 0.12),
                (D / 2 + 0.015, y + W / n * 0.35, H * 0.5),
                "steel",
                "black",
            )
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} roadside utility cabinet"


class Mailbox(Generator):
    """US-style collection box on four legs: a box with a rounded (hull) top and a pull-down chute."""

    name, l3 = "mailbox_collection", "mailbox"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 0.45, 0.55),
            "depth": uni(rng, 0.45, 0.55),
            "height": uni(rng, 1.1, 1.3),
            "colour": pick(rng, ("navy", "royal_blue", "forest_green", "red", "yellow")),
        }

    def build(self, p):
        b = Builder()
        W, D, H, col = p["width"], p["depth"], p["height"], p["colour"]
        leg = 0.2
        for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            b.slab(
                f"leg_{i}",
                (0.05, 0.05, leg + 0.02),
                (sx * (D / 2 - 0.03), sy * (W / 2 - 0.03), 0),
                "steel",
                col,
            )
        top = H - leg
        b.hull(
            "box",
            [
                [x, y, leg + z]
                for y in (-W / 2, W / 2)
                for x, z in ((-D / 2, 0), (D / 2, 0), (D / 2, top * 0.75), (-D / 2, top * 0.75))
            ]
            + [
                [D / 2 * np.cos(a), y, leg + top * 0.75 + D / 2 * np.sin(a) * 0.9]
                for a in np.linspace(0, np.pi, 7)
                for y in (-W / 2, W / 2)
            ],
            "painted_metal",
            col,
        )
        b.slab("chute", (0.03, W * 0.6, 0.1), (D / 2 + 0.01, 0, leg + top * 0.62), "painted_metal", "silver")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} mail collection box on legs"


class PillarBox(Generator):
    """Pillar post box: a cylindrical cast-iron box with a base, a domed or flat cap and a letter slot."""

    name, l3 = "pillar_box", "pillar_box"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 1.3, 1.7),
            "radius": uni(rng, 0.22, 0.32),
            "cap": pick(rng, ("dome", "flat")),
            "colour": pick(rng, ("signal_red", "red", "yellow")),
        }

    def build(self, p):
        b = Builder()
        H, R, col = p["height"], p["radius"], p["colour"]
        b.cyl("base", R * 1.15, 0.1, (0, 0, 0), "cast_iron", "black", sections=16)
        b.cyl("body", R, H - 0.3, (0, 0, 0.1), "cast_iron", col, sections=16)
        b.cyl("cap_rim", R * 1.12, 0.06, (0, 0, H - 0.2), "cast_iron", col, sections=16)
        b.cyl(
            "cap",
            R * 1.05,
            0.14,
            (0, 0, H - 0.14),
            "cast_iron",
            col,
            r_top=R * (0.4 if p["cap"] == "dome" else 1.0),
            sections=16,
        )
        b.slab("slot", (0.02, R * 0.9, 0.03), (R - 0.005, 0, H - 0.42), "cast_iron", "black")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} pillar post box with a {p['cap']} cap"


class NewspaperBox(Generator):
    """Newspaper vending box on a pedestal or legs: a cabinet with a window in its pull-down door."""

    name, l3 = "newspaper_box", "newspaper_box"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 0.4, 0.55),
            "depth": uni(rng, 0.38, 0.5),
            "height": uni(rng, 0.95, 1.25),
            "base": pick(rng, ("pedestal", "legs")),
            "colour": pick(rng, ("royal_blue", "red", "yellow", "forest_green", "white", "black")),
        }

    def build(self, p):
        b = Builder()
        W, D, H, col = p["width"], p["depth"], p["height"], p["colour"]
        z0 = 0.4
        if p["base"] == "pedestal":
            b.slab("foot", (D, W, 0.03), (0, 0, 0), "steel", "black")
            b.slab("pedestal", (0.1, 0.1, z0 - 0.03), (0, 0, 0.03), "steel", "black")
        else:
            for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
                b.slab(
                    f"leg_{i}",
                    (0.04, 0.04, z0),
                    (sx * (D / 2 - 0.03), sy * (W / 2 - 0.03), 0),
                    "steel",
                    "black",
                )
        b.slab("cabinet", (D, W, H - z0), (0, 0, z0), "painted_metal", col)
        b.slab(
            "window",
            (0.01, W * 0.75, (H - z0) * 0.4),
            (D / 2 + 0.005, 0, z0 + (H - z0) * 0.35),
            "plastic",
            "glass_blue",
        )
        b.slab("coin_box", (0.06, 0.12, 0.12), (D / 2 + 0.03, W * 0.3, H - 0.2), "steel", "silver")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} newspaper box on {p['base']}"


class ParkingMeter(Generator):
    """Parking meter: a head (single dome or solar pay-box) on a post with a base plate."""

    name, l3 = "parking_meter", "parking_meter"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 1.2, 1.55),
            "head": pick(rng, ("dome", "box")),
            "colour": pick(rng, ("silver", "dark_grey", "black", "navy")),
        }

    def build(self, p):
        b = Builder()
        H, col = p["height"], p["colour"]
        b.slab("base_plate", (0.25, 0.25, 0.02), (0, 0, 0), "steel", "dark_grey")
        if p["head"] == "dome":
            b.cyl("post", 0.035, H - 0.38, (0, 0, 0.02), "steel", "dark_grey", sections=8)
            b.slab("head", (0.16, 0.2, 0.28), (0, 0, H - 0.36), "painted_metal", col)
            b.cyl("dome", 0.1, 0.08, (0, 0, H - 0.08), "glass", "light_grey", r_top=0.05, sections=10)
            b.box("window", (0.01, 0.14, 0.1), (0.085, 0, H - 0.18), "glass", "glass_blue")
        else:
            b.cyl("post", 0.04, H - 0.55, (0, 0, 0.02), "steel", "dark_grey", sections=8)
            b.slab("head", (0.22, 0.3, 0.5), (0, 0, H - 0.53), "painted_metal", col)
            b.hull(
                "solar",
                [
                    [x, y, H - 0.03 + (0.12 - x) * 0.2 + dz]
                    for x in (-0.12, 0.14)
                    for y in (-0.16, 0.16)
                    for dz in (0.0, 0.02)
                ],
                "glass",
                "navy",
            )
            b.box("screen", (0.01, 0.18, 0.12), (0.115, 0, H - 0.2), "glass", "glass_dark")
        return b.finish()

    def describe(self, p):
        return f"{p['head']}-head parking meter on a post"


class PhoneBooth(Generator):
    """Telephone kiosk: a framed glazed box with a roof, a door on the front and a phone shelf inside."""

    name, l3 = "phone_booth", "phone_booth"

    def sample_params(self, rng):
        return {
            "size": uni(rng, 0.9, 1.2),
            "height": uni(rng, 2.3, 2.7),
            "roof": pick(rng, ("flat", "domed")),
            "colour": pick(rng, ("signal_red", "silver", "dark_grey", "yellow", "forest_green")),
        }

    def build(self, p):
        b = Builder()
        S, H, col = p["size"], p["height"], p["colour"]
        b.slab("plinth", (S + 0.06, S + 0.06, 0.1), (0, 0, 0), "concrete", "concrete_grey")
        for i, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
            b.slab(
                f"corner_post_{i}",
                (0.08, 0.08, H - 0.35),
                (sx * (S / 2 - 0.04), sy * (S / 2 - 0.04), 0.1),
                "painted_metal",
                col,
            )
        for nm, (x, y, sx, sy) in {
            "glass_front": (S / 2 - 0.02, 0, 0.02, S - 0.16),
            "glass_back": (-S / 2 + 0.02, 0, 0.02, S - 0.16),
            "glass_left": (0, -S / 2 + 0.02, S - 0.16, 0.02),
            "glass_right": (0, S / 2 - 0.02, S - 0.16, 0.02),
        }.items():
            b.slab(nm, (sx, sy, H - 0.55), (x, y, 0.25), "glass", "glass_blue")
        b.slab("kick_panel", (S - 0.08, S - 0.08, 0.15), (0, 0, 0.1), "painted_metal", col)
        b.slab("header", (S, S, 0.2), (0, 0, H - 0.45), "painted_metal", col)
        if p["roof"] == "domed":
            b.hull(
                "roof",
                [[sx * S / 2, sy * S / 2, H - 0.25] for sx in (-1, 1) for sy in (-1, 1)]
                + [[sx * S * 0.3, sy * S * 0.3, H] for sx in (-1, 1) for sy in (-1, 1)],
                "painted_metal",
                col,
            )
        else:
            b.slab("roof", (S + 0.06, S + 0.06, 0.25), (0, 0, H - 0.25), "painted_metal", col)
        b.slab("phone", (0.12, 0.2, 0.3), (-S / 2 + 0.12, 0, 1.2), "steel", "black")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} glazed phone booth with a {p['roof']} roof"


class GroundCover(Generator):
    """Flush ground cover: round or square manhole cover, or a drain grate with bars, a few cm thick."""

    def __init__(self, name: str, l3: str, kind: str) -> None:
        self.name, self.l3, self.kind = name, l3, kind

    def sample_params(self, rng):
        return {
            "size": uni(rng, 0.6, 0.9) if self.kind == "manhole" else uni(rng, 0.4, 0.7),
            "shape": pick(rng, ("round", "square")) if self.kind == "manhole" else "rect",
            "thickness": uni(rng, 0.02, 0.04),
            "bars": int(rng.integers(5, 10)),
        }

    def build(self, p):
        b = Builder()
        S, T = p["size"], p["thickness"]
        if self.kind == "manhole":
            if p["shape"] == "round":
                b.cyl("frame", S / 2 + 0.05, T, (0, 0, 0), "cast_iron", "charcoal", sections=16)
                b.cyl("cover", S / 2, 0.006, (0, 0, T), "cast_iron", "dark_grey", sections=16)
            else:
                b.slab("frame", (S + 0.1, S + 0.1, T), (0, 0, 0), "cast_iron", "charcoal")
                b.slab("cover", (S, S, 0.006), (0, 0, T), "cast_iron", "dark_grey")
        else:
            L = S * 1.8
            b.slab("frame", (S, L, T), (0, 0, 0), "cast_iron", "black")
            for k in range(p["bars"]):
                y = -L / 2 + (k + 0.5) * L / p["bars"]
                b.slab(f"bar_{k}", (S * 0.9, L / p["bars"] * 0.45, 0.006), (0, y, T), "cast_iron", "charcoal")
        return b.finish()

    def describe(self, p):
        return (
            f"{p['shape']} {self.kind.replace('_', ' ')} cover"
            if self.kind == "manhole"
            else "storm drain grate"
        )


GENERATORS: list[Generator] = [
    FireHydrant(),
    UtilityCabinet(),
    Mailbox(),
    PillarBox(),
    NewspaperBox(),
    ParkingMeter(),
    PhoneBooth(),
    GroundCover("manhole_cover", "manhole_cover", "manhole"),
    GroundCover("drain_grate", "storm_drain_grate", "drain"),
]
