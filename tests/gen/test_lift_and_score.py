"""Lifting against the truth: with true camera poses and true 2D boxes, objects land where the scene
has them; and the round-trip scorer gives perfect scores to the truth itself."""

from __future__ import annotations

import dataclasses
import math
import shutil

import numpy as np
import pytest
from PIL import Image

from tests.conftest import EXAMPLE_SCENE
from urbanverse.assets.taxonomy import get_class
from urbanverse.bench.evaluate import (
    ahead_of_walk,
    camera_path_errors,
    class_counts,
    compare_scenes,
    match_objects,
    seen_objects,
)
from urbanverse.bench.match_plot import plot_match
from urbanverse.bench.oracle import (
    oracle_detections,
    oracle_reconstruction,
    oracle_tracks,
    true_camera_height,
)
from urbanverse.layout.lift import (
    SHAPED_TREES,
    LiftCfg,
    TrackView,
    _agreeing,
    category_by_votes_and_height,
    mask_contact,
    mean_size,
    measured_size,
    observation_views,
    run_lifting,
    tree_class_from_shape,
)
from urbanverse.perception.record import encode_rle
from urbanverse.recon.geometry import pixel_to_ground
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.render.walk import WalkCfg
from urbanverse.scene.record import CameraPose, load_scene
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
    assert scores["matched"] == scores["generated"] == len(scene.objects)
    assert scores["pos_err_m"] == 0.0 and scores["ground_iou"] == pytest.approx(1.0)
    assert scores["pos_errors_m"] == [0.0] * len(scene.objects)
    assert scores["yaw_errors_deg"] and max(scores["yaw_errors_deg"]) == pytest.approx(0.0, abs=1e-9)
    assert scores["hits_ahead"] == scores["true_ahead"]
    # Alignment from the camera path recovers a moved copy of the scene.
    assert scores["map25"] == pytest.approx(1.0)


def test_class_counts_split_seen_objects_into_paired_found_and_named_right(tour):
    root, gt, _ = tour
    scene = load_scene(root / "example")
    seen = seen_objects(scene, gt)
    moved, renamed = seen[0], seen[1]
    objects = list(scene.objects)
    x, y, z = objects[moved].position
    objects[moved] = dataclasses.replace(objects[moved], position=(x + 1.5, y, z))  # paired, not found
    wrong = "bench" if objects[renamed].category != "bench" else "bollard"
    objects[renamed] = dataclasses.replace(objects[renamed], category=wrong)
    generated = dataclasses.replace(scene, objects=tuple(objects))
    counts = class_counts(match_objects(generated, scene, gt, aligned=True), generated, scene)
    n = len(seen)
    assert sum(c[0] for c in counts.values()) == n
    assert [sum(c[j] for c in counts.values()) for j in (1, 2, 3)] == [n, n - 1, n - 1]
    seen_of_class, paired, found, _ = counts[get_class(scene.objects[moved].category).l2]
    assert paired == seen_of_class and found == paired - 1


def test_the_match_map_shows_what_the_scores_count(tour, tmp_path):
    """Against the truth: one object moved 1.5 m, one renamed, one left out. The map counts one hit
    fewer per change, one pair farther out, one missed, one named wrong, as the scores do."""
    root, gt, _ = tour
    scene = load_scene(root / "example")
    xy = np.array([o.position[:2] for o in scene.objects])
    gaps = np.sort(np.linalg.norm(xy[:, None] - xy[None], axis=2), axis=1)[:, 1]
    moved, renamed, dropped = [i for i in seen_objects(scene, gt) if gaps[i] > 4.0][:3]
    objects = list(scene.objects)
    x, y, z = objects[moved].position
    objects[moved] = dataclasses.replace(objects[moved], position=(x + 1.5, y, z))
    other = "bench" if objects[renamed].category != "bench" else "bollard"
    objects[renamed] = dataclasses.replace(objects[renamed], category=other)
    del objects[dropped]
    generated = dataclasses.replace(scene, objects=tuple(objects))
    counts = plot_match(generated, scene, gt, tmp_path / "map.png", "test", aligned=True)
    scores = compare_scenes(generated, scene, gt, aligned=True)
    seen = len(seen_objects(scene, gt))
    assert counts["hit"] == round(scores["recall_1m"] * seen) == seen - 2
    assert (counts["paired"], counts["missed"], counts["wrong_class"]) == (1, 1, 1)
    assert counts["unseen"] == len(scene.objects) - seen and counts["generated"] == len(scene.objects) - 1
    image = np.asarray(Image.open(tmp_path / "map.png").convert("RGB"))
    assert image.shape[1] > 800 and len(np.unique(image.reshape(-1, 3), axis=0)) > 50


