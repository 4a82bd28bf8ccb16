"""``urbanverse usd``, ``validate``, ``check``, ``procgen`` and ``preview``: one scene folder at a time.

Registered on the main app by ``register_scene_commands(app)``. pxr and MuJoCo are imported
inside the commands, so ``urbanverse --help`` answers at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, SceneDir, cli_command, print_json
from urbanverse.errors import InputError


@cli_command
def usd_command(
    scene_dir: SceneDir,
    fmt: Annotated[str, typer.Option("--format", help="usda (text) or usdc (binary crate).")] = "usda",
    as_json: JsonFlag = False,
) -> None:
    """Write SCENE_DIR/scene.usda (or .usdc) and each asset's asset.usda, ready for Isaac Sim."""
    from urbanverse.scene.record import load_scene
    from urbanverse.scene.usd_writer import write_usd

    if fmt not in ("usda", "usdc"):
        raise InputError(f"--format: expected usda or usdc, got {fmt!r}")
    scene = load_scene(scene_dir)
    path = write_usd(scene, scene_dir, fmt)  # type: ignore[arg-type]
    if as_json:
        print_json({"usd": str(path), "ground_regions": len(scene.ground), "objects": len(scene.objects)})
        return
    typer.echo(f"wrote {path} ({len(scene.ground)} ground regions, {len(scene.objects)} objects)")


@cli_command
def validate_command(
    scene_dir: SceneDir,
    usd: Annotated[
        Path | None, typer.Option(help="USD file to check (default: SCENE_DIR/scene.usda, else scene.usdc).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Validate scene.json and the scene's USD with every pxr.UsdValidation validator (UsdPhysics included).

    Exit code 1 when any validator reports an error, 2 when scene.json itself is invalid.
    """
    from urbanverse.scene.checks import validate_scene_folder

    result = validate_scene_folder(scene_dir, usd)
    if as_json:
        print_json(result.to_dict())
    else:
        _print_validation(result)
    if result.errors:
        raise typer.Exit(1)


def _print_validation(result) -> None:
    """The ``validate`` report of a ``ValidationResult``: one line per issue, then the totals."""
    from rich.console import Console

    scene = result.scene
    console = Console(highlight=False)
    console.print(f"scene.json: ok ({len(scene.ground)} ground regions, {len(scene.objects)} objects)")
    for issue in result.issues:
        colour = "red" if issue.severity == "error" else "yellow"
        console.print(
            f"[{colour}]{issue.severity}[/{colour}] {issue.validator} at {', '.join(issue.sites)}: "
            f"{issue.message}",
            soft_wrap=True,
        )
    console.print(
        f"{result.usd}: {result.validators} validators, {result.errors} errors, "
        f"{len(result.issues) - result.errors} other findings"
    )


@cli_command
def check_command(
    scene_dir: SceneDir,
    fix: Annotated[
        bool, typer.Option("--fix", help="Move interpenetrating objects apart or up, save, re-check.")
    ] = False,
    duration: Annotated[float, typer.Option(help="Simulated seconds.")] = 2.0,
    as_json: JsonFlag = False,
) -> None:
    """Simulate the scene in MuJoCo and report objects that sink, fall over, drift or interpenetrate.

    Writes SCENE_DIR/physics_check.json; exit code 1 when any object fails.
    """
    from urbanverse.scene.checks import check_scene_folder
    from urbanverse.scene.physics_check import PhysicsCheckCfg

    try:
        cfg = PhysicsCheckCfg(duration_s=duration)
    except ValueError as exc:
        raise InputError(f"--duration: {exc}") from None
    result = check_scene_folder(scene_dir, cfg, fix=fix)
    if as_json:
        print_json(result.to_dict())
    else:
        _print_physics_check(result)
    if not result.report.ok:
        raise typer.Exit(1)


def _print_physics_check(result) -> None:
    """The ``check`` report of a ``PhysicsCheckResult``: repairs, a table per object, the verdict."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for note in result.fixed:
        console.print(f"fixed {note}")
    report = result.report
    table = Table(
        "object",
        "category",
        "overlap cm",
        "drift cm",
        "tilt °",
        "sink cm",
        "result",
        title=f"physics check: {result.scene.name}, {report.duration_s:g} s in MuJoCo",
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
    failed = [o.id for o in report.objects if o.problems]
    console.print(
        f"{len(report.objects) - len(failed)}/{len(report.objects)} objects stable"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )


@cli_command
def procgen_command(
    out: Annotated[Path, typer.Option("-o", "--out", help="New scene folder to write.")],
    seed: Annotated[int, typer.Option(help="Layout and asset seed (same seed, same scene).")] = 0,
    city: Annotated[
        str,
        typer.Option(
            help="procgen-default (80 m, two lanes, 4 m sidewalks) or old-town (narrow cluttered streets, "
            "bollard rows, 10-20 cm curbs: every parameter drawn from the seed). --style, --length and "
            "--lanes, when given, override the draw."
        ),
    ] = "procgen-default",
    style: Annotated[
        str | None,
        typer.Option(
            help="residential, commercial, plaza or intersection. [default: residential]", show_default=False
        ),
    ] = None,
    length: Annotated[
        float | None,
        typer.Option(
            help="Street length in metres (intersection: both arms). [default: 80]", show_default=False
        ),
    ] = None,
    lanes: Annotated[
        int | None, typer.Option(help="Traffic lanes (3.2 m each). [default: 2]", show_default=False)
    ] = None,
    usd: Annotated[bool, typer.Option(help="Also write scene.usda.")] = True,
    as_json: JsonFlag = False,
) -> None:
    """Generate a procedural street (roads, curbs and ramps, crosswalks, furniture, cars, buildings)."""
    import dataclasses

    from urbanverse.procgen.city import CITIES
    from urbanverse.procgen.street import StreetCfg, generate_street
    from urbanverse.scene.preview import write_preview
    from urbanverse.scene.usd_writer import write_usd

    if city not in CITIES:
        raise InputError(f"--city: expected one of {', '.join(CITIES)}, got {city!r}")
    drawn = CITIES[city].street(seed) if city != "procgen-default" else StreetCfg(seed=seed)
    given = {"style": style, "length": length, "lanes": lanes}
    cfg = dataclasses.replace(drawn, **{k: v for k, v in given.items() if v is not None})
    scene = generate_street(cfg, out)
    write_preview(scene, out)
    if usd:
        write_usd(scene, out)
    if as_json:
        print_json(
            {"scene_dir": str(out), "ground_regions": len(scene.ground), "objects": len(scene.objects)}
        )
        return
    typer.echo(f"wrote {out}: {len(scene.ground)} ground regions, {len(scene.objects)} objects (preview.png)")


@cli_command
def preview_command(scene_dir: SceneDir) -> None:
    """Write SCENE_DIR/preview.png: a top-down map (ground types coloured, objects as labelled footprints)."""
    from urbanverse.scene.preview import write_preview
    from urbanverse.scene.record import load_scene

    typer.echo(f"wrote {write_preview(load_scene(scene_dir), scene_dir)}")


def register_scene_commands(app: typer.Typer) -> None:
    """Add ``usd``, ``validate``, ``check``, ``procgen`` and ``preview`` to ``app``."""
    app.command("usd")(usd_command)
    app.command("validate")(validate_command)
    app.command("check")(check_command)
    app.command("procgen")(procgen_command)
    app.command("preview")(preview_command)
