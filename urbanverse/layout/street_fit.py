"""The ground model fitted to what a video saw: a whole street (or a plaza, or a path) over the walk.

The ground stage classifies what the keyframes saw, cell by cell (:mod:`urbanverse.layout.ground`);
that evidence has holes wherever nothing was seen. Here the parameters of the street model that
``procgen`` builds from (:class:`~urbanverse.procgen.layout.StreetModel`) are fitted to it, and the
model, not the evidence, becomes the scene's ground: one connected piece over the walk plus a margin.

- **Axis:** the camera path (straight when it stays within ``straight_tolerance_m`` of a line, else
  smoothed: a street that bends) where it runs along the road seen; otherwise (a walk across the
  street or over a plaza beside it, a still camera) a straight line along the road seen.
- **Cross-section:** the seen cells' offsets across the axis make a profile per class. The road is the
  band that holds most road and least other ground (a maximum-sum run of the profile), snapped to
  ``LANE_WIDTH`` lanes and ``PARKING_WIDTH`` parking lanes (parking where cars were placed along the
  curb). Each sidewalk runs from its curb to the frontage: the building fronts seen on that side, else
  where the paving seen ends, else ``sidewalk_m``. Paving wider than the widest sidewalk is a plaza.
- **Crossings:** where the crosswalk cells seen lie across the road.

A plaza (one paved square) and a path (a paved band along the walk through terrain) are fitted too;
the candidate whose classes agree with most seen cells is kept, and ``StreetFit.agreement`` says how
well each explained the evidence. What no keyframe saw is completed from the model: each region says
what share of it was inferred.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Literal

import numpy as np
import shapely

from urbanverse.errors import InputError
from urbanverse.layout.street_axis import StreetAxis, axis_of_path, axis_through, principal_direction
from urbanverse.layout.street_regions import ModelRegion, clip_regions, oriented
from urbanverse.procgen.layout import LANE_WIDTH, PARKING_WIDTH, StreetModel, street_layout
from urbanverse.records import Vec2, record
from urbanverse.scene.record import DEFAULT_CURB_HEIGHT

#: Ground classes of the evidence grid (0: unseen), as :mod:`urbanverse.layout.ground` writes them.
EVIDENCE_CLASSES = {1: "road", 2: "sidewalk", 3: "crosswalk", 4: "terrain"}
#: What a region type or an evidence class counts as when model and evidence are compared.
_KIND = {"road": 0, "crosswalk": 0, "sidewalk": 1, "ramp": 1, "plaza": 1, "terrain": 2}
ModelKind = Literal["street", "plaza", "path"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class StreetFitCfg:
    """Settings of the ground model fit (``gen --set street.<field>=...``); lengths in metres."""

    margin_m: float = 20.0
    """The scene's ground covers the camera path grown by this (and all the ground seen)."""
    straight_tolerance_m: float = 2.0
    """A walk that stays within this of its principal line gets a straight axis."""
    walk_road_angle_deg: float = 20.0
    """The walk is the street's axis only where every stretch of it runs within this of the road
    seen's direction (a street that bends turns both)."""
    smooth_m: float = 6.0
    """Gaussian sigma (m of path) that smooths a curved walk into the street's axis."""
    profile_bin_m: float = 0.25
    """Bin width of the cross-street profiles of the seen classes."""
    min_road_m2: float = 8.0
    """Less road than this inside the fitted road band: no street is fitted (a plaza or a path is)."""
    unseen_road_width_m: float = 2 * LANE_WIDTH + 2 * PARKING_WIDTH
    """Road width assumed when the road's far curb was not seen (two lanes, parking both sides)."""
    sidewalk_m: float = 4.0
    """Sidewalk width where that side's frontage was not seen."""
    max_sidewalk_m: float = 10.0
    """Paving seen beyond this from the curb is a plaza behind a sidewalk ``sidewalk_m`` wide."""
    min_sidewalk_m: float = 1.5
    """Narrowest sidewalk fitted."""
    path_width_m: float = 3.0
    """Width of the paved band of a path layout."""
    min_crossing_m2: float = 2.0
    """Crosswalk cells seen across the road, at least this much, make a crossing."""
    max_move_m: float = 5.0
    """An object farther than this from the ground its class stands on is dropped, not moved
    (:mod:`urbanverse.layout.settle`)."""

    def __post_init__(self) -> None:
        for name in ("margin_m", "profile_bin_m", "sidewalk_m", "max_sidewalk_m", "path_width_m"):
            if not getattr(self, name) > 0:
                raise InputError(f"street.{name}: expected a positive length, got {getattr(self, name)}")
        if not self.min_sidewalk_m <= self.sidewalk_m <= self.max_sidewalk_m:
            raise InputError("street: expected min_sidewalk_m <= sidewalk_m <= max_sidewalk_m")