def test_objects_beyond_the_walk_s_last_camera_lie_ahead_of_it(tour):
    """The 8 s walk stops short of some of the objects it saw: those, and only those, are nearer its
    last camera than any other; an object moved 30 m past the end joins them, one moved to the
    start leaves."""
    root, gt, _ = tour
    scene = load_scene(root / "example")
    cameras = np.array([np.asarray(f.world_from_camera).reshape(4, 4)[:2, 3] for f in gt.frames])
    heading = (cameras[-1] - cameras[-5]) / np.linalg.norm(cameras[-1] - cameras[-5])
    seen = seen_objects(scene, gt)
    ahead = ahead_of_walk(scene, gt, seen)
    for i in seen:
        beyond = (np.asarray(scene.objects[i].position[:2]) - cameras[-1]) @ heading > 0
        assert (i in ahead) == beyond, scene.objects[i].category
    moved = list(scene.objects)
    moved[seen[0]] = dataclasses.replace(moved[seen[0]], position=(*(cameras[-1] + 30 * heading), 0.0))
    moved[seen[-1]] = dataclasses.replace(moved[seen[-1]], position=(*cameras[0], 0.0))
    ahead = ahead_of_walk(dataclasses.replace(scene, objects=tuple(moved)), gt, seen)
    assert seen[0] in ahead and seen[-1] not in ahead


def test_a_scaled_camera_path_shows_as_scale_not_shape(tour):
    """The true path, 10 % too long, turned and moved: the rigid fit leaves metres of error, the fit
    that may scale leaves none and reports the scale that undoes it."""
    root, gt, _ = tour
    c, s = math.cos(0.7), math.sin(0.7)
    poses = []
    for k, frame in enumerate(gt.frames[::5]):
        x, y, z = np.reshape(frame.world_from_camera, (4, 4))[:3, 3]
        moved = (float(1.1 * (c * x - s * y) + 3.0), float(1.1 * (s * x + c * y) - 2.0), float(z))
        poses.append(CameraPose(frame=5 * k, time_s=frame.time_s, position=moved, quat_wxyz=(1.0, 0, 0, 0)))
    scene = dataclasses.replace(load_scene(root / "example"), camera_trajectory=tuple(poses))
    errors = camera_path_errors(scene, gt)
    assert errors["path_scale"] == pytest.approx(1 / 1.1, rel=1e-6)
    assert errors["path_rms_scaled_m"] < 1e-6 < 0.1 < errors["path_rms_m"]
    one_pose = dataclasses.replace(scene, camera_trajectory=tuple(poses[:1]))
    assert math.isnan(camera_path_errors(one_pose, gt)["path_scale"])


@pytest.mark.parametrize(
    ("height", "width", "expected"),
    [
        (3.5, 1.4, "young_street_tree"),
        (12.0, 2.4, "columnar_tree"),
        (4.5, 1.2, "young_street_tree"),  # small and narrow: a young tree, not a columnar one
        (9.0, 6.0, "broadleaf_tree"),
        (4.0, 3.5, "broadleaf_tree"),  # low but wide
        (float("nan"), 3.0, "broadleaf_tree"),  # unmeasured: unchanged
    ],
)
def test_tree_kind_follows_the_measured_proportions(height, width, expected):
    assert tree_class_from_shape("broadleaf_tree", height, width) == expected


def test_only_tree_kinds_are_reshaped():
    assert tree_class_from_shape("weeping_tree", 3.0, 1.0) == "weeping_tree"
    assert tree_class_from_shape("street_lamp", 3.0, 0.3) == "street_lamp"


def test_lifted_trees_take_their_measured_size(tour):
    root, gt, kfs = tour
    scene = load_scene(root / "example")
    dets = oracle_detections(gt, kfs)
    lifted = run_lifting(oracle_tracks(dets), dets, oracle_reconstruction(gt, kfs))
    trees = [o for o in lifted.objects if o.category in SHAPED_TREES]
    assert trees
    for obj in trees:
        truth = next(o for o in scene.objects if o.id == obj.label)
        assert obj.size[2] == pytest.approx(truth.size[2], rel=0.25)


