"""``urbanverse render-tour``: a synthetic city-walk video of a scene, with ground truth.

Registered on the main app by ``register_render_commands(app)``; the renderer is imported
inside the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, SceneDir, cli_command, print_json


@cli_command
def render_tour_command(
    scene_dir: SceneDir,
    out: Annotated[
        Path,
        typer.Option(
            "-o", "--out", help="Output video (.mp4); ground truth goes beside it as <stem>_gt.json."
        ),
    ],
    seconds: Annotated[float, typer.Option(help="Tour length in seconds.")] = 30.0,
    fps: Annotated[float, typer.Option(help="Frames per second.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Route direction, walking speed, stops and head motion.")] = 0,
    width: Annotated[int, typer.Option(help="Image width in pixels (even).")] = 960,
    height: Annotated[int, typer.Option(help="Image height in pixels (even).")] = 540,
    hfov: Annotated[float, typer.Option(help="Horizontal field of view in degrees.")] = 70.0,
    frames_dir: Annotated[
        Path | None,
        typer.Option(
            help="Also write per-frame PNGs: rgb/, depth/ (uint16 mm), instance/ (uint16), semantic/ (uint8)."
        ),
    ] = None,
    shadows: Annotated[bool, typer.Option(help="Sun shadows (about 1.5x the render time).")] = True,
    augment: Annotated[
        bool,
        typer.Option(help="Camera degradations on the video: exposure, colour cast, blur, sensor noise."),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Walk a camera along the scene's sidewalks at 1.5-1.7 m, 1.2-1.5 m/s (head bob, look-around, stops)
    and write an H.264 MP4 plus ground truth: intrinsics, per-frame camera pose (OpenCV axes,
    world_from_camera), per-frame visible objects with 2D boxes, and the source scene."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from urbanverse.render.augment import AugmentCfg
    from urbanverse.render.tour import TourCfg, gt_path_for, run_render_tour

    cfg = TourCfg(
        seconds=seconds,
        fps=fps,
        width=width,
        height=height,
        hfov_deg=hfov,
        shadows=shadows,
        seed=seed,
        augment=AugmentCfg() if augment else None,
    )
    columns = (TextColumn("rendering"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("frames", total=round(seconds * fps))
        gt = run_render_tour(
            scene_dir, out, cfg, frames_dir, progress=lambda done, _: bar.update(task, completed=done)
        )
    seen = len({v.object_id for f in gt.frames for v in f.visible})
    if as_json:
        print_json(
            {
                "video": str(out),
                "ground_truth": str(gt_path_for(out)),
                "frames": len(gt.frames),
                "objects_seen": seen,
            }
        )
        return
    frames = f"{len(gt.frames)} frames, {width}x{height}"
    typer.echo(f"wrote {out} ({frames}) and {gt_path_for(out)} ({seen} objects seen)")


def register_render_commands(app: typer.Typer) -> None:
    """Add ``render-tour`` to the main command line app."""
    app.command("render-tour")(render_tour_command)