@record
class StreetParameters:
    """The fitted street's parameters. Sides are the camera's (``near``) and the other (``far``)."""

    lanes: int
    parking: tuple[bool, bool]
    """Parking lane on the (near, far) side."""
    road_width_m: float
    measured_road_width_m: float
    far_curb_seen: bool
    sidewalk_m: tuple[float, float]
    """(near, far) sidewalk widths (m)."""
    frontage_from: tuple[str, str]
    """What set each side's sidewalk width: ``facades``, ``paving`` or ``default``."""
    plaza_depth_m: float
    plaza_side: str
    curb_m: float
    crossings_m: tuple[float, ...]
    """Crosswalk centres, metres along the axis."""


@record
class GroundFit:
    """What ``report.json`` says of the fitted ground: the model kept (``kind``), how well each
    candidate explained the ground seen (``agreement``: share of seen cells whose kind, road, walked
    paving or terrain, the model has there), the street's parameters, the area covered (m2) and the
    share of it no keyframe saw."""

    kind: ModelKind
    agreement: dict[str, float]
    street: StreetParameters | None = None
    extent_m2: float
    inferred_share: float


@record
class GroundModel:
    """The fitted ground: which model, how well each candidate explained the seen cells (``agreement``:
    share of seen cells whose class the model has there), its parameters and regions."""

    kind: ModelKind
    agreement: dict[str, float]
    street: StreetParameters | None = None
    axis: tuple[Vec2, ...]
    extent_m2: float
    inferred_share: float
    regions: tuple[ModelRegion, ...]

    def summary(self) -> GroundFit:
        """The model without its geometry, rounded for the report."""
        return GroundFit(
            kind=self.kind,
            agreement=self.agreement,
            street=self.street,
            extent_m2=round(self.extent_m2, 1),
            inferred_share=round(self.inferred_share, 3),
        )


@dataclasses.dataclass(frozen=True)
class Evidence:
    """The ground stage's class grid ``classes (H, W)`` (0 unseen, else :data:`EVIDENCE_CLASSES`) with
    its ``origin`` (m) and ``cell_m``; ``path (P, 2)`` the camera centres; ``fronts (F, 2)`` the
    building fronts' midpoints, ``vehicles (V, 2)`` the vehicles' centres and ``objects (M, 2)`` the
    corners of every object's footprint, placed on it."""

    classes: np.ndarray
    origin: np.ndarray
    cell_m: float
    path: np.ndarray
    fronts: np.ndarray
    vehicles: np.ndarray
    objects: np.ndarray

    def seen_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """Centres ``(N, 2)`` (m) and classes ``(N,)`` of the seen cells."""
        rows, cols = np.nonzero(self.classes)
        xy = self.origin + (np.column_stack([cols, rows]) + 0.5) * self.cell_m
        return xy, self.classes[rows, cols]

    def seen_at(self, xy: np.ndarray) -> np.ndarray:
        """Whether a keyframe saw the ground at points ``xy (N, 2)``."""
        cells = np.floor((np.asarray(xy) - self.origin) / self.cell_m).astype(int)
        h, w = self.classes.shape
        ok = (cells[:, 0] >= 0) & (cells[:, 0] < w) & (cells[:, 1] >= 0) & (cells[:, 1] < h)
        out = np.zeros(len(cells), bool)
        out[ok] = self.classes[cells[ok, 1], cells[ok, 0]] > 0
        return out


