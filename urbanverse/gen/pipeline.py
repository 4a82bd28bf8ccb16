"""``urbanverse gen``: a city-walk video (or image) in, a physics-ready scene out.

The stages are the table :data:`urbanverse.gen.table.STAGES` (video keyframes -> detection ->
tracking, beside the camera stage -> calibration -> dense points -> ground -> objects in 3D ->
retrieval of cousins, materials and sky -> scene: scene.json, USD, physics check with fixes,
previews), each cached in ``<out>/work/<nn>_<stage>/``; this module runs the table and writes
``report.json``. Bad input raises ``InputError``; the CLI then leaves only ``error.json`` in the
output folder. Every final file is written atomically.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.gen.config import GenCfg
from urbanverse.gen.stages import Stage, StageRunner, config_hash
from urbanverse.gen.table import STAGES, Keyframes
from urbanverse.layout.facades import FACADE_LABEL
from urbanverse.layout.proposal_placing import PROPOSAL_LABEL
from urbanverse.layout.scale_check import SizeScale, scale_warning
from urbanverse.layout.stage import measured_size_scale
from urbanverse.layout.street_fit import GroundFit
from urbanverse.locks import LOCK_FILE, folder_lock
from urbanverse.perception.models import NO_EMBEDDER_WARNING, embedder_available
from urbanverse.records import record, save_json
from urbanverse.scene.record import SCENE_FILE, load_scene
from urbanverse.video.record import split_shots

log = logging.getLogger(__name__)

__all__ = ["ERROR_FILE", "REPORT_FILE", "GenCfg", "GenReport", "clear_for_error", "run_gen"]

REPORT_FILE = "report.json"
ERROR_FILE = "error.json"


@record
class SkippedShot:
    """A shot gen tried and left: its index, time span in the video (s) and the error it gave."""

    shot: int
    start_s: float
    end_s: float
    reason: str


@record
class GenReport:
    """``report.json``: per-stage seconds, counts, warnings and what fell back. ``seconds`` holds each
    stage's wall time and the run's ``total``; detection and tracking run beside the camera stage, so
    the stages add up to more than the total."""

    schema_version: int = 2
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
    ground_model: GroundFit | None = None
    """Which ground model (street, plaza or path) was fitted to the ground seen, how well each
    candidate explained it, and the street's parameters (``urbanverse.layout.street_fit``)."""
    shot: int = 0
    """The shot of the video the scene was made from (``work/01_video/keyframes.json`` lists them)."""
    skipped_shots: tuple[SkippedShot, ...] = ()
    """Longer shots tried first that gave no scene, and why."""


def source_key(source: Path) -> str:
    """The cache key of the input file ``source`` (its path, size and modification time);
    ``InputError`` when there is no such file."""
    if not source.exists():
        raise InputError(f"{source}: no such file")
    stat = source.stat()
    return config_hash(str(source.resolve()), stat.st_size, stat.st_mtime_ns)


def run_video_stage(
    source: Path, key: str, out_dir: Path, runner: StageRunner, cfg: GenCfg, stages: Sequence[Stage[GenCfg]]
) -> Keyframes:
    """The keyframes of ``source`` (cache key ``key``, :func:`source_key`): the table's first stage,
    the video stage, run by ``runner`` for the output folder ``out_dir``."""
    given = {"source": (source, key)}
    return runner.run_table(stages[:1], cfg, given, out_dir, source, out_dir.name)["video"]


def run_gen(
    source: Path,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool = True,
    progress: Callable[[str, str], None] | None = None,
    stages: Sequence[Stage[GenCfg]] = STAGES,
) -> GenReport:
    """Run every stage of ``stages`` on ``source`` into ``out_dir``; returns the report (also written to
    report.json). One scene from one shot: the longest usable one, or when it gives no scene (a later
    stage raises ``InputError``: no camera pose, no ground) the next longest, and so on; ``InputError``
    naming every shot's error when none gives one. :func:`urbanverse.gen.shots.run_gen_per_shot` makes
    one per shot. ``stages``: the table to run (:func:`urbanverse.gen.stages.replace_stage` swaps one
    entry)."""
    source, out_dir = Path(source), Path(out_dir)
    start = time.perf_counter()
    key = source_key(source)
    with folder_lock(out_dir, "gen"):
        runner = StageRunner(out_dir / "work", resume=resume, progress=progress)
        video = run_video_stage(source, key, out_dir, runner, cfg, stages)
        kfs, video_key = video.keyframes, runner.keys["video"]
        shots = {s.index: s for s in kfs.shots}
        parts = sorted(split_shots(kfs), key=lambda p: -shots[p.selected_shots[0]].duration_s)
        skipped: list[SkippedShot] = []
        for part in parts:
            shot = shots[part.selected_shots[0]]
            # One shot keeps the video stage's key (and the cache of runs before shots were tried in turn).
            key = video_key if len(parts) == 1 else config_hash(video_key, shot.index)
            seconds = kfs.duration_s if len(kfs.shots) == 1 else shot.duration_s
            shot_input = ShotInput(source, Keyframes(part, video.folder), key, seconds)
            try:
                report = run_scene_stages(shot_input, out_dir, runner, cfg, start, stages=stages[1:])
            except InputError as exc:
                log.warning(
                    "shot %d (%.1f-%.1f s) gave no scene: %s", shot.index, shot.start_s, shot.end_s, exc
                )
                skipped.append(
                    SkippedShot(shot=shot.index, start_s=shot.start_s, end_s=shot.end_s, reason=str(exc))
                )
                continue
            span = f"{shot.start_s:.1f}-{shot.end_s:.1f} s"
            notes = [f"{len(kfs.shots)} shots; the scene is of shot {shot.index} ({span})"]
            notes += [
                f"shot {s.shot} ({s.start_s:.1f}-{s.end_s:.1f} s) gave no scene: {s.reason}" for s in skipped
            ]
            report = dataclasses.replace(
                report,
                shot=shot.index,
                skipped_shots=tuple(skipped),
                warnings=(*report.warnings, *(notes if len(kfs.shots) > 1 else ())),
            )
            save_json(report, out_dir / REPORT_FILE)
            return report
        raise InputError(
            f"{source}: no shot gave a scene ("
            + "; ".join(f"shot {s.shot} ({s.start_s:.1f}-{s.end_s:.1f} s): {s.reason}" for s in skipped)
            + ")"
        )


