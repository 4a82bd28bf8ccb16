"""The scale cross-check from object sizes: true boxes of the example street's parked sedan, seen with
the true camera poses, say the scale is right; the same poses scaled up three times (a camera height
prior three times too high) are flagged, with the camera height that fits."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest

from tests.conftest import EXAMPLE_SCENE
from urbanverse.bench.oracle import oracle_detections, oracle_reconstruction, oracle_tracks
from urbanverse.layout.lift import LiftCfg
from urbanverse.layout.scale_check import SizeScale, scale_warning, size_scale
from urbanverse.perception.record import encode_rle
from urbanverse.recon.geometry import rescale
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.video.stage import VideoCfg, run_video


@pytest.fixture(scope="module")
def seen_sedan(tmp_path_factory):
    """True tracks and poses of a 5 s walk (``render-tour`` seed 0) that keeps the sedan in view."""
    root = tmp_path_factory.mktemp("sizes")
    shutil.copytree(EXAMPLE_SCENE, root / "example")
    cfg = TourCfg(seconds=5.0, width=480, height=270, seed=0)
    gt = run_render_tour(root / "example", root / "walk.mp4", cfg)
    kfs = run_video(root / "walk.mp4", root / "video", VideoCfg(max_gap_s=0.5))
    dets = oracle_detections(gt, kfs)
    return oracle_tracks(dets), oracle_reconstruction(gt, kfs)


def test_a_right_scale_passes_and_a_wrong_one_is_named(seen_sedan):
    tracks, recon = seen_sedan
    right = size_scale(tracks, recon, LiftCfg())
    assert right is not None and right.tracks == 1 and right.people == 0  # the sedan; no people here
    assert 0.85 < right.scale < 1.15, right
    assert scale_warning(right, recon.ground.camera_height_m, min_tracks=1) is None

    tripled = rescale(recon, 3.0)  # what a 4.8 m camera height prior makes of a 1.6 m walk
    wrong = size_scale(tracks, tripled, LiftCfg())
    assert wrong is not None and wrong.scale == pytest.approx(right.scale / 3.0, rel=1e-6)
    note = scale_warning(wrong, tripled.ground.camera_height_m, min_tracks=1)
    assert note is not None and "cars (1 tracks) look" in note and "larger" in note
    assert "--camera-height" in note and f"fit {tripled.ground.camera_height_m * wrong.scale:.2f} m" in note
    assert abs(tripled.ground.camera_height_m * wrong.scale - recon.ground.camera_height_m) < 0.25


def test_instance_masks_give_the_ground_contact_as_in_lifting(seen_sedan):
    """Masks whose lowest pixels lie above the box's bottom (a YOLO-seg mask of the car's body)
    move the contact farther along the ray, as lifting does: the car then measures taller."""
    tracks, recon = seen_sedan
    width, height = recon.intrinsics.width, recon.intrinsics.height
    masks = {}
    for track in tracks.tracks:
        for obs in track.observations:
            x1, y1, x2, y2 = (int(v) for v in obs.box)
            body = np.zeros((height, width), bool)
            body[y1 : y1 + int(0.8 * (y2 - y1)), x1:x2] = True
            masks[obs.det_id] = encode_rle(body)
    plain = size_scale(tracks, recon, LiftCfg())
    masked = size_scale(tracks, recon, LiftCfg(), masks=masks)
    assert plain is not None and masked is not None
    assert masked.scale < 0.97 * plain.scale


def test_tracks_without_a_height_prior_say_nothing(seen_sedan):
    tracks, recon = seen_sedan
    others = dataclasses.replace(tracks, tracks=tuple(t for t in tracks.tracks if t.category != "sedan"))
    assert size_scale(others, recon, LiftCfg()) is None


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        (None, None),
        (SizeScale(scale=1.9, tracks=5, people=5), None),  # within a factor of two
        (SizeScale(scale=0.3, tracks=1, people=1), None),  # one track is not enough
        (SizeScale(scale=2.5, tracks=4, people=4), "people (4 tracks) look 2.5 times smaller"),
        (SizeScale(scale=0.25, tracks=3, people=1), "people and cars (3 tracks) look 4.0 times larger"),
    ],
)
def test_the_warning_needs_two_tracks_off_by_a_factor_of_two(check, expected):
    note = scale_warning(check, 1.6)
    assert (note is None) if expected is None else (note is not None and note.startswith(expected))
