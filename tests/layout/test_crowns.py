"""Trees of detector tracks placed by their crowns' dense points: a crown's box whose bottom edge was
cast metres behind the tree comes back to the crown, the hedge behind the crown in the same boxes
does not pull it away, its size shrinks with the distance and a generic "tree" takes the kind that
fits it, and a tree too few views triangulated keeps its place."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.layout.test_proposals import GREEN, _box, _cloud
from tests.video.synth import Street, camera_path, street_reconstruction
from urbanverse.layout.crowns import CrownCfg, place_by_crowns
from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.layout.proposals import is_green
from urbanverse.perception.record import Track, TrackObservation, Tracks
from urbanverse.recon.geometry import project

STREET = Street(width=480, height_px=270)
#: A walk along +x from x = 0 (1.2 m a second, 1.6 m high), keyframes 0-7 one second apart.
RECON = street_reconstruction(STREET, camera_path(STREET, np.arange(8.0)))
CROWN_XY, FAR_XY = np.array([14.0, -3.0]), (24.0, -5.0)
VIEWS = (2, 3, 4, 5)


def _crown_boxes(views=VIEWS) -> tuple[TrackObservation, ...]:
    """The crown's pixel box (1.6 m wide, 2-5 m up) in each of ``views``."""
    corners = np.array(
        [[*(CROWN_XY + [dx, dy]), z] for dx in (-0.8, 0.8) for dy in (-0.8, 0.8) for z in (2.0, 5.0)]
    )
    out = []
    for k in views:
        uv, _ = project(RECON, k, corners)
        box = (*uv.min(axis=0), *uv.max(axis=0))
        out.append(TrackObservation(frame_index=k, det_id=k, box=tuple(float(v) for v in box), score=0.7))
    return tuple(out)


def _track(track_id: int, category: str, observations) -> Track:
    return Track(
        track_id=track_id, category=category, category_path=("vegetation", "broadleaf_trees", category),
        label="tree", score=0.7, dynamic=False, category_votes={category: 0.7}, observations=observations,
    )  # fmt: skip


def _lifted(track_id: int, category: str, xy) -> LiftedObject:
    return LiftedObject(
        track_id=track_id, category=category, label="tree", score=0.7, position=(*xy, 0.0), yaw=0.0,
        yaw_source="street_axis", size=(1.5, 1.5, 5.0), observations=4, spread_m=0.5,
    )  # fmt: skip


def _place(tracks, lifted, cloud, cfg: CrownCfg | None = None):
    objects = LiftedObjects(objects=tuple(lifted), dropped={})
    seen = Tracks(tracks=tuple(tracks), num_frames=8)
    return place_by_crowns(objects, seen, RECON, cloud, is_green(cloud.rgb), cfg or CrownCfg()).objects


def test_a_tree_cast_behind_its_crown_moves_to_the_crown() -> None:
    crown = _box(tuple(CROWN_XY), (1.6, 1.6, 3.0), GREEN, n=1500, keyframes=VIEWS, base_m=2.0)
    # A hedge 8 m farther along the same line of sight fills the same boxes' lower part.
    hedge = _box((22.0, -4.7), (3.0, 1.0, 2.5), GREEN, n=3000, keyframes=VIEWS, base_m=0.5)
    cloud = _cloud(crown, hedge)
    tree = _track(1, "young_street_tree", _crown_boxes())
    (moved,) = _place([tree], [_lifted(1, "young_street_tree", FAR_XY)], cloud)
    assert moved.position[:2] == pytest.approx(CROWN_XY, abs=0.3)
    # Off, the tree stays where its boxes put it.
    (kept,) = _place([tree], [_lifted(1, "young_street_tree", FAR_XY)], cloud, CrownCfg(enabled=False))
    assert kept.position[:2] == pytest.approx(FAR_XY)


def test_only_crowns_the_vegetation_detector_boxed_in_enough_views_move() -> None:
    """A tree glimpsed in one view, a bench, and a tree another detector boxed whole (down to its
    trunk's foot: the round trip's true boxes, labelled by object id) stay where lifting put them."""
    crown = _box(tuple(CROWN_XY), (1.6, 1.6, 3.0), GREEN, n=1500, keyframes=VIEWS, base_m=2.0)
    cloud = _cloud(crown)
    glimpsed = _track(1, "young_street_tree", _crown_boxes(views=(3,)))
    bench = dataclasses.replace(
        _track(2, "bench", _crown_boxes()), category_path=("street_furniture", "seating", "bench")
    )
    boxed_whole = _track(3, "young_street_tree", _crown_boxes())
    lifted = [_lifted(1, "young_street_tree", FAR_XY), _lifted(2, "bench", FAR_XY)]
    lifted.append(dataclasses.replace(_lifted(3, "young_street_tree", FAR_XY), label="young_street_tree_007"))
    objects = _place([glimpsed, bench, boxed_whole], lifted, cloud)
    assert [o.position[:2] for o in objects] == [pytest.approx(FAR_XY)] * 3


def test_a_moved_tree_is_measured_at_its_new_distance() -> None:
    """Cast twice too far, a 4 m young street tree measured 8 m tall and 3 m wide (a broadleaf tree's
    size); at its crown, half as far from the keyframes, it is young again. A class the detector named
    itself keeps its name and takes the new size."""
    crown = _box(tuple(CROWN_XY), (1.6, 1.6, 3.0), GREEN, n=1500, keyframes=VIEWS, base_m=2.0)
    cloud = _cloud(crown)
    eyes = np.array([RECON.keyframes[k].position[:2] for k in VIEWS])
    ratio = np.median(np.linalg.norm(eyes - CROWN_XY, axis=1) / np.linalg.norm(eyes - FAR_XY, axis=1))
    cast = dataclasses.replace(_lifted(1, "broadleaf_tree", FAR_XY), size=(3.0, 3.0, 8.0))
    named = dataclasses.replace(cast, track_id=2, label="broadleaf tree")
    tracks = [_track(1, "broadleaf_tree", _crown_boxes()), _track(2, "broadleaf_tree", _crown_boxes())]
    young, kept = _place(tracks, [cast, named], cloud)
    assert young.category == "young_street_tree" and kept.category == "broadleaf_tree"
    assert young.size == pytest.approx(np.array([3.0, 3.0, 8.0]) * ratio, rel=0.01)
    assert 0.4 < ratio < 0.6
