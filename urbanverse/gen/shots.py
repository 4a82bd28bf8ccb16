"""``urbanverse gen --per-shot``: one scene per shot of an edited video, or (``--max-walk-m``) per
walk segment of a long one.

The video stage runs once over the whole video (keyframes of every usable shot, in
``<out>/work/01_video``); each shot then runs the other stages on its own keyframes into its own
scene folder ``<out>/shot_<nn>/`` (cached in its own ``work``), so a killed run resumes shot by shot. A
shot that fails (no camera pose, no ground seen) leaves only its ``error.json``; the others keep
their scenes. ``<out>/report.json`` lists the shots; ``urbanverse view <out>`` shows every scene.

With ``max_walk_m``, the camera stage first runs over each whole shot (in
``<out>/work/shot_<nn>_walk``) to measure how far the camera walks; the shot's keyframes are then cut
where the walk passes each multiple of ``max_walk_m`` metres, and every segment runs the stages after
the video stage, the camera stage included (a segment's own reconstruction), into
``<out>/shot_<nn>_walk_<kk>/``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from urbanverse.errors import InputError
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import (
    REPORT_FILE,
    ShotInput,
    clear_for_error,
    run_scene_stages,
    run_video_stage,
    source_key,
)
from urbanverse.gen.stages import Stage, StageRunner, config_hash
from urbanverse.gen.table import STAGES, Keyframes
from urbanverse.locks import folder_lock
from urbanverse.recon.record import Reconstruction
from urbanverse.records import record, save_json
from urbanverse.video.record import KeyframeSet, split_shots


@record
class ShotResult:
    """One shot's outcome: its folder (relative to the output folder) and time span in the video."""

    shot: int
    folder: str
    start_s: float
    end_s: float
    status: Literal["ok", "error"]
    error: str = ""
    walk: int | None = None
    """The walk segment of the shot (``--max-walk-m``), else None."""
    walk_m: float = 0.0
    """Metres the camera walked in the segment (``--max-walk-m``; 0 otherwise)."""
    objects: int = 0
    seconds: float = 0.0
    """The shot's stages after the video stage (wall time); the shared video stage is in the run's
    ``seconds``."""


@record
class ShotsReport:
    """``report.json`` of a per-shot run."""

    schema_version: int = 1
    input: str
    shots: tuple[ShotResult, ...]
    seconds: dict[str, float]
    video_seconds: float
    warnings: tuple[str, ...]


#: Glob pattern of the shots' scene folders in the output folder (see :func:`shot_folder`).
SHOT_FOLDERS = "shot_[0-9][0-9]*"


def shot_folder(shot: int, walk: int | None = None) -> str:
    """The scene folder of shot ``shot`` (and of its walk segment ``walk``), relative to the output folder."""
    return f"shot_{shot:02d}" if walk is None else f"shot_{shot:02d}_walk_{walk:02d}"


#: A walk segment with fewer keyframes joins the one before it (SfM needs a few views).
MIN_SEGMENT_KEYFRAMES = 4


