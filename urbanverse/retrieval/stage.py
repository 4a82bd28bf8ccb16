"""The retrieval stage: cousins per object, a library material per ground type, a library sky."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from urbanverse.assets.ground_materials import match_ground
from urbanverse.assets.jobs import open_library
from urbanverse.assets.skies import match_sky
from urbanverse.layout.appearance import box_corners, view_boxes
from urbanverse.layout.lift import LiftedObjects
from urbanverse.perception.record import Tracks
from urbanverse.recon.record import Reconstruction
from urbanverse.records import record
from urbanverse.retrieval.appearance import AssetAppearance, FrameBox, object_looks
from urbanverse.retrieval.cousins import CousinSet, ObjectLook, RetrievalCfg, prepare_library, rank_cousins

#: Ground types the material library tags; terrain maps to the grass/soil family.
#: Scene ground type -> (the ground stage's colour sample it is matched from, the materials' tag).
_MATERIAL_SOURCE = {
    "road": ("road", "road"),
    "sidewalk": ("sidewalk", "sidewalk"),
    "crosswalk": ("crosswalk", "crosswalk"),
    "terrain": ("terrain", "terrain"),
    "plaza": ("sidewalk", "plaza"),  # a plaza fitted where the walked paving was seen
}
#: Material of a ground type no keyframe showed (the fitted street model infers it), and of curb ramps.
UNSEEN_MATERIAL = {
    "road": "asphalt_worn",
    "sidewalk": "concrete_slab_1m",
    "crosswalk": "marking_zebra_white",
    "terrain": "grass_patchy",
    "plaza": "pavers_square_grey",
    "ramp": "tactile_dots_grey",
}
#: Sky used when no sky pixels were seen (a clear day, sun 30 degrees up).
DEFAULT_SKY = "clear_el30_t3.2"


@record
class Retrieval:
    """Output of the retrieval stage."""

    schema_version: int = 1
    cousins: CousinSet
    ground_materials: dict[str, str]
    sky: str
    sky_distance: float


def _track_boxes(tracks: Tracks, images: dict[int, np.ndarray]) -> dict[int, list[FrameBox]]:
    """Per track, its three highest-scoring detector boxes in the keyframes."""
    out = {}
    for track in tracks.tracks:
        best = [o for o in sorted(track.observations, key=lambda o: -o.score) if o.frame_index in images][:3]
        if best:
            out[track.track_id] = [(o.frame_index, o.box) for o in best]
    return out


def _projected_boxes(
    lifted: LiftedObjects,
    recon: Reconstruction,
    images: dict[int, np.ndarray],
    skip: set[int],
    views: int = 3,
) -> dict[int, list[FrameBox]]:
    """Per object not in ``skip`` (those a track's boxes already show) and not seen by its front only,
    its box projected into the ``views`` registered keyframes nearest to it. Objects found in the dense
    points have no detector box: without this their cousins were ranked by size alone."""
    out = {}
    for o in lifted.objects:
        if o.track_id in skip or o.front_only:
            continue
        axis = np.array([math.cos(o.yaw), math.sin(o.yaw)])
        corners = box_corners(np.asarray(o.position[:2]), axis, *o.size)
        boxes = view_boxes(recon, corners, sorted(images), views)  # (it keeps the registered ones)
        if boxes:
            out[o.track_id] = list(boxes)
    return out


def sky_pixels(images: Sequence[np.ndarray], max_pixels: int = 100_000) -> np.ndarray:
    """Bright pixels of the top tenth of each image (where the sky is in a walking video), ``(N, 3)``,
    every n-th one so that at most ``max_pixels`` remain: a colour histogram needs no more, and a 30 s
    tour at 720p gives about a million (3.7 s for the HSV histogram on a cold 2-core VM)."""
    out = []
    for image in images:
        top = image[: max(1, image.shape[0] // 10)].reshape(-1, 3)
        value = top.max(axis=1)
        out.append(top[value >= np.percentile(value, 60)])
    pixels = np.concatenate(out) if out else np.zeros((0, 3), np.uint8)
    return pixels[:: max(1, math.ceil(len(pixels) / max_pixels))]


def run_retrieval(
    lifted: LiftedObjects,
    tracks: Tracks,
    images: dict[int, np.ndarray],
    ground_samples: dict[str, np.ndarray],
    cfg: RetrievalCfg,
    recon: Reconstruction | None = None,
) -> Retrieval:
    """Rank cousins for every lifted object from the library of ``cfg.library``; match ground materials
    and the sky (see module docstrings). ``recon``: the keyframes' cameras, which show the objects no
    track's boxes do; None: size alone ranks those."""
    boxes = _track_boxes(tracks, images)
    if recon is not None:
        boxes |= _projected_boxes(lifted, recon, images, set(boxes))
    looks = object_looks(boxes, images, cfg)
    no_look = ObjectLook(None, None)
    with open_library(cfg.library, must_exist=False) as store:
        prepare_library(store, {o.category for o in lifted.objects}, cfg)
        appearance = AssetAppearance(store, cfg)
        cousins = [
            rank_cousins(
                o.track_id,
                o.category,
                o.size,
                looks.get(o.track_id, no_look),
                store,
                appearance.of,
                cfg,
                o.front_only,
                o.top_cut,
            )  # fmt: skip
            for o in lifted.objects
        ]
    materials = dict(UNSEEN_MATERIAL)
    for kind, (source, tag) in _MATERIAL_SOURCE.items():
        sample = ground_samples.get(source)
        if sample is not None and len(sample):
            materials[kind] = match_ground(np.asarray(sample, np.uint8), tag=tag, k=1)[0][0]
    pixels = sky_pixels(list(images.values()))
    sky, distance = match_sky(pixels, k=1)[0] if len(pixels) else (DEFAULT_SKY, 1.0)
    return Retrieval(
        cousins=CousinSet(objects=tuple(cousins)),
        ground_materials=materials,
        sky=sky,
        sky_distance=float(distance),
    )
