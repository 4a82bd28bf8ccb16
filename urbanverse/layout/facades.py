"""Buildings from the dense points that the object proposals set aside: their street fronts.

:mod:`urbanverse.layout.proposals` leaves out cells holding tall points that are not green: facades,
walls and poles. A walk sees a building only by its front, so a front is what the points give: the
tall, non-green points in a bird's-eye grid (``cell_m``) are joined into 8-connected runs (across
gaps of up to ``bridge_cells``), each run is cut where it breaks off and split where its colour
changes along its length (:func:`_pieces`: the next building's brick or render), and each piece at
least ``min_length_m`` long (poles and lamp posts are shorter) is one building front: the piece's
length (its ``extent_percentile`` core: stray points reach past a facade's corners), the height its
points reach, its front on the piece's near face and turned to the camera path.

What stands behind a front (a house's rooms, a courtyard, nothing: a shop front's slab) is not seen, so the
building is not named from the front's crops (a classifier cannot tell a house's front from a shop's, and a
guessed depth would move the front off). A front becomes a ``building_facade``, ``depth_m`` deep and
``front_only``: retrieval matches its width and height, and the scene keeps its front where it was measured,
whatever the depth of the asset placed (:func:`urbanverse.layout.lift.front_anchored`), stretched along the
front to its measured length (within ``urbanverse.gen.assemble.FRONT_STRETCH``). A walk 10 m from a house sees
about 5 m of its wall: where the measured top runs out of the nearest views' frames (:func:`front_top_cut`),
the height is a lower bound (``top_cut``), and retrieval takes a taller asset of the right width over a short
one of the wrong width.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.ndimage

from urbanverse.assets.taxonomy import get_class
from urbanverse.colour import srgb8_to_lab_opencv8
from urbanverse.layout.appearance import top_projections
from urbanverse.layout.birdseye import cell_sums, grid_cells, points_by_label, principal_axes
from urbanverse.layout.lift import LiftedObject
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.record import Reconstruction

#: The class a front becomes.
FACADE_CLASS = "building_facade"
#: The ``label`` of a facade object.
FACADE_LABEL = "dense points: facade"


@dataclasses.dataclass(frozen=True, kw_only=True)
class FacadeCfg:
    """Facade parameters (m unless named otherwise); see the module docstring."""

    enabled: bool = True
    """Turn the fronts into ``building_facade`` objects; off leaves building fronts out of the scene."""
    cell_m: float = 0.25
    """Side (m) of the bird's-eye grid the tall points are gathered in: fine enough to keep two
    buildings across a narrow gap apart."""
    tall_m: float = 2.5
    """Points above this (and not green) are facade points; no street furniture is that tall."""
    max_height_m: float = 30.0
    """Points above this (m) are left out: sky and far-off noise, not a street front."""
    min_cell_points: int = 3
    """A grid cell with fewer facade points is empty: single points are depth noise."""
    bridge_cells: int = 2
    """Gaps of up to this many cells in a run of occupied cells are bridged (a tree, a window the
    dense matching missed) so one front stays one run."""
    bin_m: float = 1.0
    """Length (m) of the bins along a run in which colours are averaged for the colour cuts."""
    colour_step: float = 18.0
    """CIELAB distance (L, a, b in 0..255 units, OpenCV's 8-bit scale) between the mean colours of
    the ``colour_window_m`` either side of a point along a front that starts another building there."""
    colour_window_m: float = 3.0
    """Length (m) compared on each side of a cut: wider than a window and the wall between two, so
    the rows of windows along one front do not cut it."""
    min_length_m: float = 4.0
    """Shortest front (m), and shortest piece a colour cut may leave: poles and lamp posts are shorter."""
    extent_percentile: float = 5.0
    """A front's length is that of its points between this percentile and 100 minus it along the
    front: stray points reach past a facade's corners."""
    depth_m: float = 1.0
    """Depth (m) of the ``building_facade`` object (clipped to the class's range): a slab, as what
    stands behind a front is not seen."""
    min_points: int = 200
    """Fewest points of a run, and of a piece, to make a front: fewer are poles, signs or noise."""
    min_keyframes: int = 5
    """A front is seen from many keyframes as the walk passes it; a run that few, far views saw is
    more likely depth noise streaked along their rays."""
    score: float = 0.3
    """Detection score of a front seen by 2000 points or more (less in proportion below): lower than a
    detector's confident score, as a front is inferred from geometry alone."""
    top_views: int = 3
    """Keyframes nearest a front that say whether its top ran out of the frame (:func:`front_top_cut`)."""
    top_edge: float = 0.03
    """Share of the frame's rows at its top where a measured top counts as running out of it."""


@dataclasses.dataclass(frozen=True)
class Facade:
    """One building front: ``centre (2,)`` of its near face, unit ``axis (2,)`` along it, ``length_m``,
    ``height_m`` reached by its points, and unit ``normal (2,)`` pointing out of the building."""

    centre: np.ndarray
    axis: np.ndarray
    length_m: float
    height_m: float
    normal: np.ndarray
    points: int
    owners: tuple[int, ...]
    """The keyframes its points came from."""


def _pieces(along: np.ndarray, lab: np.ndarray, cfg: FacadeCfg) -> list[np.ndarray]:
    """Point index arrays of the pieces of one run: its stretches of non-empty ``bin_m`` bins, each
    split where the mean colours of the ``colour_window_m`` on either side differ most, while they
    differ by more than ``colour_step`` and both parts keep ``min_length_m`` (binary segmentation).

    Hand-written: a change-point search over a few dozen bins; comparing windows, not neighbouring
    bins, keeps a front's row of dark windows from cutting it every few metres."""
    bins = np.floor((along - along.min()) / cfg.bin_m).astype(int)
    n = int(bins.max()) + 1
    count = np.bincount(bins, minlength=n).astype(float)
    total = np.stack([np.bincount(bins, weights=lab[:, c], minlength=n) for c in range(3)], axis=1)
    window = max(1, round(cfg.colour_window_m / cfg.bin_m))
    shortest = max(1, math.ceil(cfg.min_length_m / cfg.bin_m))

    def mean(lo: int, hi: int) -> np.ndarray:
        return total[lo:hi].sum(axis=0) / max(count[lo:hi].sum(), 1.0)

    def split(lo: int, hi: int) -> list[tuple[int, int]]:
        steps = [
            (float(np.linalg.norm(mean(max(lo, c - window), c) - mean(c, min(hi, c + window)))), c)
            for c in range(lo + shortest, hi - shortest + 1)
        ]
        step, cut = max(steps, default=(0.0, lo))
        return split(lo, cut) + split(cut, hi) if step > cfg.colour_step else [(lo, hi)]

    filled = np.flatnonzero(count > 0)
    breaks = np.flatnonzero(np.diff(filled) > 1) + 1
    stretches = [(int(r[0]), int(r[-1]) + 1) for r in np.split(filled, breaks)]
    piece_of_bin = np.zeros(n, int)
    for k, (lo, hi) in enumerate(p for stretch in stretches for p in split(*stretch)):
        piece_of_bin[lo:hi] = k
    piece = piece_of_bin[bins]
    return [np.flatnonzero(piece == k) for k in np.unique(piece)]


def find_facades(cloud: DenseCloud, path: np.ndarray, green: np.ndarray, cfg: FacadeCfg) -> list[Facade]:
    """The building fronts in the dense points ``cloud`` (module docstring); ``path (P, 2)``: the
    camera path (m), ``green (N,)``: which points are vegetation-coloured."""
    keep = (cloud.xyz[:, 2] > cfg.tall_m) & (cloud.xyz[:, 2] < cfg.max_height_m) & ~green
    if keep.sum() < cfg.min_points:
        return []
    xyz, lab, owner = cloud.xyz[keep], srgb8_to_lab_opencv8(cloud.rgb[keep]), cloud.keyframe[keep]
    flat, shape = grid_cells(xyz[:, :2], cfg.cell_m)
    occupied = cell_sums(flat, shape) >= cfg.min_cell_points
    bridged = scipy.ndimage.binary_closing(occupied, np.ones((3, 3)), iterations=cfg.bridge_cells)
    labels, n = scipy.ndimage.label(bridged | occupied, structure=np.ones((3, 3)))
    point_label = np.where(occupied.ravel()[flat], labels.ravel()[flat], 0)
    out = []
    for member in points_by_label(point_label, n):
        if len(member) < cfg.min_points:
            continue
        xy = xyz[member, :2]
        mean, axes = principal_axes(xy)
        axis = axes[0]
        along = (xy - mean) @ axis
        if np.ptp(along) < cfg.min_length_m:
            continue
        for piece in _pieces(along, lab[member], cfg):
            seen_from = tuple(int(i) for i in np.unique(owner[member[piece]]))
            if len(piece) < cfg.min_points or len(seen_from) < cfg.min_keyframes:
                continue
            if facade := _facade(xyz[member[piece]], axis, path, seen_from, cfg):
                out.append(facade)
    return out


def _facade(
    xyz: np.ndarray, axis: np.ndarray, path: np.ndarray, owners: tuple[int, ...], cfg: FacadeCfg
) -> Facade | None:
    """The front of one piece of points ``xyz (N, 3)`` running along ``axis``, seen from keyframes
    ``owners``; None when shorter than ``min_length_m``."""
    xy = xyz[:, :2]
    mean = xy.mean(axis=0)
    along = (xy - mean) @ axis
    lo, hi = np.percentile(along, [cfg.extent_percentile, 100.0 - cfg.extent_percentile])
    if hi - lo < cfg.min_length_m:
        return None
    normal = np.array([-axis[1], axis[0]])
    nearest = path[int(np.argmin(np.linalg.norm(path - mean, axis=1)))]
    if (nearest - mean) @ normal < 0:
        normal = -normal
    # The near face: most points lie on it; the far percentile would take in balconies and sills.
    across = np.percentile((xy - mean) @ normal, 75.0)
    return Facade(
        centre=mean + 0.5 * (lo + hi) * axis + across * normal,
        axis=axis,
        length_m=float(hi - lo),
        height_m=float(np.percentile(xyz[:, 2], 98)),
        normal=normal,
        points=len(xyz),
        owners=owners,
    )


def front_top_cut(f: Facade, recon: Reconstruction, cfg: FacadeCfg) -> bool:
    """Whether front ``f``'s measured top projects into the frame's top ``top_edge`` rows in most of
    the ``top_views`` keyframes nearest to it (of those its points came from): then the wall goes on
    above what the views show, and its height is a lower bound."""
    tops = top_projections(recon, f.centre, f.height_m, f.owners, cfg.top_views)
    return 2 * sum(v <= cfg.top_edge * recon.intrinsics.height for _, _, v, _ in tops) > len(tops) > 0


def facade_objects(
    facades: list[Facade], first_track_id: int, cfg: FacadeCfg, recon: Reconstruction
) -> list[LiftedObject]:
    """``front_only`` lifted ``building_facade`` objects for ``facades`` (seen by ``recon``'s
    keyframes: :func:`front_top_cut`); track ids count up from ``first_track_id``. Size (depth,
    length, height) within the class's range, ``depth_m`` deep; the front (+X) faces out of the
    building."""
    cls = get_class(FACADE_CLASS)
    out = []
    for k, f in enumerate(sorted(facades, key=lambda f: -f.length_m)):
        size = np.clip([cfg.depth_m, f.length_m, f.height_m], cls.size_min, cls.size_max)
        xy = f.centre - 0.5 * size[0] * f.normal
        out.append(
            LiftedObject(
                track_id=first_track_id + k,
                category=FACADE_CLASS,
                label=FACADE_LABEL,
                score=cfg.score * min(1.0, f.points / 2000.0),
                position=(float(xy[0]), float(xy[1]), 0.0),
                yaw=math.atan2(f.normal[1], f.normal[0]),
                yaw_source="faces_street",
                size=tuple(float(s) for s in size),
                observations=len(f.owners),
                spread_m=0.0,
                front_only=True,
                top_cut=front_top_cut(f, recon, cfg),
            )
        )
    return out
