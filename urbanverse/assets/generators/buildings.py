"""Buildings and structures: apartment and commercial blocks, office towers, houses, facades, sheds,
freestanding walls, stairs and ramps.

Lengths in metres; front along +X (the street side carries the door and shop windows). Windows and
doors are thin boxes proud of the wall by 2 cm, so each stays a separate convex part.
"""

from __future__ import annotations

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni

WALLS = {
    "brick": ("brick_red", "brick_brown"),
    "concrete": ("concrete_grey", "light_grey", "off_white"),
    "stone": ("stone_beige", "sand"),
    "glass": ("glass_blue", "glass_dark"),
}
FRAMES = ("white", "charcoal", "dark_brown", "black")


def _facade_openings(
    b: Builder,
    prefix: str,
    x: float,
    width: float,
    floors: int,
    storey: float,
    z0: float,
    per_floor: int,
    win_w: float,
    frame: str,
    ground_shop: bool,
    sign: str,
) -> None:
    """Windows over ``floors`` storeys on the wall plane x = ``x`` (facing +X), centred on y = 0, and a door;
    with ``ground_shop`` the ground floor gets a shop window band and a fascia sign instead."""
    bay = width / per_floor
    for f in range(floors):
        zf = z0 + f * storey
        if f == 0 and ground_shop:
            b.slab(
                f"{prefix}shop_window",
                (0.04, width * 0.8, storey * 0.6),
                (x + 0.02, 0, zf + 0.15),
                "glass",
                "glass_dark",
            )
            b.slab(
                f"{prefix}fascia",
                (0.08, width * 0.85, storey * 0.18),
                (x + 0.04, 0, zf + storey * 0.78),
                "painted_metal",
                sign,
            )
            continue
        for k in range(per_floor):
            y = -width / 2 + (k + 0.5) * bay
            if f == 0 and k == per_floor // 2:
                b.slab(
                    f"{prefix}door", (0.04, min(1.2, bay * 0.7), 2.2), (x + 0.02, y, zf), "wood", "dark_brown"
                )
                continue
            b.slab(
                f"{prefix}window_{f}_{k}",
                (0.04, win_w * bay, storey * 0.5),
                (x + 0.02, y, zf + storey * 0.28),
                "glass",
                "glass_dark" if frame != "white" else "glass_blue",
            )
            b.slab(
                f"{prefix}sill_{f}_{k}",
                (0.08, win_w * bay + 0.1, 0.05),
                (x + 0.04, y, zf + storey * 0.25),
                "stone",
                frame,
            )


class BuildingBlock(Generator):
    """Flat-roofed block (apartments, mixed commercial, office tower) with a windowed street facade."""

    SPECS = {  # l3: floors, storey height, wall materials, ground-floor shop probability
        "residential_building": ((2, 8), (2.8, 3.1), ("brick", "concrete", "stone"), 0.3),
        "commercial_building": ((1, 6), (3.4, 4.2), ("concrete", "stone", "brick"), 1.0),
        "office_tower": ((10, 25), (3.5, 3.9), ("glass",), 0.0),
    }

    def __init__(self, name: str, l3: str) -> None:
        self.name, self.l3 = name, l3

    def sample_params(self, rng):
        (f0, f1), (s0, s1), mats, shop = self.SPECS[self.l3]
        wall = pick(rng, mats)
        big = self.l3 == "office_tower"
        return {
            "floors": int(rng.integers(f0, f1 + 1)),
            "storey": uni(rng, s0, s1),
            "width": uni(rng, 16.0, 40.0) if big else uni(rng, 8.0, 24.0),
            "depth": uni(rng, 16.0, 35.0) if big else uni(rng, 8.0, 16.0),
            "wall": wall,
            "wall_colour": pick(rng, WALLS[wall]),
            "frame": pick(rng, FRAMES),
            "bays": int(rng.integers(3, 8)),
            "window_width": uni(rng, 0.45, 0.75),
            "shop": coin(rng, shop),
            "sign": pick(rng, ("red", "navy", "forest_green", "black", "orange")),
            "parapet": uni(rng, 0.3, 1.0),
            "roof_box": coin(rng, 0.6),
        }

    def build(self, p):
        b = Builder()
        n, st, W, D = p["floors"], p["storey"], p["width"], p["depth"]
        H = n * st
        b.slab("mass", (D, W, H), (0, 0, 0), p["wall"], p["wall_colour"])
        b.slab("parapet", (D + 0.2, W + 0.2, p["parapet"]), (0, 0, H), "concrete", "light_grey")
        if p["roof_box"]:
            b.slab(
                "roof_plant",
                (min(4.0, D * 0.3), min(6.0, W * 0.3), 2.5),
                (-D * 0.2, 0, H),
                "painted_metal",
                "light_grey",
            )
        if self.l3 == "office_tower":
            for f in range(1, n):
                b.slab(
                    f"floor_band_{f}",
                    (0.06, W, 0.35),
                    (D / 2 + 0.03, 0, f * st - 0.15),
                    "concrete",
                    "light_grey",
                )
            b.slab("entrance", (0.1, min(6.0, W * 0.4), 3.0), (D / 2 + 0.05, 0, 0), "glass", "glass_dark")
        else:
            _facade_openings(
                b, "", D / 2, W, n, st, 0.0, p["bays"], p["window_width"], p["frame"], p["shop"], p["sign"]
            )
        return b.finish()

    def describe(self, p):
        shop = " with shops at street level" if p["shop"] else ""
        return f"{p['floors']}-storey {p['wall']} {self.l3.replace('_', ' ')}{shop}"


