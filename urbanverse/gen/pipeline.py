"""``urbanverse gen``: a city-walk video (or image) in, a physics-ready scene out.

Stages, each cached in ``<out>/work/<nn>_<stage>/`` (see ``stages``): video keyframes ->
detection -> tracking -> camera reconstruction -> ground layout -> lifting to 3D -> retrieval of
cousins, materials and sky -> scene (scene.json, USD, physics check with fixes, previews,
report.json). Bad input raises ``InputError``; the CLI then leaves only ``error.json`` in the output
folder. Every final file is written atomically.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np
from PIL import Image

from urbanverse.errors import InputError
from urbanverse.gen.assemble import assemble_scene, curb_of
from urbanverse.gen.finish import finish_scene
from urbanverse.gen.stages import StageRunner, config_hash
from urbanverse.layout.crowns import CrownCfg, place_by_crowns
from urbanverse.layout.facades import FACADE_LABEL
from urbanverse.layout.ground import GroundCfg, GroundLayout, road_points, run_ground, surface_height
from urbanverse.layout.lift import LiftCfg, LiftedObjects, contact_masks, run_lifting
from urbanverse.layout.proposal_placing import PROPOSAL_LABEL, add_proposals
from urbanverse.layout.proposals import ProposalCfg, is_green
from urbanverse.layout.scale_check import SizeScale, scale_warning, size_scale
from urbanverse.perception.crop_classifier import PROPOSAL_CLASSIFIER, classifier_digest
from urbanverse.perception.detect import DetectionCfg, run_detection
from urbanverse.perception.record import (
    DETECTIONS_FILE,
    TRACKS_FILE,
    FrameDetections,
    Tracks,
    load_detections,
    save_detections,
)
from urbanverse.perception.track import TrackingCfg, run_tracking
from urbanverse.recon.calibrate import calibrate_from_upright, repose_single_view
from urbanverse.recon.depth import DepthParams, dense_cloud, load_cloud, save_cloud
from urbanverse.recon.geometry import load_points
from urbanverse.recon.record import RECON_FILE, Reconstruction, load_reconstruction, save_reconstruction
from urbanverse.recon.stage import ReconCfg, run_recon
from urbanverse.records import load_record, record, save_json
from urbanverse.retrieval.cousins import CousinCfg, prepare_candidates
from urbanverse.retrieval.stage import Retrieval, run_retrieval
from urbanverse.scene.record import SCENE_FILE, load_scene
from urbanverse.video.record import KEYFRAMES_FILE, KeyframeSet, load_keyframes
from urbanverse.video.stage import VideoCfg, run_video

REPORT_FILE = "report.json"
#: The dense points, in the ground stage's work folder.
DENSE_FILE = "dense.npz"
ERROR_FILE = "error.json"


@dataclasses.dataclass(frozen=True, kw_only=True)
class GenCfg:
    """Configuration of every stage (``--set stage.field=value`` on the command line)."""

    video: VideoCfg = dataclasses.field(default_factory=VideoCfg)
    detection: DetectionCfg = dataclasses.field(default_factory=DetectionCfg)
    tracking: TrackingCfg = dataclasses.field(default_factory=TrackingCfg)
    recon: ReconCfg = dataclasses.field(default_factory=ReconCfg)
    ground: GroundCfg = dataclasses.field(default_factory=GroundCfg)
    lift: LiftCfg = dataclasses.field(default_factory=LiftCfg)
    dense: DepthParams = dataclasses.field(default_factory=DepthParams)
    """Dense points of the registered keyframes (``recon.depth``): the ground's free-space check and
    the object proposals."""
    proposals: ProposalCfg = dataclasses.field(default_factory=ProposalCfg)
    crowns: CrownCfg = dataclasses.field(default_factory=CrownCfg)
    """Trees of detector tracks placed by their crowns' dense points (``urbanverse.layout.crowns``)."""
    cousins: CousinCfg = dataclasses.field(default_factory=CousinCfg)
    physics_fix: bool = True
    """Run the physics check and move interpenetrating objects apart."""
    compare_frames: int = 3
    """Video frames shown beside a render of the generated scene from the same camera."""


@record
class GenReport:
    """``report.json``: per-stage seconds, counts, warnings and what fell back. ``seconds`` holds each
    stage's wall time and the run's ``total``; detection and tracking run beside the camera stage, so
    the stages add up to more than the total."""

    schema_version: int = 1
    input: str
    scene: str
    seconds: dict[str, float]
    cached_stages: tuple[str, ...]
    counts: dict[str, int]
    recon_mode: str
    scale_source: str
    warnings: tuple[str, ...]
    video_seconds: float
    seconds_per_video_minute: float
    size_scale: SizeScale | None = None
    """The scale the heights of the people and cars seen imply (``urbanverse.layout.scale_check``;
    None when none was measured); a warning names it when it is off by more than a factor of two."""


