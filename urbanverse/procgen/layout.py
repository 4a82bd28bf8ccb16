"""Ground layouts: roads, crosswalks, raised sidewalks with curb ramps, building lots.

Every layout is a list of non-overlapping ground regions plus the placement zones used by
``urbanverse.procgen.placement``: curb lines (where trees, lamps and signs stand), frontage
lines (where benches and bins face the street) and building lots. World frame: metres, Z-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from urbanverse.scene.record import DEFAULT_CURB_HEIGHT

LANE_WIDTH = 3.2
PARKING_WIDTH = 2.2
#: Depth (m) of the building lots behind the sidewalks.
LOT_DEPTH = 20.0
#: Distance (m) from the curb to the line of trees, lamps and signs (the furniture zone).
CURB_ZONE = 1.0


@dataclass(frozen=True)
class Region:
    """A ground region before materials are chosen: ``kind`` is the scene's ground type."""

    id: str
    kind: str
    polygon: tuple[tuple[float, float], ...]
    elevation: float = 0.0
    vertex_elevation: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Line:
    """A placement line from ``start`` to ``end`` (m); ``facing``: yaw (rad) that points objects at the
    street; ``elevation``: ground height (m) along it."""

    start: tuple[float, float]
    end: tuple[float, float]
    facing: float
    elevation: float

    def points(self, spacing: float, rng: np.random.Generator, jitter: float = 0.0) -> list[np.ndarray]:
        """Points every ``spacing`` m (with uniform jitter), starting half a spacing in."""
        a, b = np.asarray(self.start), np.asarray(self.end)
        length = float(np.linalg.norm(b - a))
        n = max(int(length // spacing), 0)
        offsets = (np.arange(n) + 0.5) * spacing + rng.uniform(-jitter, jitter, n)
        return [a + (b - a) * (t / length) for t in offsets if 0.0 < t < length]


@dataclass
class Layout:
    """Regions, placement lines, building lots (centre, size along the street, yaw), parking lines."""

    regions: list[Region] = field(default_factory=list)
    curb_lines: list[Line] = field(default_factory=list)
    frontage_lines: list[Line] = field(default_factory=list)
    parking_lines: list[Line] = field(default_factory=list)
    building_lines: list[Line] = field(default_factory=list)
    crosswalks: list[tuple[tuple[float, float], tuple[float, float]]] = field(default_factory=list)
    plaza: tuple[tuple[float, float], ...] | None = None


def _rect(x0: float, y0: float, x1: float, y1: float) -> tuple[tuple[float, float], ...]:
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _mirror_y(points):
    """Mirror across y = 0, keeping counter-clockwise order."""
    return tuple((x, -y) for x, y in points)[::-1]


@dataclass(frozen=True, kw_only=True)
class StreetModel:
    """The parameters of a straight street in its own frame: along +X from ``start`` to ``end`` (m), the
    road between y = -``half_width("south")`` and y = ``half_width("north")``.

    ``lanes`` traffic lanes of ``LANE_WIDTH`` plus a ``PARKING_WIDTH`` parking lane on each side where
    ``parking`` says (north, south); sidewalks ``sidewalk`` m wide (north, south) raised ``curb`` m;
    mid-block crosswalks (4 m wide, with curb ramps) centred at x = ``crossings``; a plaza
    ``plaza_depth`` m deep behind the north sidewalk instead of building lots (0: none); building lots
    ``lot_depth`` m deep behind the sidewalks. ``procgen`` draws these parameters; ``gen`` fits them to
    what a video saw (:mod:`urbanverse.layout.street_fit`); :func:`street_layout` builds either.
    """

    start: float
    end: float
    lanes: int
    parking: tuple[bool, bool] = (True, True)
    sidewalk: tuple[float, float] = (4.0, 4.0)
    curb: float = DEFAULT_CURB_HEIGHT
    crossings: tuple[float, ...] = ()
    plaza_depth: float = 0.0
    lot_depth: float = LOT_DEPTH

    def half_width(self, side: str) -> float:
        """Distance (m) from the road's centre line to its ``side`` ("north" or "south") curb."""
        parked = self.parking[0 if side == "north" else 1]
        return self.lanes * LANE_WIDTH / 2 + (PARKING_WIDTH if parked else 0.0)

    @property
    def road_width(self) -> float:
        """Curb to curb (m)."""
        return self.half_width("north") + self.half_width("south")


#: Width (m) of a mid-block crosswalk along the street.
CROSSWALK_WIDTH = 4.0


def straight_street(
    rng: np.random.Generator,
    length: float,
    lanes: int,
    sidewalk: float,
    parking: bool,
    crosswalk_at: float | None,
    plaza_depth: float = 0.0,
    curb: float = DEFAULT_CURB_HEIGHT,
) -> Layout:
    """A street along +X centred on y = 0: road (with parking lanes), sidewalks on both sides raised
    ``curb`` m, an optional mid-block crosswalk with curb ramps, and (``plaza_depth`` > 0)
    a plaza instead of buildings on the north side."""
    return street_layout(
        StreetModel(
            start=-length / 2,
            end=length / 2,
            lanes=lanes,
            parking=(parking, parking),
            sidewalk=(sidewalk, sidewalk),
            crossings=() if crosswalk_at is None else (crosswalk_at,),
            plaza_depth=plaza_depth,
            curb=curb,
        )
    )


def _numbered(name: str, k: int, count: int) -> str:
    """``name`` for the only one of its kind, else ``name_<k>``."""
    return name if count == 1 else f"{name}_{k}"


def street_layout(model: StreetModel) -> Layout:
    """The regions and placement lines of ``model``: road pieces between the crosswalks, each side's
    sidewalk (notched where a crosswalk's curb ramp lands) and its plaza or building lots."""
    curb = model.curb
    x0, x1 = model.start, model.end
    spans = [(c - CROSSWALK_WIDTH / 2, c + CROSSWALK_WIDTH / 2) for c in sorted(model.crossings)]
    n = len(spans)
    south, north = model.half_width("south"), model.half_width("north")
    out = Layout()
    edges = [x0, *[v for span in spans for v in span], x1]
    road_names = ["road"] if n == 0 else ["road_west", *[f"road_{k}" for k in range(1, n)], "road_east"]
    for k, name in enumerate(road_names):
        out.regions.append(Region(name, "road", _rect(edges[2 * k], -south, edges[2 * k + 1], north)))
    for k, (c0, c1) in enumerate(spans):
        out.regions.append(Region(_numbered("crosswalk", k, n), "crosswalk", _rect(c0, -south, c1, north)))
        out.crosswalks.append((((c0 + c1) / 2, -south), ((c0 + c1) / 2, north)))
    for side, sign, half, width, parking in (
        ("north", 1.0, north, model.sidewalk[0], model.parking[0]),
        ("south", -1.0, south, model.sidewalk[1], model.parking[1]),
    ):
        ramp = min(1.2, width - 0.8)
        poly: list[tuple[float, float]] = [(x0, half)]
        for k, (c0, c1) in enumerate(spans):
            poly += [(c0, half), (c0, half + ramp), (c1, half + ramp), (c1, half)]
            ramp_poly = _rect(c0, half, c1, half + ramp)
            heights = (0.0, 0.0, curb, curb)
            if sign < 0:
                ramp_poly, heights = _mirror_y(ramp_poly), heights[::-1]
            out.regions.append(
                Region(_numbered(f"ramp_{side}", k, n), "ramp", ramp_poly, vertex_elevation=heights)
            )
        poly += [(x1, half), (x1, half + width), (x0, half + width)]
        out.regions.append(
            Region(f"sidewalk_{side}", "sidewalk", tuple(poly) if sign > 0 else _mirror_y(poly), curb)
        )
        facing = -math.pi / 2 * sign  # +X of a placed asset points at the road
        y_curb, y_front = sign * (half + CURB_ZONE), sign * (half + width - 0.6)
        stops = [x0 + 1, *[v for c0, c1 in spans for v in (c0 - 1.5, c1 + 1.5)], x1 - 1]
        for a, b in zip(stops[::2], stops[1::2], strict=True):
            out.curb_lines.append(Line((a, y_curb), (b, y_curb), facing, curb))
            out.frontage_lines.append(Line((a, y_front), (b, y_front), facing, curb))
            if parking:
                y_park = sign * (half - PARKING_WIDTH / 2 - 0.1)  # 10 cm off the curb
                out.parking_lines.append(
                    Line((a + 2, y_park), (b - 2, y_park), 0.0 if sign < 0 else math.pi, 0.0)
                )
        if side == "north" and model.plaza_depth > 0:
            out.plaza = _rect(x0, half + width, x1, half + width + model.plaza_depth)
            out.regions.append(Region("plaza", "plaza", out.plaza, curb))
        elif model.lot_depth > 0:
            y_lot = sign * (half + width)
            out.building_lines.append(Line((x0, y_lot), (x1, y_lot), facing, 0.0))
            lot = _rect(x0, half + width, x1, half + width + model.lot_depth)
            out.regions.append(Region(f"lots_{side}", "terrain", lot if sign > 0 else _mirror_y(lot)))
    return out


def _rotate(points, quarter_turns: int):
    c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][quarter_turns % 4]
    return tuple((c * x - s * y, s * x + c * y) for x, y in points)


def intersection(
    rng: np.random.Generator, arm: float, lanes: int, sidewalk: float, curb: float = DEFAULT_CURB_HEIGHT
) -> Layout:
    """Two crossing streets: a central box, four crosswalks, four L-shaped corner sidewalks with corner
    curb ramps where the crosswalks land. ``arm``: distance (m) from the centre to each street end;
    ``curb``: sidewalk height (m)."""
    half = lanes * LANE_WIDTH / 2
    cw = 3.0
    ramp = min(cw, sidewalk - 0.8)
    out = Layout()
    out.regions.append(Region("junction", "road", _rect(-half, -half, half, half)))
    for k, name in enumerate(("east", "north", "west", "south")):
        out.regions.append(
            Region(f"crosswalk_{name}", "crosswalk", _rotate(_rect(half, -half, half + cw, half), k))
        )
        out.regions.append(Region(f"road_{name}", "road", _rotate(_rect(half + cw, -half, arm, half), k)))
        a, b, s, r = half, arm, sidewalk, ramp
        corner = (
            (a + r, a),
            (b, a),
            (b, a + s),
            (a + s, a + s),
            (a + s, b),
            (a, b),
            (a, a + r),
            (a + r, a + r),
        )
        out.regions.append(Region(f"sidewalk_{name}", "sidewalk", _rotate(corner, k), curb))
        out.regions.append(Region(f"lots_{name}", "terrain", _rotate(_rect(a + s, a + s, b, b), k)))
        out.regions.append(
            Region(
                f"ramp_{name}",
                "ramp",
                _rotate(_rect(a, a, a + r, a + r), k),
                vertex_elevation=(0.0, 0.0, curb, 0.0),
            )
        )
        p, q = _rotate(((half + cw / 2, -half), (half + cw / 2, half)), k)
        out.crosswalks.append((p, q))
        # The corner's two legs: along the east arm (road at -y) and along the north arm (road at -x),
        # before rotation by k quarter turns.
        turn = k * math.pi / 2
        legs = (
            (
                ((a + s + 1.0, a + CURB_ZONE), (b - 1.0, a + CURB_ZONE)),
                ((a + s + 1.0, a + s - 0.6), (b - 1.0, a + s - 0.6)),
                ((a + s, a + s), (b, a + s)),
                -math.pi / 2,
            ),
            (
                ((a + CURB_ZONE, a + s + 1.0), (a + CURB_ZONE, b - 1.0)),
                ((a + s - 0.6, a + s + 1.0), (a + s - 0.6, b - 1.0)),
                ((a + s, a + s), (a + s, b)),
                math.pi,
            ),
        )
        for curb_pts, front_pts, lot_pts, yaw in legs:
            for target, pts, z in (
                (out.curb_lines, curb_pts, curb),
                (out.frontage_lines, front_pts, curb),
                (out.building_lines, lot_pts, 0.0),
            ):
                start, end = _rotate(pts, k)
                target.append(Line(start, end, yaw + turn, z))
    return out