class BuildingFacade(Generator):
    """Facade slab: the street front of a building (a shallow wall with windows, a door or shop front,
    cornice), for lining streets without full building volumes."""

    name, l3 = "facade_slab", "building_facade"

    def sample_params(self, rng):
        wall = pick(rng, ("brick", "concrete", "stone"))
        return {
            "floors": int(rng.integers(2, 7)),
            "storey": uni(rng, 2.9, 3.6),
            "width": uni(rng, 6.0, 20.0),
            "depth": uni(rng, 0.6, 1.5),
            "wall": wall,
            "wall_colour": pick(rng, WALLS[wall]),
            "frame": pick(rng, FRAMES),
            "bays": int(rng.integers(3, 7)),
            "window_width": uni(rng, 0.45, 0.7),
            "shop": coin(rng, 0.6),
            "sign": pick(rng, ("red", "navy", "forest_green", "black")),
        }

    def build(self, p):
        b = Builder()
        n, st, W, D = p["floors"], p["storey"], p["width"], p["depth"]
        H = n * st
        b.slab("wall", (D, W, H), (0, 0, 0), p["wall"], p["wall_colour"])
        b.slab("cornice", (D + 0.3, W, 0.4), (0.15, 0, H), "stone", "off_white")
        _facade_openings(
            b, "", D / 2, W, n, st, 0.0, p["bays"], p["window_width"], p["frame"], p["shop"], p["sign"]
        )
        return b.finish()

    def describe(self, p):
        return f"{p['floors']}-storey {p['wall']} facade, {p['width']:.0f} m wide"


class House(Generator):
    """Detached house: walls, a gable roof (ridge along Y), a chimney, a front door and windows."""

    name, l3 = "house_gabled", "house"

    def sample_params(self, rng):
        wall = pick(rng, ("brick", "concrete", "wood"))
        return {
            "width": uni(rng, 7.0, 14.0),
            "depth": uni(rng, 6.0, 10.0),
            "floors": pick(rng, (1, 2)),
            "pitch": uni(rng, 0.35, 0.8),
            "wall": wall,
            "wall_colour": pick(rng, WALLS.get(wall, ("cream", "sky_blue", "white", "sage"))),
            "roof": pick(rng, ("terracotta", "dark_grey", "charcoal", "brown")),
            "frame": pick(rng, FRAMES),
            "chimney": coin(rng, 0.6),
        }

    def build(self, p):
        b = Builder()
        W, D, n = p["width"], p["depth"], p["floors"]
        H = n * 2.8
        b.slab("walls", (D, W, H), (0, 0, 0), p["wall"], p["wall_colour"])
        rise = D / 2 * p["pitch"]
        o = 0.4
        b.hull(
            "roof",
            [
                [x, y, z]
                for y in (-W / 2 - o, W / 2 + o)
                for x, z in (
                    (-D / 2 - o, H - o * p["pitch"]),
                    (D / 2 + o, H - o * p["pitch"]),
                    (0.0, H + rise),
                )
            ],
            "ceramic",
            p["roof"],
        )
        if p["chimney"]:
            b.slab("chimney", (0.6, 0.6, rise + 1.0), (-D * 0.2, W * 0.3, H), "brick", "brick_red")
        _facade_openings(b, "", D / 2, W, n, 2.8, 0.0, 3 if W < 10 else 5, 0.5, p["frame"], False, "red")
        return b.finish()

    def describe(self, p):
        return f"{p['floors']}-storey {p['wall']} house with a {p['roof'].replace('_', ' ')} gable roof"


