"""Signs and street information: post-mounted traffic signs of every shape, street-name and bus-stop
signs, billboards, advertising columns, A-frame boards, street clocks, notice boards and flagpoles.

Lengths in metres. Sign faces point to +X; posts stand on a steel base plate or a concrete foot.
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni
from urbanverse.assets.generators.shapes import hull

# polygon vertices (y, z) of unit-size sign outlines, centred on 0, size 1 across
_SHAPES = {
    "octagon": [(np.cos(a), np.sin(a)) for a in np.pi / 8 + np.arange(8) * np.pi / 4],
    "disc": [(np.cos(a), np.sin(a)) for a in np.arange(16) * np.pi / 8],
    "triangle_up": [(-1.0, -0.75), (1.0, -0.75), (0.0, 1.0)],
    "triangle_down": [(-1.0, 0.75), (1.0, 0.75), (0.0, -1.0)],
    "diamond": [(-1.0, 0.0), (0.0, -1.0), (1.0, 0.0), (0.0, 1.0)],
    "square": [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)],
    "portrait": [(-0.7, -1.0), (0.7, -1.0), (0.7, 1.0), (-0.7, 1.0)],
    "blade": [(-1.0, -0.22), (1.0, -0.22), (1.0, 0.22), (-1.0, 0.22)],
}


def _plate(b: Builder, name: str, shape: str, size: float, centre, x: float, t: float, material, colour):
    """A flat sign plate of outline ``shape`` (half-size ``size`` m) facing +X, front face at x + t."""
    yz = np.array(_SHAPES[shape]) * size
    pts = [[xx, centre[0] + y, centre[1] + z] for y, z in yz for xx in (x, x + t)]
    b.add(name, hull(pts), material, colour)


class SignPost(Generator):
    """A traffic sign on a post: outer plate, inner face and an optional symbol bar, on a base plate."""

    def __init__(self, name: str, l3: str, shape: str, border: str, face: str, symbol: str = "") -> None:
        self.name, self.l3, self.shape, self.border, self.face, self.symbol = (
            name,
            l3,
            shape,
            border,
            face,
            symbol,
        )

    def sample_params(self, rng):
        return {
            "height": uni(rng, 2.0, 2.8),
            "size": uni(rng, 0.3, 0.45),
            "post": pick(rng, ("round", "square")),
            "base": pick(rng, ("plate", "concrete_foot")),
            "second_plate": coin(rng, 0.25),
        }

    def build(self, p):
        b = Builder()
        H, s = p["height"], p["size"]
        if p["base"] == "plate":
            b.slab("base_plate", (0.45, 0.45, 0.02), (0, 0, 0), "steel", "dark_grey")
        else:
            b.cyl("concrete_foot", 0.25, 0.15, (0, 0, 0), "concrete", "concrete_grey", r_top=0.2, sections=10)
        if p["post"] == "round":
            b.cyl("post", 0.03, H, (0, 0, 0.02), "steel", "silver", sections=8)
        else:
            b.slab("post", (0.05, 0.05, H), (0, 0, 0.02), "steel", "silver")
        zc = H - s * 1.0
        _plate(b, "plate", self.shape, s, (0.0, zc), 0.035, 0.01, "aluminium", self.border)
        _plate(b, "face", self.shape, s * 0.8, (0.0, zc), 0.045, 0.003, "aluminium", self.face)
        if self.symbol:
            b.box("symbol", (0.004, s * 1.1, s * 0.25), (0.05, 0, zc), "aluminium", self.symbol)
        if p["second_plate"]:
            b.box("sub_plate", (0.01, s * 1.6, s * 0.5), (0.04, 0, zc - s * 1.45), "aluminium", "white")
        return b.finish()

    def describe(self, p):
        return f"{self.l3.replace('_', ' ')} ({self.shape.replace('_', ' ')}) on a {p['post']} post"


class BusStopSign(Generator):
    """Bus-stop pole: flag sign at the top and a timetable case below, on a concrete foot."""

    name, l3 = "bus_stop_pole", "bus_stop_sign"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 2.6, 3.4),
            "flag": pick(rng, ("disc", "square", "portrait")),
            "colour": pick(rng, ("red", "royal_blue", "forest_green", "yellow", "white")),
        }

    def build(self, p):
        b = Builder()
        H = p["height"]
        b.cyl("foot", 0.25, 0.12, (0, 0, 0), "concrete", "concrete_grey", sections=10)
        b.cyl("pole", 0.04, H, (0, 0, 0.12), "steel", "silver", sections=8)
        _plate(b, "flag", p["flag"], 0.25, (0.0, H - 0.2), 0.04, 0.02, "aluminium", p["colour"])
        b.slab("timetable", (0.06, 0.4, 0.55), (0.07, 0, 1.3), "aluminium", "white")
        return b.finish()

    def describe(self, p):
        return f"bus stop pole with a {p['colour'].replace('_', ' ')} {p['flag']} flag"


class Billboard(Generator):
    """Billboard: a wide panel with a frame on one or two steel columns over concrete footings."""

    name, l3 = "billboard_panel", "billboard"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 3.0, 12.0),
            "aspect": uni(rng, 0.3, 0.55),
            "clearance": uni(rng, 0.8, 4.0),
            "legs": pick(rng, (1, 2)),
            "frame": pick(rng, ("dark_grey", "white", "black", "forest_green")),
            "poster": pick(rng, ("sky_blue", "orange", "red", "yellow", "teal", "pink")),
        }

    def build(self, p):
        b = Builder()
        W, C = p["width"], p["clearance"]
        Hp = W * p["aspect"]
        legs = [0.0] if p["legs"] == 1 or W < 4.0 else [-W * 0.3, W * 0.3]
        rl = 0.1 + 0.02 * W
        for i, y in enumerate(legs):
            b.slab(f"footing_{i}", (1.2 + W * 0.12, 1.0, 0.3), (0, y, 0), "concrete", "concrete_grey")
            b.cyl(f"column_{i}", rl, C + Hp * 0.5, (0, y, 0.3), "steel", p["frame"], sections=10)
        b.slab("frame", (0.3, W, Hp), (0, 0, C + 0.3), "steel", p["frame"])
        b.slab("poster", (0.02, W * 0.96, Hp * 0.92), (0.16, 0, C + 0.3 + Hp * 0.04), "paper", p["poster"])
        return b.finish()

    def describe(self, p):
        return f"{p['width']:.0f} m billboard on {len([0] if p['legs'] == 1 else [0, 0])} column(s)"


class AdvertisingColumn(Generator):
    """Advertising (Litfass) column: a plinth, a poster drum and a domed or flat cap."""

    name, l3 = "advertising_column", "advertising_column"

    def sample_params(self, rng):
        return {
            "radius": uni(rng, 0.45, 0.8),
            "height": uni(rng, 2.5, 3.6),
            "cap": pick(rng, ("dome", "flat")),
            "colour": pick(rng, ("forest_green", "dark_grey", "black", "dark_red")),
            "poster": pick(rng, ("cream", "sky_blue", "orange", "yellow", "pink")),
        }

    def build(self, p):
        b = Builder()
        R, H, col = p["radius"], p["height"], p["colour"]
        b.cyl("plinth", R * 1.1, 0.2, (0, 0, 0), "concrete", col, sections=16)
        b.cyl("drum", R, H - 0.55, (0, 0, 0.2), "concrete", p["poster"], sections=16)
        b.cyl("cornice", R * 1.15, 0.1, (0, 0, H - 0.35), "painted_metal", col, sections=16)
        if p["cap"] == "dome":
            b.cyl("cap", R * 1.1, 0.25, (0, 0, H - 0.25), "painted_metal", col, r_top=R * 0.3, sections=16)
        else:
            b.cyl("cap", R * 1.1, 0.12, (0, 0, H - 0.25), "painted_metal", col, sections=16)
        return b.finish()

    def describe(self, p):
        return f"advertising column with a {p['cap']} cap"


class AFrameSign(Generator):
    """A-frame pavement sign: two boards leaning together, hinged at the top."""

    name, l3 = "a_frame_sign", "a_frame_sign"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.75, 1.15),
            "width": uni(rng, 0.45, 0.7),
            "spread": uni(rng, 0.4, 0.7),
            "frame": pick(rng, ("tan", "black", "silver", "forest_green")),
            "board": pick(rng, ("black", "white", "charcoal", "cream")),
        }

    def build(self, p):
        b = Builder()
        H, W, S = p["height"], p["width"], p["spread"] * 0.5 * p["height"]
        for s in (-1, 1):
            side = "fb"[s > 0]
            b.hull(
                f"board_{side}",
                [
                    [s * (S - t - (S - 0.02) * z / H), y, z]
                    for y in (-W / 2, W / 2)
                    for z in (0.0, H)
                    for t in (0.0, 0.03)
                ],
                "wood",
                p["frame"],
            )
            b.hull(
                f"panel_{side}",
                [
                    [s * (S + 0.004 - (S - 0.02) * z / H), y, z]
                    for y in (-W * 0.42, W * 0.42)
                    for z in (H * 0.1, H * 0.9)
                ]
                + [[s * (S - 0.01 - (S - 0.02) * H * 0.5 / H), 0, H * 0.5]],
                "plastic",
                p["board"],
            )
        return b.finish()

    def describe(self, p):
        return f"{p['board']} A-frame pavement sign"


class StreetClock(Generator):
    """Post clock: a column on a stepped foot carrying a two- or four-faced clock head."""

    name, l3 = "street_clock_post", "street_clock"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 3.0, 5.0),
            "faces": pick(rng, (2, 4)),
            "dial": uni(rng, 0.25, 0.45),
            "colour": pick(rng, ("black", "forest_green", "navy", "dark_red")),
        }

    def build(self, p):
        b = Builder()
        H, R, col = p["height"], p["dial"], p["colour"]
        b.cyl("foot", 0.35, 0.3, (0, 0, 0), "cast_iron", col, r_top=0.2, sections=12)
        b.cyl("column", 0.08, H - 0.3 - 2 * R, (0, 0, 0.3), "cast_iron", col, sections=10)
        zc = H - R - 0.05
        b.slab("head", (0.22 if p["faces"] == 2 else 2 * R, 2 * R, 2 * R), (0, 0, zc - R), "cast_iron", col)
        dirs = ((1, 0), (-1, 0)) if p["faces"] == 2 else ((1, 0), (-1, 0), (0, 1), (0, -1))
        depth = 0.11 if p["faces"] == 2 else R
        for i, (dx, dy) in enumerate(dirs):
            ax = "x" if dx else "y"
            base = (
                (dx * depth, dy * depth, zc)
                if (dx + dy) > 0
                else (dx * depth - (0.01 if dx else 0), dy * depth - (0.01 if dy else 0), zc)
            )
            b.cyl(f"dial_{i}", R * 0.85, 0.01, base, "glass", "white", sections=16, axis=ax)
        b.cyl("finial", 0.06, 0.15, (0, 0, H - 0.15 + 0.05), "cast_iron", col, r_top=0.0, sections=8)
        return b.finish()

    def describe(self, p):
        return f"{p['faces']}-faced street clock on a {p['colour'].replace('_', ' ')} column"


class InformationBoard(Generator):
    """Notice or map board: a glazed panel between two posts, optionally under a small roof."""

    name, l3 = "information_board", "information_board"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 0.9, 2.5),
            "height": uni(rng, 1.8, 2.6),
            "roof": coin(rng, 0.5),
            "material": pick(rng, ("wood", "steel")),
            "panel": pick(rng, ("cream", "sky_blue", "white")),
        }

    def build(self, p):
        b = Builder()
        W, H = p["width"], p["height"]
        mat = p["material"]
        col = "brown" if mat == "wood" else "dark_grey"
        for s in (-1, 1):
            b.slab(f"foot_{'lr'[s > 0]}", (0.6, 0.2, 0.06), (0, s * W / 2, 0), "concrete", "concrete_grey")
            b.slab(f"post_{'lr'[s > 0]}", (0.1, 0.1, H), (0, s * W / 2, 0.06), mat, col)
        b.slab("board", (0.05, W - 0.1, H * 0.45), (0, 0, H * 0.4), mat, col)
        b.slab("panel", (0.01, W - 0.2, H * 0.4), (0.03, 0, H * 0.42), "glass", p["panel"])
        if p["roof"]:
            b.hull(
                "roof",
                [
                    [x, y, z]
                    for y in (-W / 2 - 0.1, W / 2 + 0.1)
                    for x, z in ((-0.25, H + 0.02), (0.3, H - 0.06), (0.3, H - 0.02), (-0.25, H + 0.06))
                ],
                mat,
                col,
            )
        return b.finish()

    def describe(self, p):
        roof = "roofed " if p["roof"] else ""
        return f"{roof}{p['material']} information board"


class Flagpole(Generator):
    """Flagpole on a concrete plinth with a flag hanging from the top (flag offset balanced by the plinth)."""

    name, l3 = "flagpole", "flagpole"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 5.0, 12.0),
            "flag": uni(rng, 0.9, 2.0),
            "colour": pick(rng, ("red", "royal_blue", "white", "forest_green", "yellow")),
        }

    def build(self, p):
        b = Builder()
        H, F = p["height"], p["flag"]
        b.slab("plinth", (0.8, 0.8, 0.4), (0, 0, 0), "concrete", "concrete_grey")
        b.cyl("pole", 0.06, H - 0.4, (0, 0, 0.4), "aluminium", "silver", r_top=0.035, sections=10)
        b.ball("truck", (0.06, 0.06, 0.06), (0, 0, H + 0.03), "aluminium", "silver")
        b.box("flag", (0.01, F, F * 0.6), (0, F / 2 + 0.04, H - 0.1 - F * 0.3), "fabric", p["colour"])
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m flagpole with a {p['colour'].replace('_', ' ')} flag"


GENERATORS: list[Generator] = [
    SignPost("sign_stop", "stop_sign", "octagon", "signal_red", "signal_red", "white"),
    SignPost("sign_yield", "yield_sign", "triangle_down", "signal_red", "white"),
    SignPost("sign_speed_limit", "speed_limit_sign", "disc", "signal_red", "white", "black"),
    SignPost("sign_speed_limit_us", "speed_limit_sign", "portrait", "black", "white", "black"),
    SignPost("sign_no_entry", "no_entry_sign", "disc", "signal_red", "signal_red", "white"),
    SignPost("sign_no_parking", "no_parking_sign", "disc", "signal_red", "royal_blue", "signal_red"),
    SignPost("sign_warning_triangle", "warning_sign", "triangle_up", "signal_red", "white"),
    SignPost("sign_warning_diamond", "warning_sign", "diamond", "black", "yellow"),
    SignPost(
        "sign_pedestrian_crossing", "pedestrian_crossing_sign", "square", "white", "royal_blue", "white"
    ),
    SignPost("sign_parking", "parking_sign", "square", "white", "royal_blue"),
    SignPost("sign_street_name", "street_name_sign", "blade", "white", "forest_green", "white"),
    BusStopSign(),
    Billboard(),
    AdvertisingColumn(),
    AFrameSign(),
    StreetClock(),
    InformationBoard(),
    Flagpole(),
]
