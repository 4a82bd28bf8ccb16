"""Lift 2D object tracks to 3D objects on the ground: position, size and yaw.

Per observation, the bottom centre of the box (or, where a YOLO-seg detector gave an instance mask,
the middle of the mask's lowest pixels: a box's bottom centre can fall beside an object seen at an
angle) is the object's ground contact: its camera ray meets
the ground plane ``z = 0`` of the reconstruction (metric, ground-aligned: the pavement the camera
walks on), or the road a curb lower where the ground stage saw road (for vehicles, wherever they
stand: they park on the road). Positions are fused by the
median over observations; height comes from the box's vertical extent at that distance, bounded by
the taxonomy's size range for the class, and the footprint follows the class's proportions. Trees
take their measured crown width too and, when the detector said only "tree", the tree class their
proportions fit (young street tree, columnar, broadleaf: ``tree_class_from_shape``). A crown's box
from the vegetation detector often stops above the trunk's foot: gen then moves such trees to their
crowns' dense points (:mod:`urbanverse.layout.crowns`).

Yaw comes from the street the object stands on (:mod:`urbanverse.layout.street`): vehicles lie along
it, street furniture and buildings face the road. Solid objects touch the ground with the face
nearest the camera, so their centre lies farther along each ray by half the footprint's extent along
it; slender ones (trees, poles, signs, bollards) stand on their centre. Objects of one L2 class closer
than the merge radius are merged, and vehicles of any kind within the vehicle radius.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import scipy.optimize

from urbanverse.assets.taxonomy import get_class
from urbanverse.errors import InputError
from urbanverse.layout.street import StreetFrame, YawSource, along_street, orient
from urbanverse.perception.record import FrameDetections, Mask, TrackObservation, Tracks, decode_rle
from urbanverse.perception.track import FEW_VIEWS
from urbanverse.recon.geometry import pixel_rays, pixel_to_ground, project, world_from_camera
from urbanverse.recon.record import Reconstruction
from urbanverse.records import Vec3, record

#: L2 classes whose objects stand on a trunk, post or pole: the box bottom is their centre.
SLENDER_L2 = frozenset(
    {
        "broadleaf_trees", "conifers", "palms", "street_lights", "pedestrian_lights", "area_lights",
        "traffic_signals", "regulatory_signs", "warning_signs", "guide_signs", "bollards", "bicycles",
        "scooters", "people",
    }
)  # fmt: skip


@dataclasses.dataclass(frozen=True, kw_only=True)
class LiftCfg:
    """Lifting parameters; lengths in metres, pixels at the keyframes' working size."""

    max_distance_m: float = 35.0
    """Ground contacts farther than this from the camera are not used (too coarse)."""
    edge_margin_px: float = 2.0
    """A box within this of the bottom (top) image edge has no ground contact (no top)."""
    min_observations: int = 2
    """Tracks seen in fewer usable keyframes are dropped (1 from an image or a pair of images:
    ``urbanverse.perception.track.FEW_VIEWS``)."""
    merge_radius_m: float = 1.2
    """Objects of one L2 class closer than this are one object (one thing tracked twice)."""
    vehicle_merge_radius_m: float = 2.5
    """Vehicles of any class closer than this are one (parked cars stand 4-5 m apart, centre to centre)."""
    max_fit_shift_m: float = 2.5
    """The box fit may move an object this far (m) from its ground-contact estimate, no farther: a
    parked car seen obliquely from 12-19 m touches the ground in its box at its near end, a few metres
    along the street from its centre, and the fit moves it there; farther moves are fit errors."""
    height_bounds: tuple[float, float] = (0.75, 1.35)
    """Measured height may scale the class's mean size by this range only (low, high factor): a box's
    height at a misjudged distance cannot make a bench a wall."""
    consensus_m: float = 1.0
    """Ground contacts of one track agree within this, plus half the class's mean footprint (a box's
    bottom centre slides along a passing car's side) and ``consensus_share`` of the contact's range
    (depth error grows with distance); the contacts that agree with the most others are kept, 0: all."""
    consensus_share: float = 0.1
    """Share of a ground contact's range added to ``consensus_m`` (0.1: 1 m more at 10 m), as depth error
    grows with distance."""
    min_road_piece_m2: float = 6.0
    """Pieces of road smaller than this (m2) do not tell which way the street runs or where its road
    lies (the street frame that turns benches and cars, the road surface vehicles stand on): a patch of
    dark paving or a lot's gravel behind a bench, taken for road, would turn it away from the street.
    Where little road is seen at all, small real pieces go too."""
    mask_contact_sources: tuple[str, ...] = ("yolo",)
    """Detectors (``Detection.source`` up to its ":") whose instance masks give the ground contact.
    Not the vegetation detector's colour masks (a crown, and a trunk where one was found): their lowest
    pixels are often not where the tree stands."""

    def __post_init__(self) -> None:
        for name in ("consensus_m", "consensus_share", "min_road_piece_m2"):
            if not getattr(self, name) >= 0:
                raise InputError(f"lift.{name}: expected >= 0, got {getattr(self, name)}")


