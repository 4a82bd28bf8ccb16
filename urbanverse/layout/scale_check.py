"""The metric scale cross-checked with object sizes: people are about 1.7 m tall, cars about 1.5 m.

The camera stage makes the scene metric from the ground plane and the camera's height above it
(``--camera-height``, 1.6 m for a walking person). A camera carried otherwise (on a robot at 0.5 m,
on a car's dashboard at 1.3 m) filmed with that prior left at walking height scales every length of
the scene by the ratio of the two heights. People and cars vary little in height, so their boxes,
measured at the depth of their ground contact (:func:`urbanverse.layout.lift.observation_views`),
say how far off the scale is: per track, the class's prior height over its median measured height
(views whose box touches the frame's top left out); over tracks, the median.

What it is good for: detector boxes are too rough (car boxes that come out low, "people" found where
there are none) for the ratio to correct a scale that is a few per cent off, while it cannot miss a
wrong camera height. So the check does not rescale a scene; it flags a scale off by more than
``tolerance`` (default a factor of two).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.layout.lift import LiftCfg, observation_views, road_surface
from urbanverse.layout.street import along_street
from urbanverse.perception.record import Mask, Tracks
from urbanverse.recon.record import Reconstruction
from urbanverse.records import record

#: Typical standing heights (m) by taxonomy L2 class: the issue's object-size priors.
HEIGHT_PRIORS_M = {"people": 1.7, "cars": 1.5}
#: Views out to this many times lifting's ``max_distance_m`` count.
FAR_FACTOR = 4.0


@record
class SizeScale:
    """``scale``: true metres per scene metre that the people's and cars' heights imply (the median
    over ``tracks`` tracks, ``people`` of them people)."""

    scale: float
    tracks: int
    people: int


def size_scale(
    tracks: Tracks,
    recon: Reconstruction,
    cfg: LiftCfg,
    surface: Callable[[np.ndarray], np.ndarray] | None = None,
    road_xy: np.ndarray | None = None,
    masks: dict[int, Mask] | None = None,
) -> SizeScale | None:
    """The scale the people and cars among ``tracks`` imply (moving ones too: a walker's feet touch
    the ground as a bench's do), or None when none of them has a view with its top in the frame.
    ``surface`` and ``road_xy`` as for :func:`urbanverse.layout.lift.run_lifting`: cars stand on
    the road; ``masks``: the instance masks that give lifting its ground contacts
    (:func:`urbanverse.layout.lift.contact_masks`)."""
    width, height = recon.intrinsics.width, recon.intrinsics.height
    # A scene scaled up by a wrong camera height puts its objects that much farther: lifting's range
    # limit would leave out the very views that show it.
    cfg = dataclasses.replace(cfg, max_distance_m=FAR_FACTOR * cfg.max_distance_m)
    on_road = road_surface(surface, np.zeros((0, 2)) if road_xy is None else road_xy)
    ratios, people = [], 0
    for track in tracks.tracks:
        l2 = get_class(track.category).l2
        if l2 not in HEIGHT_PRIORS_M:
            continue
        ground_at = on_road if on_road is not None and along_street(track.category) else surface
        views = observation_views(track, recon, width, height, cfg, ground_at, masks)
        heights = [v.height for v in views if not v.top_cut and v.height > 0]
        if heights:
            ratios.append(HEIGHT_PRIORS_M[l2] / float(np.median(heights)))
            people += l2 == "people"
    if not ratios:
        return None
    return SizeScale(scale=float(np.median(ratios)), tracks=len(ratios), people=people)


def scale_warning(
    check: SizeScale | None, camera_height_m: float, tolerance: float = 2.0, min_tracks: int = 2
) -> str | None:
    """A line for the report when the object sizes of ``check`` (at least ``min_tracks`` tracks)
    put the scale more than a factor ``tolerance`` from 1, naming the camera height (m) that would
    fit them given the ``camera_height_m`` the scene was made with; None otherwise."""
    if check is None or check.tracks < min_tracks or abs(math.log(check.scale)) <= math.log(tolerance):
        return None
    what = "people" if check.people == check.tracks else "cars" if check.people == 0 else "people and cars"
    size = "smaller" if check.scale > 1 else "larger"
    return (
        f"{what} ({check.tracks} tracks) look {max(check.scale, 1 / check.scale):.1f} times {size} "
        f"than they are: the scale may be off; if the camera was not {camera_height_m:g} m above the "
        f"ground, rerun with --camera-height (these sizes fit {camera_height_m * check.scale:.2f} m)"
    )
