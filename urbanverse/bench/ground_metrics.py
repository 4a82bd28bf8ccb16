"""Is a generated scene's ground a whole street, and how much of its extent has the true ground types?

Whole street (the generated scene alone, as ``/work/shared/tools/scene_sanity.py`` counts them):

- ``ground_pieces``: connected pieces of the union of the ground regions (target 1: a robot can
  reach every part of the street);
- ``hole_share``: the area enclosed by that union but not covered by it, over the enclosed area
  (target 0);
- ``off_ground``: objects not standing on the ground: no region under the base centre, or the base
  more than ``STAND_TOLERANCE_M`` above (floating) or below (sunk) the ground's top there (target 0).

Ground types over the scene's extent (against the true scene): the extent is the area the generated
ground encloses (its outline, holes included: a hole is ground the scene fails to give), rasterised at
``cell_m`` in the generated frame. Each cell takes the generated type there (none in a hole) and the
true type under the cell centre moved into the true frame ("off" where the true scene has no ground:
ground the scene made up). The IoU of a part is frequency-weighted, as the older ``ground_iou``:
per true type present in the part (off included), IoU = cells of that type in both / cells of it in
either, weighted by its true cells. ``extent_iou`` is over the whole extent, ``extent_iou_seen`` over
the cells the ground stage observed (its grid's non-zero classes, :func:`load_seen_grid`), and
``extent_iou_inferred`` over the rest, which the street model completed; ``seen_share`` is the seen
cells' share of the extent. Ramps and plazas score as sidewalk (``TYPE_OF``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import shapely

from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import Scene

#: True and generated ground types scored as one type.
TYPE_OF = {
    "road": "road",
    "sidewalk": "sidewalk",
    "ramp": "sidewalk",
    "plaza": "sidewalk",
    "crosswalk": "crosswalk",
    "terrain": "terrain",
}
#: An object's base may lie this far (m) above or below the ground's top under it and still stand on it.
STAND_TOLERANCE_M = 0.05
#: Cell label of a point on no ground region.
OFF = "off"


def _union(scene: Scene) -> shapely.Geometry:
    polygons = [shapely.Polygon(r.polygon).buffer(0) for r in scene.ground]
    return shapely.union_all(polygons) if polygons else shapely.Polygon()


def _parts(union: shapely.Geometry) -> list[shapely.Polygon]:
    if union.is_empty:
        return []
    return [g for g in getattr(union, "geoms", [union]) if isinstance(g, shapely.Polygon) and g.area > 0]


def ground_pieces(scene: Scene) -> int:
    """Connected pieces (polygons) of the union of ``scene``'s ground regions; 0 with no ground."""
    return len(_parts(_union(scene)))


def hole_share(scene: Scene) -> float:
    """Area (m^2) of the holes in the union of ``scene``'s ground regions over the area that union
    encloses (its pieces' outlines): 0 for ground without holes, 1 with no ground at all."""
    union = _union(scene)
    holes = sum(shapely.Polygon(ring).area for part in _parts(union) for ring in part.interiors)
    return holes / (union.area + holes) if union.area > 0 else 1.0


def standing(scene: Scene) -> dict[str, int]:
    """How ``scene``'s objects stand: ``no_ground`` (no region covers the base centre), ``floating``
    and ``sunk`` (the base more than ``STAND_TOLERANCE_M`` above or below the ground's top there),
    and ``off_ground``, their sum."""
    if not scene.objects:
        return {"no_ground": 0, "floating": 0, "sunk": 0, "off_ground": 0}
    xyz = np.array([o.position for o in scene.objects], float).reshape(-1, 3)
    union = _union(scene)
    on = shapely.covers(union, shapely.points(xyz[:, :2])) if not union.is_empty else np.zeros(len(xyz), bool)
    gap = xyz[:, 2] - top_height_at(scene.ground, xyz[:, :2])
    floating = int((on & (gap > STAND_TOLERANCE_M)).sum())
    sunk = int((on & (gap < -STAND_TOLERANCE_M)).sum())
    no_ground = int((~on).sum())
    off = no_ground + floating + sunk
    return {"no_ground": no_ground, "floating": floating, "sunk": sunk, "off_ground": off}


def scene_checks(scene: Scene) -> dict[str, float]:
    """The whole-street figures of ``scene`` (module docstring): ``ground_pieces``, ``hole_share``,
    ``off_ground`` and its parts ``no_ground``, ``floating``, ``sunk`` (counts of objects)."""
    out: dict[str, float] = {"ground_pieces": float(ground_pieces(scene)), "hole_share": hole_share(scene)}
    out.update({k: float(v) for k, v in standing(scene).items()})
    return out