@record
class LiftedObject:
    """One 3D object. ``position``: base centre (m, world; z = 0 on the ground plane); ``size``:
    (length, width, height) m in the asset frame (front +X); ``yaw`` rad about +Z."""

    track_id: int
    category: str
    label: str
    score: float
    position: Vec3
    yaw: float
    yaw_source: YawSource
    size: Vec3
    observations: int
    spread_m: float
    front_only: bool = False
    """Only the object's front (+X face) was measured, as a walk sees a building: its depth is a
    prior, so retrieval matches width and height alone and the scene keeps the front where it was
    seen (:func:`front_anchored`)."""
    top_cut: bool = False
    """The object's top ran out of the frame in the views nearest to it: its height is a lower bound
    (a building front passed at 10 m shows about 5 m of wall above the pavement)."""


def front_anchored(obj: LiftedObject, depth_m: float) -> tuple[float, float]:
    """The base centre ``(x, y)`` (m) of an object ``depth_m`` deep standing in for ``obj`` with the
    same front face: for a ``front_only`` object, moved along its facing by the difference of the two
    depths; any other object's own centre."""
    if not obj.front_only:
        return obj.position[0], obj.position[1]
    shift = 0.5 * (obj.size[0] - depth_m)
    return obj.position[0] + shift * math.cos(obj.yaw), obj.position[1] + shift * math.sin(obj.yaw)


@record
class LiftedObjects:
    """Output of the lifting stage; ``dropped``: reason -> count of tracks not lifted."""

    schema_version: int = 1
    objects: tuple[LiftedObject, ...]
    dropped: dict[str, int]


def mean_size(category: str) -> np.ndarray:
    cls = get_class(category)
    return (np.asarray(cls.size_min) + np.asarray(cls.size_max)) / 2


def _seen_side_on(views: list[TrackView], size: np.ndarray) -> bool:
    """Whether a vehicle of footprint ``size`` (length, width; m) is seen with its axis nearer across
    the line of sight than along it: a box wider (m, at the contact's depth) than the footprint seen
    at 45 degrees, or one running out of the frame on both sides.

    With one view there is no camera path to give the street's direction, and a vehicle seen side-on
    (a bus filling a photo) would otherwise be placed end-on. Which way it faces stays unknown.
    """
    widths = [v.width for v in views if math.isfinite(v.width)]
    at_45 = (size[0] + size[1]) / math.sqrt(2.0)
    return any(v.sides_cut == 2 for v in views) or (bool(widths) and max(widths) > at_45)


def _contact(recon: Reconstruction, index: int, uv: np.ndarray, surface, max_distance_m: float) -> np.ndarray:
    """Where the ray through pixel ``uv`` meets the ground surface: first the plane z = 0, then the plane
    at ``surface(xy)`` there (the road lies a curb below the pavement the camera walks on), unless that
    lies beyond ``max_distance_m`` (a ray near the horizon: on vtest.avi, the parked van)."""
    ground = pixel_to_ground(recon, index, uv[None], max_distance_m)[0]
    if surface is None or not np.isfinite(ground).all():
        return ground
    z = float(surface(ground[None, :2])[0])
    if z == 0.0:
        return ground
    origin, direction = pixel_rays(recon, index, uv[None])
    s = (z - origin[2]) / direction[0, 2] if direction[0, 2] < -1e-9 else -1.0
    return origin + s * direction[0] if 0 < s <= max_distance_m else ground


class TrackView(NamedTuple):
    """One usable observation of a track: ground contact (3,) and camera centre (3,) in m; the box's
    metric height and width (m) at the contact's depth. ``top_cut``: the box touches the frame's top,
    so ``height`` is only a lower bound; ``width`` is NaN where the box touches a side;
    ``sides_cut``: how many of the box's sides (left, right) lie within 1 % of the frame's width of
    its edge."""

    ground: np.ndarray
    eye: np.ndarray
    height: float
    top_cut: bool
    width: float
    sides_cut: int = 0
    frame_index: int = -1


