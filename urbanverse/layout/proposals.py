"""Objects that no detector named, found in the dense 3D points: class-agnostic proposals.

The offline COCO detector misses most street furniture (and nearly all of it on rendered streets), but
every bench, bin or parked car stands out of the ground in the dense points of
:func:`urbanverse.recon.depth.dense_cloud`. Points between ``min_height_m`` and ``max_height_m``
above the ground plane are binned into a bird's-eye grid (``cell_m``). The cells of walls, facades and
posts (no furniture is that tall) are set aside, so a bench is not joined to the facade behind it:
cells whose points that are not green reach above ``tall_m`` and fill the band from ``band_m`` up to
it (a wall stands from low to high; the shaded underside of a crown over a bench does not), and make
up ``tall_share`` of the cell's points (shaded leaves among green ones, a few stray points do not).
Heights are measured from the ground the walk followed (:mod:`urbanverse.layout.walked_ground`, over
``walk_window_m``), not from the plane z = 0 alone.

The points of the cells left, in voxels ``cell_m`` wide and ``layer_m`` high, form the proposals: their
26-connected components (a bench under a crown, with air between, stands apart from the tree; a voxel of the
lowest layer counts only with ``low_voxel_points`` or something above it, so the ground's depth noise does not
join what stands on it), but for those lying mostly within ``foot_cells`` of tall cells that run
``wall_length_m`` or more (the foot of a facade, a wall's lower rows; a lamp post's tall top is compact). Flow
errors still bridge neighbours (a bench, a bin and a tree joined by a streak into a cluster several times
their size), so a cluster ``split_length_m`` or longer is split into its dense cores
(:func:`urbanverse.layout.clusters.dense_cores`).

Each proposal gets a footprint (its points' principal axes and their 15-85 % spread along each), a
height (a high percentile of its points; under ``min_top_m`` the cluster is a bump of the ground, not
an object) and a green share. Its box, cut from the nearest keyframes, goes through the crop
classifier (``crop_classifier``, :mod:`urbanverse.layout.appearance`); the class is then the one
whose look and size fit best (:func:`classify_by_look`). Without a classifier the class follows from
shape alone, which the taxonomy's size ranges support:

- green above ``crown_min_height_m``: a tree, its kind from its proportions
  (:func:`urbanverse.layout.lift.tree_class_from_shape`), but a narrow crown whose top never fitted
  the frame (:func:`top_cut`) is a columnar tree's; low and mostly green (``shrub_green_share``): a
  shrub (a trunk lowers a tree's green share, but painted furniture shows some green too);
- car-sized (length, height): a car; longer than ``max_length_m``: a wall or hedge, left out;
- anything else: the first of ``furniture`` whose taxonomy size range the footprint and height fit
  best, in log-size distance (the order is the prior: the commonest sidewalk furniture first); a
  planter only when some of the points are green.

The proposals become objects in :mod:`urbanverse.layout.proposal_placing`, which places them,
merges them with the detector tracks and adds the building fronts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import cv2
import numpy as np
import scipy.ndimage
import scipy.spatial

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.appearance import box_corners, top_projections, view_boxes
from urbanverse.layout.birdseye import cell_sums, grid_cells, points_by_label
from urbanverse.layout.clusters import dense_cores, eye_table, footprint, line_of_sight, voxel_clusters
from urbanverse.layout.facades import FacadeCfg
from urbanverse.layout.lift import (
    YOUNG_MAX_WIDTH_M,
    tree_class_from_shape,
)
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.record import Reconstruction

#: Furniture classes that hold plants: a proposal needs some green (``green_share``) to be one.
PLANTED = frozenset({"planter"})


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProposalCfg:
    """Proposal parameters (m unless named otherwise); see the module docstring."""

    enabled: bool = True
    """Add objects from the dense points (proposals, and building fronts with ``facades``); off keeps the
    detector tracks alone."""
    cell_m: float = 0.2
    """Side (m) of the bird's-eye grid cells and of the voxels: finer than the gap between a bench and
    a bin beside it."""
    min_height_m: float = 0.2
    """Points at least this high (m) above the walked ground are proposal points: lower ones are the
    ground's own depth noise."""
    max_height_m: float = 12.0
    """Points above this (m) are left out: higher than any tree or lamp post the proposals name."""
    min_cell_points: int = 2
    """A cell with fewer points is empty: single points are depth noise."""
    extent_percentile: float = 15.0
    """A footprint spans its points between this percentile and 100 minus it along each axis: stray
    points (flow errors at edges) reach past an object's sides."""
    min_points: int = 40
    """Fewest points of a proposal (and of the points to start with): fewer are noise."""
    min_keyframes: int = 2
    """Fewest keyframes a proposal's points must come from: one keyframe's points can be a streak of
    one flow error."""
    min_top_m: float = 0.3
    """A cluster whose top (its points' 98th height percentile) stays under this is a bump of the
    ground: no class a proposal is named stands lower (backless benches and bike racks from 0.3 m).
    Where the walked ground is a few tenths off (a raised plaza, a slope), the ground's depth noise
    rises above ``min_height_m`` in blobs that would otherwise become benches and bollards."""
    tall_m: float = 2.5
    """Cells whose points that are not green reach above this (m) are wall, facade or post cells: no
    furniture is that tall."""
    band_m: float = 1.5
    """A tall cell also fills the band from this height (m) up to ``tall_m``: a wall stands from low to
    high, the shaded underside of a crown over a bench does not."""
    tall_share: float = 0.7
    """...and its points from ``band_m`` up make this share of the cell's: shaded leaves among green
    ones, or a few stray points, do not make a wall."""
    layer_m: float = 0.3
    """Height (m) of the voxels the clusters are built from: air of a layer between two objects (a
    bench under a crown) keeps them apart."""
    low_voxel_points: int = 5
    """Points a voxel of the lowest layer (``min_height_m`` to ``min_height_m + layer_m``) needs to
    join a cluster when nothing stands above it in its cell. Where the ground plane lies a few
    centimetres off, the ground's depth noise rises past ``min_height_m`` as a sparse film that would
    join the bollards and benches around a street crossing into one cluster; an object's own low
    voxels are denser, or have the object above them."""
    foot_cells: int = 1
    """Cells up to this many cells from a wall's tall cells are its foot."""
    max_foot_share: float = 0.3
    """A cluster with more than this share of its cells in a wall's foot is the wall's lower rows, not
    an object, and is left out."""
    wall_length_m: float = 2.0
    """Tall cells make a foot only in a run of tall cells this long (its bird's-eye bounding box's
    long side): a wall's. The tall top of a lamp post, a sign or a tree trunk is compact, and its
    cluster is the object itself; 0: every tall cell makes a foot."""
    green_share: float = 0.2
    """A proposal at least ``crown_min_height_m`` tall with this share of green points is a tree; also
    the least green for a planter, and for a shape detector's track to keep its class."""
    shrub_green_share: float = 0.5
    """A lower proposal is a shrub only with this share of green: painted furniture shows some green
    too."""
    crown_min_height_m: float = 1.5
    """Green proposals at least this tall (m) are trees, lower ones shrubs."""
    top_views: int = 3
    """Keyframes nearest a proposal that say whether its top ran out of the frame (:func:`top_cut`)."""
    top_edge: float = 0.03
    """Share of the frame's rows at its top where a measured top counts as running out of it."""
    car_length_m: tuple[float, float] = (3.0, 6.0)
    """Length range (m, long side) of a proposal named a car by shape."""
    car_height_m: tuple[float, float] = (1.0, 2.3)
    """Height range (m) of a proposal named a car by shape."""
    max_length_m: float = 6.0
    """Proposals longer than this (m) that are not vegetation are a wall or a hedge, left out: no
    furniture or car is that long."""
    explained_m: float = 1.5
    """A proposal within this (m) of a lifted object explains it (the object moves onto the proposal's
    measured centre), and a proposal nearer than this to an object of its L2 class is part of it."""
    sure_look: float = 0.5
    """A proposal whose crops give its class a probability over this is an object of its own beside one
    of another L2 class nearer than ``explained_m`` (``proposal_placing._keep_off``)."""
    part_height: float = 0.5
    """A proposal lower than this share of the height of the object it explains is a part of it (a young
    tree's trunk and stakes parted from the crown) and does not rename it."""
    furniture: tuple[str, ...] = ("bench", "bollard", "trash_bin", "planter", "bike_rack")
    """Classes a proposal can be named by shape alone, in order of preference on equal fit (the
    commonest sidewalk furniture first)."""
    max_misfit: float = 1.0
    """Largest log-size distance (natural log, :func:`_misfit`) of the best-fitting furniture class for a
    proposal to be named by shape; farther, it fits nothing and is left out."""
    smear_angle_deg: float = 20.0
    """A proposal whose long side lies within this of its line of sight is depth smear (:func:`smeared`):
    an object shorter than the smear stands at its near end, and a tree's crown is as wide as the
    cluster across the line of sight (module docstring); 0: never."""
    split_length_m: float = 2.0
    """A cluster at least this long (its footprint's core) is split into its dense cores
    (:func:`urbanverse.layout.clusters.dense_cores`); 0: never."""
    core_share: float = 0.3
    """A cell (its 3x3 neighbourhood's mean point count) is core where it holds this share of the
    cluster's 95th-percentile cell."""
    core_reach_cells: int = 2
    """Points of cells up to this many cells from a core join it; points farther from every core
    are left out."""
    score: float = 0.3
    """Detection score of a proposal of 500 points or more (less in proportion below): lower than a
    detector's confident score, as a proposal is inferred from points."""
    crop_classifier: str = "shipped"
    """The crop classifier (``.npz``) that names proposals by their look: "shipped" for the project's
    (:data:`urbanverse.perception.crop_classifier.PROPOSAL_CLASSIFIER`, trained on proposals' boxes), a
    path, or "" for shape alone."""
    crop_views: int = 3
    """Keyframes (the nearest that saw it) whose crops of a proposal are classified."""
    size_weight: float = 1.0
    """Log-probability that one unit of :func:`_misfit` costs a class, when the look decides."""
    crown_depth_share: float = 0.5
    """Flow sees the half of a crown that faces the cameras, whose points' centre lies half the
    crown's radius before the trunk (a hemisphere's): a tree moves back along its line of sight by
    this share of its crown's radius; 0: stays on its points."""
    walk_window_m: float = 6.0
    """Length of walk (m) over which the cameras' height gives the ground's
    (:mod:`urbanverse.layout.walked_ground`); 0: heights from the plane z = 0 alone."""
    facades: FacadeCfg = dataclasses.field(default_factory=FacadeCfg)
    """Building fronts from the tall points the proposals set aside (:mod:`urbanverse.layout.facades`)."""

    @property
    def core_extent(self) -> float:
        """The share of an object's full extent that a footprint's ``extent_percentile`` core spans
        (:func:`urbanverse.layout.clusters.footprint`)."""
        return 1.0 - self.extent_percentile / 50.0


