"""Street lighting and traffic signals: cobra-head, heritage, double-arm and solar lamps, bollard
lights, traffic lights and pedestrian signals.

Lengths in metres; front along +X (the road side: arms and signal faces point to +X). Every post
stands on a base plate or plinth wide enough to carry its overhang.
"""

from __future__ import annotations

from urbanverse.assets.generators.base import Builder, Generator, coin, pick, uni

POLE_COLOURS = ("silver", "dark_grey", "charcoal", "forest_green", "black")


def _base(b: Builder, style: str, size: float, colour: str) -> float:
    """A base plate ("plate"), concrete plinth ("plinth") or cast-iron stepped foot ("stepped").

    Returns the height of its top in metres."""
    if style == "plate":
        b.slab("base_plate", (size, size, 0.03), (0, 0, 0), "steel", colour)
        b.cyl("base_collar", size * 0.25, 0.25, (0, 0, 0.03), "steel", colour, r_top=size * 0.18)
        return 0.03
    if style == "plinth":
        b.slab("plinth", (size, size, 0.35), (0, 0, 0), "concrete", "concrete_grey")
        return 0.35
    b.cyl("foot_low", size / 2, 0.18, (0, 0, 0), "cast_iron", colour, r_top=size * 0.42, sections=12)
    b.cyl("foot_high", size * 0.32, 0.5, (0, 0, 0.18), "cast_iron", colour, r_top=size * 0.2, sections=12)
    return 0.18


class StreetLamp(Generator):
    """Cobra-head street lamp: tapered pole on a base, an upswept arm over the road, a flat luminaire."""

    name, l3 = "street_lamp_cobra", "street_lamp"

    def sample_params(self, rng):
        h = uni(rng, 5.0, 11.0)
        return {
            "height": h,
            "arm": uni(rng, 0.6, 2.5),
            "pole_radius": round(0.05 + 0.006 * h, 3),
            "base": pick(rng, ("plate", "plinth")),
            "head": pick(rng, ("cobra", "box", "disc")),
            "colour": pick(rng, POLE_COLOURS),
        }

    def build(self, p):
        b = Builder()
        H, A, r, col = p["height"], p["arm"], p["pole_radius"], p["colour"]
        z0 = _base(b, p["base"], max(0.5, A * 0.45), col)
        b.cyl("pole", r * 1.2, H - z0 - 0.2, (0, 0, z0), "steel", col, r_top=r * 0.6)
        b.rod("arm", (0, 0, H - 0.45), (A, 0, H - 0.12), r * 0.5, "steel", col)
        if p["head"] == "cobra":
            b.ball("head", (0.35, 0.16, 0.09), (A + 0.2, 0, H - 0.1), "aluminium", col)
        elif p["head"] == "box":
            b.box("head", (0.6, 0.25, 0.1), (A + 0.2, 0, H - 0.1), "aluminium", col)
        else:
            b.cyl("head", 0.28, 0.08, (A + 0.15, 0, H - 0.16), "aluminium", col, sections=12)
        b.box("lens", (0.4, 0.18, 0.02), (A + 0.2, 0, H - 0.17), "glass", "lamp_white")
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m {p['head']}-head street lamp with a {p['arm']:.1f} m arm"


class HeritageLamp(Generator):
    """Heritage lamp post: cast-iron stepped foot, fluted column, one or two lanterns with caps."""

    name, l3 = "lamp_post_heritage", "heritage_lamp_post"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 3.0, 5.0),
            "lanterns": pick(rng, (1, 1, 2)),
            "lantern_size": uni(rng, 0.3, 0.5),
            "colour": pick(rng, ("black", "forest_green", "navy", "charcoal")),
        }

    def build(self, p):
        b = Builder()
        H, s, col = p["height"], p["lantern_size"], p["colour"]
        z0 = _base(b, "stepped", 0.45, col)
        top = H - s * 1.6 if p["lanterns"] == 1 else H - s * 1.8
        b.cyl("column", 0.07, top - z0, (0, 0, z0), "cast_iron", col, r_top=0.05, sections=10)
        b.cyl("collar", 0.1, 0.08, (0, 0, top - 0.3), "cast_iron", col, sections=10)
        centres = [0.0] if p["lanterns"] == 1 else [-0.55, 0.55]
        if p["lanterns"] == 2:
            b.box("crossbar", (0.06, 1.2, 0.06), (0, 0, top - 0.05), "cast_iron", col)
        for i, y in enumerate(centres):
            zl = top + (0.0 if p["lanterns"] == 1 else -0.05)
            b.cyl(
                f"lantern_seat_{i}", s * 0.25, 0.08, (0, y, zl), "cast_iron", col, r_top=s * 0.4, sections=8
            )
            b.cyl(
                f"lantern_glass_{i}",
                s * 0.4,
                s,
                (0, y, zl + 0.08),
                "glass",
                "lamp_white",
                r_top=s * 0.55,
                sections=6,
            )
            b.cyl(
                f"lantern_cap_{i}",
                s * 0.62,
                s * 0.35,
                (0, y, zl + 0.08 + s),
                "cast_iron",
                col,
                r_top=0.02,
                sections=6,
            )
        return b.finish()

    def describe(self, p):
        n = "twin-lantern" if p["lanterns"] == 2 else "single-lantern"
        return f"{p['colour'].replace('_', ' ')} cast-iron heritage lamp post, {n}"


