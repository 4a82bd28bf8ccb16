"""Ground-truth stand-ins for gen stages, from a rendered tour's ``<stem>_gt.json``.

The round-trip benchmark runs ``gen`` once blind and once with some stages replaced by the truth
(camera poses, 2D boxes) or told the true camera height, to show which stage the error comes from:
:func:`oracle_stages` gives gen's stage table with those entries swapped. Oracle poses are in the true
scene's frame, so a scene generated from them needs no alignment to be compared.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from urbanverse.gen.stages import Stage, Store, replace_stage
from urbanverse.gen.table import STAGES, CameraModel
from urbanverse.perception.record import (
    TRACKS_FILE,
    Detection,
    FrameDetection,
    FrameDetections,
    Track,
    TrackObservation,
    Tracks,
)
from urbanverse.recon.geometry import empty_points, pose_angles
from urbanverse.recon.record import GroundPlaneFit, KeyframePose, Reconstruction
from urbanverse.records import save_json
from urbanverse.render.tour import TourGroundTruth
from urbanverse.video.record import CameraIntrinsics, KeyframeSet


def _scale(gt: TourGroundTruth, kfs: KeyframeSet) -> float:
    return kfs.working_size[0] / gt.intrinsics.width


def _centres_and_pavement(gt: TourGroundTruth) -> tuple[np.ndarray, np.ndarray]:
    """The true camera centres ``(N, 3)`` of the tour's frames and the ground's top ``(N,)`` under
    each (m), from the tour's scene."""
    from urbanverse.scene.ground import top_height_at
    from urbanverse.scene.record import load_scene

    centres = np.array([np.reshape(f.world_from_camera, (4, 4))[:3, 3] for f in gt.frames])
    return centres, top_height_at(load_scene(gt.scene_dir).ground, centres[:, :2])


def true_camera_height(gt: TourGroundTruth) -> float:
    """The camera's true height (m) above the ground under it, the median over the tour's frames: what
    a user who measured their rig would pass as ``--camera-height`` (the walk draws one per tour,
    1.5-1.7 m, against gen's default prior of 1.6 m)."""
    centres, pavement = _centres_and_pavement(gt)
    return float(np.median(centres[:, 2] - pavement))


def oracle_reconstruction(gt: TourGroundTruth, kfs: KeyframeSet) -> Reconstruction:
    """True intrinsics (at the working size) and true camera poses for every keyframe, lowered so that
    the pavement the camera walks on is z = 0, as the camera stage puts it."""
    pavement = float(np.median(_centres_and_pavement(gt)[1]))
    s = _scale(gt, kfs)
    k = gt.intrinsics
    intrinsics = CameraIntrinsics(
        width=kfs.working_size[0],
        height=kfs.working_size[1],
        fx=k.fx * s,
        fy=k.fy * s,
        cx=k.cx * s,
        cy=k.cy * s,
    )
    poses = []
    for kf in kfs.keyframes:
        m = np.reshape(gt.frames[kf.frame].world_from_camera, (4, 4)).copy()
        m[2, 3] -= pavement
        yaw, pitch, roll = pose_angles(m)
        poses.append(
            KeyframePose(
                index=kf.index, frame=kf.frame, time_s=kf.time_s, image=kf.image, registered=True,
                world_from_camera=tuple(tuple(float(v) for v in row) for row in m),
                position=tuple(float(v) for v in m[:3, 3]), yaw_rad=yaw, pitch_rad=pitch, roll_rad=roll,
            )
        )  # fmt: skip
    heights = [p.position[2] for p in poses]
    return Reconstruction(
        mode="sfm",
        intrinsics=intrinsics,
        keyframes=tuple(poses),
        ground=GroundPlaneFit(method="camera_prior", camera_height_m=float(np.mean(heights))),
        scale_source="ground_plane",
        metric_scale=1.0,
        camera_height_prior_m=float(np.mean(heights)),
        warnings=("oracle: true camera poses from the tour's ground truth",),
    )


def oracle_detections(gt: TourGroundTruth, kfs: KeyframeSet, min_pixels: int = 150) -> FrameDetections:
    """True 2D boxes (visible pixels) of every object seen in each keyframe, score 1; the detection's
    ``label`` is the true object id (so :func:`oracle_tracks` can follow identities)."""
    from urbanverse.assets.taxonomy import get_class

    s = _scale(gt, kfs)
    frames, det_id = [], 0
    for kf in kfs.keyframes:
        dets = []
        for v in gt.frames[kf.frame].visible:
            if v.pixels < min_pixels:
                continue
            cls = get_class(v.category)
            x1, y1, x2, y2 = (c * s for c in v.box_xyxy)
            dets.append(
                Detection(
                    det_id=det_id, label=v.object_id, category=v.category,
                    category_path=(cls.l1, cls.l2, cls.l3),
                    score=1.0, box=(x1, y1, x2, y2), source="oracle",
                )
            )  # fmt: skip
            det_id += 1
        frames.append(
            FrameDetection(
                frame_index=kf.index,
                width=kfs.working_size[0],
                height=kfs.working_size[1],
                detections=tuple(dets),
            )
        )
    return FrameDetections(detectors=("oracle",), frames=tuple(frames))


def oracle_tracks(detections: FrameDetections) -> Tracks:
    """True identities: one track per object over the oracle detections (labels are object ids)."""
    by_object: dict[str, list] = {}
    for frame in detections.frames:
        for d in frame.detections:
            by_object.setdefault(d.label, []).append((frame.frame_index, d))
    tracks = []
    for k, (object_id, seen) in enumerate(sorted(by_object.items())):
        d0 = seen[0][1]
        tracks.append(
            Track(
                track_id=k, category=d0.category, category_path=d0.category_path, label=object_id, score=1.0,
                dynamic=False, category_votes={d0.category: float(len(seen))},
                observations=tuple(
                    TrackObservation(frame_index=i, det_id=d.det_id, box=d.box, score=1.0) for i, d in seen
                ),
            )
        )  # fmt: skip
    return Tracks(tracks=tuple(tracks), num_frames=len(detections.frames))


def oracle_stages(
    gt: TourGroundTruth, poses: bool, boxes: bool, stages: Sequence[Stage] = STAGES
) -> tuple[Stage, ...]:
    """gen's stage table with the camera stage replaced by the tour's true poses (``poses``) and
    detection and tracking by the true 2D boxes and identities (``boxes``). Each oracle's cache key
    names the tour, so a folder run blind never serves an oracle run or another tour's."""
    truth = ("oracle", str(gt.scene_dir), len(gt.frames))
    default = {s.name: s for s in stages}
    out = tuple(stages)

    def true_camera(video, *, cfg, env) -> CameraModel:
        return CameraModel(oracle_reconstruction(gt, video.keyframes), empty_points())

    def save_tracks(tracks: Tracks, work: Path) -> None:
        save_json(tracks, work / TRACKS_FILE)

    if poses:
        camera = default["camera"]
        out = replace_stage(out, dataclasses.replace(camera, run=true_camera, key_parts=lambda cfg: truth))
    if boxes:
        detect = dataclasses.replace(
            default["detect"],
            run=lambda video, *, cfg, env: oracle_detections(gt, video.keyframes),
            key_parts=lambda cfg: truth,
        )
        track = Stage(
            name="track",
            inputs=("detect",),
            run=lambda dets, *, cfg, env: oracle_tracks(dets),
            key_parts=lambda cfg: truth,
            store=Store(TRACKS_FILE, save_tracks, default["track"].store.load),
        )
        out = replace_stage(replace_stage(out, detect), track)
    return out