@dataclasses.dataclass(frozen=True)
class Proposal:
    """A cluster of dense points: footprint centre ``xy (2,)``, long and short side (m), the long
    side's direction ``axis (2,)``, height (m), green share of its points, point count, and the
    keyframes its points came from."""

    xy: np.ndarray
    long_m: float
    short_m: float
    axis: np.ndarray
    height_m: float
    green: float
    points: int
    owners: tuple[int, ...]
    top_cut: bool = False
    """The crown ran out of the frame in its nearest views (:func:`top_cut`): the height is a lower
    bound."""
    looks: Mapping[str, float] | None = None
    """Class log-probabilities of its crops (:mod:`urbanverse.layout.appearance`); None when not
    classified."""
    ray: np.ndarray | None = None
    """Unit ``(2,)`` mean line of sight from the cameras that triangulated its points to them; None
    when the cameras were not given."""
    near_m: float = 0.0
    """How far the cluster's near end (the ``extent_percentile`` point along ``ray``) lies before
    ``xy`` (m, towards the cameras)."""
    eyes: np.ndarray | None = None
    """Centres ``(K, 2)`` (m) of the cameras of ``owners``; None when the cameras were not given."""


def is_green(rgb: np.ndarray) -> np.ndarray:
    """Vegetation-coloured points ``rgb (N, 3)`` uint8: hue 64-170 degrees (yellow-green to
    blue-green; yellow, at 60, is a painted bin's) with some saturation and light (OpenCV HSV, H in
    0..179)."""
    if len(rgb) == 0:  # (OpenCV refuses an empty image)
        return np.zeros(0, bool)
    hsv = cv2.cvtColor(rgb.reshape(-1, 1, 3).astype(np.uint8), cv2.COLOR_RGB2HSV).reshape(-1, 3)
    return (hsv[:, 0] >= 32) & (hsv[:, 0] <= 85) & (hsv[:, 1] >= 50) & (hsv[:, 2] >= 20)