class DoubleArmLamp(Generator):
    """Median street lamp with two opposed arms and luminaires along ±Y."""

    name, l3 = "street_lamp_double_arm", "double_arm_street_lamp"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 6.0, 11.0),
            "arm": uni(rng, 0.8, 2.5),
            "colour": pick(rng, POLE_COLOURS),
            "curved": coin(rng),
        }

    def build(self, p):
        b = Builder()
        H, A, col = p["height"], p["arm"], p["colour"]
        z0 = _base(b, "plate", 0.5, col)
        b.cyl("pole", 0.11, H - z0 - 0.1, (0, 0, z0), "steel", col, r_top=0.07)
        for s in (-1, 1):
            side = "lr"[s > 0]
            rise = 0.5 if p["curved"] else 0.05
            b.rod(f"arm_{side}", (0, 0, H - 0.2 - rise), (0, s * A, H - 0.1), 0.04, "steel", col)
            b.box(f"head_{side}", (0.25, 0.6, 0.1), (0, s * (A + 0.25), H - 0.1), "aluminium", col)
            b.box(f"lens_{side}", (0.2, 0.45, 0.02), (0, s * (A + 0.25), H - 0.16), "glass", "lamp_white")
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m double-arm street lamp"


class SolarLamp(Generator):
    """Solar street lamp: pole, tilted photovoltaic panel on top, LED head on a short arm, battery box."""

    name, l3 = "street_lamp_solar", "solar_street_lamp"

    def sample_params(self, rng):
        return {"height": uni(rng, 4.0, 8.0), "panel": uni(rng, 0.6, 1.2), "colour": pick(rng, POLE_COLOURS)}

    def build(self, p):
        b = Builder()
        H, P, col = p["height"], p["panel"], p["colour"]
        z0 = _base(b, "plate", 0.5, col)
        b.cyl("pole", 0.07, H - z0, (0, 0, z0), "steel", col, r_top=0.05)
        b.hull(
            "solar_panel",
            [
                [x, y, H + 0.1 + (x + P / 2) * 0.5 + dz]
                for x in (-P / 2, P / 2)
                for y in (-P * 0.4, P * 0.4)
                for dz in (0.0, 0.04)
            ],
            "glass",
            "navy",
        )
        b.rod("arm", (0, 0, H - 0.6), (0.6, 0, H - 0.5), 0.03, "steel", col)
        b.box("head", (0.45, 0.2, 0.08), (0.8, 0, H - 0.5), "aluminium", "silver")
        b.box("battery", (0.25, 0.3, 0.45), (-0.15, 0, H * 0.45), "painted_metal", col)
        return b.finish()

    def describe(self, p):
        return f"{p['height']:.0f} m solar street lamp"


class BollardLight(Generator):
    """Bollard light: a round or square post with a glazed band and cap near the top."""

    name, l3 = "bollard_light", "bollard_light"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 0.6, 1.1),
            "width": uni(rng, 0.12, 0.25),
            "shape": pick(rng, ("round", "square")),
            "colour": pick(rng, ("dark_grey", "silver", "black", "charcoal")),
        }

    def build(self, p):
        b = Builder()
        H, w, col = p["height"], p["width"], p["colour"]
        if p["shape"] == "round":
            b.cyl("post", w / 2, H - 0.2, (0, 0, 0), "aluminium", col, sections=14)
            b.cyl("glass_band", w / 2 * 0.95, 0.15, (0, 0, H - 0.2), "glass", "lamp_white", sections=14)
            b.cyl("cap", w / 2 * 1.05, 0.05, (0, 0, H - 0.05), "aluminium", col, sections=14)
        else:
            b.slab("post", (w, w, H - 0.2), (0, 0, 0), "aluminium", col)
            b.slab("glass_band", (w * 0.95, w * 0.95, 0.15), (0, 0, H - 0.2), "glass", "lamp_white")
            b.slab("cap", (w * 1.05, w * 1.05, 0.05), (0, 0, H - 0.05), "aluminium", col)
        return b.finish()

    def describe(self, p):
        return f"{p['shape']} bollard light, {p['height']:.2f} m"


