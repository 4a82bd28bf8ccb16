"""Where the street's road ends: the rules that take road-coloured ground which is not the street's
road for terrain or sidewalk, from the camera path and the crossings found.

Colour alone does not tell asphalt from a lot's grey gravel, a facade cast onto its lot, a far
sidewalk in shade or a plaza's grey paving; where they lie does. People film walking along a sidewalk
with the road on one side (:func:`path_sides`), and a painted crossing spans the road from curb to
curb (:func:`crossing_landings`, :func:`beyond_curbs`).

All work on the ground stage's bird's-eye grid: boolean masks ``(H, W)`` of road and crossing cells,
rows along y and columns along x from ``origin`` (m), cells ``cfg.cell_m`` wide.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.ndimage
import scipy.spatial

from urbanverse.layout.birdseye import points_by_label, principal_axes
from urbanverse.layout.ground_cfg import GroundCfg
from urbanverse.layout.street import path_directions


@dataclasses.dataclass(frozen=True)
class CellShape:
    """Principal axes of a set of grid cells (cell units; x = column, y = row)."""

    centre: np.ndarray
    """Mean ``(2,)``."""
    axes: np.ndarray
    """Unit axes ``(2, 2)`` as rows, by decreasing spread: the first runs along the length."""
    along: np.ndarray
    """Each cell's offset along the first axis ``(N,)``."""
    across: np.ndarray
    """Each cell's offset along the second axis ``(N,)``."""

    @property
    def length(self) -> float:
        return float(np.ptp(self.along)) + 1.0

    @property
    def width(self) -> float:
        return float(np.ptp(self.across)) + 1.0

    def offsets(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Offsets of ``cells (M, 2)`` (x, y; cell units) along either axis, ``(M,)`` each."""
        return (cells - self.centre) @ self.axes[0], (cells - self.centre) @ self.axes[1]


def cell_shape(rows: np.ndarray, cols: np.ndarray) -> CellShape:
    """The :class:`CellShape` of grid cells ``rows, cols (N,)`` (cell centres)."""
    cells = np.stack([cols, rows], axis=1) + 0.5
    if len(cells) < 2:  # a single cell has no direction
        centre, axes = cells.mean(axis=0), np.eye(2)
    else:
        centre, axes = principal_axes(cells)
    offsets = cells - centre
    return CellShape(centre, axes, offsets @ axes[0], offsets @ axes[1])


def component_shapes(labels: np.ndarray, n: int) -> list[CellShape]:
    """The :class:`CellShape` of each component ``1..n`` of a label grid ``labels (H, W)``."""
    return [cell_shape(*np.unravel_index(part, labels.shape)) for part in points_by_label(labels.ravel(), n)]


def crossing_shapes(crossing: np.ndarray, min_elongation: float) -> list[CellShape]:
    """Shapes of the crossings in ``crossing (H, W)`` whose length (across the road) is at least
    ``min_elongation`` times their width: the others' direction is unclear."""
    shapes = component_shapes(*scipy.ndimage.label(crossing))
    return [s for s in shapes if s.length >= min_elongation * s.width]


def _walks(path: np.ndarray, cfg: GroundCfg) -> bool:
    """Whether camera positions ``path (K, 2)`` (m) walk: a few photos, or a camera that stays put,
    has no sides and no walking direction."""
    return len(path) >= 5 and float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) >= cfg.min_walk_m


def _road_cells(road: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, centres (N, 2))`` of the road cells (centres in cell units, x then y)."""
    rows, cols = np.nonzero(road)
    return rows, cols, np.stack([cols, rows], axis=1) + 0.5


def street_road(road: np.ndarray, crossing: np.ndarray) -> np.ndarray | None:
    """Road cells ``(H, W)`` joined to a crossing (through road and crossing cells, 8-neighbour): the
    street's road, as a crossing spans a road and never a lot. None where no crossing was found."""
    if not crossing.any():
        return None
    labels, _ = scipy.ndimage.label(road | crossing, np.ones((3, 3)))
    return road & np.isin(labels, np.unique(labels[crossing]))


def path_sides(
    road: np.ndarray, crossing: np.ndarray, path: np.ndarray, origin: np.ndarray, cfg: GroundCfg
) -> tuple[np.ndarray, np.ndarray]:
    """``(behind, beside)``, road cells ``(H, W)``: on the far side of the camera path from the road
    (not road but terrain), and on the road's side of it (the road of the street walked along).

    Road-coloured ground beyond the walked paving, away from the road, is a building's lot (its facade
    cast onto the ground plane, grey gravel) or a verge. Each registered camera position
    ``path (K, 2)`` (m) takes the street's road cells nearest to it (:func:`street_road`); the side of
    the path (across its local direction) holding at least ``road_side_share`` of them is its road
    side, smoothed along the path. Road cells more than ``walk_margin_m`` on the other side are behind
    it, unless they are the street's. Where the path crosses the street the road lies on both sides:
    nothing is behind or beside there. With no crossing in view, all the road seen votes and any of
    it may be behind. Only the street's road votes where there is one: a lot of grey gravel beside the
    walk, seen nearer and over more cells than the road, would otherwise turn the road side round.
    """
    behind, beside = np.zeros(road.shape, bool), np.zeros(road.shape, bool)
    rows, cols, cells = _road_cells(road)
    if not _walks(path, cfg) or len(rows) == 0:
        return behind, beside
    street_cells = street_road(road, crossing)
    street = np.ones(len(rows), bool) if street_cells is None else street_cells[rows, cols]
    xy = origin + cells * cfg.cell_m
    axis = path_directions(path)
    normal = np.stack([-axis[:, 1], axis[:, 0]], axis=1)
    nearest = scipy.spatial.cKDTree(path).query(xy)[1]
    lateral = np.einsum("ij,ij->i", xy - path[nearest], normal[nearest])
    # Share of each position's street cells that lie on its left; smoothed along the path over the
    # positions that have some (one with none has no say, rather than a share of 0).
    counts = np.bincount(nearest, street, minlength=len(path))
    on_left = np.bincount(nearest, street & (lateral > 0), minlength=len(path))
    left = np.where(counts > 0, on_left / np.maximum(counts, 1), np.nan)
    left = scipy.ndimage.generic_filter(left, _median_of_finite, size=5, mode="nearest")
    side = np.where(left >= cfg.road_side_share, 1.0, np.where(left <= 1.0 - cfg.road_side_share, -1.0, 0.0))
    far = side[nearest] * lateral < -cfg.walk_margin_m
    if street_cells is not None:
        far &= ~street
    near = side[nearest] * lateral > 0
    behind[rows[far], cols[far]] = True
    beside[rows[near], cols[near]] = True
    return behind, beside