def find_proposals(
    cloud: DenseCloud,
    cfg: ProposalCfg,
    cameras: Mapping[int, np.ndarray] | None = None,
    green: np.ndarray | None = None,
) -> list[Proposal]:
    """Connected clusters of above-ground dense points in a bird's-eye grid (module docstring);
    ``cameras``: keyframe index -> camera position ``(2,)`` (m), which gives each cluster its line of
    sight (``Proposal.ray``, ``near_m``) and its cameras (``eyes``); ``green (N,)``: :func:`is_green`
    of the cloud's colours, computed here when None."""
    keep = (cloud.xyz[:, 2] > cfg.min_height_m) & (cloud.xyz[:, 2] < cfg.max_height_m)
    if keep.sum() < cfg.min_points:  # (a static camera's keyframes have no partners: no points)
        return []
    green = (is_green(cloud.rgb) if green is None else green)[keep]
    xyz, owner = cloud.xyz[keep], cloud.keyframe[keep]
    flat, shape = grid_cells(xyz[:, :2], cfg.cell_m)
    counts = cell_sums(flat, shape)
    above = cell_sums(flat, shape, (xyz[:, 2] > cfg.tall_m) & ~green)
    high = cell_sums(flat, shape, (xyz[:, 2] > cfg.band_m) & ~green)  # the band and above
    tall = (above > 0) & (high > above) & (high >= cfg.tall_share * counts)
    occupied = (counts >= cfg.min_cell_points) & ~tall
    # The foot of a facade: the cells next to its tall ones (a bench stands farther off).
    foot = scipy.ndimage.binary_dilation(_walls(tall, cfg), np.ones((3, 3)), iterations=cfg.foot_cells)
    point_label, n = voxel_clusters(
        flat, shape, xyz[:, 2], occupied,
        base_m=cfg.min_height_m, layer_m=cfg.layer_m, low_voxel_points=cfg.low_voxel_points,
    )  # fmt: skip
    eye_of = eye_table(cameras, owner)
    out = []
    split = {
        "split_length_m": cfg.split_length_m, "core_share": cfg.core_share,
        "reach_cells": cfg.core_reach_cells, "cell_m": cfg.cell_m, "min_points": cfg.min_points,
        "percentile": cfg.extent_percentile,
    }  # fmt: skip
    parts = [
        whole[part]
        for whole in points_by_label(point_label, n)
        for part in dense_cores(xyz[whole, :2], **split)
    ]
    for member in parts:
        owners = np.unique(owner[member])
        if len(member) < cfg.min_points or len(owners) < cfg.min_keyframes:
            continue
        if foot.ravel()[np.unique(flat[member])].mean() > cfg.max_foot_share:
            continue
        pts = xyz[member]
        height = float(np.percentile(pts[:, 2], 98))
        if height < cfg.min_top_m:
            continue
        centre, axis, extent = footprint(pts[:, :2], cfg.extent_percentile)
        ray, near = line_of_sight(pts[:, :2], eye_of, owner[member], centre, cfg.extent_percentile)
        out.append(
            Proposal(
                xy=centre,
                long_m=float(extent[0]),
                short_m=float(extent[1]),
                axis=axis,
                height_m=height,
                green=float(green[member].mean()),
                points=len(member),
                owners=tuple(int(i) for i in owners),
                ray=ray,
                near_m=near,
                eyes=None if eye_of is None else eye_of[owners],
            )
        )
    return out


