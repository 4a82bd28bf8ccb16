"""The layout package's entry points for ``gen``: the street's support under the objects, a static
camera calibrated by the people it sees, the objects placed in 3D, and the street model fitted to
all of it.

:func:`run_ground <urbanverse.layout.ground.run_ground>` classifies the ground seen;
:func:`place_objects` then lifts the tracks onto that ground, places trees by their crowns and adds
the objects found only in the dense points; :func:`street_support` gives the ground height and the
road points the lifting and the size check both stand objects on; :func:`fit_street` fits the
street (or plaza, or path) model to the ground seen and sets the objects on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np
import shapely

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.crowns import CrownCfg, place_by_crowns
from urbanverse.layout.ground import GroundLayout, road_points, surface_height
from urbanverse.layout.lift import LiftCfg, LiftedObjects, contact_masks, run_lifting
from urbanverse.layout.proposal_placing import add_proposals
from urbanverse.layout.proposals import ProposalCfg, is_green
from urbanverse.layout.scale_check import SizeScale, size_scale
from urbanverse.layout.settle import ON_LOTS_L2, settle_objects
from urbanverse.layout.street import along_street
from urbanverse.layout.street_fit import Evidence, GroundModel, StreetFitCfg, fit_ground
from urbanverse.layout.street_regions import ModelRegion
from urbanverse.perception.record import FrameDetections, Tracks
from urbanverse.recon.calibrate import calibrate_from_upright, repose_single_view
from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.record import Reconstruction
from urbanverse.records import record
from urbanverse.scene.ground import footprint
from urbanverse.scene.record import DEFAULT_CURB_HEIGHT

#: Height (m) of a standing person, the object-size prior used to calibrate a static camera.
PERSON_HEIGHT_M = 1.7


def curb_of(layout: GroundLayout) -> float:
    """How far the pavement the camera walked on (the reconstruction's z = 0) is above the scene's z = 0:
    the curb height when a road was seen (roads are the scene's z = 0), else 0."""
    return DEFAULT_CURB_HEIGHT if any(r.type == "road" for r in layout.regions) else 0.0


@dataclasses.dataclass(frozen=True)
class StreetSupport:
    """What objects stand on: ``surface(xy (N, 2)) -> (N,)`` the ground's height (m, reconstruction
    frame) and ``road`` ``(M, 2)`` points on the road pieces (m), which keep objects off the road."""

    surface: Callable[[np.ndarray], np.ndarray]
    road: np.ndarray


def street_support(layout: GroundLayout, lift: LiftCfg) -> StreetSupport:
    """The ground height and road points of ``layout``; road pieces under ``lift.min_road_piece_m2`` are
    left out (they do not tell where the street's road lies)."""
    return StreetSupport(
        surface_height(layout, curb_of(layout)), road_points(layout, min_piece_m2=lift.min_road_piece_m2)
    )


def place_objects(
    tracks: Tracks,
    dets: FrameDetections,
    recon: Reconstruction,
    layout: GroundLayout,
    cloud: DenseCloud,
    images: Mapping[int, np.ndarray],
    lift: LiftCfg,
    proposals: ProposalCfg,
    crowns: CrownCfg,
) -> LiftedObjects:
    """The static objects of the scene in 3D: the tracks lifted onto the ground, trees moved onto their
    crowns' dense points, then the objects the dense points show that no track explained."""
    support = street_support(layout, lift)
    objects = run_lifting(tracks, dets, recon, support.road, lift, support.surface)
    green = is_green(cloud.rgb)
    objects = place_by_crowns(objects, tracks, recon, cloud, green, crowns)
    return add_proposals(objects, recon, cloud, images, support.road, proposals, green)


def measured_size_scale(
    tracks: Tracks, dets: FrameDetections, recon: Reconstruction, layout: GroundLayout, lift: LiftCfg
) -> SizeScale | None:
    """The scale the heights of the people and cars seen imply (:func:`size_scale`), on the same
    support the objects were placed on."""
    support = street_support(layout, lift)
    return size_scale(tracks, recon, lift, support.surface, support.road, contact_masks(dets, lift))


def calibrate_with_people(recon: Reconstruction, dets: FrameDetections) -> Reconstruction:
    """A static camera's pitch and height fitted to the people it sees (1.7 m tall, feet on the ground);
    the reconstruction unchanged when fewer than three people, spread over the image rows, are seen."""
    boxes = [
        d.box
        for f in dets.frames
        for d in f.detections
        if d.dynamic and d.category_path[1] == "people" and d.box[3] < recon.intrinsics.height - 2
    ]
    if len(boxes) < 3:
        return recon
    boxes = np.asarray(boxes, float)
    bottom = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, boxes[:, 3]], axis=1)
    fit = calibrate_from_upright(bottom, boxes[:, 1], PERSON_HEIGHT_M, recon.intrinsics)
    if fit is None:
        return recon
    recalibrated = repose_single_view(recon, fit.pitch_rad, fit.camera_height_m)
    note = (
        f"single view: pitch {np.degrees(fit.pitch_rad):.0f} deg and camera height "
        f"{fit.camera_height_m:.1f} m fitted to {fit.num_objects} people ({PERSON_HEIGHT_M} m tall)"
    )
    return dataclasses.replace(recalibrated, warnings=(*recalibrated.warnings, note))


