"""Proposals become lifted objects: detector tracks moved onto them, the rest placed as objects of
their own, and the building fronts added (:func:`add_proposals`, the lifting stage's last step).

An object lifted from a detector track moves onto the nearest proposal within ``explained_m``
(its centre is measured in 3D, the track's cast from box bottoms) and keeps its class, unless the
proposal's look beats the detector's confidence, or the colour and shape detectors guessed it and
the proposal's shape says otherwise (:func:`refine_tracked`). The proposals left become objects of
their own, but for those within ``explained_m`` of an object (parts of it, streaks of flow beside it),
unless their crops surely show another L2 class than its (``sure_look``: a recycling bin 1.4 m from
a bench). They take the yaw rules of lifting (:func:`urbanverse.layout.street.orient`), and where
only the near face was seen (the footprint thinner than the class's), the centre moves back by the
missing half depth, away from the camera path; a tree's, of whose crown flow sees the near half,
moves back along its line of sight by ``crown_depth_share`` of the crown's radius. A vehicle's cluster
is often one end of it (a parked car beside the walk is seen end-on): its centre moves on by half the
length and width the cluster lacks, away from the cameras; and a vehicle track, cast from box
bottoms, moves onto a vehicle's cluster up to three quarters of a car length off
(:func:`vehicle_reach`), the spacing that proposals keep from vehicles.

Seen from afar or head-on, a thin object's cluster runs along the line of sight: the flow at its edges takes
in the depth of what lies behind, and its points trail a metre or more back (a bollard 10 m off spans 1.1 m of
depth, 0.3 m across). Where a proposal's long side lies within ``smear_angle_deg`` of its mean line of sight
(:func:`smeared`) and the object placed there is shorter along that line than the cluster, the object stands
at the cluster's near end (its ``extent_percentile`` point along the line of sight), and a tree's crown is as
wide as the cluster across it: the cluster's far part is the smear, its near end the object. The building
fronts among the tall points set aside become facades (:mod:`urbanverse.layout.facades`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.appearance import class_log_probabilities
from urbanverse.layout.facades import facade_objects, find_facades
from urbanverse.layout.lift import LiftedObject, LiftedObjects, mean_size
from urbanverse.layout.proposals import (
    Proposal,
    ProposalCfg,
    classify,
    is_green,
    located_proposals,
    look_score,
    proposal_views,
    smeared,
)
from urbanverse.layout.street import StreetFrame, along_street, orient
from urbanverse.layout.walked_ground import levelled
from urbanverse.perception.crop_classifier import (
    PROPOSAL_CLASSIFIER,
    classifier_path,
    load_crop_classifier,
    look_outranks,
)
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.record import Reconstruction

#: Track ids of proposals start here (detector tracks count from 0).
PROPOSAL_TRACK_BASE = 1_000_000
#: The ``label`` of an object found by a proposal alone.
PROPOSAL_LABEL = "dense points"
#: Track labels of the colour and shape detectors (vegetation blobs, vertical strips): their class is
#: a guess that a proposal's shape may overrule.
SHAPE_DETECTOR_LABELS = frozenset({"tree", "shrub", "pole", "flagpole"})


def _placed(
    p: Proposal, category: str, street: StreetFrame, cfg: ProposalCfg, size: np.ndarray | None = None
):
    """``(xy (2,), yaw, yaw source, size (3,))`` of a ``category`` object at proposal ``p``: the class's
    mean footprint (a tree's measured crown) and the measured height, within the class's range; the
    yaw as in lifting; the centre moved back by the missing half depth where only the near face was
    seen (a tree's along its line of sight, ``crown_depth_share``), or to the near end of a cluster
    smeared along the line of sight. ``size``: a size already measured (by lifting), kept."""
    cls = get_class(category)
    extent_share = cfg.core_extent
    if size is None:
        mean = mean_size(category)
        if cls.l1 == "vegetation":
            crown = (p.short_m if smeared(p, cfg) else p.long_m) / extent_share
            size = np.clip([crown, crown, p.height_m], cls.size_min, cls.size_max)
        else:
            size = np.clip([mean[0], mean[1], p.height_m], cls.size_min, cls.size_max)
    vehicle = along_street(category)  # a vehicle parks along the street, whatever its points
    # ... the street the cameras that saw it walked, as for a tracked vehicle (``seen_from``).
    axis, to_road = street.axis_and_road_side(p.xy, vehicle, p.eyes if vehicle else None)
    footprint_axis = p.axis if p.long_m > 1.5 * p.short_m and not vehicle else axis
    yaw, source = orient(category, footprint_axis if footprint_axis @ axis >= 0 else -footprint_axis, to_road)
    xy = p.xy
    missing = min(size[:2]) - p.short_m / extent_share
    if vehicle and p.ray is not None:
        xy = p.xy + _unseen_half(p, size, axis, extent_share)
    elif smeared(p, cfg):
        # Flow at a thin object's edges takes in the background's depth: the smear trails behind it.
        cos = abs(math.cos(yaw) * p.ray[0] + math.sin(yaw) * p.ray[1])
        along_ray = cos * size[0] + math.sqrt(max(0.0, 1.0 - cos**2)) * size[1]
        if along_ray < p.long_m / extent_share:
            xy = p.xy + (0.5 * along_ray - p.near_m) * p.ray
    elif cls.l1 == "vegetation":
        if p.ray is not None:
            xy = p.xy + cfg.crown_depth_share * 0.5 * size[0] * p.ray
    elif missing > 0:  # only the near face was seen: move back
        across = np.array([-p.axis[1], p.axis[0]])
        nearest = street.path[int(np.argmin(np.linalg.norm(street.path - p.xy, axis=1)))]
        xy = p.xy + (np.sign((p.xy - nearest) @ across) or 1.0) * 0.5 * missing * across
    return xy, float(yaw), source, np.asarray(size, float)


def _unseen_half(p: Proposal, size: np.ndarray, axis: np.ndarray, extent_share: float) -> np.ndarray:
    """How far (m, ``(2,)``) a vehicle's centre lies beyond the centre of its cluster ``p``: a parked
    car beside the walk is seen end-on, its rear or front face alone (a cluster much shorter than the
    car, its centre metres from the car's).
    Along the street ``axis (2,)`` the centre lies half the unseen length on, across it half the unseen
    width, both away from the cameras (along the cluster's mean line of sight). ``size``: the
    vehicle's (length, width, height) in m; the cluster's extents are its core's (``extent_share``)."""
    across = np.array([-axis[1], axis[0]])
    long_dir = np.asarray(p.axis, float)
    short_dir = np.array([-long_dir[1], long_dir[0]])
    seen = [
        (abs(long_dir @ d) * p.long_m + abs(short_dir @ d) * p.short_m) / extent_share for d in (axis, across)
    ]
    return sum(
        (np.sign(p.ray @ d) or 1.0) * 0.5 * max(0.0, extent - seen_m) * d
        for d, extent, seen_m in zip((axis, across), size[:2], seen, strict=True)
    )


def refine_tracked(
    lifted: list[LiftedObject], proposals: list[Proposal], street: StreetFrame, cfg: ProposalCfg
) -> tuple[list[LiftedObject], list[Proposal]]:
    """Lifted objects moved onto the proposal that explains each (the nearest within ``explained_m``,
    nearest pairs first, one each), and the proposals left unexplained.

    A proposal's centre is measured in 3D; a track's comes from box bottoms cast onto the ground, so
    the proposal's wins. Its class wins too where its look beats the track's class by more than the
    detector's confidence (:func:`urbanverse.perception.crop_classifier.look_outranks`: the COCO
    detector named a rendered bollard a car at score 0.5), or where the track came from the colour and
    shape detectors (``SHAPE_DETECTOR_LABELS``: a green blob, a vertical strip) and the proposal is
    neither green nor unnamed: a wooden bench is no shrub. A proposal under ``part_height`` of the
    object's height is a part of it and names nothing (the trunk and stakes of a young tree, parted
    from the crown by air in the voxel clusters, would rename it a bin).
    """
    centres = np.array([p.xy for p in proposals]).reshape(-1, 2)
    distance = np.array([np.linalg.norm(centres - np.asarray(o.position[:2]), axis=1) for o in lifted])
    if distance.size:
        # A vehicle track and a proposal named a vehicle explain each other as far apart as a proposal
        # and a vehicle may stand (``vehicle_reach``): past explained_m, the track kept its cast
        # centre and the proposal's measured one was dropped beside it as a second car.
        vehicle = np.array([(c := classify(p, cfg)) is not None and along_street(c) for p in proposals])
        reach = np.array([vehicle_reach(o.category, cfg) for o in lifted])
        distance[(distance >= cfg.explained_m) & ~(vehicle[None, :] & (distance < reach[:, None]))] = np.inf
    out, used, moved = list(lifted), set(), set()
    for flat in np.argsort(distance, axis=None) if distance.size else []:
        i, j = np.unravel_index(flat, distance.shape)
        if not np.isfinite(distance[i, j]):
            break
        if j in used or i in moved:
            continue
        used.add(j)
        moved.add(i)
        obj, p = lifted[i], proposals[j]
        named = classify(p, cfg) if p.height_m >= cfg.part_height * obj.size[2] else None
        # The look may outrank the detector's class; a shape detector's guess gives way to the
        # proposal's shape unless the cluster is green.
        guessed = obj.label.lower() in SHAPE_DETECTOR_LABELS and p.green < cfg.green_share
        doubted = (
            bool(named)
            and p.looks is not None
            and look_outranks(
                {c: look_score(p, c, cfg) for c in p.looks}, named, obj.category, obj.score,
                0.0 if obj.label.lower() in SHAPE_DETECTOR_LABELS else None,
            )
        )  # fmt: skip
        if named and (doubted or guessed):
            xy, yaw, source, size = _placed(p, named, street, cfg)
            obj = dataclasses.replace(obj, category=named, yaw=yaw, yaw_source=source, size=tuple(size))
        else:
            xy, *_ = _placed(p, obj.category, street, cfg, np.asarray(obj.size))
        out[i] = dataclasses.replace(obj, position=(float(xy[0]), float(xy[1]), obj.position[2]))
    return out, [p for j, p in enumerate(proposals) if j not in used]


def vehicle_reach(category: str, cfg: ProposalCfg) -> float:
    """How near (m) to a vehicle another vehicle of ``category`` may not stand (:func:`proposal_objects`),
    and how far apart a vehicle track and a vehicle's cluster may lie and still be one object
    (:func:`refine_tracked`): three quarters of the class's mean length; ``explained_m`` for other
    classes."""
    return max(cfg.explained_m, 0.75 * mean_size(category)[0]) if along_street(category) else cfg.explained_m


def covers(o: LiftedObject, xy: np.ndarray) -> bool:
    """Whether the point ``xy (2,)`` (m) lies within the footprint of object ``o``.

    (``urbanverse.scene.ground.footprint`` builds the same rectangle as a polygon, but the scene
    package sits downstream of layout: imports flow one way, DESIGN.md section 3.)"""
    c, s = math.cos(o.yaw), math.sin(o.yaw)
    offset = xy - np.asarray(o.position[:2])
    return abs(offset @ [c, s]) <= o.size[0] / 2 and abs(offset @ [-s, c]) <= o.size[1] / 2


def _keep_off(category: str, sure: bool, o: LiftedObject, cfg: ProposalCfg) -> float:
    """How far (m) a ``category`` proposal must lie from the object ``o`` not to be a part of it:
    ``explained_m``; from a vehicle, :func:`vehicle_reach`; 0 where its look is ``sure`` and ``o``,
    no vehicle, is of another L2 class (a recycling bin 1.4 m from a bench is no part of it: only
    their footprints may not overlap)."""
    if along_street(o.category):
        return vehicle_reach(category, cfg)
    return 0.0 if sure and get_class(o.category).l2 != get_class(category).l2 else cfg.explained_m


def _crowded(
    category: str, sure: bool, xy: np.ndarray, centre: np.ndarray, o: LiftedObject, cfg: ProposalCfg
) -> bool:
    """Whether a ``category`` object placed at ``xy (2,)`` (m) from a cluster centred at ``centre``
    would crowd the object ``o``: nearer than :func:`_keep_off`, or either point within its
    footprint."""
    near = _keep_off(category, sure, o, cfg)
    return bool(np.linalg.norm(xy - o.position[:2]) < near or covers(o, xy) or covers(o, centre))


def proposal_objects(
    proposals: list[Proposal], lifted: list[LiftedObject], street: StreetFrame, cfg: ProposalCfg
) -> list[LiftedObject]:
    """Lifted objects for the proposals that a class fits and no lifted object lies near or covers."""
    out: list[LiftedObject] = []
    taken = list(lifted)
    for p in sorted(proposals, key=lambda q: -q.points):
        category = classify(p, cfg)
        if category is None:
            continue
        sure = p.looks is not None and p.looks[category] > math.log(cfg.sure_look)
        if any(
            np.linalg.norm(p.xy - o.position[:2]) < min(cfg.explained_m, _keep_off(category, sure, o, cfg))
            for o in taken
        ):
            continue
        xy, yaw, source, size = _placed(p, category, street, cfg)
        # Placed, a car's cluster moves back by its missing half depth: onto a car a track may already
        # have put there (the same car twice, one stacked on the other by the physics fix). Vehicles
        # keep three quarters of a car's length apart: cars parked bumper to bumper stand a whole
        # length apart, and at half a length a car shrunk by its box fit leaves its far end to a
        # second car; other objects keep only explained_m (farther would keep out a parked car's
        # cluster beside a bench). A proposal within an object's footprint is a part of it (an end of
        # a parked car, split from its cluster, would become a bollard).
        if any(_crowded(category, sure, xy, p.xy, o, cfg) for o in taken):
            continue
        out.append(
            LiftedObject(
                track_id=PROPOSAL_TRACK_BASE + len(out),
                category=category,
                label=PROPOSAL_LABEL,
                score=cfg.score * min(1.0, p.points / 500.0),
                position=(float(xy[0]), float(xy[1]), 0.0),
                yaw=yaw,
                yaw_source=source,
                size=tuple(float(s) for s in size),
                observations=len(p.owners),
                spread_m=0.0,
            )
        )
        taken.append(out[-1])
    return out


def add_proposals(
    lifted: LiftedObjects,
    recon: Reconstruction,
    cloud: DenseCloud,
    images: Mapping[int, np.ndarray],
    road_xy: np.ndarray | None,
    cfg: ProposalCfg,
    green: np.ndarray | None = None,
) -> LiftedObjects:
    """``lifted`` plus the proposal objects of the keyframes' dense points ``cloud``
    (:func:`urbanverse.recon.depth.dense_cloud`; module docstring), with the keyframes' RGB
    ``images`` (working size) for :func:`top_cut` and the crops; a single view (no second pose) or
    ``cfg.enabled = False`` adds nothing. ``green (N,)``: :func:`is_green` of the cloud's colours,
    computed here when None."""
    path = np.array([k.position[:2] for k in recon.registered]).reshape(-1, 2)
    if not cfg.enabled or len(path) < 2:
        return lifted
    cloud = levelled(cloud, recon, cfg.walk_window_m)
    green = is_green(cloud.rgb) if green is None else green
    proposals = located_proposals(recon, cloud, images, cfg, green)
    classifier_file = classifier_path(cfg.crop_classifier, PROPOSAL_CLASSIFIER)
    if classifier_file is not None:
        classifier = load_crop_classifier(classifier_file)
        looks = class_log_probabilities(proposal_views(recon, proposals, cfg), images, classifier)
        proposals = [dataclasses.replace(p, looks=q) for p, q in zip(proposals, looks, strict=True)]
    street = StreetFrame(path, np.zeros((0, 2)) if road_xy is None else road_xy)
    tracked, left = refine_tracked(list(lifted.objects), proposals, street, cfg)
    added = proposal_objects(left, tracked, street, cfg)
    counts = {**lifted.dropped, "proposals_unnamed": len(left) - len(added)}
    if cfg.facades.enabled:
        facades = find_facades(cloud, path, green, cfg.facades)
        added += facade_objects(facades, PROPOSAL_TRACK_BASE + len(added), cfg.facades, recon)
    return dataclasses.replace(lifted, objects=tuple(tracked + added), dropped=counts)