def walk_segments(
    kfs: KeyframeSet, recon: Reconstruction, max_walk_m: float
) -> list[tuple[KeyframeSet, float]]:
    """``kfs`` (one shot) cut where its camera path (``recon``'s registered keyframes) passes each
    multiple of ``max_walk_m`` metres: per segment, its keyframes (re-indexed from 0) and the metres
    walked in it. A keyframe without a pose goes with the one before it; a segment of fewer than
    :data:`MIN_SEGMENT_KEYFRAMES` keyframes joins the one before."""
    positions = {k.index: np.asarray(k.position[:2]) for k in recon.registered}
    walked, last, segment_of = 0.0, None, []
    for k in kfs.keyframes:
        if k.index in positions:
            if last is not None:
                walked += float(np.linalg.norm(positions[k.index] - last))
            last = positions[k.index]
        segment_of.append(int(walked // max_walk_m))
    groups: list[list[int]] = []
    for i, segment in enumerate(segment_of):
        if not groups or (segment != segment_of[i - 1] and len(groups[-1]) >= MIN_SEGMENT_KEYFRAMES):
            groups.append([])
        groups[-1].append(i)
    if len(groups) > 1 and len(groups[-1]) < MIN_SEGMENT_KEYFRAMES:
        short = groups.pop()
        groups[-1] += short
    out = []
    for group in groups:
        kept = [dataclasses.replace(kfs.keyframes[i], index=n) for n, i in enumerate(group)]
        path = [positions[kfs.keyframes[i].index] for i in group if kfs.keyframes[i].index in positions]
        length = float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0
        out.append((dataclasses.replace(kfs, keyframes=tuple(kept)), length))
    return out


def run_gen_per_shot(
    source: Path,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool = True,
    progress: Callable[[str, str], None] | None = None,
    stages: Sequence[Stage[GenCfg]] = STAGES,
    max_walk_m: float | None = None,
) -> ShotsReport:
    """One scene per usable shot of ``source``, or per walk segment of at most ``max_walk_m`` metres
    (module docstring); the report, also written to ``out_dir/report.json``. ``InputError`` when the
    video is unusable or no shot gives a scene. ``stages``: the table to run, as for
    :func:`urbanverse.gen.pipeline.run_gen`."""
    source, out_dir = Path(source), Path(out_dir)
    if max_walk_m is not None and not 5.0 <= max_walk_m <= 10_000.0:
        raise InputError(f"--max-walk-m: expected 5..10000 m, got {max_walk_m}")
    start = time.perf_counter()
    key = source_key(source)
    with folder_lock(out_dir, "gen"):
        return _run_shots(source, key, out_dir, cfg, resume, progress, stages, start, max_walk_m)


def _run_shots(
    source: Path,
    key: str,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool,
    progress: Callable[[str, str], None] | None,
    stages: Sequence[Stage[GenCfg]],
    start: float,
    max_walk_m: float | None = None,
) -> ShotsReport:
    """The body of :func:`run_gen_per_shot`, run while it holds the output folder's lock."""
    runner = StageRunner(out_dir / "work", resume=resume, progress=progress)
    video = run_video_stage(source, key, out_dir, runner, cfg, stages)
    kfs, video_key = video.keyframes, runner.keys["video"]
    shots = {s.index: s for s in kfs.shots}
    results = []
    for part in split_shots(kfs):
        shot = shots[part.selected_shots[0]]
        shot_key = config_hash(video_key, shot.index)
        pieces: list[tuple[KeyframeSet, str, int | None, float]] = [(part, shot_key, None, 0.0)]
        if max_walk_m is not None:
            try:
                recon = _survey(
                    source, Keyframes(part, video.folder), shot_key, out_dir, shot.index, cfg, stages, resume
                )
            except InputError as exc:  # no pose at all: the shot gives no scene, as below
                folder = out_dir / shot_folder(shot.index, 0)
                clear_for_error(folder, str(exc))
                span = dict(shot=shot.index, folder=folder.name, start_s=shot.start_s, end_s=shot.end_s)
                results.append(ShotResult(**span, walk=0, status="error", error=str(exc)))
                continue
            pieces = [
                (segment, config_hash(shot_key, "walk", k, max_walk_m), k, metres)
                for k, (segment, metres) in enumerate(walk_segments(part, recon, max_walk_m))
            ]
        for keyframes, piece_key, walk, metres in pieces:
            folder = out_dir / shot_folder(shot.index, walk)
            t0 = time.perf_counter()
            label = f"shot {shot.index}" if walk is None else f"shot {shot.index} walk {walk}"

            def shot_progress(stage: str, state: str, prefix=label) -> None:
                if progress is not None:
                    progress(f"{prefix} {stage}", state)

            times = [k.time_s for k in keyframes.keyframes]
            span = dict(
                shot=shot.index,
                folder=folder.name,
                start_s=shot.start_s if walk is None else min(times),
                end_s=shot.end_s if walk is None else max(times),
                walk=walk,
                walk_m=round(metres, 2),
            )
            try:
                duration = shot.duration_s if walk is None else max(times) - min(times)
                shot_input = ShotInput(source, Keyframes(keyframes, video.folder), piece_key, duration)
                shot_runner = StageRunner(folder / "work", resume=resume, progress=shot_progress)
                report = run_scene_stages(
                    shot_input,
                    folder,
                    shot_runner,
                    cfg,
                    t0,
                    stages=stages[1:],
                    name=f"{out_dir.name}_{folder.name}",
                )
            except InputError as exc:
                clear_for_error(folder, str(exc))
                results.append(ShotResult(**span, status="error", error=str(exc)))
                continue
            results.append(
                ShotResult(
                    **span, status="ok", objects=report.counts["objects"], seconds=report.seconds["total"]
                )
            )
    if not any(r.status == "ok" for r in results):
        raise InputError(
            f"{source}: no shot gave a scene ("
            + "; ".join(f"shot {r.shot}: {r.error}" for r in results)
            + ")"
        )
    report = ShotsReport(
        input=str(source),
        shots=tuple(results),
        seconds={**runner.seconds, "total": round(time.perf_counter() - start, 3)},
        video_seconds=float(kfs.duration_s),
        warnings=kfs.warnings,
    )
    save_json(report, out_dir / REPORT_FILE)
    return report


def _survey(
    source: Path,
    keyframes: Keyframes,
    key: str,
    out_dir: Path,
    shot: int,
    cfg: GenCfg,
    stages: Sequence[Stage[GenCfg]],
    resume: bool,
) -> Reconstruction:
    """The camera stage over one whole shot (cached in ``<out>/work/shot_<nn>_walk``): how far it walks."""
    position = next(i for i, stage in enumerate(stages) if stage.name == "camera")
    runner = StageRunner(out_dir / "work" / f"{shot_folder(shot)}_walk", resume=resume)
    out = runner.run_table(
        [stages[position]], cfg, {"video": (keyframes, key)}, out_dir, source, out_dir.name, first=position
    )
    return out["camera"].recon