def crossing_landings(road: np.ndarray, crossings: list[CellShape], cfg: GroundCfg) -> np.ndarray:
    """Road cells ``(H, W)`` where a crossing lands: not road but sidewalk.

    A crossing runs across the road from one paving to another; its length (the long axis of its
    cells) is the walking direction. Road-labelled cells beyond either end, up to ``landing_m`` and
    within the crossing's width, are the paving it lands on: at an intersection the grey kerb ramps
    and corner squares share the asphalt's colour cluster. ``crossings``: :func:`crossing_shapes`.
    """
    out = np.zeros(road.shape, bool)
    rows, cols, cells = _road_cells(road)
    reach = cfg.landing_m / cfg.cell_m
    for shape in crossings if len(rows) else []:
        a, b = shape.offsets(cells)
        beyond = np.maximum(a - shape.along.max(), shape.along.min() - a)
        landing = (beyond > 0) & (beyond <= reach) & (b >= shape.across.min()) & (b <= shape.across.max())
        out[rows[landing], cols[landing]] = True
    return out


def beyond_curbs(
    road: np.ndarray, crossings: list[CellShape], path: np.ndarray, beside: np.ndarray, cfg: GroundCfg
) -> tuple[np.ndarray, np.ndarray]:
    """``(sidewalk, terrain)``: road cells ``(H, W)`` beyond the curbs of the street the camera walked
    along, as its ``crossings`` (:func:`crossing_shapes`) mark them.

    A crossing spans its road from curb to curb: the road lies within its length (plus
    ``crossing_band_margin_m``), along the street. Near a crossing across the walk (its length more than
    ``across_walk_deg`` off the camera path's main direction ``path (K, 2)``), up to ``curb_reach_m`` along
    the street, road-coloured cells outside the road of every crossing (a crossing along the walk spans a side
    street: its road is road too) are the far sidewalk (within ``far_sidewalk_m`` of the curb) or what lies
    behind it (terrain): a far sidewalk in shade, a plaza's grey paving, grey lots. Road ``beside`` the walk
    (:func:`path_sides`) stays road: a side street's crossing says nothing of the street walked along, and a
    crossing's axis a few degrees off would cut the road tens of metres away. So the rule acts beyond the
    walk's end and where it crossed. A static or short walk has no main direction: nothing changes.
    """
    sidewalk, terrain = np.zeros(road.shape, bool), np.zeros(road.shape, bool)
    rows, cols, cells = _road_cells(road)
    if not _walks(path, cfg) or len(rows) == 0:
        return sidewalk, terrain
    offsets = path - path.mean(axis=0)
    walk = np.linalg.eigh(offsets.T @ offsets)[1][:, -1]  # the path's main direction
    margin, reach = cfg.crossing_band_margin_m / cfg.cell_m, cfg.curb_reach_m / cfg.cell_m
    on_some_road = np.zeros(len(rows), bool)
    near_across = np.zeros(len(rows), bool)
    past_curb = np.full(len(rows), np.inf)  # cells beyond the nearest crossing-across's curb line
    for shape in crossings:
        a, b = shape.offsets(cells)
        out_by = np.maximum(a - shape.along.max(), shape.along.min() - a)
        on_some_road |= out_by <= margin
        if abs(shape.axes[0] @ walk) >= math.cos(math.radians(cfg.across_walk_deg)):
            continue  # along the walk: a side street's crossing
        near = np.abs(b) <= reach
        near_across |= near
        past_curb = np.where(near, np.minimum(past_curb, out_by), past_curb)
    off_road = near_across & ~on_some_road & ~beside[rows, cols]
    close = off_road & (past_curb * cfg.cell_m <= cfg.far_sidewalk_m)
    sidewalk[rows[close], cols[close]] = True
    terrain[rows[off_road & ~close], cols[off_road & ~close]] = True
    return sidewalk, terrain


def _median_of_finite(values: np.ndarray) -> float:
    """Median of the finite ``values``; NaN when there are none."""
    finite = values[np.isfinite(values)]
    return float(np.median(finite)) if len(finite) else math.nan
