"""Micromobility: bicycles, kick and electric scooters, motorcycles and mopeds, shopping carts and
sidewalk delivery robots.

Lengths in metres; front along +X. Two-wheelers stand on a side stand whose foot widens the
footprint; wheels are segmented rings with hubs and spokes as a thin disc.
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni
from urbanverse.assets.generators.vehicles import FLAT, PAINT

FRAME_COLOURS = ("black", "white", "red", "royal_blue", "forest_green", "silver", "orange", "teal")


def _ring_wheel(b: Builder, name: str, x: float, r: float, width: float, rim: str) -> None:
    """A 12-segment tyre ring in the x-z plane resting on z = 0, a thin spoke disc and a hub."""
    zc = r * np.cos(np.pi / 12) + 0.0
    b.ring(f"{name}_tyre", r - 0.02, 0.04, width, 12, (x, 0.0, zc), "rubber", "rubber_black")
    b.cyl(f"{name}_disc", r - 0.04, 0.004, (x, -0.002, zc), "aluminium", rim, sections=12, axis="y")
    b.cyl(
        f"{name}_hub",
        0.03,
        width + 0.04,
        (x, -(width + 0.04) / 2, zc),
        "aluminium",
        "silver",
        sections=8,
        axis="y",
    )


class Bicycle(Generator):
    """Bicycle on its kickstand: diamond or step-through frame, fork, bars, saddle, optional basket/rack."""

    name, l3 = "bicycle_city", "bicycle"

    def sample_params(self, rng):
        return {
            "wheel_radius": uni(rng, 0.3, 0.36),
            "wheelbase": uni(rng, 0.98, 1.12),
            "frame": pick(rng, ("diamond", "step_through")),
            "colour": pick(rng, FRAME_COLOURS),
            "basket": coin(rng, 0.3),
            "rack": coin(rng, 0.4),
        }

    def build(self, p):
        b = Builder()
        r, wb, col = p["wheel_radius"], p["wheelbase"], p["colour"]
        xf, xr = wb / 2, -wb / 2
        hub = r * np.cos(np.pi / 12)
        for nm, x in (("front", xf), ("rear", xr)):
            _ring_wheel(b, f"{nm}_wheel", x, r, 0.04, "silver")
        bb = (-0.05, 0.0, hub - 0.05)
        seat = (xr + 0.3, 0.0, hub + 0.55)
        head = (xf - 0.15, 0.0, hub + 0.5)
        tube = lambda n, a, c, rad=0.018: b.rod(n, a, c, rad, "aluminium", col)  # noqa: E731
        tube("seat_tube", bb, seat)
        tube("down_tube", bb, head, 0.022)
        tube(
            "top_tube",
            (seat[0] + 0.03, 0, seat[2] - 0.05)
            if p["frame"] == "diamond"
            else (bb[0] + 0.05, 0, bb[2] + 0.12),
            (head[0], 0, head[2] - 0.05),
        )
        for s in (-1, 1):
            tube(f"chain_stay_{'lr'[s > 0]}", (bb[0], s * 0.04, bb[2]), (xr, s * 0.04, hub), 0.012)
            tube(
                f"seat_stay_{'lr'[s > 0]}",
                (seat[0] - 0.02, s * 0.03, seat[2] - 0.05),
                (xr, s * 0.04, hub),
                0.01,
            )
        tube("fork", (xf, 0, hub), (head[0], 0, head[2] + 0.1), 0.016)
        b.rod(
            "handlebar",
            (head[0] - 0.05, -0.28, head[2] + 0.2),
            (head[0] - 0.05, 0.28, head[2] + 0.2),
            0.012,
            "aluminium",
            "black",
        )
        b.rod(
            "stem",
            (head[0], 0, head[2] + 0.1),
            (head[0] - 0.05, 0, head[2] + 0.2),
            0.015,
            "aluminium",
            "black",
        )
        b.hull(
            "saddle",
            [
                [seat[0] + dx, dy, seat[2] + dz]
                for dx, dy in ((-0.1, -0.08), (-0.1, 0.08), (0.14, -0.02), (0.14, 0.02))
                for dz in (0.0, 0.05)
            ],
            "leather",
            "black",
        )
        b.box("chainring", (0.2, 0.01, 0.2), (bb[0], 0.06, bb[2]), "steel", "silver")
        if p["basket"]:
            b.slab("basket", (0.3, 0.35, 0.22), (xf + 0.05, 0, head[2] - 0.1), "steel", "silver")
        if p["rack"]:
            b.slab("rack", (0.4, 0.14, 0.02), (xr + 0.05, 0, hub + 0.35), "steel", "black")
        b.rod("kickstand", (bb[0] - 0.05, 0.05, bb[2]), (bb[0] - 0.1, 0.22, 0.03), 0.01, "steel", "black")
        b.slab("kickstand_foot", (0.06, 0.05, 0.03), (bb[0] - 0.1, 0.22, 0.0), "steel", "black")
        return b.finish()

    def describe(self, p):
        extra = (" with a front basket" if p["basket"] else "") + (" and rear rack" if p["rack"] else "")
        return f"{p['colour'].replace('_', ' ')} {p['frame'].replace('_', '-')} city bicycle{extra}"


class Scooter(Generator):
    """Stand-up scooter on its side stand: deck, steering column, bars; the electric version adds a
    battery deck, a lamp and a number plate box."""

    def __init__(self, name: str, l3: str, electric: bool) -> None:
        self.name, self.l3, self.electric = name, l3, electric

    def sample_params(self, rng):
        return {
            "deck_length": uni(rng, 0.5, 0.75),
            "wheel_radius": uni(rng, 0.09, 0.13 if self.electric else 0.1),
            "bar_height": uni(rng, 0.85, 1.2),
            "colour": pick(
                rng, ("black", "white", "teal", "orange", "red", "silver", "forest_green", "pink")
            ),
        }

    def build(self, p):
        b = Builder()
        L, r, H, col = p["deck_length"], p["wheel_radius"], p["bar_height"], p["colour"]
        zc = r * np.cos(np.pi / 12)
        for nm, x in (("front", L / 2 + 0.12), ("rear", -L / 2 - 0.05)):
            b.cyl(f"{nm}_wheel", r, 0.05, (x, -0.025, zc), "rubber", "rubber_black", sections=12, axis="y")
        dz = 0.06 if self.electric else 0.03
        b.slab("deck", (L, 0.15 if self.electric else 0.12, dz), (0, 0, zc - 0.01), "aluminium", col)
        b.rod("stem", (L / 2 + 0.12, 0, zc), (L / 2 + 0.02, 0, H), 0.02, "aluminium", col)
        b.rod("handlebar", (L / 2 + 0.02, -0.22, H), (L / 2 + 0.02, 0.22, H), 0.013, "aluminium", "black")
        if self.electric:
            b.box("lamp", (0.06, 0.08, 0.06), (L / 2 + 0.1, 0, H * 0.75), "plastic", "lamp_white")
            b.box("display", (0.08, 0.1, 0.04), (L / 2 + 0.02, 0, H), "plastic", "black")
        b.rod("side_stand", (-0.05, 0.06, zc), (-0.1, 0.2, 0.02), 0.01, "steel", "black")
        b.slab("stand_foot", (0.05, 0.04, 0.02), (-0.1, 0.2, 0.0), "steel", "black")
        return b.finish()

    def describe(self, p):
        return f"{p['colour']} {'electric' if self.electric else 'kick'} scooter"


class ShoppingCart(Generator):
    """Supermarket trolley: a tapered wire basket (solid hull), handle, frame and four castors."""

    name, l3 = "shopping_cart", "shopping_cart"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 0.8, 1.0),
            "width": uni(rng, 0.5, 0.6),
            "handle": pick(rng, ("red", "royal_blue", "forest_green", "black", "orange")),
            "finish": pick(rng, ("silver", "light_grey")),
        }

    def build(self, p):
        b = Builder()
        L, W = p["length"], p["width"]
        for i, (x, y) in enumerate(
            (
                (L / 2 - 0.1, W * 0.35),
                (L / 2 - 0.1, -W * 0.35),
                (-L / 2 + 0.1, W * 0.45),
                (-L / 2 + 0.1, -W * 0.45),
            )
        ):
            b.cyl(
                f"castor_{i}",
                0.06,
                0.03,
                (x, y - 0.015, 0.06 * np.cos(np.pi / 10)),
                "rubber",
                "rubber_black",
                sections=10,
                axis="y",
            )
            b.rod(f"leg_{i}", (x, y, 0.1), (x * 0.9, y, 0.5), 0.012, "steel", p["finish"])
        b.hull(
            "basket",
            [
                [x, y * (0.7 if x > 0 else 1.0), z]
                for x in (-L / 2, L / 2)
                for y in (-W / 2, W / 2)
                for z in (0.5, 0.95)
            ]
            + [[-L / 2 + 0.05, y, 0.5] for y in (-W / 2, W / 2)],
            "steel",
            p["finish"],
        )
        b.rod(
            "handle", (-L / 2 - 0.12, -W / 2, 1.0), (-L / 2 - 0.12, W / 2, 1.0), 0.02, "plastic", p["handle"]
        )
        for s in (-1, 1):
            b.rod(
                f"handle_arm_{'lr'[s > 0]}",
                (-L / 2, s * W / 2, 0.95),
                (-L / 2 - 0.12, s * W / 2, 1.0),
                0.012,
                "steel",
                p["finish"],
            )
        return b.finish()

    def describe(self, p):
        return f"shopping cart with a {p['handle'].replace('_', ' ')} handle"


class DeliveryRobot(Generator):
    """Six-wheeled sidewalk delivery robot: rounded body, lid, a flag mast and sensor windows."""

    name, l3 = "delivery_robot", "delivery_robot"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 0.65, 0.9),
            "width": uni(rng, 0.5, 0.6),
            "height": uni(rng, 0.45, 0.6),
            "flag": coin(rng, 0.7),
            "colour": pick(rng, ("white", "light_grey", "orange", "teal", "black")),
        }

    def build(self, p):
        b = Builder()
        L, W, H, col = p["length"], p["width"], p["height"], p["colour"]
        r = 0.09
        for i, x in enumerate((-L * 0.38, 0.0, L * 0.38)):
            for s in (-1, 1):
                b.cyl(
                    f"wheel_{i}{'lr'[s > 0]}",
                    r,
                    0.06,
                    (x, s * (W / 2 - 0.03) - 0.03, r * np.cos(np.pi / 12)),
                    "rubber",
                    "rubber_black",
                    sections=12,
                    axis="y",
                )
        b.hull(
            "body",
            [
                [x, y, z]
                for y in (-W / 2 + 0.06, W / 2 - 0.06)
                for x, z in (
                    (-L / 2, 0.1),
                    (L / 2, 0.1),
                    (L / 2, H - 0.1),
                    (L / 2 - 0.08, H - 0.03),
                    (-L / 2 + 0.08, H - 0.03),
                    (-L / 2, H - 0.1),
                )
            ],
            "plastic",
            col,
        )
        b.slab("lid", (L * 0.8, W - 0.16, 0.03), (-0.02, 0, H - 0.03), "plastic", "dark_grey")
        b.box("sensor_window", (0.01, W * 0.5, 0.06), (L / 2 + 0.003, 0, H * 0.65), "glass", "glass_dark")
        if p["flag"]:
            b.rod(
                "flag_mast",
                (-L / 2 + 0.08, W / 2 - 0.1, H),
                (-L / 2 + 0.08, W / 2 - 0.1, H + 0.7),
                0.006,
                "plastic",
                "white",
            )
            b.box("flag", (0.01, 0.15, 0.1), (-L / 2 + 0.08, W / 2 - 0.18, H + 0.64), "fabric", "orange")
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} six-wheeled delivery robot"


class Motorcycle(Generator):
    """Motorcycle or moped on its side stand: two wheels, frame, tank or step-through body, seat, bars."""

    def __init__(self, name: str, l3: str, step_through: bool) -> None:
        self.name, self.l3, self.step_through = name, l3, step_through

    def sample_params(self, rng):
        return {
            "wheelbase": uni(rng, 1.1, 1.3) if self.step_through else uni(rng, 1.35, 1.6),
            "wheel_radius": uni(rng, 0.22, 0.28) if self.step_through else uni(rng, 0.3, 0.34),
            "colour": pick(rng, PAINT),
            "top_box": coin(rng, 0.3),
        }

    def build(self, p):
        b = Builder()
        wb, r, col = p["wheelbase"], p["wheel_radius"], p["colour"]
        xf, xr = wb / 2, -wb / 2
        for nm, x in (("front", xf), ("rear", xr)):
            b.cyl(
                f"{nm}_tyre", r, 0.12, (x, -0.06, r * FLAT), "rubber", "rubber_black", sections=14, axis="y"
            )
            b.cyl(
                f"{nm}_rim",
                r * 0.65,
                0.13,
                (x, -0.065, r * FLAT),
                "aluminium",
                "silver",
                sections=10,
                axis="y",
            )
        seat_z = r * 2 + 0.35
        b.rod("fork", (xf, 0, r), (xf - 0.25, 0, seat_z + 0.35), 0.03, "steel", "silver")
        b.rod(
            "handlebar",
            (xf - 0.25, -0.35, seat_z + 0.35),
            (xf - 0.25, 0.35, seat_z + 0.35),
            0.015,
            "steel",
            "black",
        )
        b.box("headlight", (0.1, 0.16, 0.14), (xf - 0.15, 0, seat_z + 0.2), "glass", "lamp_white")
        if self.step_through:
            b.hull(
                "body",
                [
                    [x, y, z]
                    for y in (-0.18, 0.18)
                    for x, z in (
                        (xr + 0.1, r + 0.1),
                        (xr + 0.15, seat_z),
                        (0.0, seat_z - 0.05),
                        (0.05, r + 0.05),
                    )
                ],
                "plastic",
                col,
            )
            b.hull(
                "leg_shield",
                [
                    [x, y, z]
                    for y in (-0.2, 0.2)
                    for x, z in (
                        (xf - 0.35, r + 0.05),
                        (xf - 0.2, seat_z + 0.25),
                        (xf - 0.3, seat_z + 0.25),
                        (xf - 0.45, r + 0.05),
                    )
                ],
                "plastic",
                col,
            )
            b.slab("floorboard", (0.45, 0.3, 0.05), (xf - 0.6, 0, r + 0.02), "rubber", "black")
        else:
            b.box("engine", (0.45, 0.3, 0.35), (0.0, 0, r + 0.15), "steel", "dark_grey")
            b.ball("tank", (0.3, 0.16, 0.14), (0.2, 0, seat_z + 0.05), "painted_metal", col)
            b.rod(
                "frame_top",
                (xf - 0.25, 0, seat_z + 0.25),
                (xr + 0.2, 0, seat_z - 0.05),
                0.035,
                "steel",
                "black",
            )
            b.rod("swingarm", (0.0, 0, r + 0.1), (xr, 0, r), 0.03, "steel", "black")
            b.rod("exhaust", (0.0, 0.15, r), (xr - 0.1, 0.15, r + 0.15), 0.045, "stainless_steel", "silver")
        b.slab("seat", (0.6, 0.26, 0.1), (xr + 0.45, 0, seat_z), "leather", "black")
        if p["top_box"]:
            b.slab("top_box", (0.35, 0.4, 0.3), (xr + 0.05, 0, seat_z + 0.05), "plastic", "black")
        b.rod("side_stand", (-0.05, 0.05, r + 0.05), (-0.15, 0.35, 0.04), 0.02, "steel", "black")
        b.slab("stand_foot", (0.08, 0.06, 0.04), (-0.15, 0.35, 0.0), "steel", "black")
        return b.finish()

    def describe(self, p):
        kind = "moped" if self.step_through else "motorcycle"
        return f"{p['colour'].replace('_', ' ')} {kind}" + (" with top box" if p["top_box"] else "")


GENERATORS: list[Generator] = [
    Bicycle(),
    Scooter("scooter_kick", "kick_scooter", False),
    Scooter("scooter_electric", "e_scooter", True),
    ShoppingCart(),
    DeliveryRobot(),
    Motorcycle("motorcycle_standard", "motorcycle", False),
    Motorcycle("moped_step_through", "moped", True),
]
