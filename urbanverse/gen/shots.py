"""``urbanverse gen --per-shot``: one scene per shot of an edited video.

The video stage runs once over the whole video (keyframes of every usable shot, in
``<out>/work/01_video``); each shot then runs the other stages on its own keyframes into its own
scene folder ``<out>/shot_<nn>/`` (cached in its own ``work``), so a killed run resumes shot by shot. A
shot that fails (no camera pose, no ground seen) leaves only its ``error.json``; the others keep
their scenes. ``<out>/report.json`` lists the shots; ``urbanverse view <out>`` shows every scene.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

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
from urbanverse.records import record, save_json
from urbanverse.video.record import split_shots


@record
class ShotResult:
    """One shot's outcome: its folder (relative to the output folder) and time span in the video."""

    shot: int
    folder: str
    start_s: float
    end_s: float
    status: Literal["ok", "error"]
    error: str = ""
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


def shot_folder(shot: int) -> str:
    """The scene folder of shot ``shot``, relative to the output folder."""
    return f"shot_{shot:02d}"


def run_gen_per_shot(
    source: Path,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool = True,
    progress: Callable[[str, str], None] | None = None,
    stages: Sequence[Stage[GenCfg]] = STAGES,
) -> ShotsReport:
    """One scene per usable shot of ``source`` (module docstring); the report, also written to
    ``out_dir/report.json``. ``InputError`` when the video is unusable or no shot gives a scene.
    ``stages``: the table to run, as for :func:`urbanverse.gen.pipeline.run_gen`."""
    source, out_dir = Path(source), Path(out_dir)
    start = time.perf_counter()
    key = source_key(source)
    with folder_lock(out_dir, "gen"):
        return _run_shots(source, key, out_dir, cfg, resume, progress, stages, start)


def _run_shots(
    source: Path,
    key: str,
    out_dir: Path,
    cfg: GenCfg,
    resume: bool,
    progress: Callable[[str, str], None] | None,
    stages: Sequence[Stage[GenCfg]],
    start: float,
) -> ShotsReport:
    """The body of :func:`run_gen_per_shot`, run while it holds the output folder's lock."""
    runner = StageRunner(out_dir / "work", resume=resume, progress=progress)
    video = run_video_stage(source, key, out_dir, runner, cfg, stages)
    kfs, video_key = video.keyframes, runner.keys["video"]
    shots = {s.index: s for s in kfs.shots}
    results = []
    for part in split_shots(kfs):
        shot = shots[part.selected_shots[0]]
        folder = out_dir / shot_folder(shot.index)
        t0 = time.perf_counter()

        def shot_progress(stage: str, state: str, prefix=f"shot {shot.index}") -> None:
            if progress is not None:
                progress(f"{prefix} {stage}", state)

        span = dict(shot=shot.index, folder=folder.name, start_s=shot.start_s, end_s=shot.end_s)
        try:
            shot_input = ShotInput(
                source, Keyframes(part, video.folder), config_hash(video_key, shot.index), shot.duration_s
            )
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
            ShotResult(**span, status="ok", objects=report.counts["objects"], seconds=report.seconds["total"])
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
