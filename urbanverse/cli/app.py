"""The ``urbanverse`` command line: thin commands that parse, build configs, call, and print.

One module per command group registers its commands here. Heavy libraries (pxr, mujoco,
torch) are imported inside the commands so that ``urbanverse --help`` answers at once.
Exit codes: 0 success, 1 a check failed or an internal error, 2 bad input (one line saying
what was wrong and where). Logging is set up once, in the callback below: the package's
records go to stderr at INFO (``-v``: DEBUG, ``-q``: warnings and errors only).
"""

from __future__ import annotations

from typing import Annotated

import typer

from urbanverse import __version__
from urbanverse.cli.assets import assets_app
from urbanverse.cli.episodes import episodes_app
from urbanverse.cli.gen import register_gen_commands
from urbanverse.cli.logs import configure_logging
from urbanverse.cli.render import register_render_commands
from urbanverse.cli.scene import register_scene_commands
from urbanverse.cli.train import register_train_commands
from urbanverse.cli.view import register_view_commands

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
register_scene_commands(app)
app.add_typer(episodes_app, name="episodes")


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "-v",
            "--verbose",
            help="Log debug messages too, with time and source (before the command: urbanverse -v gen ...).",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "-q",
            "--quiet",
            help="Log only warnings and errors (before the command: urbanverse -q check ...).",
        ),
    ] = False,
) -> None:
    """UrbanVerse: turn city-walk videos into simulation scenes and train robots in them."""
    if verbose and quiet:
        raise typer.BadParameter("give -v/--verbose or -q/--quiet, not both")
    configure_logging(verbose=verbose, quiet=quiet)
