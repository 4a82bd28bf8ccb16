"""The stages of ``urbanverse gen``, declared as one table (:data:`STAGES`).

Each entry names the outputs it reads, the parts of :class:`~urbanverse.gen.config.GenCfg` it depends
on, a thin ``run`` that calls its package's entry point, and how its output record is stored. The
runner (:mod:`urbanverse.gen.stages`) alone knows the folders. Swapping a stage (another detector, a
depth model, a benchmark's ground truth) is one :func:`~urbanverse.gen.stages.replace_stage`.

::

    video ──┬─ detect ── track ── candidates ─────────────────────────────┐
            └─ camera ─┬─ calibrate ── dense ── ground ── objects ─┬─ retrieve ── scene
                       (detect)                (camera's sparse)   ├─ street ─────┤
                                                        ground ── people (video) ─┘
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import numpy as np
from PIL import Image

from urbanverse.assets.catalogue import DEFAULT_SIZE
from urbanverse.assets.jobs import open_library
from urbanverse.errors import InputError
from urbanverse.gen.assemble import assemble_scene
from urbanverse.gen.config import GenCfg
from urbanverse.gen.finish import finish_scene
from urbanverse.gen.stages import Stage, StageEnv, Store
from urbanverse.layout.ground import GroundLayout, run_ground
from urbanverse.layout.lift import LiftedObjects
from urbanverse.layout.people import LiftedPeople, lift_people
from urbanverse.layout.stage import FittedStreet, calibrate_with_people, fit_street, place_objects
from urbanverse.perception.crop_classifier import PROPOSAL_CLASSIFIER, classifier_digest
from urbanverse.perception.detect import run_detection
from urbanverse.perception.models import embedder_available
from urbanverse.perception.record import (
    DETECTIONS_FILE,
    TRACKS_FILE,
    FrameDetections,
    Tracks,
    load_detections,
    save_detections,
)
from urbanverse.perception.track import run_tracking
from urbanverse.recon.depth import DenseCloud, dense_cloud, load_cloud, save_cloud
from urbanverse.recon.geometry import SparsePoints, load_points
from urbanverse.recon.record import RECON_FILE, Reconstruction, load_reconstruction, save_reconstruction
from urbanverse.recon.stage import run_recon
from urbanverse.records import load_record, save_json
from urbanverse.retrieval.cousins import prepare_library
from urbanverse.retrieval.stage import Retrieval, run_retrieval
from urbanverse.video.record import KEYFRAMES_FILE, KeyframeSet, load_keyframes
from urbanverse.video.stage import run_video

#: The dense points' file in the dense stage's folder.
DENSE_FILE = "dense.npz"
GROUND_FILE = "ground.json"
OBJECTS_FILE = "objects.json"
STREET_FILE = "street.json"
RETRIEVAL_FILE = "retrieval.json"
PEOPLE_FILE = "people.json"
SCENE_NOTES_FILE = "scene_notes.json"


@dataclasses.dataclass(frozen=True)
class Keyframes:
    """The keyframes of one shot (``keyframes``) and the folder their images are in (``folder``)."""

    keyframes: KeyframeSet
    folder: Path

    @property
    def paths(self) -> list[tuple[int, Path]]:
        """``(keyframe index, image path)`` per keyframe."""
        return [(k.index, self.folder / k.image) for k in self.keyframes.keyframes]

    @functools.cached_property
    def images(self) -> dict[int, np.ndarray]:
        """Keyframe index -> RGB image (uint8, working size), read once and kept: several stages look
        at them."""
        return {i: np.asarray(Image.open(p).convert("RGB")) for i, p in self.paths}


@dataclasses.dataclass(frozen=True)
class CameraModel:
    """The camera stage's output: poses, intrinsics and ground plane (``recon``) and the sparse points
    in its world frame (``sparse``)."""

    recon: Reconstruction
    sparse: SparsePoints


@dataclasses.dataclass(frozen=True)
class GroundEvidence:
    """The ground stage's output: the ground regions seen (``layout``), their class grid (``classes``:
    ``(H, W)`` uint8, 0 unseen, see ``urbanverse.layout.street_fit.EVIDENCE_CLASSES``) and a colour
    sample per ground type (``pixel_samples``: type -> uint8 ``(N, 3)``), from which retrieval picks
    materials."""

    layout: GroundLayout
    classes: np.ndarray
    pixel_samples: dict[str, np.ndarray]


# --- run functions: inputs in the order the table names them, then the configuration and the env ---


def _video(source: Path, *, cfg: GenCfg, env: StageEnv) -> Keyframes:
    return Keyframes(run_video(source, env.work, cfg.video), env.work)


def _detect(video: Keyframes, *, cfg: GenCfg, env: StageEnv) -> FrameDetections:
    return run_detection(video.paths, cfg.detection, env.stop)


def _track(video: Keyframes, dets: FrameDetections, *, cfg: GenCfg, env: StageEnv) -> Tracks:
    result = run_tracking(video.paths, dets, cfg.tracking, stop=env.stop)
    result.save(env.work)  # tracks.json, and the tracks' appearance embeddings beside it
    return result.tracks


def _candidates(tracks: Tracks, *, cfg: GenCfg, env: StageEnv) -> None:
    if not env.stop.is_set():
        with open_library(cfg.retrieval.library, must_exist=False) as store:
            prepare_library(store, {t.category for t in tracks.tracks if not t.dynamic}, cfg.retrieval)


def _camera(video: Keyframes, *, cfg: GenCfg, env: StageEnv) -> CameraModel:
    recon = run_recon(video.keyframes, env.work, cfg.recon, image_dir=video.folder)
    return CameraModel(recon, load_points(recon, env.work))


def _calibrate(camera: CameraModel, dets: FrameDetections, *, cfg: GenCfg, env: StageEnv) -> Reconstruction:
    return calibrate_with_people(camera.recon, dets) if camera.recon.mode == "single_view" else camera.recon


def _dense(video: Keyframes, recon: Reconstruction, *, cfg: GenCfg, env: StageEnv) -> DenseCloud:
    return dense_cloud(recon, video.images, cfg.dense)


def _ground(
    video: Keyframes,
    recon: Reconstruction,
    camera: CameraModel,
    dets: FrameDetections,
    cloud: DenseCloud,
    *,
    cfg: GenCfg,
    env: StageEnv,
) -> GroundEvidence:
    frames = list(video.images.items())
    layout = run_ground(frames, recon, dets, env.work, cfg.ground, camera.sparse, cloud.xyz)
    return _ground_evidence(layout, env.work)


def _objects(
    video: Keyframes,
    tracks: Tracks,
    dets: FrameDetections,
    recon: Reconstruction,
    ground: GroundEvidence,
    cloud: DenseCloud,
    *,
    cfg: GenCfg,
    env: StageEnv,
) -> LiftedObjects:
    return place_objects(
        tracks, dets, recon, ground.layout, cloud, video.images, cfg.lift, cfg.proposals, cfg.crowns
    )


def _people(
    video: Keyframes, recon: Reconstruction, ground: GroundEvidence, *, cfg: GenCfg, env: StageEnv
) -> LiftedPeople:
    return lift_people(
        video.keyframes, recon, ground.layout, cfg.lift, cfg.detection, cfg.tracking, cfg.people, env.stop
    )


def _street(
    ground: GroundEvidence, objects: LiftedObjects, recon: Reconstruction, *, cfg: GenCfg, env: StageEnv
) -> FittedStreet:
    return fit_street(ground.layout, ground.classes, recon, objects, cfg.street)


def _retrieve(
    video: Keyframes,
    objects: LiftedObjects,
    tracks: Tracks,
    ground: GroundEvidence,
    recon: Reconstruction,
    candidates: None,
    *,
    cfg: GenCfg,
    env: StageEnv,
) -> Retrieval:
    return run_retrieval(objects, tracks, video.images, ground.pixel_samples, cfg.retrieval, recon)


def _scene(
    video: Keyframes,
    street: FittedStreet,
    retrieval: Retrieval,
    recon: Reconstruction,
    people: LiftedPeople,
    *,
    cfg: GenCfg,
    env: StageEnv,
) -> dict:
    kfs = video.keyframes
    scene, notes = assemble_scene(
        env.name, kfs.source_sha256, tuple(k.frame for k in kfs.keyframes), street,
        retrieval.cousins, retrieval.ground_materials, retrieval.sky, recon, env.scene_dir,
        cfg.retrieval.library, people,
    )  # fmt: skip
    scene, fixes, removed = finish_scene(scene, env.scene_dir, recon, video.images, cfg)
    return {"warnings": [*street.warnings, *notes, *removed], "fixes": fixes}


def _retrieval_key(cfg: GenCfg) -> tuple:
    """The retrieval settings, the library's ingested assets, and whether its catalogue was built whole:
    ingesting an asset or building the library reruns retrieval (a library's own fill, always the same
    assets of the same classes, does not)."""
    with open_library(cfg.retrieval.library, must_exist=False) as store:
        built = store.revision("procedural")[0] >= DEFAULT_SIZE
        return cfg.retrieval, str(store.root.resolve()), store.revision("ingested"), built


# --- what each output must hold for the stages after it ---


def _has_poses(camera: CameraModel, env: StageEnv) -> None:
    if not camera.recon.registered:
        raise InputError(f"{env.source}: no camera pose could be recovered (no usable frames)")


def _has_ground(ground: GroundEvidence, env: StageEnv) -> None:
    if not ground.layout.regions:
        raise InputError(f"{env.source}: no usable ground was seen (no pixels below the horizon)")


def _load_camera(work: Path) -> CameraModel:
    recon = load_reconstruction(work)
    return CameraModel(recon, load_points(recon, work))


def _save_ground(ground: GroundEvidence, work: Path) -> None:
    save_json(ground.layout, work / GROUND_FILE)  # the pixel samples were written by run_ground


def _ground_evidence(layout: GroundLayout, work: Path) -> GroundEvidence:
    """The layout with the class grid and pixel samples ``run_ground`` wrote beside it in ``work``."""
    classes = np.load(work / layout.grid_file)["classes"]
    return GroundEvidence(layout, classes, dict(np.load(work / layout.pixels_file)))


def _load_ground(work: Path) -> GroundEvidence:
    return _ground_evidence(load_record(GroundLayout, work / GROUND_FILE), work)


def _detection_key(cfg: GenCfg) -> tuple:
    return cfg.detection, classifier_digest(cfg.detection.crop_classifier)  # the model, not its name


def _objects_key(cfg: GenCfg) -> tuple:
    looks = classifier_digest(cfg.proposals.crop_classifier, PROPOSAL_CLASSIFIER)
    return cfg.lift, cfg.proposals, cfg.crowns, looks


def _file_store(file: str, save, load) -> Store:
    """A store of one output as ``file`` in the work folder: ``save(output, path)``, ``load(path)``."""
    return Store(file, lambda value, work: save(value, work / file), lambda work: load(work / file))


def _json_store(cls: type, file: str) -> Store:
    """A store of one record as ``file`` (JSON)."""
    return _file_store(file, save_json, lambda path: load_record(cls, path))


STAGES: tuple[Stage[GenCfg], ...] = (
    Stage(
        name="video",
        inputs=("source",),
        run=_video,
        key_parts=lambda c: c.video,
        store=Store(KEYFRAMES_FILE, None, lambda work: Keyframes(load_keyframes(work), work)),
    ),
    Stage(
        name="detect",
        inputs=("video",),
        run=_detect,
        key_parts=_detection_key,
        store=Store(DETECTIONS_FILE, save_detections, lambda work: load_detections(work / DETECTIONS_FILE)),
    ),
    Stage(
        name="track",
        inputs=("video", "detect"),
        run=_track,
        key_parts=lambda c: (c.tracking, embedder_available()),  # appearance matching on or off
        store=Store(TRACKS_FILE, None, lambda work: load_record(Tracks, work / TRACKS_FILE)),
    ),
    Stage(
        name="candidates",
        inputs=("track",),
        run=_candidates,
        key_parts=lambda c: (c.retrieval.library, c.retrieval.core_seeds),
        store=None,
    ),
    Stage(
        name="camera",
        inputs=("video",),
        run=_camera,
        key_parts=lambda c: c.recon,
        store=Store(RECON_FILE, lambda camera, work: save_reconstruction(camera.recon, work), _load_camera),
        check=_has_poses,
    ),
    Stage(
        name="calibrate",
        inputs=("camera", "detect"),
        run=_calibrate,
        key_parts=lambda c: None,
        store=Store(RECON_FILE, save_reconstruction, load_reconstruction),
    ),
    Stage(
        name="dense",
        inputs=("video", "calibrate"),
        run=_dense,
        key_parts=lambda c: c.dense,
        store=_file_store(DENSE_FILE, save_cloud, load_cloud),
    ),
    Stage(
        name="ground",
        inputs=("video", "calibrate", "camera", "detect", "dense"),
        run=_ground,
        key_parts=lambda c: c.ground,
        store=Store(GROUND_FILE, _save_ground, _load_ground),
        check=_has_ground,
    ),
    Stage(
        name="objects",
        inputs=("video", "track", "detect", "calibrate", "ground", "dense"),
        run=_objects,
        key_parts=_objects_key,
        store=_json_store(LiftedObjects, OBJECTS_FILE),
    ),
    Stage(
        name="street",
        inputs=("ground", "objects", "calibrate"),
        run=_street,
        key_parts=lambda c: c.street,
        store=_json_store(FittedStreet, STREET_FILE),
    ),
    Stage(
        name="retrieve",
        inputs=("video", "objects", "track", "ground", "calibrate", "candidates"),
        run=_retrieve,
        key_parts=_retrieval_key,
        store=_json_store(Retrieval, RETRIEVAL_FILE),
    ),
    Stage(
        name="people",
        inputs=("video", "calibrate", "ground"),
        run=_people,
        key_parts=lambda c: (c.people, c.lift, _detection_key(c), c.tracking, embedder_available()),
        store=_json_store(LiftedPeople, PEOPLE_FILE),
    ),
    Stage(
        name="scene",
        inputs=("video", "street", "retrieve", "calibrate", "people"),
        run=_scene,
        key_parts=lambda c: (c.physics_fix, c.compare_frames),
        store=_file_store(SCENE_NOTES_FILE, save_json, lambda path: json.loads(path.read_text())),
    ),
)
