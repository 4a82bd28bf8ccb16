"""The retrieval stage's looks: objects without a detector box take theirs from the keyframes."""

from __future__ import annotations

import numpy as np

from tests.video.synth import Street, camera_path, street_reconstruction
from urbanverse.colour import srgb8_to_lab
from urbanverse.layout.appearance import box_corners
from urbanverse.layout.lift import LiftedObject, LiftedObjects
from urbanverse.recon.geometry import project
from urbanverse.retrieval.appearance import object_looks
from urbanverse.retrieval.cousins import RetrievalCfg
from urbanverse.retrieval.stage import _projected_boxes

RED, GREY = (200, 30, 30), (128, 128, 128)


def _object(track_id: int, x: float, **changes) -> LiftedObject:
    fields = {
        "track_id": track_id, "category": "bench", "label": "dense points", "score": 0.3,
        "position": (x, 3.0, 0.0), "yaw": 0.0, "yaw_source": "faces_street", "size": (1.8, 0.6, 0.8),
        "observations": 2, "spread_m": 0.0,
    }  # fmt: skip
    return LiftedObject(**(fields | changes))


def test_an_object_found_in_the_dense_points_takes_the_colour_its_box_covers_in_the_keyframes() -> None:
    street = Street(width=480, height_px=270)
    recon = street_reconstruction(street, camera_path(street, np.array([1.0, 1.5])))
    images = {0: np.full((270, 480, 3), GREY, np.uint8), 1: np.full((270, 480, 3), GREY, np.uint8)}
    red = _object(1_000_000, 9.0)
    corners = box_corners(np.array([9.0, 3.0]), np.array([1.0, 0.0]), *red.size)
    for index, image in images.items():  # a red bench, seen in both keyframes
        uv, _ = project(recon, index, corners)
        (u0, v0), (u1, v1) = np.clip(uv.min(axis=0), 0, None), uv.max(axis=0)
        image[int(v0) : int(v1) + 1, int(u0) : int(u1) + 1] = RED
    lifted = LiftedObjects(
        objects=(
            red,
            _object(1_000_001, 16.0),  # grey paving where it stands
            _object(7, 9.0),  # a track: its detector boxes colour it, not this
            _object(1_000_002, 9.0, front_only=True),  # a facade's front: no box to cut
        ),
        dropped={},
    )
    boxes = _projected_boxes(lifted, recon, images, skip={7})
    assert set(boxes) == {1_000_000, 1_000_001}
    looks = object_looks(boxes, images, RetrievalCfg(use_look=False))
    assert np.allclose(looks[1_000_000].lab, srgb8_to_lab(np.array(RED, np.uint8)))
    assert np.allclose(looks[1_000_001].lab, srgb8_to_lab(np.array(GREY, np.uint8)))
    assert looks[1_000_000].vector is None  # the crops are embedded only where look ranks
    # Without the keyframes' images there is nothing to cut.
    assert _projected_boxes(lifted, recon, {}, skip=set()) == {}
