"""The fitted ground's regions as polygons that tile their extent: clipped in priority order on one
grid, without holes or overlaps, each with the share of it no keyframe saw.

Shapely's overlays do the geometry; what is written here is the order they are applied in and the
clean-up a scene needs (scene regions are simple polygons, one piece, no cracks between neighbours).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import shapely

from urbanverse.records import Vec2, record

#: Regions are clipped in this order, each keeping only what the ones before it left.
PRIORITY = ("road", "crosswalk", "ramp", "sidewalk", "plaza", "terrain")
#: Grid (m) of every overlay of the regions: snapped to one grid, neighbours share their edges exactly.
GRID_M = 1e-3


@record
class ModelRegion:
    """A region of the fitted ground (m, world): ``inferred_share`` of its area no keyframe saw."""

    id: str
    type: str
    polygon: tuple[Vec2, ...]
    elevation: float = 0.0
    vertex_elevation: tuple[float, ...] | None = None
    inferred_share: float


#: ``seen_at(xy (N, 2)) -> (N,) bool``: whether a keyframe saw the ground at those points.
SeenAt = Callable[[np.ndarray], np.ndarray]


def oriented(points: np.ndarray, heights) -> tuple[shapely.Polygon, tuple[float, ...] | None]:
    """A counter-clockwise polygon of ``points (P, 2)`` and its per-vertex heights in the same order."""
    poly = shapely.Polygon(points)
    if poly.exterior.is_ccw or not poly.is_valid:
        return poly, heights
    return shapely.Polygon(points[::-1]), None if heights is None else tuple(heights[::-1])


def clip_regions(pieces, extent: shapely.Polygon, seen_at: SeenAt) -> list[ModelRegion]:
    """Regions of ``pieces`` ``(id, type, polygon, elevation, vertex heights)`` inside ``extent``, clipped
    in :data:`PRIORITY` order so none overlaps; what they leave of the extent is terrain."""
    extent = _areal(shapely.set_precision(extent, GRID_M))
    taken = shapely.Polygon()
    out: list[ModelRegion] = []
    for name, kind, poly, elevation, heights in sorted(pieces, key=lambda p: PRIORITY.index(p[1])):
        if heights is not None:  # a ramp keeps its corners (its heights are theirs) when it fits
            snapped = shapely.set_precision(poly, GRID_M, mode="keep_collapsed")
            fits = len(snapped.exterior.coords) == len(poly.exterior.coords) and snapped.is_valid
            if (
                fits
                and extent.contains(snapped)
                and snapped.intersection(taken, grid_size=GRID_M).area < 1e-3
            ):
                out.append(_region(name, kind, snapped, elevation, heights, seen_at))
                taken = taken.union(snapped, grid_size=GRID_M)
            continue
        part = _areal(_areal(shapely.make_valid(poly)).intersection(extent, grid_size=GRID_M))
        kept = _simple_parts(_areal(part.difference(taken, grid_size=GRID_M)))
        for k, simple in enumerate(kept):
            out.append(_region(name if k == 0 else f"{name}_{k}", kind, simple, elevation, None, seen_at))
        if kept:  # what was too small to keep is left to the terrain that fills the rest
            taken = _areal(shapely.union_all([taken, *kept], grid_size=GRID_M))
    rest = _areal(extent.difference(taken, grid_size=GRID_M))
    for k, simple in enumerate(_simple_parts(rest)):
        out.append(_region(f"terrain_fill_{k}", "terrain", simple, 0.0, None, seen_at))
    return out + _gaps(out, seen_at)


def _gaps(regions: list[ModelRegion], seen_at: SeenAt) -> list[ModelRegion]:
    """Regions for the cracks the overlays left enclosed between ``regions`` (square millimetres where
    bent bands meet), each of the type and height of the flat neighbour it shares most edge with."""
    polygons = [shapely.Polygon(r.polygon) for r in regions]
    union = shapely.union_all(polygons)  # as a reader of scene.json unites them
    out = []
    for k, ring in enumerate(ring for part in shapely.get_parts(union) for ring in part.interiors):
        gap = shapely.Polygon(ring)
        if not gap.is_valid or gap.area <= 1e-9:
            continue
        edge = gap.exterior.buffer(1e-3)
        flat = [(poly.intersection(edge).area, r) for poly, r in zip(polygons, regions, strict=True)]
        flat = [(shared, r) for shared, r in flat if r.vertex_elevation is None]
        kind, elevation = ("terrain", 0.0)
        if flat:
            neighbour = max(flat, key=lambda f: f[0])[1]
            kind, elevation = neighbour.type, neighbour.elevation
        out.append(_region(f"gap_{k}", kind, gap, elevation, None, seen_at))
    return out


def _areal(geometry) -> shapely.Geometry:
    """The polygons of ``geometry`` alone (a repaired self-crossing outline, an overlay, may also hold
    lines and points, which GEOS cannot overlay with areas)."""
    parts = [g for g in shapely.get_parts(geometry) if isinstance(g, shapely.Polygon | shapely.MultiPolygon)]
    return shapely.union_all(parts) if parts else shapely.Polygon()


def _simple_parts(geometry) -> list[shapely.Polygon]:
    """The polygons of ``geometry`` (area over 1 mm2), each without holes: a polygon with a hole is cut
    in two by a line across the hole's centre (scene regions have no holes)."""
    out = []
    todo = [g for g in shapely.get_parts(geometry) if isinstance(g, shapely.Polygon)]
    while todo:
        poly = todo.pop()
        if poly.area <= 1e-6:
            continue
        if not poly.interiors:
            out.append(shapely.Polygon(poly.exterior))
            continue
        x = shapely.Polygon(poly.interiors[0]).centroid.x
        x0, y0, x1, y1 = poly.bounds
        for half in shapely.box(x0 - 1, y0 - 1, x, y1 + 1), shapely.box(x, y0 - 1, x1 + 1, y1 + 1):
            cut = poly.intersection(half, grid_size=GRID_M)
            todo += [g for g in shapely.get_parts(cut) if isinstance(g, shapely.Polygon)]
    return out


def _region(
    name: str, kind: str, poly: shapely.Polygon, elevation: float, heights, seen_at: SeenAt
) -> ModelRegion:
    """A :class:`ModelRegion` of ``poly`` (counter-clockwise) with the share of it (0.5 m samples) no
    keyframe saw."""
    x0, y0, x1, y1 = poly.bounds
    gx, gy = np.meshgrid(np.arange(x0 + 0.25, x1, 0.5), np.arange(y0 + 0.25, y1, 0.5))
    inside = shapely.contains_xy(poly, gx, gy)
    samples = np.column_stack([gx[inside], gy[inside]])
    if not len(samples):
        point = poly.representative_point()
        samples = np.array([[point.x, point.y]])
    coords = np.asarray(poly.exterior.coords)[:-1]
    if not shapely.Polygon(coords).exterior.is_ccw:
        coords = coords[::-1]
    return ModelRegion(
        id=name,
        type=kind,
        polygon=tuple((float(x), float(y)) for x, y in coords),
        elevation=float(elevation),
        vertex_elevation=None if heights is None else tuple(float(h) for h in heights),
        inferred_share=float(1.0 - seen_at(samples).mean()),
    )
