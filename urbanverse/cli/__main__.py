"""``python -m urbanverse.cli``: the same command line as the ``urbanverse`` script."""

from urbanverse.cli.app import app

if __name__ == "__main__":
    app(prog_name="urbanverse")
