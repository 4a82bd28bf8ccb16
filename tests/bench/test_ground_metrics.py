"""Whole-street figures and the ground IoU over a generated scene's extent, on hand-made scenes whose
answers are known."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from tests.bench.scenes import box, region, rotation_about_z, scene, thing
from urbanverse.bench.ground_metrics import (
    SeenGrid,
    extent_iou,
    ground_pieces,
    hole_share,
    load_seen_grid,
    scene_checks,
    standing,
    weighted_iou,
)


def _ring(inner: float = 4.0) -> list:
    """Four road strips round a square hole ``inner`` m wide inside a 10 m square."""
    a, b = (10.0 - inner) / 2, (10.0 + inner) / 2
    return [
        region("road", box(0, 0, 10, a)),
        region("road", box(0, b, 10, 10)),
        region("sidewalk", box(0, a, a, b), 0.15),
        region("sidewalk", box(b, a, 10, b), 0.15),
    ]


def test_pieces_count_the_connected_parts_of_the_ground():
    touching = [region("road", box(0, 0, 10, 4)), region("sidewalk", box(0, 4, 10, 7), 0.15)]
    apart = [*touching, region("terrain", box(20, 0, 25, 5))]
    assert ground_pieces(scene(touching)) == 1
    assert ground_pieces(scene(apart)) == 2
    assert ground_pieces(scene([])) == 0


def test_hole_share_is_the_enclosed_bare_area_over_the_enclosed_area():
    assert hole_share(scene(_ring())) == pytest.approx(16.0 / 100.0)
    assert ground_pieces(scene(_ring())) == 1
    full = [*_ring(), region("road", box(3, 3, 7, 7))]
    assert hole_share(scene(full)) == pytest.approx(0.0)
    assert hole_share(scene([])) == 1.0


def test_objects_off_the_ground_floating_and_sunk_are_counted_apart():
    ground = [region("road", box(0, 0, 10, 4)), region("sidewalk", box(0, 4, 10, 7), 0.15)]
    objects = [
        thing("bench", (5, 5, 0.15)),  # on the sidewalk
        thing("bench", (5, 2, 0.0)),  # on the road
        thing("bench", (5, 20, 0.0)),  # on no ground
        thing("bench", (5, 2, 0.5)),  # 0.5 m over the road
        thing("bench", (2, 5, 0.0)),  # in the sidewalk, 0.15 m down
    ]
    counts = standing(scene(ground, objects))
    assert counts == {"no_ground": 1, "floating": 1, "sunk": 1, "off_ground": 3}
    checks = scene_checks(scene(ground, objects[:2]))
    assert checks["off_ground"] == 0 and checks["ground_pieces"] == 1 and checks["hole_share"] == 0


def test_weighted_iou_weighs_each_true_type_by_its_cells():
    true = np.array(["road"] * 6 + ["sidewalk"] * 2, dtype=object)
    generated = np.array(["road"] * 8, dtype=object)
    # road: 6 / 8; sidewalk: 0 / 2; weights 6 and 2.
    assert weighted_iou(generated, true) == pytest.approx((6 / 8 * 6 + 0 * 2) / 8)
    assert math.isnan(weighted_iou(generated[:0], true[:0]))


@pytest.mark.parametrize("angle", [0.0, 0.7])
def test_extent_iou_splits_the_seen_half_from_the_inferred_half(angle):
    """The generated scene is all road; the true street is road below y = 5 and sidewalk above it; the
    ground stage saw the lower half. Seen: all right; inferred: all wrong; whole: road 0.5 x 0.5."""
    truth = scene([region("road", box(0, 0, 10, 5)), region("sidewalk", box(0, 5, 10, 10), 0.15)])
    move = rotation_about_z(angle, (3.0, -2.0))  # true -> generated frame
    corners = np.array(box(0, 0, 10, 10)) @ move[:2, :2].T + move[:2, 2]
    generated = scene([region("road", [tuple(p) for p in corners])])
    # Seen cells: the true frame's lower half, in the generated frame's grid.
    origin, cell = (-20.0, -20.0), 0.05
    rows, cols = np.mgrid[0:800, 0:800]
    centres = np.column_stack([cols.ravel(), rows.ravel()]) * cell + np.array(origin) + cell / 2
    back = np.linalg.inv(move)
    in_true = centres @ back[:2, :2].T + back[:2, 2]
    grid = SeenGrid(origin=origin, cell_m=cell, seen=(in_true[:, 1] < 5.0).reshape(800, 800))
    out = extent_iou(generated, truth, np.linalg.inv(move), grid, cell_m=0.1)
    assert out["extent_iou"] == pytest.approx(0.25, abs=0.02)
    assert out["extent_iou_seen"] == pytest.approx(1.0, abs=0.01)
    assert out["extent_iou_inferred"] == pytest.approx(0.0, abs=0.01)
    assert out["seen_share"] == pytest.approx(0.5, abs=0.02)


def test_a_hole_in_the_generated_ground_counts_against_it_where_the_truth_has_ground():
    truth = scene([region("road", box(0, 0, 10, 10))])
    whole = extent_iou(scene([region("road", box(0, 0, 10, 10))]), truth, np.eye(3), cell_m=0.1)
    holed = extent_iou(scene(_ring()), truth, np.eye(3), cell_m=0.1)
    assert whole["extent_iou"] == pytest.approx(1.0)
    # Road in 60 of the 100 m^2 (the strips), sidewalk in 24, a hole of 16: road IoU 60 / 100.
    assert holed["extent_iou"] == pytest.approx(0.6, abs=0.01)
    assert math.isnan(holed["extent_iou_seen"]) and math.isnan(holed["seen_share"])


def test_ground_made_up_off_the_true_street_counts_against_it():
    truth = scene([region("road", box(0, 0, 10, 5))])
    generated = scene([region("road", box(0, 0, 10, 10))])
    # Road: 50 / 100; "off" the true street: 0 / 50; weights 50 and 50.
    assert extent_iou(generated, truth, np.eye(3), cell_m=0.1)["extent_iou"] == pytest.approx(0.25, abs=0.01)


def test_the_seen_grid_is_read_from_the_ground_stage_s_work_folder(tmp_path):
    assert load_seen_grid(tmp_path) is None
    work = tmp_path / "work" / "06_ground"
    work.mkdir(parents=True)
    classes = np.zeros((4, 6), np.uint8)
    classes[1, 2] = 3  # the cell x in [1.0, 1.5), y in [10.5, 11.0)
    np.savez_compressed(work / "ground_grid.npz", classes=classes, count=classes)
    meta = {"origin": [0.0, 10.0], "cell_m": 0.5, "shape": [4, 6], "grid_file": "ground_grid.npz"}
    (work / "ground.json").write_text(json.dumps(meta))
    grid = load_seen_grid(tmp_path)
    assert grid is not None and grid.seen.sum() == 1
    assert grid.at(np.array([[1.2, 10.7], [0.2, 10.2], [1.2, 9.7], [50.0, 50.0]])).tolist() == [
        True,
        False,
        False,
        False,
    ]