def _walls(tall: np.ndarray, cfg: ProposalCfg) -> np.ndarray:
    """The cells of ``tall (H, W)`` in 8-connected runs whose bounding box reaches ``wall_length_m``."""
    if cfg.wall_length_m <= 0:
        return tall
    labels, _ = scipy.ndimage.label(tall, np.ones((3, 3)))
    long_runs = [0] + [
        max(rows.stop - rows.start, cols.stop - cols.start) * cfg.cell_m >= cfg.wall_length_m
        for rows, cols in scipy.ndimage.find_objects(labels)
    ]
    return np.asarray(long_runs, bool)[labels]


def smeared(p: Proposal, cfg: ProposalCfg) -> bool:
    """Whether proposal ``p`` runs along its line of sight (long side within ``smear_angle_deg`` of
    ``ray``): then its length is mostly depth noise, not the object's."""
    if p.ray is None or cfg.smear_angle_deg <= 0:
        return False
    return abs(float(p.axis @ p.ray)) >= math.cos(math.radians(cfg.smear_angle_deg))


def top_cut(p: Proposal, recon: Reconstruction, images: Mapping[int, np.ndarray], cfg: ProposalCfg) -> bool:
    """Whether the crown of proposal ``p`` runs out of the frame: in most of the ``top_views``
    keyframes nearest to it (of those its points came from, RGB ``images`` at the working size), its
    measured top projects into the frame's top ``top_edge`` rows, or the image above that point is
    mostly foliage (over a strip half the crown wide). Then the measured height is a lower bound.

    The image decides, not the points: dense points thin out towards a crown's top (flow fails
    against the sky), so a tall tree's measured top can lie well below what its views show.
    """
    votes = []
    for index, u, v, depth in top_projections(recon, p.xy, p.height_m, p.owners, cfg.top_views):
        if v <= cfg.top_edge * recon.intrinsics.height:
            votes.append(True)
            continue
        half = max(2, round(0.25 * p.long_m * recon.intrinsics.fx / max(depth, 0.1)))
        strip = images[index][: int(v), max(0, round(u) - half) : round(u) + half + 1]
        votes.append(bool(strip.size) and is_green(strip.reshape(-1, 3)).mean() > 0.5)
    return 2 * sum(votes) > len(votes)


