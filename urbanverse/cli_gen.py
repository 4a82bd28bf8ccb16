"""``urbanverse gen``: the real-to-sim pipeline on a video or an image.

Registered on the main app by ``register_gen_commands(app)``; the pipeline is imported inside.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli_common import cli_command
from urbanverse.errors import InputError


@cli_command
def gen_command(
    source: Annotated[
        Path, typer.Argument(help="A city-walk video (mp4, avi, mov...), an image, or a folder of images.")
    ],
    out: Annotated[
        Path, typer.Option("-o", "--out", help="Scene folder to write (created; resumed if it holds a run).")
    ],
    camera_height: Annotated[
        float, typer.Option(help="Camera height above the ground in metres (metric scale).")
    ] = 1.6,
    cousins: Annotated[int, typer.Option(help="Library cousins per object (the first is placed).")] = 5,
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
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a setting, e.g. --set lift.merge_radius_m=1.5."),
    ] = None,
) -> None:
    """Turn a city-walk video into a physics-ready scene: scene.json, scene.usda (Isaac Sim), previews
    (preview.png: top-down map with the camera path; compare_*.png: video frame beside a render of the
    scene from the same camera) and report.json (seconds per stage, counts, warnings)."""
    from rich.console import Console

    from urbanverse.config import apply_overrides
    from urbanverse.gen.pipeline import GenCfg, clear_for_error, run_gen

    cfg = GenCfg()
    cfg = apply_overrides(
        cfg,
        [
            f"recon.camera_height_m={camera_height}",
            f"cousins.k={cousins}",
            f"detection.detector={json.dumps(detector)}",
            *(overrides or []),
        ],
    )
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

    try:
        with status:
            report = run_gen(source, out, cfg, resume=resume, progress=progress)
    except InputError as exc:
        clear_for_error(out, str(exc))
        raise
    if as_json:
        typer.echo(json.dumps(json.loads((out / "report.json").read_text()), indent=2))
        return
    counts = report.counts
    typer.echo(
        f"wrote {out}/scene.json and scene.usda: {counts['objects']} objects, "
        f"{counts['ground_regions']} ground regions from {counts['keyframes']} keyframes "
        f"({report.recon_mode}) in {report.seconds['total']:.1f} s"
    )
    for line in report.warnings:
        typer.echo(f"warning: {line}", err=True)


def register_gen_commands(app: typer.Typer) -> None:
    """Add ``gen`` to the main command line app."""
    app.command("gen")(gen_command)