class Shed(Generator):
    """Garden or utility shed: box walls, a mono-pitch or gable roof, and a door."""

    name, l3 = "shed_small", "shed"

    def sample_params(self, rng):
        return {
            "width": uni(rng, 1.8, 4.0),
            "depth": uni(rng, 1.5, 3.0),
            "height": uni(rng, 1.9, 2.4),
            "roof": pick(rng, ("mono", "gable")),
            "material": pick(rng, ("wood", "painted_metal")),
            "colour": pick(rng, ("tan", "brown", "sage", "forest_green", "light_grey")),
        }

    def build(self, p):
        b = Builder()
        W, D, H = p["width"], p["depth"], p["height"]
        b.slab("walls", (D, W, H), (0, 0, 0), p["material"], p["colour"])
        if p["roof"] == "mono":
            b.hull(
                "roof",
                [
                    [x, y, z]
                    for y in (-W / 2 - 0.1, W / 2 + 0.1)
                    for x, z in (
                        (-D / 2 - 0.1, H),
                        (D / 2 + 0.15, H),
                        (D / 2 + 0.15, H + 0.45),
                        (D / 2 + 0.15, H + 0.5),
                    )
                ],
                "painted_metal",
                "charcoal",
            )
        else:
            b.hull(
                "roof",
                [
                    [x, y, z]
                    for y in (-W / 2 - 0.1, W / 2 + 0.1)
                    for x, z in ((-D / 2 - 0.1, H), (D / 2 + 0.1, H), (0.0, H + D * 0.3))
                ],
                "painted_metal",
                "charcoal",
            )
        b.slab("door", (0.04, 0.9, 1.8), (D / 2 + 0.02, -W * 0.2, 0), p["material"], "dark_brown")
        return b.finish()

    def describe(self, p):
        return f"{p['material'].replace('_', ' ')} shed with a {p['roof']} roof"


class FreestandingWall(Generator):
    """Freestanding boundary wall: footing, body, coping, and piers every few metres."""

    name, l3 = "wall_boundary", "freestanding_wall"

    def sample_params(self, rng):
        mat = pick(rng, ("brick", "stone", "concrete"))
        return {
            "length": uni(rng, 2.0, 10.0),
            "height": uni(rng, 0.6, 2.5),
            "thickness": uni(rng, 0.2, 0.45),
            "material": mat,
            "colour": pick(rng, WALLS[mat]),
            "pier_spacing": uni(rng, 2.0, 4.0),
        }

    def build(self, p):
        b = Builder()
        L, H, T, mat, col = p["length"], p["height"], p["thickness"], p["material"], p["colour"]
        b.slab("footing", (T + 0.2, L, 0.1), (0, 0, 0), "concrete", "concrete_grey")
        b.slab("body", (T, L, H - 0.08), (0, 0, 0.1), mat, col)
        b.slab("coping", (T + 0.08, L + 0.04, 0.06), (0, 0, H + 0.02), "stone", "light_grey")
        n = int(L / p["pier_spacing"]) + 1
        for k in range(n):
            y = -L / 2 + 0.2 + (L - 0.4) * k / max(1, n - 1)
            b.slab(f"pier_{k}", (T + 0.12, 0.4, H), (0, y, 0.1), mat, col)
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m {p['material']} wall, {p['height']:.1f} m high"


