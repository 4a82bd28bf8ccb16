"""``urbanverse view`` (web viewer) and ``urbanverse isaac`` (Isaac Sim GUI) commands.

Registered on the main app by ``register_view_commands(app)``. viser and Isaac Sim are
imported inside the commands, so ``urbanverse --help`` stays fast and works without them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import SceneDir, cli_command
from urbanverse.errors import InputError


@cli_command
def view_command(
    scenes_dir: Annotated[
        Path, typer.Argument(help="A folder of scene folders, or one scene folder.")
    ] = Path("scenes"),
    port: Annotated[int, typer.Option(help="TCP port (0: any free port).")] = 8080,
    host: Annotated[
        str, typer.Option(help="Interface to bind; 0.0.0.0 exposes the viewer to the network.")
    ] = "127.0.0.1",
    library: Annotated[
        Path | None,
        typer.Option(help="Asset library for the Assets tab (default: $URBANVERSE_LIBRARY, else the cache)."),
    ] = None,
) -> None:
    """Browse scenes (3D, layers, object attributes, cousins, map) and the asset library in a web browser."""
    from urbanverse.errors import require

    require("viser", "viewer")
    from urbanverse.viewer.app import ViewerCfg, serve

    if library is not None and not library.is_dir():
        raise InputError(f"--library: {library} is not a folder")
    serve(ViewerCfg(scenes_dir=scenes_dir, host=host, port=port, library=library))


@cli_command
def isaac_command(
    scene_dir: SceneDir,
    robot: Annotated[
        str, typer.Option(help="Robot to drop at the spawn point: wheeled, legged or none.")
    ] = "none",
    headless: Annotated[bool, typer.Option(help="Run without a window (a few frames, then exit).")] = False,
) -> None:
    """Open the scene's USD in Isaac Sim (GUI, or headless), optionally with a robot at a spawn point.

    Needs Isaac Sim in this Python environment; without it, prints how to install it and exits 2.
    """
    from urbanverse.sim.isaaclab.launch import run_isaac_app

    if robot not in ("wheeled", "legged", "none"):
        raise InputError(f"--robot: expected wheeled, legged or none, got {robot!r}")
    code = run_isaac_app(scene_dir, robot=None if robot == "none" else robot, headless=headless)
    if code:
        raise typer.Exit(code)


def register_view_commands(app: typer.Typer) -> None:
    """Add ``view`` and ``isaac`` to the main command line app."""
    app.command("view")(view_command)
    app.command("isaac")(isaac_command)
