"""``urbanverse gen``: the real-to-sim pipeline on a video or an image.

Registered on the main app by ``register_gen_commands(app)``; the pipeline is imported inside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, cli_command, print_json
from urbanverse.errors import InputError
from urbanverse.locks import folder_lock


@cli_command
def gen_command(
    sources: Annotated[
        list[Path],
        typer.Argument(
            help="A city-walk video (mp4, avi, mov...), an image, or a folder of images. Several inputs, a "
            "folder of videos or a .txt list of paths make a batch: one scene folder per input in OUT.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Scene folder to write, or the batch's folder (created; resumed if it holds a run).",
        ),
    ],
    camera_height: Annotated[
        float,
        typer.Option(
            help="Camera height above the ground in metres: sets the metric scale, so every length "
            "scales with it (0.1 m off at 1.6 m is 6 %; 1.6 for a walker; report.json's size_scale "
            "checks it against the people and cars seen)."
        ),
    ] = 1.6,
    cousins: Annotated[int, typer.Option(help="Library cousins per object (the first is placed).")] = 5,
    library: Annotated[
        Path | None,
        typer.Option(
            help="Asset library to take the cousins from (default: $URBANVERSE_LIBRARY, else the cache's "
            "library/; a library never built gets the assets of the classes seen, in seconds, on first use)."
        ),
    ] = None,
    detector: Annotated[
        str,
        typer.Option(
            help="'ssd' (offline default) or a YOLO / YOLO-World weights file "
            "(needs the yolo extra: pip install 'urbanverse\\[yolo]')."
        ),
    ] = "ssd",
    resume: Annotated[
        bool, typer.Option(help="Skip stages whose inputs and settings did not change.")
    ] = True,
    per_shot: Annotated[
        bool,
        typer.Option(
            "--per-shot",
            help="One scene per shot of an edited video, in OUT/shot_<nn>/ (default: the longest shot).",
        ),
    ] = False,
    max_walk_m: Annotated[
        float | None,
        typer.Option(
            "--max-walk-m",
            help="Cut a long walk into segments of at most this many metres of camera path, one scene "
            "each, in OUT/shot_<nn>_walk_<kk>/ (per shot, as --per-shot; the camera stage runs over the "
            "whole shot first to measure the walk).",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option(help="Batch: inputs run at once in local worker processes.")] = 1,
    ray: Annotated[
        bool,
        typer.Option("--ray", help="Batch: run the inputs as Ray tasks on a local Ray started for the run."),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(help="Batch: run the inputs on an existing Ray cluster (e.g. ray://head:10001)."),
    ] = None,
    as_json: JsonFlag = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a setting, e.g. --set lift.merge_radius_m=1.5."),
    ] = None,
) -> None:
    """Turn a city-walk video into a physics-ready scene: scene.json, scene.usda (Isaac Sim), previews
    (preview.png: top-down map with the camera path; compare_*.png: video frame beside a render of the
    scene from the same camera) and report.json (seconds per stage, counts, warnings). A video with
    cuts gives the scene of its longest shot, or with --per-shot one scene per shot; --max-walk-m cuts
    long walks into segments, one scene each.

    A batch (several inputs, a folder of videos, a .txt list) writes OUT/<input name>/ per input and
    OUT/index.json (each input's status, scene, seconds, counts, error); a re-run skips finished
    inputs and resumes the others; a bad input leaves its error.json and the others go on. Exit code:
    0 every input made its scene, 1 some did, 2 none did (or the command line was wrong)."""
    from rich.console import Console

    from urbanverse.assets.jobs import open_library
    from urbanverse.config import apply_overrides
    from urbanverse.gen.batch import batch_inputs
    from urbanverse.gen.pipeline import GenCfg, clear_for_error, run_gen
    from urbanverse.gen.shots import run_gen_per_shot
    from urbanverse.parallel import ExecutorCfg

    cfg = GenCfg()
    cfg = apply_overrides(
        cfg,
        [
            f"recon.camera_height_m={camera_height}",
            f"retrieval.k={cousins}",
            *([f"retrieval.library={json.dumps(str(library.resolve()))}"] if library else []),
            f"detection.detector={json.dumps(detector)}",
            *(overrides or []),
        ],
    )
    if cfg.retrieval.library is not None:  # one named by the user must be there (a default one fills itself)
        open_library(cfg.retrieval.library).close()
    per_shot = per_shot or max_walk_m is not None  # segments are scenes of their own, as shots are
    inputs = batch_inputs(sources)
    if inputs is None and len(sources) == 1:
        source = sources[0]
    else:
        executor = ExecutorCfg(jobs=jobs, ray=ray, ray_address=ray_address)
        outcome = run_batch_with_display(inputs, out, cfg, executor, resume, per_shot, max_walk_m)
        if as_json:
            print_json({"inputs": outcome.entries})
        raise typer.Exit(outcome.exit_code)
    console = Console(stderr=True)
    status = console.status("starting")

    running: list[str] = []  # detection and tracking run beside the camera stage

    def progress(stage: str, state: str) -> None:
        if state == "run":
            running.append(stage)
        else:
            if stage in running:
                running.remove(stage)
            console.print(f"  {stage}: {'cached' if state == 'cached' else 'done'}")
        if running:
            status.update(", ".join(f"[bold]{name}[/bold]" for name in running) + " running")

    # One gen per folder: a second one is refused here (exit 2, naming the first) before it touches
    # anything; the clean-up of a bad input happens under the same lock.
    with folder_lock(out, "gen"):
        _check_not_the_other_kind(out, per_shot)  # before the clean-up below, which would remove it
        try:
            with status:
                if per_shot:
                    report = run_gen_per_shot(
                        source, out, cfg, resume=resume, progress=progress, max_walk_m=max_walk_m
                    )
                else:
                    report = run_gen(source, out, cfg, resume=resume, progress=progress)
        except InputError as exc:
            clear_for_error(out, str(exc))
            raise
    if as_json:
        print_json(json.loads((out / "report.json").read_text()))
        return
    if per_shot:
        _print_shots(out, report)
        return
    counts = report.counts
    typer.echo(
        f"wrote {out}/scene.json and scene.usda: {counts['objects']} objects, "
        f"{counts['ground_regions']} ground regions, {counts['people']} people walking, from "
        f"{counts['keyframes']} keyframes "
        f"({report.recon_mode}) in {report.seconds['total']:.1f} s"
    )
    for line in report.warnings:
        typer.echo(f"warning: {line}", err=True)


def run_batch_with_display(inputs, out: Path, cfg, executor, resume: bool, per_shot: bool, max_walk_m):
    """``gen.batch.run_batch`` with a progress bar over the inputs and a line per running input with
    its running stages (read from its scene folder every half second); one line per input at its end."""
    import threading

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from urbanverse.gen.batch import RUNNING_FILE, run_batch

    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        total = bar.add_task(f"gen: {len(inputs)} inputs", total=len(inputs))
        rows: dict[str, int] = {}
        lock = threading.Lock()
        stop = threading.Event()

        def show_stages() -> None:
            while not stop.wait(0.5):
                with lock:
                    for folder, row in rows.items():
                        marker = Path(folder) / RUNNING_FILE
                        stages = marker.read_text() if marker.is_file() else ""
                        name = Path(folder).name
                        bar.update(row, description=f"  {name}: {stages or 'starting'}")

        def on_event(kind: str, entry: dict) -> None:
            with lock:
                if kind == "skip":
                    bar.advance(total)
                    console.print(f"  {entry['name']}: done before (skipped)")
                elif kind == "start":
                    rows[entry["scene_dir"]] = bar.add_task(f"  {entry['name']}: starting", total=None)
                else:
                    bar.remove_task(rows.pop(entry["scene_dir"]))
                    bar.advance(total)
                    if entry["status"] == "ok":
                        console.print(f"  {entry['name']}: ok in {entry['seconds']:.0f} s")
                    else:
                        console.print(f"  [red]{entry['name']}: error[/red] {entry['error']}")

        poller = threading.Thread(target=show_stages, daemon=True)
        poller.start()
        try:
            outcome = run_batch(
                inputs,
                out,
                cfg,
                executor,
                resume=resume,
                per_shot=per_shot,
                max_walk_m=max_walk_m,
                on_event=on_event,
            )
        finally:
            stop.set()
    typer.echo(
        f"{outcome.ok} of {len(outcome.entries)} inputs made their scenes in {out} (index: {out}/index.json)"
    )
    return outcome


def _print_shots(out: Path, report) -> None:
    """One line per shot of a ``ShotsReport``: its scene, or (on stderr) why it has none."""
    for shot in report.shots:
        walk = "" if shot.walk is None else f" walk {shot.walk} ({shot.walk_m:.0f} m)"
        span = f"shot {shot.shot}{walk} ({shot.start_s:.1f}-{shot.end_s:.1f} s)"
        if shot.status == "ok":
            typer.echo(f"wrote {out / shot.folder}: {span}, {shot.objects} objects in {shot.seconds:.1f} s")
        else:
            typer.echo(f"warning: {span} gave no scene: {shot.error}", err=True)


def _check_not_the_other_kind(out: Path, per_shot: bool) -> None:
    """``InputError`` when ``out`` holds the other kind of run (one scene, or one per shot): the two
    would mix in one folder, and the viewer would show only the one-scene run."""
    from urbanverse.gen.shots import SHOT_FOLDERS
    from urbanverse.scene.record import SCENE_FILE

    if per_shot and (out / SCENE_FILE).is_file():
        raise InputError(f"{out} holds a one-scene run of gen; give --per-shot another folder")
    if not per_shot and any(p.is_dir() for p in out.glob(SHOT_FOLDERS)):
        raise InputError(f"{out} holds a --per-shot run of gen; add --per-shot or give another folder")


def register_gen_commands(app: typer.Typer) -> None:
    """Add ``gen`` to the main command line app."""
    app.command("gen")(gen_command)