def mask_contact(mask: np.ndarray, band: float = 0.03) -> np.ndarray | None:
    """The ground-contact pixel ``(u, v)`` of an instance mask ``(H, W)`` bool: the median column of
    its pixels in the lowest ``band`` of its height (at least one row), at the bottom edge of its
    lowest row; None for an empty mask."""
    rows = np.flatnonzero(mask.any(axis=1))
    if not len(rows):
        return None
    bottom = int(rows[-1])
    top = max(int(rows[0]), bottom - max(0, round(band * (bottom - rows[0] + 1)) - 1))
    cols = np.nonzero(mask[top : bottom + 1])[1]
    return np.array([float(np.median(cols)) + 0.5, bottom + 1.0])


def observation_views(
    track,
    recon: Reconstruction,
    width: int,
    height: int,
    cfg: LiftCfg,
    surface=None,
    masks: dict[int, Mask] | None = None,
):
    """The track's usable observations (:class:`TrackView`): registered, with a ground contact in range.
    ``masks``: instance masks by detection id, where the detector gave them (their lowest pixels are
    the contact, not the box's bottom centre)."""
    kf = recon.intrinsics
    m = cfg.edge_margin_px
    out = []
    for obs in track.observations:
        pose = recon.keyframes[obs.frame_index]
        if not pose.registered:
            continue
        x1, y1, x2, y2 = obs.box
        if y2 >= height - m:
            continue
        mask = (masks or {}).get(obs.det_id)
        uv = mask_contact(decode_rle(mask)) if mask is not None else None
        uv = np.array([(x1 + x2) / 2, y2]) if uv is None else uv
        ground = _contact(recon, obs.frame_index, uv, surface, cfg.max_distance_m)
        if not np.isfinite(ground).all():
            continue
        wfc = world_from_camera(recon, obs.frame_index)
        depth = float((ground - wfc[:3, 3]) @ wfc[:3, 2])  # z-depth of the contact point
        wide = (x2 - x1) * depth / kf.fx if x1 > m and x2 < width - m else math.nan
        near = max(m, 0.01 * width)  # detector boxes stop a few pixels short of the frame's edge
        cut = int(x1 <= near) + int(x2 >= width - near)
        metric_height = (y2 - y1) * depth / kf.fy
        out.append(TrackView(ground, wfc[:3, 3], metric_height, bool(y1 <= m), wide, cut, obs.frame_index))
    return out


def _agreeing(obs: list[TrackView], size: np.ndarray, cfg: LiftCfg) -> list[TrackView]:
    """The observations whose ground contacts agree with the contact that most others agree with
    (``LiftCfg.consensus_m``). A track that took in a second object, or a box whose bottom is a shadow
    or a kerb, casts contacts metres apart; their per-axis median can land between the two objects,
    on neither."""
    if cfg.consensus_m <= 0 or len(obs) < 3:
        return obs
    xy = np.array([v.ground[:2] for v in obs])
    ranges = np.linalg.norm(xy - np.array([v.eye[:2] for v in obs]), axis=1)
    radius = cfg.consensus_m + 0.5 * float(max(size[:2])) + cfg.consensus_share * ranges  # (N,)
    near = np.linalg.norm(xy[:, None] - xy[None], axis=2) <= radius[:, None]
    best = int(np.argmax(near.sum(axis=1)))
    return [v for v, keep in zip(obs, near[best], strict=True) if keep]


#: Tree classes told apart by the measured shape (``tree_class_from_shape``).
SHAPED_TREES = frozenset({"broadleaf_tree", "columnar_tree", "young_street_tree"})
#: Detector labels that say "a tree" but not which kind (the vegetation detector's, free-form names).
GENERIC_TREE_LABELS = frozenset({"tree", "trees", "street tree"})
#: A tree lower than this (m) with a crown narrower than ``YOUNG_MAX_WIDTH_M`` is a young street tree.
YOUNG_MAX_HEIGHT_M = 5.0
YOUNG_MAX_WIDTH_M = 2.5
#: A taller tree whose width / height is below this is columnar (fastigiate).
COLUMNAR_MAX_ASPECT = 0.25