def fit_ground(evidence: Evidence, cfg: StreetFitCfg) -> GroundModel:
    """The best of the street, plaza and path models for ``evidence`` (see the module docstring)."""
    xy, classes = evidence.seen_cells()
    extent = _extent(evidence, xy, cfg.margin_m)
    walk = axis_of_path(evidence.path, cfg.straight_tolerance_m, cfg.smooth_m)
    axis = _axis(evidence, xy, classes, walk, cfg)
    candidates: dict[str, tuple[list[ModelRegion], StreetParameters | None]] = {}
    street = _fit_street(evidence, axis, xy, classes, extent, walk is not None, cfg)
    if street is not None:
        candidates["street"] = street
    candidates["plaza"] = (_plaza(extent, evidence), None)
    if walk is not None:  # a paved path along the walk, terrain either side
        band = shapely.LineString(walk.points).buffer(cfg.path_width_m / 2, cap_style="flat")
        candidates["path"] = (
            clip_regions([("path", "sidewalk", band, 0.0, None)], extent, evidence.seen_at),
            None,
        )
    agreement = {name: _agreement(regions, xy, classes) for name, (regions, _) in candidates.items()}
    kind = max(candidates, key=lambda name: agreement[name])  # dicts keep order: street wins ties
    regions, parameters = candidates[kind]
    area = sum(shapely.Polygon(r.polygon).area for r in regions)
    inferred = sum(shapely.Polygon(r.polygon).area * r.inferred_share for r in regions) / max(area, 1e-9)
    return GroundModel(
        kind=kind,
        agreement={k: round(v, 4) for k, v in agreement.items()},
        street=parameters,
        axis=tuple((float(x), float(y)) for x, y in axis.points),
        extent_m2=float(extent.area),
        inferred_share=float(inferred),
        regions=tuple(regions),
    )


def _extent(evidence: Evidence, seen_xy: np.ndarray, margin_m: float) -> shapely.Polygon:
    """The ground to cover: the camera path grown by ``margin_m``, the hull of the ground seen, and the
    hull of the camera path and the objects placed (grown by 3 m), as one polygon without holes."""
    path = evidence.path
    walk = shapely.Point(path[0]) if len(path) < 2 else shapely.LineString(path)
    parts = [walk.buffer(margin_m)]
    if len(seen_xy) >= 3:
        parts.append(shapely.MultiPoint(seen_xy).convex_hull.buffer(evidence.cell_m))
    if len(evidence.objects):
        parts.append(shapely.MultiPoint(np.vstack([path, evidence.objects])).convex_hull.buffer(3.0))
    union = shapely.union_all(parts)
    outline = max(getattr(union, "geoms", [union]), key=lambda g: g.area)
    return shapely.Polygon(outline.exterior)


def _axis(
    evidence: Evidence, xy: np.ndarray, classes: np.ndarray, walk: StreetAxis | None, cfg: StreetFitCfg
) -> StreetAxis:
    """The street's axis: the ``walk``'s (:func:`axis_of_path`: straight, or bending with a street that
    bends) where every stretch of it runs within ``cfg.walk_road_angle_deg`` of the road seen; where it
    does not (a walk across the street, over a plaza beside it, a still camera), a straight line along
    the road seen; with too little road seen, the walk's, else a line through the camera along the
    ground seen."""
    road = xy[classes == 1]
    direction = _elongated_direction(road) if len(road) * evidence.cell_m**2 >= cfg.min_road_m2 else None
    if direction is not None:
        along = np.cos(np.radians(cfg.walk_road_angle_deg))
        if walk is not None and np.abs(walk.headings() @ direction).min() >= along:
            return walk
        return axis_through(road.mean(axis=0), direction)
    if walk is not None:
        return walk
    walked = np.linalg.norm(np.diff(evidence.path, axis=0), axis=1).sum() if len(evidence.path) > 1 else 0.0
    spread = evidence.path if walked >= 2.0 else xy
    direction = principal_direction(spread) if len(spread) >= 2 else np.array([1.0, 0.0])
    return axis_through(evidence.path[0], direction)


def _elongated_direction(xy: np.ndarray, min_ratio: float = 2.0) -> np.ndarray | None:
    """The principal direction ``(2,)`` of points ``xy (N, 2)`` when they spread along it at least
    ``min_ratio`` times as far as across it (a stretch of road), else None."""
    if len(xy) < 3:
        return None
    _, spread, vt = np.linalg.svd(xy - xy.mean(axis=0), full_matrices=False)
    return vt[0] if spread[0] >= min_ratio * max(spread[1], 1e-9) else None


