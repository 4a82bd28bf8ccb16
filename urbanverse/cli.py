"""The ``urbanverse`` command line: thin commands that parse, build configs, call, and print.

Heavy libraries (pxr, mujoco, torch) are imported inside the commands so that
``urbanverse --help`` answers at once. Exit codes: 0 success, 1 a check failed or an
internal error, 2 bad input (one line saying what was wrong and where).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse import __version__
from urbanverse.cli_assets import assets_app
from urbanverse.cli_common import SceneDir, cli_command
from urbanverse.cli_gen import register_gen_commands
from urbanverse.cli_render import register_render_commands
from urbanverse.cli_train import register_train_commands
from urbanverse.cli_view import register_view_commands
from urbanverse.errors import InputError

app = typer.Typer(
    name="urbanverse",
    help="Real-to-sim urban scenes: city-walk video -> physics-ready USD for Isaac Sim; navigation training.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"urbanverse {__version__}")
        raise typer.Exit()


app.add_typer(assets_app, name="assets")
register_view_commands(app)
register_render_commands(app)
register_gen_commands(app)
register_train_commands(app)


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """UrbanVerse: turn city-walk videos into simulation scenes and train robots in them."""


@app.command("usd")
@cli_command
def usd_command(
    scene_dir: SceneDir,
    fmt: Annotated[str, typer.Option("--format", help="usda (text) or usdc (binary crate).")] = "usda",
) -> None:
    """Write SCENE_DIR/scene.usda (or .usdc) and each asset's asset.usda, ready for Isaac Sim."""
    from urbanverse.scene.record import load_scene
    from urbanverse.scene.usd_writer import write_usd

    if fmt not in ("usda", "usdc"):
        raise InputError(f"--format: expected usda or usdc, got {fmt!r}")
    scene = load_scene(scene_dir)
    path = write_usd(scene, scene_dir, fmt)  # type: ignore[arg-type]
    typer.echo(f"wrote {path} ({len(scene.ground)} ground regions, {len(scene.objects)} objects)")


@app.command("validate")
@cli_command
def validate_command(
    scene_dir: SceneDir,
    usd: Annotated[
        Path | None, typer.Option(help="USD file to check (default: SCENE_DIR/scene.usda, else scene.usdc).")
    ] = None,
) -> None:
    """Validate scene.json and the scene's USD with every pxr.UsdValidation validator (UsdPhysics included).

    Exit code 1 when any validator reports an error, 2 when scene.json itself is invalid.
    """
    from rich.console import Console

    from urbanverse.scene.record import load_scene
    from urbanverse.scene.usd_validate import validate_usd

    scene = load_scene(scene_dir)
    if usd is None:
        usd = next(
            (p for p in (scene_dir / "scene.usda", scene_dir / "scene.usdc") if p.is_file()),
            scene_dir / "scene.usda",
        )
    issues, n_validators = validate_usd(usd)
    console = Console(highlight=False)
    console.print(f"scene.json: ok ({len(scene.ground)} ground regions, {len(scene.objects)} objects)")
    for issue in issues:
        colour = "red" if issue.severity == "error" else "yellow"
        console.print(
            f"[{colour}]{issue.severity}[/{colour}] {issue.validator} at {', '.join(issue.sites)}: "
            f"{issue.message}",
            soft_wrap=True,
        )
    n_errors = sum(i.severity == "error" for i in issues)
    console.print(
        f"{usd}: {n_validators} validators, {n_errors} errors, {len(issues) - n_errors} other findings"
    )
    if n_errors:
        raise typer.Exit(1)


@app.command("check")
@cli_command
def check_command(
    scene_dir: SceneDir,
    fix: Annotated[
        bool, typer.Option("--fix", help="Move interpenetrating objects apart or up, save, re-check.")
    ] = False,
    duration: Annotated[float, typer.Option(help="Simulated seconds.")] = 2.0,
) -> None:
    """Simulate the scene in MuJoCo and report objects that sink, fall over, drift or interpenetrate.

    Writes SCENE_DIR/physics_check.json; exit code 1 when any object fails.
    """
    from rich.console import Console
    from rich.table import Table

    from urbanverse.records import save_json
    from urbanverse.scene.physics_check import PhysicsCheckCfg, fix_penetrations, run_physics_check
    from urbanverse.scene.record import load_scene, save_scene
    from urbanverse.scene.usd_writer import write_usd

    try:
        cfg = PhysicsCheckCfg(duration_s=duration)
    except ValueError as exc:
        raise InputError(f"--duration: {exc}") from None
    console = Console()
    scene = load_scene(scene_dir)
    if fix:
        scene, notes = fix_penetrations(scene, scene_dir, cfg)
        for note in notes:
            console.print(f"fixed {note}")
        if notes:
            save_scene(scene, scene_dir)
            for fmt in ("usda", "usdc"):
                if (scene_dir / f"scene.{fmt}").is_file():
                    write_usd(scene, scene_dir, fmt)
    report = run_physics_check(scene, scene_dir, cfg)
    table = Table(
        "object",
        "category",
        "overlap cm",
        "drift cm",
        "tilt °",
        "sink cm",
        "result",
        title=f"physics check: {scene.name}, {cfg.duration_s:g} s in MuJoCo",
    )
    for o in report.objects:
        table.add_row(
            o.id,
            o.category,
            f"{100 * o.penetration_m:.2f}",
            f"{100 * o.drift_m:.2f}",
            f"{o.tilt_deg:.1f}",
            f"{100 * o.sink_m:.2f}",
            "[red]" + "; ".join(o.problems) + "[/red]" if o.problems else "[green]ok[/green]",
        )
    console.print(table)
    save_json(report.to_dict(), scene_dir / "physics_check.json")
    failed = [o.id for o in report.objects if o.problems]
    console.print(
        f"{len(report.objects) - len(failed)}/{len(report.objects)} objects stable"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    if failed:
        raise typer.Exit(1)


@app.command("procgen")
@cli_command
def procgen_command(
    out: Annotated[Path, typer.Option("-o", "--out", help="New scene folder to write.")],
    seed: Annotated[int, typer.Option(help="Layout and asset seed (same seed, same scene).")] = 0,
    style: Annotated[
        str, typer.Option(help="residential, commercial, plaza or intersection.")
    ] = "residential",
    length: Annotated[float, typer.Option(help="Street length in metres (intersection: both arms).")] = 80.0,
    lanes: Annotated[int, typer.Option(help="Traffic lanes (3.2 m each).")] = 2,
    usd: Annotated[bool, typer.Option(help="Also write scene.usda.")] = True,
) -> None:
    """Generate a procedural street (roads, curbs and ramps, crosswalks, furniture, cars, buildings)."""
    from urbanverse.procgen.street import StreetCfg, generate_street
    from urbanverse.scene.preview import write_preview
    from urbanverse.scene.usd_writer import write_usd

    scene = generate_street(StreetCfg(style=style, seed=seed, length=length, lanes=lanes), out)  # type: ignore[arg-type]
    write_preview(scene, out)
    if usd:
        write_usd(scene, out)
    typer.echo(f"wrote {out}: {len(scene.ground)} ground regions, {len(scene.objects)} objects (preview.png)")


@app.command("preview")
@cli_command
def preview_command(scene_dir: SceneDir) -> None:
    """Write SCENE_DIR/preview.png: a top-down map (ground types coloured, objects as labelled footprints)."""
    from urbanverse.scene.preview import write_preview
    from urbanverse.scene.record import load_scene

    typer.echo(f"wrote {write_preview(load_scene(scene_dir), scene_dir)}")