def tree_class_from_shape(category: str, height_m: float, width_m: float) -> str:
    """The taxonomy's tree class that a measured shape fits: young street trees are small (under
    5 m, crowns under 2.5 m), columnar trees narrow (width under a quarter of the height), broadleaf
    trees the rest. Other categories, and unmeasured shapes (NaN), are returned unchanged.

    A colour-and-shape vegetation detector sees "a tree", not its kind; the kinds that the
    taxonomy separates differ mainly in proportions, which lifting measures in metres.
    """
    if category not in SHAPED_TREES or not (math.isfinite(height_m) and math.isfinite(width_m)):
        return category
    if height_m < YOUNG_MAX_HEIGHT_M and width_m < YOUNG_MAX_WIDTH_M:
        return "young_street_tree"
    return "columnar_tree" if width_m < COLUMNAR_MAX_ASPECT * height_m else "broadleaf_tree"


#: A measured height within this factor of a class's mean height fits it fully: a monocular height is
#: good to about 25-40 % (box extent, contact depth), so nearer classes are not told apart by it.
HEIGHT_TOLERANCE = 1.5
#: Beyond the tolerance, the fit falls off as ``exp(-excess / HEIGHT_LOG_SPREAD)`` (natural-log units).
HEIGHT_LOG_SPREAD = 0.3


def category_by_votes_and_height(votes: dict[str, float], height_m: float) -> str:
    """The category with the most detector votes (summed scores), each weighted by how well the
    measured height (m) fits its class: 1 within a factor ``HEIGHT_TOLERANCE`` of the class's mean
    height, falling off exponentially in log-height beyond.

    A track seen once as "bus" and once as "car" at 1.5 m tall is a car; "bench" against "outdoor
    chair" (0.77 m against 0.9 m) is left to the vote. With the height unmeasured (NaN) the plain vote
    decides.
    """
    if not math.isfinite(height_m) or height_m <= 0:
        return max(votes, key=votes.__getitem__)

    def fit(category: str) -> float:
        excess = abs(math.log(height_m / mean_size(category)[2])) - math.log(HEIGHT_TOLERANCE)
        return math.exp(-max(excess, 0.0) / HEIGHT_LOG_SPREAD)

    return max(votes, key=lambda c: votes[c] * fit(c))


def measured_size(track, views: list[TrackView], cfg: LiftCfg):
    """``(category, size (3,) m)`` of ``track`` from its views' box heights and widths.

    A tree with a measured crown width takes it: with a measured height, the size is the measured
    width and height and, when its detector named no kind (``GENERIC_TREE_LABELS``), the class is the
    kind its shape fits; with the top cut by the frame in every view, the class's proportions give
    the height from the width, at least the visible height. Sizes stay within the class's range.
    Other objects scale their class's mean size by the median height (within ``cfg.height_bounds``).
    Where the detector votes split between categories, the measured height weighs in
    (:func:`category_by_votes_and_height`).
    """
    heights = np.array([v.height for v in views if not v.top_cut])
    category = track.category
    if len(track.category_votes) > 1:
        category = category_by_votes_and_height(
            track.category_votes, float(np.median(heights)) if len(heights) else math.nan
        )
    widths = np.array([v.width for v in views if np.isfinite(v.width)])
    if category in SHAPED_TREES and len(widths):
        w = float(np.median(widths))
        if len(heights):
            h = float(np.median(heights))
            if track.label.lower() in GENERIC_TREE_LABELS:
                category = tree_class_from_shape(category, h, w)
        else:
            mean = mean_size(category)
            h = max(mean[2] * w / mean[0], max(v.height for v in views))
        cls = get_class(category)
        return category, np.clip([w, w, h], cls.size_min, cls.size_max)
    size = mean_size(category)
    if len(heights):
        size = size * float(np.clip(np.median(heights) / size[2], *cfg.height_bounds))
    return category, size


def contact_masks(detections: FrameDetections, cfg: LiftCfg) -> dict[int, Mask]:
    """Instance masks by detection id from the detectors whose masks give ground contacts
    (``cfg.mask_contact_sources``)."""
    return {
        d.det_id: d.mask
        for f in detections.frames
        for d in f.detections
        if d.mask is not None and d.source.split(":")[0] in cfg.mask_contact_sources
    }


def road_surface(
    surface: Callable[[np.ndarray], np.ndarray] | None, road_xy: np.ndarray
) -> Callable[[np.ndarray], np.ndarray] | None:
    """The surface vehicles stand on: the road's height (relative to z = 0) everywhere, from ``surface``
    at the first of the road points ``road_xy (R, 2)``; None without a surface or road points.

    A vehicle stands on the road, a curb below the pavement, also where the ground stage saw no road:
    a car 15 m ahead cast onto the pavement's plane would land more than a metre short."""
    if surface is None or not len(road_xy):
        return None
    road_z = float(surface(road_xy[:1])[0])
    return lambda xy: np.full(len(xy), road_z)