T = TypeVar("T")


@contextmanager
def _beside(work: Callable[[threading.Event], T]) -> Iterator[Future[T]]:
    """``work(stop)`` run on a second thread while the body runs; OpenCV's own worker threads are off
    until ``work`` ends (restored then, and on leaving). When the body fails or is interrupted
    (Ctrl-C), ``stop`` is set, so that ``work`` can end at its next step instead of finishing.

    The camera stage and detection each keep one core busy; OpenCV's parallel loops (SIFT, optical
    flow, cv2.dnn) would put two more threads on the two cores, and the camera stage, the critical
    path, then loses time to the switching (BENCHMARKS.md). Once detection and tracking end, the
    camera stage's optical flow gets both cores back."""
    prior = cv2.getNumThreads()
    cv2.setNumThreads(1)
    stop = threading.Event()

    def run() -> T:
        try:
            return work(stop)
        finally:  # before the result is set: whoever waits on it finds the threads back
            cv2.setNumThreads(prior)

    try:
        with ThreadPoolExecutor(1, thread_name_prefix="beside") as pool:
            future = pool.submit(run)
            try:
                yield future
            except BaseException:
                stop.set()
                raise
    finally:
        cv2.setNumThreads(prior)


def keyframe_paths(work: Path, kfs: KeyframeSet) -> list[tuple[int, Path]]:
    """``(keyframe index, image path)`` of the keyframes ``kfs`` the video stage wrote to ``work``."""
    return [(k.index, work / k.image) for k in kfs.keyframes]


def keyframe_images(frames: list[tuple[int, Path]]) -> dict[int, np.ndarray]:
    """Keyframe index -> RGB image (working size) of :func:`keyframe_paths`' ``frames``."""
    return {i: np.asarray(Image.open(p).convert("RGB")) for i, p in frames}


@dataclasses.dataclass(frozen=True)
class Oracles:
    """Ground-truth replacements for stages (round-trip benchmark only): each maps the keyframes to
    that stage's record (see ``urbanverse.gen.oracle``)."""

    recon: Callable[[KeyframeSet], Reconstruction] | None = None
    detections: Callable[[KeyframeSet], FrameDetections] | None = None
    tracks: Callable[[FrameDetections], Tracks] | None = None


def run_gen(
    source: Path,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool = True,
    progress: Callable[[str, str], None] | None = None,
    oracles: Oracles | None = None,
) -> GenReport:
    """Run every stage on ``source`` into ``out_dir``; returns the report (also written to report.json).
    One scene from one shot (the longest usable one); :func:`urbanverse.gen.shots.run_gen_per_shot`
    makes one per shot."""
    source, out_dir = Path(source), Path(out_dir)
    start = time.perf_counter()
    runner = StageRunner(out_dir / "work", resume=resume, progress=progress)
    kfs, video_key = video_stage(source, runner, cfg.video)
    if len(kfs.selected_shots) > 1:
        raise InputError("video.per_shot: gen builds one scene from one shot; --per-shot makes one per shot")
    shot = ShotInput(source, kfs, video_key, out_dir / "work" / "01_video", kfs.duration_s)
    return scene_stages(shot, out_dir, runner, cfg, start, oracles=oracles)


def video_stage(source: Path, runner: StageRunner, video_cfg: VideoCfg) -> tuple[KeyframeSet, str]:
    """The keyframes of ``source`` (stage ``01_video`` of ``runner``) and their cache key."""
    if not source.exists():
        raise InputError(f"{source}: no such file")
    video_key = config_hash(
        str(source.resolve()), source.stat().st_size, source.stat().st_mtime_ns, video_cfg
    )
    kfs = runner.run(
        "01_video", video_key, KEYFRAMES_FILE, lambda w: run_video(source, w, video_cfg), load_keyframes
    )
    return kfs, video_key


@dataclasses.dataclass(frozen=True)
class ShotInput:
    """What the scene stages start from: the ``keyframes`` of one shot of ``source`` (their images in
    ``images``, the video stage's work folder), their cache ``key``, and the ``seconds`` of video they
    span (a report times the run per minute of it)."""

    source: Path
    keyframes: KeyframeSet
    key: str
    images: Path
    seconds: float


