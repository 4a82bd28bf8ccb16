"""Lifting against the truth: with true camera poses and true 2D boxes, objects land where the scene
has them; and the round-trip scorer gives perfect scores to the truth itself."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.conftest import EXAMPLE_SCENE
from urbanverse.gen.evaluate import compare_scenes, seen_objects
from urbanverse.gen.oracle import oracle_detections, oracle_reconstruction, oracle_tracks
from urbanverse.layout.lift import run_lifting
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.scene.record import load_scene
from urbanverse.video.stage import VideoCfg, run_video


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    root = tmp_path_factory.mktemp("lift")
    shutil.copytree(EXAMPLE_SCENE, root / "example")
    gt = run_render_tour(
        root / "example", root / "walk.mp4", TourCfg(seconds=8.0, width=480, height=270, seed=4)
    )
    kfs = run_video(root / "walk.mp4", root / "video", VideoCfg(max_gap_s=0.5))
    return root, gt, kfs


def test_true_poses_and_boxes_put_objects_within_half_a_metre(tour):
    root, gt, kfs = tour
    scene = load_scene(root / "example")
    dets = oracle_detections(gt, kfs)
    lifted = run_lifting(oracle_tracks(dets), dets, oracle_reconstruction(gt, kfs))
    assert len(lifted.objects) >= 3
    errors = []
    for obj in lifted.objects:
        truth = next(o for o in scene.objects if o.id == obj.label)  # oracle labels are object ids
        assert obj.category == truth.category
        errors.append(np.linalg.norm(np.subtract(obj.position[:2], truth.position[:2])))
    assert np.median(errors) < 0.5, errors


def test_the_truth_scores_perfectly_against_itself(tour):
    root, gt, _ = tour
    scene = load_scene(root / "example")
    assert seen_objects(scene, gt)
    scores = compare_scenes(scene, scene, gt, aligned=True)
    assert scores["recall_1m"] == scores["precision_1m"] == scores["cat_acc"] == 1.0
    assert scores["pos_err_m"] == 0.0 and scores["ground_iou"] == pytest.approx(1.0)
    # Alignment from the camera path recovers a moved copy of the scene.
    assert scores["map25"] == pytest.approx(1.0)