def run_lifting(
    tracks: Tracks,
    detections: FrameDetections,
    recon: Reconstruction,
    road_xy: np.ndarray | None = None,
    cfg: LiftCfg | None = None,
    surface: Callable[[np.ndarray], np.ndarray] | None = None,
) -> LiftedObjects:
    """Lift every static track to a 3D object (see module docstring). ``road_xy``: points ``(R, 2)`` on
    the road seen by the ground stage (m), or None; ``surface(xy (N, 2)) -> z (N,)``: height of the
    ground surface relative to the plane z = 0 the camera walks on (m), or None for flat ground."""
    cfg = cfg or LiftCfg()
    min_observations = 1 if len(recon.keyframes) <= FEW_VIEWS else cfg.min_observations
    width, height = recon.intrinsics.width, recon.intrinsics.height
    path = np.array([k.position[:2] for k in recon.registered]).reshape(-1, 2)
    single_view = len(path) < 2  # no camera path to give the street's direction
    street = StreetFrame(
        path if len(path) else np.zeros((1, 2)), np.zeros((0, 2)) if road_xy is None else road_xy
    )
    on_road = road_surface(surface, street.road)
    masks = contact_masks(detections, cfg)
    dropped: dict[str, int] = {}
    lifted: list[LiftedObject] = []
    for track in tracks.tracks:
        if track.dynamic:
            dropped["dynamic"] = dropped.get("dynamic", 0) + 1
            continue
        ground_at = on_road if on_road and along_street(track.category) else surface
        obs = observation_views(track, recon, width, height, cfg, ground_at, masks)
        if len(obs) < min_observations:
            dropped["too_few_ground_contacts"] = dropped.get("too_few_ground_contacts", 0) + 1
            continue
        agreeing = _agreeing(obs, mean_size(track.category), cfg)
        # The boxes whose contacts disagreed are another object's: left out of the box fit too.
        strays = {v.frame_index for v in obs} - {v.frame_index for v in agreeing}
        obs = agreeing
        if len(obs) < min_observations:
            dropped["contacts_disagree"] = dropped.get("contacts_disagree", 0) + 1
            continue
        category, size = measured_size(track, obs, cfg)
        contact = np.median([v.ground[:2] for v in obs], axis=0)
        vehicle = along_street(category)
        axis, to_road = street.axis_and_road_side(contact, vehicle, np.array([v.eye[:2] for v in obs]))
        sight = obs[0].ground[:2] - obs[0].eye[:2]
        sight = sight / max(float(np.linalg.norm(sight)), 1e-9)
        side_on = single_view and vehicle and _seen_side_on(obs, size)
        if side_on:  # one view: no path gives the street's direction, the box's width does
            axis = np.array([-sight[1], sight[0]])
        yaw, source = orient(category, axis, to_road)
        source = "side_on" if side_on else source
        slender = get_class(category).l2 in SLENDER_L2
        # The face nearest the camera touches the ground at the contact: the centre lies farther along
        # the ray by half the footprint's extent along it (a car seen end-on, half its length; seen
        # side-on, half its width).
        centres = []
        for ground, eye, *_ in obs:
            ray = ground[:2] - eye[:2]
            ray = ray / max(float(np.linalg.norm(ray)), 1e-9)
            depth = 0.0 if slender else _extent_along(size, yaw, ray)
            centres.append(ground[:2] + 0.5 * depth * ray)
        centres = np.asarray(centres)
        xy, scale = np.median(centres, axis=0), 1.0
        if not slender:  # a post's base is its centre; boxes of crowns and lamp arms mislead a fit
            boxes = [o for o in track.observations if o.frame_index not in strays]
            xy, scale = _fit_box(boxes, recon, xy, yaw, size, cfg)
        size = size * scale
        lifted.append(
            LiftedObject(
                track_id=track.track_id,
                category=category,
                label=track.label,
                score=float(track.score),
                position=(float(xy[0]), float(xy[1]), 0.0),
                yaw=float(yaw),
                yaw_source=source,
                size=tuple(float(s) for s in size),
                observations=len(obs),
                spread_m=float(np.median(np.linalg.norm(centres - xy, axis=1))),
            )
        )
    merged = _merge(lifted, cfg.merge_radius_m, cfg.vehicle_merge_radius_m)
    if len(merged) < len(lifted):
        dropped["merged_duplicates"] = len(lifted) - len(merged)
    return LiftedObjects(objects=tuple(merged), dropped=dropped)