@dataclasses.dataclass(frozen=True)
class ShotInput:
    """What the scene stages start from: the keyframes of one shot of ``source`` (``video``), their
    cache ``key``, and the ``seconds`` of video they span (a report times the run per minute of it)."""

    source: Path
    video: Keyframes
    key: str
    seconds: float


def run_scene_stages(
    shot: ShotInput,
    out_dir: Path,
    runner: StageRunner,
    cfg: GenCfg,
    start: float,
    *,
    stages: Sequence[Stage[GenCfg]] = STAGES[1:],
    name: str | None = None,
) -> GenReport:
    """The stages after the video stage on the keyframes of ``shot``, into the scene folder ``out_dir``
    (``runner`` caches in its work folder); the report, also written to report.json, times the run from
    ``start`` (``time.perf_counter``). ``name``: the scene's (default: the folder's)."""
    out = runner.run_table(
        stages, cfg, {"video": (shot.video, shot.key)}, out_dir, shot.source, name or out_dir.name, first=1
    )
    kfs, recon, dets, tracks = shot.video.keyframes, out["calibrate"], out["detect"], out["track"]
    layout, objects, street, notes = out["ground"].layout, out["objects"], out["street"], out["scene"]
    scene = load_scene(out_dir)
    sizes = measured_size_scale(tracks, dets, recon, layout, cfg.lift)
    size_note = scale_warning(sizes, recon.ground.camera_height_m)
    warnings = [
        *kfs.warnings,
        *recon.warnings,
        *([size_note] if size_note else []),
        *notes.get("warnings", []),
        *([] if embedder_available() else [NO_EMBEDDER_WARNING]),
    ]
    total, video_s = time.perf_counter() - start, max(shot.seconds, 1e-9)
    report = GenReport(
        input=str(shot.source),
        scene=str(out_dir / SCENE_FILE),
        seconds={**runner.seconds, "total": round(total, 3)},
        cached_stages=tuple(runner.cached),
        counts={
            "keyframes": len(kfs.keyframes),
            "registered": len(recon.registered),
            "detections": sum(len(f.detections) for f in dets.frames),
            "tracks": len(tracks.tracks),
            "objects": len(scene.objects),
            "objects_from_dense_points": sum(o.label == PROPOSAL_LABEL for o in objects.objects),
            "building_facades": sum(o.label == FACADE_LABEL for o in objects.objects),
            "ground_regions": len(scene.ground),
            "ground_regions_seen": len(layout.regions),
            "people": len(scene.agents),
            "physics_fixes": len(notes.get("fixes", [])),
        },
        recon_mode=recon.mode,
        scale_source=recon.scale_source,
        warnings=tuple(warnings),
        video_seconds=float(shot.seconds),
        seconds_per_video_minute=round(total / video_s * 60.0, 2) if kfs.mode == "video" else 0.0,
        size_scale=sizes,
        ground_model=street.model.summary(),
    )
    save_json(report, out_dir / REPORT_FILE)
    return report


def clear_for_error(out_dir: Path, message: str, stage: str | None = None) -> None:
    """Leave only ``error.json`` in ``out_dir`` (bad input: nothing half-written remains); the writer's
    lock file stays while its holder runs (it goes when the lock is released)."""
    out_dir = Path(out_dir)
    if out_dir.exists():
        for child in out_dir.iterdir():
            if child.name == LOCK_FILE:
                continue
            if child.is_dir():
                shutil.rmtree(child)
            else:
                child.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)
    save_json({"error": message, "stage": stage}, out_dir / ERROR_FILE)