@record
class FittedStreet:
    """The street stage's output: the ground ``model`` fitted to what was seen, the ``objects`` set on
    it, and ``camera_ground_m``, the fitted ground's top under the camera path: how far the
    reconstruction's ground plane (the pavement walked on) lies above the scene's z = 0."""

    schema_version: int = 1
    model: GroundModel
    objects: LiftedObjects
    camera_ground_m: float
    warnings: tuple[str, ...]


def _top_under(regions: tuple[ModelRegion, ...], xy: np.ndarray) -> np.ndarray:
    """The highest region top (m; a ramp by its mean) at each point ``xy (N, 2)``; 0 off the regions."""
    top = np.zeros(len(xy))
    for region in regions:
        height = np.mean(region.vertex_elevation) if region.vertex_elevation else region.elevation
        inside = shapely.contains_xy(shapely.Polygon(region.polygon), xy[:, 0], xy[:, 1])
        top[inside] = np.maximum(top[inside], height)
    return top


def _corners(lifted: LiftedObjects) -> np.ndarray:
    """The footprint corners ``(4 N, 2)`` (m) of the objects: the ground must reach under all of each."""
    corners = [footprint(o.position, o.yaw, o.size).exterior.coords[:4] for o in lifted.objects]
    return np.asarray(corners, float).reshape(-1, 2)


def fit_street(
    layout: GroundLayout, classes: np.ndarray, recon: Reconstruction, lifted: LiftedObjects, cfg: StreetFitCfg
) -> FittedStreet:
    """Fit the ground model to the ground seen (``layout`` and its class grid ``classes``), the camera
    path and the building fronts and vehicles of ``lifted``, then set the objects on it."""
    fronts = [
        np.asarray(o.position[:2]) + 0.5 * o.size[0] * np.array([np.cos(o.yaw), np.sin(o.yaw)])
        for o in lifted.objects
        if o.front_only and get_class(o.category).l2 in ON_LOTS_L2
    ]
    vehicles = [o.position[:2] for o in lifted.objects if along_street(o.category)]
    evidence = Evidence(
        classes=classes,
        origin=np.asarray(layout.origin, float),
        cell_m=layout.cell_m,
        path=np.array([k.position[:2] for k in recon.registered], float).reshape(-1, 2),
        fronts=np.asarray(fronts, float).reshape(-1, 2),
        vehicles=np.asarray(vehicles, float).reshape(-1, 2),
        objects=_corners(lifted),
    )
    model = fit_ground(evidence, cfg)
    settled, warnings = settle_objects(lifted, model.regions, cfg.max_move_m)
    if len(settled.objects) < len(lifted.objects):  # the ground need not reach the objects dropped
        model = fit_ground(dataclasses.replace(evidence, objects=_corners(settled)), cfg)
        settled, _ = settle_objects(settled, model.regions, cfg.max_move_m)
    under = _top_under(model.regions, evidence.path)
    return FittedStreet(
        model=model,
        objects=settled,
        camera_ground_m=float(np.median(under)) if len(under) else 0.0,
        warnings=tuple(warnings),
    )
