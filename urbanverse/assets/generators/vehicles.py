"""Road vehicles: cars of several body types, vans and pickups, buses, trucks and trams.

Lengths in metres, front along +X. Bodies are convex hulls of side profiles (lower body plus a
glazed cabin); wheels are 14-sided cylinders with a flat face on the ground.
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni

FLAT = float(np.cos(np.pi / 14))  # a 14-sided tyre of radius r centred at r * FLAT rests its flat on z = 0
PAINT = (
    "white",
    "black",
    "silver",
    "grey",
    "dark_grey",
    "red",
    "dark_red",
    "navy",
    "royal_blue",
    "sky_blue",
    "forest_green",
    "beige",
    "orange",
    "yellow",
)

# body type -> (length range, width range, height range, profile); the profile lists, as fractions of
# length from the rear (0) to the front (1): cabin base rear, roof rear, roof front, windscreen base;
# then belt height as a fraction of total height.
CAR_BODIES = {
    "sedan": ((4.3, 5.1), (1.7, 1.9), (1.38, 1.5), (0.12, 0.26, 0.6, 0.7, 0.6)),
    "hatchback": ((3.6, 4.4), (1.62, 1.82), (1.42, 1.56), (0.02, 0.08, 0.6, 0.72, 0.58)),
    "suv": ((4.3, 5.1), (1.8, 2.0), (1.65, 1.9), (0.02, 0.05, 0.66, 0.74, 0.56)),
    "station_wagon": ((4.4, 5.0), (1.75, 1.9), (1.45, 1.55), (0.02, 0.05, 0.62, 0.71, 0.58)),
    "coupe": ((4.1, 4.8), (1.75, 1.95), (1.2, 1.36), (0.16, 0.3, 0.55, 0.68, 0.62)),
    "convertible": ((4.0, 4.8), (1.75, 1.95), (1.1, 1.3), (0.2, 0.22, 0.64, 0.68, 0.75)),
    "minivan": ((4.5, 5.2), (1.8, 1.98), (1.65, 1.85), (0.02, 0.04, 0.75, 0.84, 0.5)),
}


def _wheel(b: Builder, name: str, x: float, y: float, r: float, w: float, hub: str = "silver") -> None:
    """Tyre (cylinder along y, flat face on z = 0) centred at (x, y), with a hub cap on the outer side."""
    zc = r * FLAT
    b.cyl(f"{name}_tyre", r, w, (x, y - w / 2, zc), "rubber", "rubber_black", sections=14, axis="y")
    s = 1.0 if y > 0 else -1.0
    b.cyl(
        f"{name}_hub",
        r * 0.55,
        0.02,
        (x, y + s * w / 2 - (0.02 if s < 0 else 0.0), zc),
        "aluminium",
        hub,
        sections=10,
        axis="y",
    )


def _lights(b: Builder, L: float, W: float, z: float, h: float = 0.1) -> None:
    for s in (-1, 1):
        side = "lr"[s > 0]
        b.box(
            f"headlight_{side}", (0.04, W * 0.18, h), (L / 2 - 0.01, s * W * 0.33, z), "glass", "lamp_white"
        )
        b.box(
            f"taillight_{side}", (0.04, W * 0.16, h), (-L / 2 + 0.01, s * W * 0.35, z), "glass", "signal_red"
        )


class Car(Generator):
    """Passenger car of one body type; taxi and police variants add a roof sign or a light bar."""

    def __init__(self, name: str, l3: str, body: str, livery: str = "plain") -> None:
        self.name, self.l3, self.body, self.livery = name, l3, body, livery

    def sample_params(self, rng):
        (l0, l1), (w0, w1), (h0, h1), _ = CAR_BODIES[self.body]
        colour = {
            "taxi": pick(rng, ("yellow", "black", "white")),
            "police": pick(rng, ("white", "navy", "black")),
        }
        return {
            "length": uni(rng, l0, l1),
            "width": uni(rng, w0, w1),
            "height": uni(rng, h0, h1),
            "wheel_radius": uni(rng, 0.3, 0.38 if self.body in ("suv", "minivan") else 0.34),
            "colour": colour.get(self.livery) or pick(rng, PAINT),
            "roof_rack": coin(rng, 0.15),
            "hub": pick(rng, ("silver", "black", "dark_grey")),
        }

    def build(self, p):
        b = Builder()
        L, W, H, r = p["length"], p["width"], p["height"], p["wheel_radius"]
        c_r, roof_r, roof_f, c_f, belt = CAR_BODIES[self.body][3]
        X = lambda f: -L / 2 + f * L  # noqa: E731 - fraction of length from the rear to x
        zc, zb = r * 0.55, H * belt
        nose = max(zb - 0.2, zc + 0.2)
        low = [
            (-L / 2, zc + 0.12),
            (-L / 2 + 0.25, zc),
            (L / 2 - 0.3, zc),
            (L / 2, zc + 0.15),
            (L / 2, nose),
            (L / 2 - 0.25, zb),
            (-L / 2, zb),
        ]
        b.hull("body", [[x, y, z] for x, z in low for y in (-W / 2, W / 2)], "painted_metal", p["colour"])
        if self.body == "convertible":
            b.hull(
                "windscreen",
                [
                    [X(c_f) + dx, y, z]
                    for y in (-W * 0.42, W * 0.42)
                    for dx, z in ((0, zb), (0.04, zb), (-0.25, H), (-0.21, H))
                ],
                "glass",
                "glass_dark",
            )
            for s in (-1, 1):
                b.slab(
                    f"seat_{'lr'[s > 0]}",
                    (0.5, W * 0.3, 0.35),
                    (X(0.45), s * W * 0.2, zb),
                    "leather",
                    "black",
                )
        else:
            top = [(X(c_r), zb), (X(roof_r), H - 0.03), (X(roof_f), H - 0.03), (X(c_f), zb)]
            b.hull(
                "cabin",
                [[x, y * (0.86 if z > zb else 0.97), z] for x, z in top for y in (-W / 2, W / 2)],
                "glass",
                "glass_dark",
            )
            b.slab(
                "roof",
                (X(roof_f) - X(roof_r) + 0.04, W * 0.84, 0.03),
                ((X(roof_f) + X(roof_r)) / 2, 0, H - 0.03),
                "painted_metal",
                p["colour"],
            )
            if self.livery == "taxi":
                b.slab(
                    "taxi_sign", (0.3, 0.5, 0.15), ((X(roof_f) + X(roof_r)) / 2, 0, H), "plastic", "yellow"
                )
            elif self.livery == "police":
                for s in (-1, 1):
                    b.slab(
                        f"light_bar_{'lr'[s > 0]}",
                        (0.25, W * 0.3, 0.1),
                        ((X(roof_f) + X(roof_r)) / 2, s * W * 0.16, H),
                        "plastic",
                        "royal_blue" if s > 0 else "signal_red",
                    )
            elif p["roof_rack"]:
                for s in (-1, 1):
                    b.slab(
                        f"roof_rail_{'lr'[s > 0]}",
                        ((X(roof_f) - X(roof_r)) * 0.9, 0.04, 0.05),
                        ((X(roof_f) + X(roof_r)) / 2, s * W * 0.36, H),
                        "aluminium",
                        "black",
                    )
        for s in (-1, 1):
            b.box(
                f"bumper_{'rf'[s > 0]}",
                (0.12, W * 0.98, 0.16),
                (s * (L / 2 - 0.03), 0, zc + 0.15),
                "plastic",
                "charcoal",
            )
            b.box(
                f"mirror_{'lr'[s > 0]}",
                (0.1, 0.12, 0.08),
                (X(c_f) - 0.1, s * (W / 2 + 0.05), zb + 0.05),
                "painted_metal",
                p["colour"],
            )
        _lights(b, L, W, nose - 0.08)
        wb = L * 0.62
        for s in (-1, 1):
            for t in (-1, 1):
                _wheel(
                    b,
                    f"wheel_{'rf'[s > 0]}{'lr'[t > 0]}",
                    s * wb / 2 + 0.02 * L,
                    t * (W / 2 - 0.12),
                    r,
                    0.21,
                    p["hub"],
                )
        return b.finish()

    def describe(self, p):
        extra = {"taxi": " taxi", "police": " police car"}.get(self.livery, "")
        return f"{p['colour'].replace('_', ' ')} {self.body.replace('_', ' ')}{extra}"


class PickupTruck(Generator):
    """Pickup: a cab with a short hood and an open cargo bed with side walls and a tailgate."""

    name, l3 = "pickup_truck", "pickup_truck"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 5.0, 6.0),
            "width": uni(rng, 1.85, 2.05),
            "height": uni(rng, 1.75, 1.95),
            "cab": pick(rng, ("single", "double")),
            "colour": pick(rng, PAINT),
            "wheel_radius": uni(rng, 0.36, 0.42),
        }

    def build(self, p):
        b = Builder()
        L, W, H, r = p["length"], p["width"], p["height"], p["wheel_radius"]
        zc, zb = r * 0.7, H * 0.58
        cab_l = 1.3 if p["cab"] == "single" else 2.0
        cab_r = L / 2 - 1.3 - cab_l
        b.hull(
            "hood",
            [
                [x, y, z]
                for y in (-W / 2, W / 2)
                for x, z in (
                    (L / 2, zc + 0.1),
                    (L / 2, zb - 0.05),
                    (L / 2 - 0.2, zb),
                    (cab_r, zb),
                    (cab_r, zc),
                    (L / 2 - 0.3, zc),
                )
            ],
            "painted_metal",
            p["colour"],
        )
        b.hull(
            "cab",
            [
                [x, y * s, z]
                for x, z, s in (
                    (cab_r, zb, 0.97),
                    (cab_r, H, 0.88),
                    (cab_r + cab_l - 0.1, H, 0.88),
                    (cab_r + cab_l + 0.45, zb, 0.97),
                )
                for y in (-W / 2, W / 2)
            ],
            "glass",
            "glass_dark",
        )
        b.slab(
            "bed_floor", (cab_r + L / 2, W, 0.12), ((cab_r - L / 2) / 2, 0, zc), "painted_metal", p["colour"]
        )
        for s in (-1, 1):
            b.slab(
                f"bed_wall_{'lr'[s > 0]}",
                (cab_r + L / 2, 0.06, zb - zc),
                ((cab_r - L / 2) / 2, s * (W / 2 - 0.03), zc),
                "painted_metal",
                p["colour"],
            )
        b.slab(
            "tailgate",
            (0.06, W - 0.12, zb - zc - 0.1),
            (-L / 2 + 0.03, 0, zc + 0.1),
            "painted_metal",
            p["colour"],
        )
        _lights(b, L, W, zb - 0.2)
        for s, x in (("r", -L / 2 + 0.95), ("f", L / 2 - 0.95)):
            for t in (-1, 1):
                _wheel(b, f"wheel_{s}{'lr'[t > 0]}", x, t * (W / 2 - 0.14), r, 0.26)
        return b.finish()

    def describe(self, p):
        return f"{p['colour']} {p['cab']}-cab pickup truck"


class BoxVehicle(Generator):
    """Box-bodied vehicle: van, ambulance, bus, minibus, school bus, double-decker, trolleybus, trucks.

    ``kind`` selects proportions and details (window band, cargo box, refuse body, tow boom, ladders,
    trolley poles); lengths, axles and colours are sampled.
    """

    SPECS = {  # kind: length, width, height, axles, colours
        "van": ((4.8, 6.5), (1.9, 2.1), (2.0, 2.7), 2, ("white", "silver", "dark_grey", "navy", "red")),
        "ambulance": ((5.5, 7.0), (2.0, 2.3), (2.5, 3.0), 2, ("white", "yellow")),
        "minibus": ((6.0, 8.0), (2.0, 2.3), (2.5, 3.0), 2, ("white", "silver", "royal_blue")),
        "city_bus": (
            (10.5, 18.0),
            (2.5, 2.55),
            (3.0, 3.3),
            3,
            ("royal_blue", "red", "white", "forest_green"),
        ),
        "school_bus": ((9.0, 12.0), (2.4, 2.5), (3.0, 3.2), 2, ("school_yellow",)),
        "double_decker_bus": ((10.0, 12.0), (2.5, 2.55), (4.2, 4.4), 2, ("red", "royal_blue", "white")),
        "trolleybus": ((11.0, 18.0), (2.5, 2.55), (3.2, 3.4), 3, ("red", "royal_blue", "forest_green")),
        "box_truck": ((6.0, 9.5), (2.2, 2.5), (3.0, 3.8), 2, ("white", "red", "royal_blue", "yellow")),
        "garbage_truck": ((7.5, 10.0), (2.4, 2.55), (3.2, 3.7), 3, ("white", "orange", "forest_green")),
        "tow_truck": ((6.0, 9.0), (2.2, 2.5), (2.6, 3.2), 2, ("yellow", "red", "white")),
        "fire_truck": ((8.0, 11.0), (2.4, 2.55), (3.0, 3.6), 2, ("signal_red", "red")),
    }

    def __init__(self, kind: str, l3: str) -> None:
        self.kind, self.l3, self.name = kind, l3, kind if kind == l3 else f"{kind}_{l3}"

    def sample_params(self, rng):
        (l0, l1), (w0, w1), (h0, h1), axles, cols = self.SPECS[self.kind]
        length = uni(rng, l0, l1)
        return {
            "length": length,
            "width": uni(rng, w0, w1),
            "height": uni(rng, h0, h1),
            "axles": axles if length > 12.5 or axles == 2 else 2,
            "colour": pick(rng, cols),
            "stripe": pick(rng, ("none", "red", "royal_blue", "yellow", "forest_green")),
            "wheel_radius": uni(rng, 0.36, 0.4)
            if self.kind in ("van", "ambulance", "minibus")
            else uni(rng, 0.48, 0.54),
        }

    def build(self, p):
        b = Builder()
        L, W, H, r, col = p["length"], p["width"], p["height"], p["wheel_radius"], p["colour"]
        k = self.kind
        bus = k in ("minibus", "city_bus", "school_bus", "double_decker_bus", "trolleybus")
        zc = r * (0.5 if bus else 0.8)
        if bus or k in ("van", "ambulance"):
            hood = 0.9 if k in ("van", "ambulance", "school_bus") else 0.0
            nose = 0.35 if k in ("van", "ambulance", "minibus") else 0.1
            b.hull(
                "body",
                [
                    [x, y, z]
                    for y in (-W / 2, W / 2)
                    for x, z in (
                        (-L / 2, zc),
                        (L / 2 - 0.2, zc),
                        (L / 2, zc + 0.3),
                        (L / 2, H * 0.5),
                        (L / 2 - hood - nose, H),
                        (-L / 2, H),
                    )
                ],
                "painted_metal",
                col,
            )
            decks = (0.55, 0.8) if k == "double_decker_bus" else (0.55,)
            for i, f in enumerate(decks):
                zw = H * f
                hw = H * (0.2 if k == "double_decker_bus" else 0.28)
                for s in (-1, 1):
                    b.slab(
                        f"windows_{i}_{'lr'[s > 0]}",
                        (L - hood - 1.2, 0.02, hw),
                        (-hood / 2 + 0.1, s * (W / 2 + 0.005), zw),
                        "glass",
                        "glass_dark",
                    )
            b.hull(
                "windscreen",
                [
                    [L / 2 - hood - nose * 0.5 + dx - t, y, z]
                    for y in (-W * 0.45, W * 0.45)
                    for dx, z in ((0.02, H * 0.55), (-nose * 0.45, H * 0.92))
                    for t in (0.0, 0.04)
                ],
                "glass",
                "glass_dark",
            )
            if p["stripe"] != "none" or k == "ambulance":
                s_col = "red" if k == "ambulance" and p["stripe"] == "none" else p["stripe"]
                for s in (-1, 1):
                    b.slab(
                        f"stripe_{'lr'[s > 0]}",
                        (L - hood - 0.8, 0.015, 0.15),
                        (-hood / 2, s * (W / 2 + 0.003), H * 0.42),
                        "painted_metal",
                        s_col,
                    )
            if k == "trolleybus":
                for s in (-1, 1):
                    b.rod(
                        f"trolley_pole_{'lr'[s > 0]}",
                        (L * 0.1, s * 0.3, H),
                        (-L * 0.35, s * 0.35, H + 1.0),
                        0.03,
                        "steel",
                        "black",
                    )
            if k == "ambulance":
                b.slab(
                    "beacon_bar", (0.3, W * 0.6, 0.12), (L / 2 - hood - 0.6, 0, H), "plastic", "royal_blue"
                )
        else:
            cab_l = 2.0
            b.hull(
                "cab",
                [
                    [x, y, z]
                    for y in (-W / 2, W / 2)
                    for x, z in (
                        (L / 2 - cab_l, zc),
                        (L / 2, zc),
                        (L / 2, H * 0.75),
                        (L / 2 - 0.25, H * 0.82),
                        (L / 2 - cab_l, H * 0.82),
                    )
                ],
                "painted_metal",
                col,
            )
            b.hull(
                "windscreen",
                [
                    [L / 2 + 0.01 - dx, y, z]
                    for y in (-W * 0.44, W * 0.44)
                    for dx, z in ((0.0, H * 0.5), (0.0, H * 0.74), (0.23, H * 0.81))
                ],
                "glass",
                "glass_dark",
            )
            b.slab("chassis", (L - cab_l, W * 0.8, 0.3), (-cab_l / 2, 0, zc), "steel", "charcoal")
            body_l = L - cab_l - 0.15
            bx = -L / 2 + body_l / 2
            if k == "box_truck":
                b.slab("cargo_box", (body_l, W, H - zc - 0.3), (bx, 0, zc + 0.3), "aluminium", "white")
            elif k == "garbage_truck":
                b.hull(
                    "refuse_body",
                    [
                        [x, y, z]
                        for y in (-W / 2, W / 2)
                        for x, z in (
                            (bx + body_l / 2, zc + 0.3),
                            (bx + body_l / 2, H),
                            (bx - body_l / 2 + 0.8, H),
                            (bx - body_l / 2, H * 0.8),
                            (bx - body_l / 2, zc + 0.3),
                        )
                    ],
                    "painted_metal",
                    col,
                )
            elif k == "tow_truck":
                b.slab("deck", (body_l, W * 0.9, 0.2), (bx, 0, zc + 0.3), "steel", "dark_grey")
                b.rod("boom", (bx + 0.5, 0, zc + 0.5), (-L / 2 + 0.2, 0, H * 0.9), 0.1, "steel", "yellow")
                b.slab("boom_base", (0.8, 0.8, 0.6), (bx + 0.5, 0, zc + 0.5), "steel", "yellow")
            else:
                b.slab(
                    "equipment_body",
                    (body_l, W, H * 0.75 - zc - 0.3),
                    (bx, 0, zc + 0.3),
                    "painted_metal",
                    col,
                )
                for s in (-1, 1):
                    b.rod(
                        f"ladder_{'lr'[s > 0]}",
                        (bx - body_l / 2 + 0.3, s * W * 0.25, H * 0.8),
                        (bx + body_l / 2 + 1.5, s * W * 0.25, H * 0.85),
                        0.05,
                        "aluminium",
                        "silver",
                    )
                b.slab(
                    "ladder_rest",
                    (0.3, W * 0.7, H * 0.05 + 0.05),
                    (bx + body_l / 2, 0, H * 0.75),
                    "steel",
                    "silver",
                )
        _lights(b, L, W, zc + 0.45, 0.15)
        xs = [L / 2 - (2.6 if bus else 1.3)] + (
            [-L / 2 + 2.6] if p["axles"] == 2 else [-L / 2 + 2.4, -L / 2 + 3.8]
        )
        if k in ("van", "ambulance", "minibus"):
            xs = [L / 2 - 0.9, -L / 2 + 1.0]
        for i, x in enumerate(xs):
            for t in (-1, 1):
                _wheel(b, f"wheel_{i}{'lr'[t > 0]}", x, t * (W / 2 - 0.17), r, 0.3)
        return b.finish()

    def describe(self, p):
        return f"{p['colour'].replace('_', ' ')} {self.l3.replace('_', ' ')}, {p['length']:.1f} m"


class Tram(Generator):
    """Low-floor articulated tram: two to five car bodies on bogies, a pantograph on the roof."""

    name, l3 = "tram_articulated", "tram"

    def sample_params(self, rng):
        return {
            "sections": int(rng.integers(2, 6)),
            "section_length": uni(rng, 6.0, 8.5),
            "width": uni(rng, 2.3, 2.65),
            "height": uni(rng, 3.3, 3.7),
            "colour": pick(rng, ("red", "yellow", "white", "royal_blue", "forest_green")),
        }

    def build(self, p):
        b = Builder()
        n, sl, W, H = p["sections"], p["section_length"], p["width"], p["height"]
        L = n * sl
        for i in range(n):
            x0 = -L / 2 + i * sl
            nose_f = 0.6 if i == n - 1 else 0.0
            nose_r = 0.6 if i == 0 else 0.0
            b.hull(
                f"car_{i}",
                [
                    [x, y, z]
                    for y in (-W / 2, W / 2)
                    for x, z in (
                        (x0 + 0.05, 0.35),
                        (x0 + sl - 0.05, 0.35),
                        (x0 + sl - 0.05, H * 0.55),
                        (x0 + sl - 0.05 - nose_f, H - 0.3),
                        (x0 + 0.05 + nose_r, H - 0.3),
                        (x0 + 0.05, H * 0.55),
                    )
                ],
                "painted_metal",
                p["colour"],
            )
            for s in (-1, 1):
                b.slab(
                    f"windows_{i}_{'lr'[s > 0]}",
                    (sl - 1.4, 0.02, H * 0.33),
                    (x0 + sl / 2, s * (W / 2 + 0.005), H * 0.42),
                    "glass",
                    "glass_dark",
                )
            b.slab(f"bogie_{i}", (2.0, W * 0.8, 0.38), (x0 + sl / 2, 0, 0), "steel", "charcoal")
        b.rod("pantograph_arm", (0.0, 0.0, H - 0.3), (-0.8, 0.0, H + 0.9), 0.04, "steel", "charcoal")
        b.slab("pantograph_head", (0.3, 1.5, 0.05), (-0.8, 0, H + 0.9), "steel", "charcoal")
        return b.finish()

    def describe(self, p):
        return f"{p['colour']} {p['sections']}-section articulated tram"


GENERATORS: list[Generator] = [
    Car("car_sedan", "sedan", "sedan"),
    Car("car_hatchback", "hatchback", "hatchback"),
    Car("car_suv", "suv", "suv"),
    Car("car_station_wagon", "station_wagon", "station_wagon"),
    Car("car_coupe", "coupe", "coupe"),
    Car("car_convertible", "convertible", "convertible"),
    Car("car_minivan", "minivan", "minivan"),
    Car("car_taxi", "taxi", "sedan", "taxi"),
    Car("car_police", "police_car", "sedan", "police"),
    Car("car_police_suv", "police_car", "suv", "police"),
    PickupTruck(),
    BoxVehicle("van", "van"),
    BoxVehicle("ambulance", "ambulance"),
    BoxVehicle("minibus", "minibus"),
    BoxVehicle("city_bus", "city_bus"),
    BoxVehicle("school_bus", "school_bus"),
    BoxVehicle("double_decker_bus", "double_decker_bus"),
    BoxVehicle("trolleybus", "trolleybus"),
    BoxVehicle("box_truck", "box_truck"),
    BoxVehicle("garbage_truck", "garbage_truck"),
    BoxVehicle("tow_truck", "tow_truck"),
    BoxVehicle("fire_truck", "fire_truck"),
    Tram(),
]