def _max_run(score: np.ndarray) -> tuple[int, int, float]:
    """The run ``[i, j)`` of ``score`` with the largest sum (Kadane), and that sum."""
    best, best_i, best_j, total, start = -np.inf, 0, 0, 0.0, 0
    for k, v in enumerate(score):
        if total <= 0:
            total, start = 0.0, k
        total += v
        if total > best:
            best, best_i, best_j = total, start, k + 1
    return best_i, best_j, float(best)


def _outer_edge(score: np.ndarray) -> int:
    """How many bins, from the first, the best prefix of ``score`` holds (0: none pays)."""
    if not len(score):
        return 0
    sums = np.cumsum(score)
    k = int(np.argmax(sums))
    return k + 1 if sums[k] > 0 else 0


@dataclasses.dataclass(frozen=True)
class _Across:
    """The cross-street profile: seen area (m2) per evidence class in bins ``edges`` of the offset ``s``
    from the axis, the camera at offset ``s0``, the road to its left (``side`` +1) or right (-1); ``u``
    (per bin centre) counts metres from the camera towards the road."""

    edges: np.ndarray
    profile: dict[int, np.ndarray]
    s0: float
    side: float

    @property
    def u(self) -> np.ndarray:
        centres = (self.edges[:-1] + self.edges[1:]) / 2
        return self.side * (centres - self.s0)

    def towards_road(self, xy: np.ndarray, axis: StreetAxis) -> np.ndarray:
        """Metres from the camera towards the road, across the street, of points ``xy (N, 2)``."""
        return self.side * (axis.to_street(xy)[:, 1] - self.s0) if len(xy) else np.zeros(0)