class TrafficLight(Generator):
    """Traffic signal on a post: base plate, pole, a three-aspect head (optionally a second head on a
    short bracket) with visors, and a pedestrian push-button box."""

    name, l3 = "traffic_light_post", "traffic_light"

    def sample_params(self, rng):
        return {
            "pole_height": uni(rng, 2.8, 4.5),
            "aspects": pick(rng, (3, 3, 4)),
            "lamp": uni(rng, 0.1, 0.15),
            "second_head": coin(rng, 0.35),
            "backplate": coin(rng, 0.5),
            "button": coin(rng, 0.6),
            "colour": pick(rng, ("black", "dark_grey", "yellow", "forest_green", "silver")),
        }

    def _head(self, b: Builder, name: str, x: float, z: float, n: int, r: float, col: str, backplate: bool):
        w, h = 2.6 * r, n * 2.4 * r + 0.06
        b.slab(f"{name}_housing", (0.22, w, h), (x, 0, z), "painted_metal", col)
        if backplate:
            b.slab(
                f"{name}_backplate",
                (0.02, w + 0.2, h + 0.2),
                (x - 0.12, 0, z - 0.1),
                "painted_metal",
                "black",
            )
        lamps = (
            ("signal_red", "amber", "signal_green", "signal_green")[:n]
            if n == 3
            else ("signal_red", "amber", "signal_green", "amber")
        )
        for i, lc in enumerate(lamps):
            zc = z + h - 0.03 - (i + 0.5) * 2.4 * r
            b.cyl(f"{name}_lamp_{i}", r, 0.02, (x + 0.11, 0, zc), "glass", lc, sections=12, axis="x")
            b.slab(
                f"{name}_visor_{i}",
                (0.16, 2.2 * r, 0.015),
                (x + 0.19, 0, zc + r * 1.05),
                "painted_metal",
                col,
            )

    def build(self, p):
        b = Builder()
        H, n, r, col = p["pole_height"], p["aspects"], p["lamp"], p["colour"]
        b.slab("base_plate", (0.5, 0.5, 0.03), (0, 0, 0), "steel", "dark_grey")
        b.cyl("pole", 0.06, H, (0, 0, 0.03), "steel", col)
        h = n * 2.4 * r + 0.06
        self._head(b, "head", 0.17, H + 0.03 - h * 0.6, n, r, col, p["backplate"])
        if p["second_head"]:
            b.slab("bracket", (0.3, 0.06, 0.06), (0.0, 0.0, 1.9), "steel", col)
            self._head(b, "low_head", 0.25, 1.9 - h * 0.5, n, r, col, False)
        if p["button"]:
            b.slab("push_button", (0.1, 0.12, 0.2), (0.09, 0, 1.0), "plastic", "yellow")
        return b.finish()

    def describe(self, p):
        two = " with a second low head" if p["second_head"] else ""
        return f"{p['colour'].replace('_', ' ')} {p['aspects']}-aspect traffic light on a post{two}"


class PedestrianSignal(Generator):
    """Pedestrian signal: a short post carrying a two-aspect walk / don't-walk head and a countdown box."""

    name, l3 = "pedestrian_signal_post", "pedestrian_signal"

    def sample_params(self, rng):
        return {
            "height": uni(rng, 2.3, 3.2),
            "countdown": coin(rng, 0.5),
            "colour": pick(rng, ("black", "dark_grey", "yellow", "silver")),
        }

    def build(self, p):
        b = Builder()
        H, col = p["height"], p["colour"]
        b.slab("base_plate", (0.4, 0.4, 0.03), (0, 0, 0), "steel", "dark_grey")
        b.cyl("pole", 0.05, H - 0.6, (0, 0, 0.03), "steel", col)
        b.slab("housing", (0.2, 0.32, 0.62), (0.12, 0, H - 0.62), "painted_metal", col)
        b.box("dont_walk", (0.02, 0.26, 0.26), (0.23, 0, H - 0.18), "glass", "orange")
        b.box("walk", (0.02, 0.26, 0.26), (0.23, 0, H - 0.46), "glass", "white")
        if p["countdown"]:
            b.slab("countdown", (0.15, 0.3, 0.25), (0.1, 0, H - 0.95), "painted_metal", "black")
        return b.finish()

    def describe(self, p):
        return "pedestrian signal" + (" with countdown display" if p["countdown"] else "")


GENERATORS: list[Generator] = [
    StreetLamp(),
    HeritageLamp(),
    DoubleArmLamp(),
    SolarLamp(),
    BollardLight(),
    TrafficLight(),
    PedestrianSignal(),
]