def _misfit(category: str, long_m: float, height_m: float, at_least: bool = False) -> float:
    """Log-size distance (natural log) of a footprint's long side and a height outside ``category``'s
    taxonomy range; the short side is left out (often only the near face is seen). ``at_least``: the
    height is a lower bound (a crown cut off by the frame), so only a height over the range counts."""
    cls = get_class(category)
    lo = (max(cls.size_min[:2]), cls.size_min[2])
    hi = (max(cls.size_max[:2]), cls.size_max[2])
    value = (max(long_m, 0.01), max(height_m, 0.01))
    lo = (lo[0], min(lo[1], value[1])) if at_least else lo
    return sum(
        max(0.0, math.log(low / v), math.log(v / high)) for v, low, high in zip(value, lo, hi, strict=True)
    )


def classify(p: Proposal, cfg: ProposalCfg) -> str | None:
    """The taxonomy class a proposal's look, shape and colour fit, or None (a wall, a pole, nothing
    near): by :func:`classify_by_look` where its crops were classified, else by shape and colour."""
    if p.looks:
        return classify_by_look(p, cfg)
    tall = p.height_m >= cfg.crown_min_height_m
    if p.green >= (cfg.green_share if tall else cfg.shrub_green_share):
        if p.top_cut and p.long_m < YOUNG_MAX_WIDTH_M:
            # Never seen whole, though a young street tree's top fits the frame from a few metres
            # off: a narrow crown that always ran out of the frame is a columnar tree's.
            return "columnar_tree"
        if tall:
            return tree_class_from_shape("broadleaf_tree", p.height_m, p.long_m)
        return "shrub"
    if p.long_m > cfg.max_length_m:
        return None
    lo, hi = cfg.car_length_m
    if lo <= p.long_m <= hi and cfg.car_height_m[0] <= p.height_m <= cfg.car_height_m[1]:
        return "sedan"
    # A planter holds plants: a cluster with no green is some other furniture.
    furniture = [c for c in cfg.furniture if p.green >= cfg.green_share or c not in PLANTED]
    fits = [(_misfit(c, p.long_m, p.height_m), i, c) for i, c in enumerate(furniture)]
    misfit, _, best = min(fits)
    return best if misfit <= cfg.max_misfit else None