def _fit_street(
    evidence: Evidence,
    axis: StreetAxis,
    xy: np.ndarray,
    classes: np.ndarray,
    extent: shapely.Polygon,
    walking: bool,
    cfg: StreetFitCfg,
) -> tuple[list[ModelRegion], StreetParameters] | None:
    """The street model fitted across ``axis`` (module docstring), or None when no road band is seen.
    ``walking``: the camera walks (its sidewalk reaches a metre past its path), not a still one."""
    bin_m, cell_area = cfg.profile_bin_m, evidence.cell_m**2
    ts = axis.to_street(xy)
    s0 = float(axis.to_street(evidence.path[:1])[0, 1]) if len(evidence.path) else 0.0
    reach = np.ceil(max(np.abs(ts[:, 1]).max(initial=0.0), abs(s0)) / bin_m) + 2
    edges = np.arange(-reach, reach + 1) * bin_m
    profile = {c: np.histogram(ts[classes == c, 1], edges)[0] * cell_area for c in EVIDENCE_CLASSES}
    road = profile[1] + profile[3]
    i, j, _ = _max_run(road - profile[2] - profile[4])
    if road[i:j].sum() < cfg.min_road_m2 or j - i < 2:
        return None
    a, b = edges[i], edges[j]
    across = _Across(edges, profile, s0, 1.0 if abs(a - s0) <= abs(b - s0) else -1.0)
    near, far = sorted((across.side * (a - s0), across.side * (b - s0)))
    u = across.u
    far_seen = bool((profile[2] + profile[4])[(u > far) & (u <= far + 2.0)].sum() > 0.5)
    measured = far - near
    width = measured if far_seen else max(measured, cfg.unseen_road_width_m)
    v = across.towards_road(evidence.vehicles, axis)
    cars = (
        bool(((v >= near) & (v <= near + 3.5)).any()),
        bool(((v >= near + width - 3.5) & (v <= near + width)).any()),
    )
    lanes, parking = _snap_road(width, cars)
    road_width = lanes * LANE_WIDTH + PARKING_WIDTH * sum(parking)
    widths, sources = _frontages(
        across, near, near + road_width, across.towards_road(evidence.fronts, axis), cfg
    )
    if walking:
        widths[0] = max(widths[0], near + 1.0)  # a walking camera walks on its sidewalk
    # Paving deeper than a sidewalk is a plaza behind one (on one side: the deeper).
    deep = [k for k in (0, 1) if widths[k] > cfg.max_sidewalk_m]
    plaza_side = max(deep, key=lambda k: widths[k]) if deep else -1
    plaza_depth = widths[plaza_side] - cfg.sidewalk_m if deep else 0.0
    widths = [
        cfg.sidewalk_m
        if k == plaza_side
        else float(np.clip(widths[k], cfg.min_sidewalk_m, cfg.max_sidewalk_m))
        for k in (0, 1)
    ]
    t = axis.to_street(np.asarray(extent.exterior.coords))[:, 0]
    band = (across.side, s0, near, near + road_width)
    crossings = _crossings(ts, classes, band, (t.min() + 5, t.max() - 5), cell_area, cfg.min_crossing_m2)
    # The model's frame: +y (north) is the plaza's side, else the far side.
    order = (0, 1) if plaza_side == 0 else (1, 0)  # (north, south) as (near, far) indices
    model = StreetModel(
        start=float(t.min() - 2.0),
        end=float(t.max() + 2.0),
        lanes=lanes,
        parking=(parking[order[0]], parking[order[1]]),
        sidewalk=(widths[order[0]], widths[order[1]]),
        curb=DEFAULT_CURB_HEIGHT,
        crossings=crossings,
        plaza_depth=plaza_depth,
        lot_depth=float(np.abs(axis.to_street(np.asarray(extent.exterior.coords))[:, 1]).max() + 2.0),
    )  # the lots reach past the extent, which clips them (and no farther: a bent lot must not fold)
    centre_u = near + lanes * LANE_WIDTH / 2 + (PARKING_WIDTH if parking[0] else 0.0)
    flip = -1.0 if plaza_side == 0 else 1.0  # u = centre_u + flip * y

    def to_world(pts: np.ndarray) -> np.ndarray:
        s = s0 + across.side * (centre_u + flip * pts[:, 1])
        return axis.to_world(np.column_stack([pts[:, 0], s]))

    parameters = StreetParameters(
        lanes=lanes,
        parking=parking,
        road_width_m=float(road_width),
        measured_road_width_m=float(measured),
        far_curb_seen=far_seen,
        sidewalk_m=(float(widths[0]), float(widths[1])),
        frontage_from=(sources[0], sources[1]),
        plaza_depth_m=float(plaza_depth),
        plaza_side=("near", "far", "none")[plaza_side],
        curb_m=DEFAULT_CURB_HEIGHT,
        crossings_m=crossings,
    )
    return clip_regions(_bent(model, to_world), extent, evidence.seen_at), parameters


def _frontages(
    across: _Across, near_curb: float, far_curb: float, fronts: np.ndarray, cfg: StreetFitCfg
) -> tuple[list[float], list[str]]:
    """Each side's distance (m) from its curb (``near_curb``, ``far_curb``: metres from the camera
    towards the road) to its frontage, and what set it: the building ``fronts`` seen (metres towards
    the road), where the paving seen ends (paving pays, terrain and road cost, from the curb outwards),
    else (frontage unseen) ``cfg.sidewalk_m`` at least."""
    profile, u, bin_m = across.profile, across.u, cfg.profile_bin_m
    paving = profile[2] + 0.5 * profile[3] - profile[4] - profile[1]
    near_bins = np.argsort(-u)
    far_bins = np.argsort(u)
    widths, sources = [], []
    for bins, curb, direction in (
        (near_bins[u[near_bins] < near_curb], near_curb, -1.0),
        (far_bins[u[far_bins] > far_curb], far_curb, 1.0),
    ):
        edge = _outer_edge(paving[bins])
        # Where the paving seen runs on to the end of what was seen, its frontage was not seen.
        past = bins[edge : edge + int(round(1.0 / bin_m))]
        frontage_seen = edge > 0 and (profile[1] + profile[4])[past].sum() > 0.2
        facade = direction * (fronts - curb)
        facade = facade[(facade >= cfg.min_sidewalk_m) & (facade <= cfg.max_sidewalk_m + 12.0)]
        if len(facade):
            widths.append(float(np.median(facade)))
            sources.append("facades")
        elif frontage_seen:
            widths.append(edge * bin_m)
            sources.append("paving")
        else:
            widths.append(max(edge * bin_m, cfg.sidewalk_m))
            sources.append("default")
    return widths, sources