def scene_stages(
    shot: ShotInput,
    out_dir: Path,
    runner: StageRunner,
    cfg: GenCfg,
    start: float,
    *,
    oracles: Oracles | None = None,
    name: str | None = None,
) -> GenReport:
    """Stages 02-08 on the keyframes of ``shot`` into the scene folder ``out_dir`` (``runner`` caches in
    its ``work``); the report, also written to report.json, times the run from ``start``
    (``time.perf_counter``). ``name``: the scene's (default: the folder's)."""
    source, kfs, video_key, video_work = shot.source, shot.keyframes, shot.key, shot.images
    oracles = oracles or Oracles()
    frames = keyframe_paths(video_work, kfs)
    looks = classifier_digest(cfg.detection.crop_classifier)  # the model file, not only its name
    det_key = config_hash(video_key, cfg.detection, looks, oracles.detections is not None)
    track_key = config_hash(det_key, cfg.tracking, oracles.tracks is not None)

    def perceive(stop: threading.Event) -> tuple[FrameDetections, Tracks]:
        def detect(w: Path) -> FrameDetections:
            if oracles.detections is not None:
                dets = oracles.detections(kfs)
            else:
                dets = run_detection(frames, cfg.detection, stop)
            save_detections(dets, w)
            return dets

        dets: FrameDetections = runner.run(
            "02_detect", det_key, DETECTIONS_FILE, detect, lambda w: load_detections(w / DETECTIONS_FILE)
        )

        def track(w: Path) -> Tracks:
            if oracles.tracks is not None:
                return _saved(oracles.tracks(dets), lambda t: save_json(t, w / TRACKS_FILE))
            return _saved(run_tracking(frames, dets, cfg.tracking, stop=stop), lambda r: r.save(w)).tracks

        tracks: Tracks = runner.run(
            "03_track", track_key, TRACKS_FILE, track, lambda w: load_record(Tracks, w / TRACKS_FILE)
        )
        if not stop.is_set():
            prepare_candidates((t.category for t in tracks.tracks if not t.dynamic), cfg.cousins)
        return dets, tracks

    recon_key = config_hash(det_key, cfg.recon, oracles.recon is not None)
    # Detection and tracking run on a second thread beside the camera stage, which needs no detections
    # until single view calibrates with people: COLMAP maps on one thread (for reproducible models),
    # and the other core is otherwise idle for most of it (the round-trip tours: 2-5 s less each).
    with _beside(perceive) as perception:

        def reconstruct(w: Path) -> Reconstruction:
            if oracles.recon is not None:
                recon = oracles.recon(kfs)
            else:
                recon = run_recon(kfs, w, cfg.recon, image_dir=video_work)
                if recon.mode == "single_view":
                    recon = calibrate_with_people(recon, perception.result()[0])
            save_reconstruction(recon, w)
            return recon

        recon = runner.run("04_recon", recon_key, RECON_FILE, reconstruct, load_reconstruction)
        dets, tracks = perception.result()
    if not recon.registered:
        raise InputError(f"{source}: no camera pose could be recovered (no usable frames)")
    images = keyframe_images(frames)
    recon_work = out_dir / "work" / "04_recon"
    ground_key = config_hash(recon_key, det_key, cfg.ground, cfg.dense)
    ground_work = out_dir / "work" / "05_ground"

    def ground(w: Path) -> GroundLayout:
        # The dense points serve the free-space check here and the object proposals in lifting.
        cloud = dense_cloud(recon, images, cfg.dense)
        save_cloud(cloud, w / DENSE_FILE)
        sparse = load_points(recon, recon_work)
        return _saved(
            run_ground(list(images.items()), recon, dets, w, cfg.ground, sparse, cloud.xyz),
            lambda g: save_json(g, w / "ground.json"),
        )

    layout: GroundLayout = runner.run(
        "05_ground", ground_key, "ground.json", ground, lambda w: load_record(GroundLayout, w / "ground.json")
    )
    if not layout.regions:
        raise InputError(f"{source}: no usable ground was seen (no pixels below the horizon)")
    surface = surface_height(layout, curb_of(layout))
    road = road_points(layout, min_piece_m2=cfg.lift.min_road_piece_m2)
    looks = classifier_digest(cfg.proposals.crop_classifier, PROPOSAL_CLASSIFIER)
    lift_key = config_hash(track_key, recon_key, ground_key, cfg.lift, cfg.proposals, cfg.crowns, looks)

    def lift(w: Path) -> LiftedObjects:
        objects = run_lifting(tracks, dets, recon, road, cfg.lift, surface)
        cloud = load_cloud(ground_work / DENSE_FILE)
        green = is_green(cloud.rgb)
        objects = place_by_crowns(objects, tracks, recon, cloud, green, cfg.crowns)
        objects = add_proposals(objects, recon, cloud, images, road, cfg.proposals, green)
        save_json(objects, w / "objects.json")
        return objects

    lifted: LiftedObjects = runner.run(
        "06_lift", lift_key, "objects.json", lift, lambda w: load_record(LiftedObjects, w / "objects.json")
    )
    retrieval_key = config_hash(lift_key, ground_key, cfg.cousins)

    def retrieve(w: Path) -> Retrieval:
        samples = dict(np.load(out_dir / "work" / "05_ground" / layout.pixels_file))
        result = run_retrieval(lifted, tracks, dets, images, samples, cfg.cousins, recon)
        save_json(result, w / "retrieval.json")
        return result

    retrieval: Retrieval = runner.run(
        "07_retrieve",
        retrieval_key,
        "retrieval.json",
        retrieve,
        lambda w: load_record(Retrieval, w / "retrieval.json"),
    )
    scene_key = config_hash(retrieval_key, cfg.physics_fix)
    sizes = size_scale(tracks, recon, cfg.lift, surface, road, contact_masks(dets, cfg.lift))
    size_note = scale_warning(sizes, recon.ground.camera_height_m)
    warnings = [*kfs.warnings, *recon.warnings, *([size_note] if size_note else [])]

    def build(w: Path):
        scene, notes = assemble_scene(
            name or out_dir.name, kfs.source_sha256, tuple(k.frame for k in kfs.keyframes), layout, lifted,
            retrieval.cousins, retrieval.ground_materials, retrieval.sky, recon, out_dir,
        )  # fmt: skip
        scene, fixes = finish_scene(scene, out_dir, recon, images, cfg)
        save_json({"warnings": notes, "fixes": fixes}, w / "scene_notes.json")
        return scene

    runner.run("08_scene", scene_key, "scene_notes.json", build, lambda w: None)
    notes = json.loads((out_dir / "work" / "08_scene" / "scene_notes.json").read_text())
    warnings += notes.get("warnings", [])
    total = time.perf_counter() - start
    video_s = max(shot.seconds, 1e-9)
    report = GenReport(
        input=str(source),
        scene=str(out_dir / SCENE_FILE),
        seconds={**runner.seconds, "total": round(total, 3)},
        cached_stages=tuple(runner.cached),
        counts={
            "keyframes": len(kfs.keyframes),
            "registered": len(recon.registered),
            "detections": sum(len(f.detections) for f in dets.frames),
            "tracks": len(tracks.tracks),
            "objects": len(load_scene(out_dir).objects),
            "objects_from_dense_points": sum(o.label == PROPOSAL_LABEL for o in lifted.objects),
            "building_facades": sum(o.label == FACADE_LABEL for o in lifted.objects),
            "ground_regions": len(layout.regions),
            "physics_fixes": len(notes.get("fixes", [])),
        },
        recon_mode=recon.mode,
        scale_source=recon.scale_source,
        warnings=tuple(warnings),
        video_seconds=float(shot.seconds),
        seconds_per_video_minute=round(total / video_s * 60.0, 2) if kfs.mode == "video" else 0.0,
        size_scale=sizes,
    )
    save_json(report, out_dir / REPORT_FILE)
    return report