@pytest.mark.parametrize(("label", "expected"), [("tree", "broadleaf_tree"), ("poplar", "columnar_tree")])
def test_a_generic_tree_label_takes_the_kind_its_shape_fits(tour, label, expected):
    """The example's trees are broadleaf (2.8 m crowns, 5 m tall). Tracked as a "columnar_tree" under
    the generic label "tree", lifting re-classes them by shape; a label naming the kind is kept."""
    root, gt, kfs = tour
    dets = oracle_detections(gt, kfs)
    tracks = oracle_tracks(dets)
    trees = {t.track_id for t in tracks.tracks if t.category == "broadleaf_tree"}
    assert trees
    relabelled = dataclasses.replace(
        tracks,
        tracks=tuple(
            dataclasses.replace(t, label=label, category="columnar_tree") if t.track_id in trees else t
            for t in tracks.tracks
        ),
    )
    lifted = run_lifting(relabelled, dets, oracle_reconstruction(gt, kfs))
    kinds = {o.category for o in lifted.objects if o.track_id in trees}
    assert kinds == {expected}


def test_a_tree_cut_by_the_frame_top_takes_its_width_and_the_class_proportions():
    track = type(
        "T", (), {"category": "broadleaf_tree", "label": "tree", "category_votes": {"broadleaf_tree": 1.0}}
    )()
    views = [
        TrackView(np.zeros(3), np.zeros(3), height=4.0, top_cut=True, width=3.0),
        TrackView(np.zeros(3), np.zeros(3), height=6.0, top_cut=True, width=float("nan")),
    ]
    category, size = measured_size(track, views, LiftCfg())
    mean = (np.array(get_class("broadleaf_tree").size_min) + get_class("broadleaf_tree").size_max) / 2
    assert category == "broadleaf_tree"  # no full height: the kind cannot be told
    assert size[0] == size[1] == 3.0
    assert size[2] == pytest.approx(max(mean[2] * 3.0 / mean[0], 6.0))


def test_split_votes_go_to_the_class_whose_height_fits():
    votes = {"city_bus": 0.42, "sedan": 0.41}  # one view "bus", one "car"
    assert category_by_votes_and_height(votes, 1.5) == "sedan"
    assert category_by_votes_and_height(votes, 3.1) == "city_bus"
    assert category_by_votes_and_height(votes, float("nan")) == "city_bus"  # unmeasured: the plain vote
    # Classes of about the same height are left to the vote, whatever the (noisy) height says.
    close = {"bench": 0.48, "outdoor_chair": 0.41}
    assert all(category_by_votes_and_height(close, h) == "bench" for h in (0.6, 0.8, 1.0, 1.1))


def _views(*pairs) -> list[TrackView]:
    """Track views of ``(xy, eye)`` pairs: ground contacts seen from camera positions (m)."""
    return [TrackView(np.array([*xy, 0.0]), np.array([*eye, 1.6]), 1.0, False, 1.0) for xy, eye in pairs]


def test_contacts_of_a_second_object_are_left_out():
    """Three boxes of a tree and two of a bollard 9 m away in one track: the tree's contacts agree
    with each other, so they stay; turned off (``consensus_m`` 0), every contact stays."""
    tree = [((7.0, 4.4), (0.0, 0.0)), ((7.3, 4.2), (1.0, 0.0)), ((6.8, 4.5), (2.0, 0.0))]
    bollard = [((-2.5, 3.8), (3.0, 0.0)), ((-2.3, 3.9), (4.0, 0.0))]
    views = _views(*bollard, *tree)
    kept = _agreeing(views, mean_size("broadleaf_tree"), LiftCfg())
    assert [tuple(v.ground[:2]) for v in kept] == [xy for xy, _ in tree]
    assert len(_agreeing(views, mean_size("broadleaf_tree"), LiftCfg(consensus_m=0.0))) == 5


def test_contacts_sliding_along_a_passing_car_and_far_ones_agree():
    """A box's bottom centre slides along a parked car's side as the camera passes (half the car's
    footprint), and contacts 25 m off scatter with depth error (``consensus_share`` of the range)."""
    car = _views(*(((x, 4.0), (x - 3.0, 0.0)) for x in (-2.0, -1.0, 0.0, 1.0, 2.2)))
    assert len(_agreeing(car, mean_size("sedan"), LiftCfg())) == 5
    far = _views(((25.0, 1.0), (0.0, 0.0)), ((27.6, 1.0), (1.0, 0.0)), ((26.2, 2.0), (2.0, 0.0)))
    assert len(_agreeing(far, mean_size("bollard"), LiftCfg())) == 3
    assert len(_agreeing(far, mean_size("bollard"), LiftCfg(consensus_share=0.0))) < 3