def _bent(model: StreetModel, to_world) -> list[tuple]:
    """The regions of ``model`` as ``(id, type, world polygon, elevation, vertex heights)``, mapped by
    ``to_world`` (street frame ``(N, 2)`` -> world ``(N, 2)``), edges densified to 1 m so that a curved
    axis bends them; a curb ramp's added vertices take the height of the plane through its corners."""
    pieces = []
    for region in street_layout(model).regions:
        corners = np.asarray(region.polygon)
        dense = np.asarray(shapely.segmentize(shapely.Polygon(corners), 1.0).exterior.coords)[:-1]
        heights = None
        if region.vertex_elevation is not None:
            plane = np.linalg.lstsq(
                np.column_stack([np.ones(len(corners)), corners]), region.vertex_elevation, rcond=None
            )[0]
            z = np.column_stack([np.ones(len(dense)), dense]) @ plane
            lo, hi = min(region.vertex_elevation), max(region.vertex_elevation)
            heights = tuple(float(h) for h in np.clip(np.round(z, 6), lo, hi))  # no -1e-17 below the road
        world, heights = oriented(to_world(dense), heights)
        pieces.append((region.id, region.kind, world, region.elevation, heights))
    return pieces


def _snap_road(width: float, cars: tuple[bool, bool]) -> tuple[int, tuple[bool, bool]]:
    """Lanes (1-4) and parking lanes (near, far) whose width is nearest ``width`` (m); a side with cars
    parked along its curb costs a metre without a parking lane."""

    def cost(option: tuple[int, bool, bool]) -> float:
        lanes, near, far = option
        total = lanes * LANE_WIDTH + PARKING_WIDTH * (near + far)
        return abs(width - total) + (cars[0] and not near) + (cars[1] and not far)

    lanes, near, far = min(itertools.product((1, 2, 3, 4), (False, True), (False, True)), key=cost)
    return lanes, (near, far)


def _crossings(
    ts: np.ndarray,
    classes: np.ndarray,
    band: tuple[float, float, float, float],
    span: tuple[float, float],
    cell_area: float,
    min_area_m2: float,
) -> tuple[float, ...]:
    """Centres (m along the axis) of the crosswalks seen across the road: ``band`` (side, camera offset
    s0, near and far curb in metres from the camera); cells at street coordinates ``ts (N, 2)``; at least
    ``min_area_m2`` of crosswalk each, 8 m apart, centres within ``span`` (m along)."""
    side, s0, near, far = band
    u = side * (ts[:, 1] - s0)
    along = np.sort(ts[(classes == 3) & (u >= near - 1.0) & (u <= far + 1.0), 0])
    if not len(along):
        return ()
    out: list[float] = []
    for group in np.split(along, np.flatnonzero(np.diff(along) > 4.0) + 1):
        centre = float(np.median(group))
        big = len(group) * cell_area >= min_area_m2
        if big and span[0] <= centre <= span[1] and all(abs(centre - c) >= 8.0 for c in out):
            out.append(centre)
    return tuple(out)


def _plaza(extent: shapely.Polygon, evidence: Evidence) -> list[ModelRegion]:
    """One paved square over the whole extent, at the level of the ground walked on."""
    return clip_regions([("plaza", "plaza", extent, 0.0, None)], extent, evidence.seen_at)


def _agreement(regions: list[ModelRegion], xy: np.ndarray, classes: np.ndarray) -> float:
    """Share of the seen cells (centres ``xy (N, 2)``, evidence ``classes (N,)``) whose kind (road,
    walked paving, terrain) the model's region there has."""
    if not len(xy):
        return 0.0
    model = np.full(len(xy), -1)
    for region in regions:
        model[shapely.contains_xy(shapely.Polygon(region.polygon), xy[:, 0], xy[:, 1])] = _KIND[region.type]
    seen = np.array([_KIND[EVIDENCE_CLASSES[c]] for c in classes])
    return float((model == seen).mean())