def _box_corners(xy: np.ndarray, yaw: float, size: np.ndarray) -> np.ndarray:
    """The 8 corners ``(8, 3)`` of a box standing on z = 0 at ``xy`` (m) with ``yaw`` and ``size``."""
    c, s = math.cos(yaw), math.sin(yaw)
    dx, dy, dz = np.meshgrid([-0.5, 0.5], [-0.5, 0.5], [0.0, 1.0], indexing="ij")
    local = np.stack([dx.ravel() * size[0], dy.ravel() * size[1], dz.ravel() * size[2]], axis=1)
    return local @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1]]) + [xy[0], xy[1], 0.0]


def _fit_box(
    observations: Sequence[TrackObservation],
    recon: Reconstruction,
    xy0: np.ndarray,
    yaw: float,
    size: np.ndarray,
    cfg: LiftCfg,
):
    """Refine position ``xy`` (m) and a size scale so the box's projections match the detected boxes
    of a track's ``observations``.

    Least squares over every registered observation; an edge within ``edge_margin_px`` of the image
    border is cut by the frame: such observations are left out. Residuals are in units of the detected
    box's height.
    Returns ``(xy, scale)``; the start values when nothing constrains the fit.
    """
    w, h, m = recon.intrinsics.width, recon.intrinsics.height, cfg.edge_margin_px
    views = []
    for obs in observations:
        if not recon.keyframes[obs.frame_index].registered:
            continue
        x1, y1, x2, y2 = obs.box
        keep = np.array([x1 > m, y1 > m, x2 < w - m, y2 < h - m])
        if keep.all():  # boxes cut by the frame edge are partial views: left out
            views.append((obs.frame_index, np.array([x1, y1, x2, y2]), keep, max(y2 - y1, 4.0)))
    if len(views) < 2:
        return xy0, 1.0
    lo, hi = np.log(cfg.height_bounds[0]), np.log(cfg.height_bounds[1])

    def residuals(p: np.ndarray) -> np.ndarray:
        corners = _box_corners(p[:2], yaw, size * np.exp(p[2]))
        out = []
        for index, box, keep, scale in views:
            uv, depth = project(recon, index, corners)
            if (depth <= 0.1).any():
                out.append(np.full(keep.sum(), 3.0))
                continue
            proj = np.array([uv[:, 0].min(), uv[:, 1].min(), uv[:, 0].max(), uv[:, 1].max()])
            out.append(((proj - box) / scale)[keep])
        return np.concatenate(out)

    start = np.array([xy0[0], xy0[1], 0.0])
    fit = scipy.optimize.least_squares(
        residuals, start, bounds=([-np.inf, -np.inf, lo], [np.inf, np.inf, hi]), loss="soft_l1", f_scale=0.1
    )
    if not fit.success or np.linalg.norm(fit.x[:2] - xy0) > cfg.max_fit_shift_m:
        return xy0, 1.0  # a fit that wanders off is explaining occlusion, not position
    return fit.x[:2], float(np.exp(fit.x[2]))


def _extent_along(size: np.ndarray, yaw: float, direction: np.ndarray) -> float:
    """Extent (m) of a ``size`` footprint at ``yaw`` measured along the unit ``direction (2,)``."""
    c, s = math.cos(yaw), math.sin(yaw)
    return abs(size[0] * (c * direction[0] + s * direction[1])) + abs(
        size[1] * (-s * direction[0] + c * direction[1])
    )


def _merge(objects: list[LiftedObject], radius: float, vehicle_radius: float) -> list[LiftedObject]:
    """Greedy merge, strongest first: an object within ``radius`` of a kept one of the same L2 is
    absorbed, and a vehicle within ``vehicle_radius`` of a kept vehicle of any kind (COCO's "car" and
    "truck" on one parked van give a sedan and a van)."""

    def group(category: str) -> str:
        return "vehicles" if along_street(category) else get_class(category).l2

    kept: list[LiftedObject] = []
    for obj in sorted(objects, key=lambda o: (-o.observations * o.score, o.track_id)):
        mine = group(obj.category)
        reach = vehicle_radius if along_street(obj.category) else radius
        near = [
            k
            for k in kept
            if group(k.category) == mine and math.dist(k.position[:2], obj.position[:2]) < reach
        ]
        if not near:
            kept.append(obj)
    return sorted(kept, key=lambda o: o.track_id)