def test_a_mask_contact_is_the_middle_of_its_lowest_pixels():
    mask = np.zeros((100, 80), bool)
    mask[20:90, 10:70] = True  # a bench's back and seat
    mask[90:100, 10:20] = True  # its near leg reaches lowest, at the left
    np.testing.assert_allclose(mask_contact(mask), [15.0, 100.0])  # columns 10-19, bottom edge of row 99
    assert mask_contact(np.zeros((5, 5), bool)) is None
    one = np.zeros((5, 5), bool)
    one[2, 3] = True
    np.testing.assert_allclose(mask_contact(one), [3.5, 3.0])


def test_lifting_takes_the_ground_contact_from_a_detection_s_mask(tour):
    root, gt, kfs = tour
    dets = oracle_detections(gt, kfs)
    recon = oracle_reconstruction(gt, kfs)
    track = max(oracle_tracks(dets).tracks, key=lambda t: len(t.observations))
    obs = track.observations[0]
    x1, y1, x2, y2 = (int(round(v)) for v in obs.box)
    w, h = recon.intrinsics.width, recon.intrinsics.height
    mask = np.zeros((h, w), bool)
    mask[y1 : y2 - 3, x1:x2] = True
    mask[y2 - 3 : y2, x1 : x1 + 4] = True  # the lowest pixels at the box's left edge
    masks = {obs.det_id: encode_rle(mask)}
    cfg = LiftCfg()
    with_mask = observation_views(track, recon, w, h, cfg, masks=masks)[0].ground
    box_only = observation_views(track, recon, w, h, cfg)[0].ground
    expected = pixel_to_ground(recon, obs.frame_index, np.array([[x1 + 2.0, y2]]), cfg.max_distance_m)[0]
    np.testing.assert_allclose(with_mask, expected, atol=1e-9)
    centre = pixel_to_ground(recon, obs.frame_index, np.array([[(x1 + x2) / 2, y2]]), cfg.max_distance_m)[0]
    assert np.linalg.norm(box_only - with_mask) > 0.01 and np.linalg.norm(box_only - centre) < 0.05


@pytest.mark.parametrize(("source", "moves"), [("yolo:street-seg", True), ("vegetation", False)])
def test_only_instance_segmentation_masks_give_contacts(tour, source, moves):
    root, gt, kfs = tour
    dets = oracle_detections(gt, kfs)
    recon = oracle_reconstruction(gt, kfs)
    w, h = recon.intrinsics.width, recon.intrinsics.height

    def left_foot(d):  # a mask whose lowest pixels sit at the box's left edge
        x1, y1, x2, y2 = (int(round(v)) for v in d.box)
        mask = np.zeros((h, w), bool)
        mask[y1 : y2 - 3, x1:x2] = True
        mask[y2 - 3 : y2, x1 : x1 + 4] = True
        return dataclasses.replace(d, source=source, mask=encode_rle(mask))

    masked = dataclasses.replace(
        dets,
        frames=tuple(
            dataclasses.replace(f, detections=tuple(left_foot(d) for d in f.detections)) for f in dets.frames
        ),
    )
    plain = run_lifting(oracle_tracks(dets), dets, recon)
    with_masks = run_lifting(oracle_tracks(masked), masked, recon)
    pairs = zip(plain.objects, with_masks.objects, strict=True)
    shift = [math.dist(a.position, b.position) for a, b in pairs]
    assert (max(shift) > 0.05) == moves, shift


def test_true_camera_height_is_the_walk_s_height_above_the_pavement(tmp_path):
    """The ``true_height`` benchmark mode tells gen this height: the walk's own, not the camera's z
    (the sidewalk it walks on stands 0.15 m above the road)."""
    shutil.copytree(EXAMPLE_SCENE, tmp_path / "example")
    walk = WalkCfg(height_range=(1.35, 1.35))
    cfg = TourCfg(seconds=2.0, width=192, height=108, seed=1, walk=walk)
    gt = run_render_tour(tmp_path / "example", tmp_path / "walk.mp4", cfg)
    z = np.median([np.reshape(f.world_from_camera, (4, 4))[2, 3] for f in gt.frames])
    assert z > 1.4  # on a raised sidewalk
    assert true_camera_height(gt) == pytest.approx(1.35, abs=0.03)