@dataclasses.dataclass(frozen=True)
class SeenGrid:
    """The cells the ground stage observed. ``origin``: world (x, y) of cell (0, 0)'s corner (m);
    ``cell_m``: cell side (m); ``seen (H, W)``: bool, rows along y and columns along x."""

    origin: tuple[float, float]
    cell_m: float
    seen: np.ndarray

    def at(self, xy: np.ndarray) -> np.ndarray:
        """Whether each point ``(N, 2)`` (m, the generated frame) lies in an observed cell."""
        xy = np.asarray(xy, float).reshape(-1, 2)
        col = np.floor((xy[:, 0] - self.origin[0]) / self.cell_m).astype(int)
        row = np.floor((xy[:, 1] - self.origin[1]) / self.cell_m).astype(int)
        h, w = self.seen.shape
        inside = (row >= 0) & (row < h) & (col >= 0) & (col < w)
        out = np.zeros(len(xy), bool)
        out[inside] = self.seen[row[inside], col[inside]]
        return out


def load_seen_grid(gen_out: Path) -> SeenGrid | None:
    """The ground stage's observed cells of the gen run in ``gen_out``: its ``work/<nn>_ground/``
    folder's ``ground.json`` (``origin``, ``cell_m``, ``grid_file``) and the grid's ``classes`` array
    (0: unseen). None where the run kept no ground stage output."""
    found = sorted(Path(gen_out).glob("work/[0-9][0-9]_ground/ground.json"))
    if not found:
        return None
    meta = json.loads(found[-1].read_text())
    with np.load(found[-1].parent / meta.get("grid_file", "ground_grid.npz")) as grid:
        classes = np.asarray(grid["classes"])
    return SeenGrid(
        origin=(float(meta["origin"][0]), float(meta["origin"][1])),
        cell_m=float(meta["cell_m"]),
        seen=classes != 0,
    )


def _labels(regions, xy: np.ndarray) -> np.ndarray:
    """Scored ground type (``TYPE_OF``) at each point ``(N, 2)`` of the regions ``[(type, polygon)]``,
    later regions over earlier ones; ``OFF`` on none."""
    out = np.full(len(xy), OFF, dtype=object)
    for kind, polygon in regions:
        out[shapely.contains_xy(polygon, xy[:, 0], xy[:, 1])] = TYPE_OF.get(kind, kind)
    return out


def weighted_iou(generated: np.ndarray, true: np.ndarray) -> float:
    """Frequency-weighted IoU of two label arrays of the same cells: per true label, cells labelled so
    in both over cells labelled so in either, weighted by its count in ``true``; NaN with no cells."""
    if len(true) == 0:
        return math.nan
    kinds, counts = np.unique(true.astype(str), return_counts=True)
    ious = [((generated == k) & (true == k)).sum() / ((generated == k) | (true == k)).sum() for k in kinds]
    return float(np.average(ious, weights=counts))


def extent_iou(
    generated: Scene,
    truth: Scene,
    transform: np.ndarray,
    seen: SeenGrid | None = None,
    cell_m: float = 0.25,
) -> dict[str, float]:
    """Ground-type IoU over ``generated``'s extent (module docstring): ``extent_iou``,
    ``extent_iou_seen``, ``extent_iou_inferred`` and ``seen_share``. ``transform``: 3x3 homogeneous
    planar map from the generated frame to the true one; ``seen``: the ground stage's observed cells
    (None: the split is unknown, NaN); ``cell_m``: raster cell side (m)."""
    nan = {"extent_iou": math.nan, "extent_iou_seen": math.nan, "extent_iou_inferred": math.nan}
    parts = _parts(_union(generated))
    if not parts:
        return {**nan, "seen_share": math.nan}
    outline = shapely.union_all([shapely.Polygon(p.exterior) for p in parts])
    x0, y0, x1, y1 = outline.bounds
    gx, gy = np.meshgrid(np.arange(x0, x1, cell_m) + cell_m / 2, np.arange(y0, y1, cell_m) + cell_m / 2)
    inside = shapely.contains_xy(outline, gx, gy)
    xy = np.column_stack([gx[inside], gy[inside]])
    gen_label = _labels([(r.type, shapely.Polygon(r.polygon)) for r in generated.ground], xy)
    moved = xy @ transform[:2, :2].T + transform[:2, 2]
    true_label = _labels([(r.type, shapely.Polygon(r.polygon)) for r in truth.ground], moved)
    out = {"extent_iou": weighted_iou(gen_label, true_label)}
    if seen is None:
        return {**nan, **out, "seen_share": math.nan}
    observed = seen.at(xy)
    out["extent_iou_seen"] = weighted_iou(gen_label[observed], true_label[observed])
    out["extent_iou_inferred"] = weighted_iou(gen_label[~observed], true_label[~observed])
    out["seen_share"] = float(observed.mean()) if len(observed) else math.nan
    return out