class Stairs(Generator):
    """Outdoor flight of steps rising towards -X (walk up from the front), with optional handrails.

    Each step is a solid block from the ground to its tread, so every part is convex and stable."""

    name, l3 = "stairs_flight", "stairs"

    def sample_params(self, rng):
        return {
            "steps": int(rng.integers(2, 13)),
            "rise": uni(rng, 0.14, 0.18),
            "tread": uni(rng, 0.28, 0.38),
            "width": uni(rng, 1.0, 5.0),
            "handrails": coin(rng, 0.6),
            "material": pick(rng, ("concrete", "stone", "granite")),
        }

    def build(self, p):
        b = Builder()
        n, r, t, W, mat = p["steps"], p["rise"], p["tread"], p["width"], p["material"]
        col = {"concrete": "concrete_grey", "stone": "stone_beige", "granite": "light_grey"}[mat]
        for k in range(n):
            b.slab(f"step_{k}", (t, W, r * (k + 1)), (-k * t, 0, 0), mat, col)
        if p["handrails"]:
            for s in (-1, 1):
                y = s * (W / 2 - 0.05)
                top0, top1 = (t * 0.5, r + 0.9), (-(n - 1) * t, n * r + 0.9)
                b.rod(
                    f"handrail_{'lr'[s > 0]}",
                    (top0[0], y, top0[1]),
                    (top1[0], y, top1[1]),
                    0.025,
                    "steel",
                    "silver",
                )
                b.rod(
                    f"rail_post_lo_{'lr'[s > 0]}",
                    (t * 0.5, y, r),
                    (top0[0], y, top0[1]),
                    0.02,
                    "steel",
                    "silver",
                )
                b.rod(
                    f"rail_post_hi_{'lr'[s > 0]}",
                    (top1[0], y, n * r),
                    (top1[0], y, top1[1]),
                    0.02,
                    "steel",
                    "silver",
                )
        return b.finish()

    def describe(self, p):
        return f"flight of {p['steps']} {p['material']} steps, {p['width']:.1f} m wide"


class Ramp(Generator):
    """Accessible ramp: a concrete wedge rising towards -X with optional kerbs and handrails."""

    name, l3 = "ramp_wedge", "ramp"

    def sample_params(self, rng):
        return {
            "length": uni(rng, 1.5, 10.0),
            "slope": uni(rng, 0.05, 0.083),
            "width": uni(rng, 1.0, 3.0),
            "handrails": coin(rng, 0.5),
            "material": pick(rng, ("concrete", "asphalt")),
        }

    def build(self, p):
        b = Builder()
        L, W = p["length"], p["width"]
        H = L * p["slope"]
        col = "concrete_grey" if p["material"] == "concrete" else "asphalt_grey"
        b.hull(
            "wedge",
            [
                [x, y, z]
                for y in (-W / 2, W / 2)
                for x, z in ((L / 2, 0.0), (-L / 2, 0.0), (-L / 2, H), (L / 2, 0.005))
            ],
            p["material"],
            col,
        )
        if p["handrails"]:
            for s in (-1, 1):
                y = s * (W / 2 - 0.05)
                b.rod(
                    f"handrail_{'lr'[s > 0]}", (L / 2, y, 0.9), (-L / 2, y, H + 0.9), 0.025, "steel", "silver"
                )
                for k, x in enumerate((L / 2 - 0.05, 0.0, -L / 2 + 0.05)):
                    z = H * (0.5 - x / L)
                    b.rod(f"post_{'lr'[s > 0]}_{k}", (x, y, z), (x, y, z + 0.9), 0.02, "steel", "silver")
        return b.finish()

    def describe(self, p):
        return f"{p['length']:.1f} m {p['material']} ramp, slope 1:{1 / p['slope']:.0f}"


GENERATORS: list[Generator] = [
    BuildingBlock("building_residential", "residential_building"),
    BuildingBlock("building_commercial", "commercial_building"),
    BuildingBlock("building_office_tower", "office_tower"),
    BuildingFacade(),
    House(),
    Shed(),
    FreestandingWall(),
    Stairs(),
    Ramp(),
]