def look_score(p: Proposal, category: str, cfg: ProposalCfg) -> float:
    """Crop log-probability of ``category`` less ``size_weight`` times its size misfit."""
    misfit = _misfit(category, p.long_m, p.height_m, at_least=p.top_cut)
    return (p.looks or {})[category] - cfg.size_weight * misfit


def classify_by_look(p: Proposal, cfg: ProposalCfg) -> str | None:
    """The class with the best crop log-probability less ``size_weight`` times its size misfit; a
    planter needs some green. None where that is a building (the cluster is the foot of a wall) or
    furniture longer than ``max_length_m``."""
    scores = {
        c: look_score(p, c, cfg) for c in p.looks or {} if p.green >= cfg.green_share or c not in PLANTED
    }
    best = max(scores, key=scores.__getitem__)
    l1 = get_class(best).l1
    if l1 == "buildings_and_structures" or (l1 != "vegetation" and p.long_m > cfg.max_length_m):
        return None
    return best


def located_proposals(
    recon: Reconstruction,
    cloud: DenseCloud,
    images: Mapping[int, np.ndarray],
    cfg: ProposalCfg,
    green: np.ndarray | None = None,
) -> list[Proposal]:
    """The proposals of the keyframes' dense points ``cloud``, its heights measured from the walked
    ground (:func:`urbanverse.layout.walked_ground.levelled`), each with :func:`top_cut` set from the
    keyframes' RGB ``images`` (working size); ``green (N,)``: :func:`is_green` of the cloud's colours,
    computed here when None.

    The boxes that top_cut and the crops project still stand on z = 0: the walked ground's height is
    a few tenths of a metre at most, too little to move a box's crop."""
    green = is_green(cloud.rgb) if green is None else green
    sight = {k.index: np.asarray(k.position[:2]) for k in recon.registered}
    return [
        dataclasses.replace(p, top_cut=top_cut(p, recon, images, cfg))
        for p in find_proposals(cloud, cfg, sight, green)
    ]


def proposal_views(
    recon: Reconstruction, proposals: list[Proposal], cfg: ProposalCfg
) -> list[list[tuple[int, tuple[float, float, float, float]]]]:
    """Per proposal, the ``(keyframe, pixel box)`` views whose crops the crop classifier names: its
    box (the footprint's core widened to a full extent, its height) in the ``crop_views`` nearest
    keyframes that saw it (:func:`urbanverse.layout.appearance.view_boxes`)."""
    full = 1.0 / cfg.core_extent  # the footprint's core to a full extent
    return [
        view_boxes(
            recon, box_corners(p.xy, p.axis, p.long_m * full, p.short_m * full, p.height_m),
            p.owners, cfg.crop_views,
        )
        for p in proposals
    ]  # fmt: skip