#: Height (m) of a standing person, the object-size prior used to calibrate a static camera.
PERSON_HEIGHT_M = 1.7


def calibrate_with_people(recon: Reconstruction, dets: FrameDetections) -> Reconstruction:
    """A static camera's pitch and height fitted to the people it sees (1.7 m tall, feet on the ground);
    the reconstruction unchanged when fewer than three people, spread over the image rows, are seen."""
    boxes = [
        d.box
        for f in dets.frames
        for d in f.detections
        if d.dynamic and d.category_path[1] == "people" and d.box[3] < recon.intrinsics.height - 2
    ]
    if len(boxes) < 3:
        return recon
    boxes = np.asarray(boxes, float)
    bottom = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, boxes[:, 3]], axis=1)
    fit = calibrate_from_upright(bottom, boxes[:, 1], PERSON_HEIGHT_M, recon.intrinsics)
    if fit is None:
        return recon
    recalibrated = repose_single_view(recon, fit.pitch_rad, fit.camera_height_m)
    note = (
        f"single view: pitch {np.degrees(fit.pitch_rad):.0f} deg and camera height "
        f"{fit.camera_height_m:.1f} m fitted to {fit.num_objects} people ({PERSON_HEIGHT_M} m tall)"
    )
    return dataclasses.replace(recalibrated, warnings=(*recalibrated.warnings, note))


def _saved(value, save):
    save(value)
    return value


def clear_for_error(out_dir: Path, message: str, stage: str | None = None) -> None:
    """Leave only ``error.json`` in ``out_dir`` (bad input: nothing half-written remains)."""
    out_dir = Path(out_dir)
    if out_dir.exists():
        for child in out_dir.iterdir():
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_json({"error": message, "stage": stage}, out_dir / ERROR_FILE)
