"""The app itself: entry points, logging levels on stderr, exit codes and tracebacks."""

from __future__ import annotations

import logging
import subprocess
import sys

from typer.testing import CliRunner

from urbanverse import __version__
from urbanverse.cli import app
from urbanverse.errors import InputError

runner = CliRunner()


def test_python_dash_m_runs_the_same_app():
    out = subprocess.run(
        [sys.executable, "-m", "urbanverse.cli", "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"urbanverse {__version__}"


def _logging_validate(monkeypatch):
    """Make ``validate`` log one record per level (package and a third-party logger), then stop."""
    from urbanverse.scene import checks

    def logs_then_stops(*_args, **_kwargs):
        package = logging.getLogger("urbanverse.scene.checks")
        package.debug("debug from the package")
        package.info("info from the package")
        package.warning("warning from the package")
        logging.getLogger("somelib").info("info from another library")
        logging.getLogger("somelib").warning("warning from another library")
        raise InputError("stopped here")

    monkeypatch.setattr(checks, "validate_scene_folder", logs_then_stops)


def test_package_logs_go_to_stderr_at_info_by_default(monkeypatch, example_dir):
    _logging_validate(monkeypatch)
    result = runner.invoke(app, ["validate", str(example_dir)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "warning: warning from the package" in result.stderr
    assert "info from the package" in result.stderr
    assert "debug from the package" not in result.stderr
    assert "warning from another library" in result.stderr
    assert "info from another library" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == "error: stopped here"


def test_quiet_hides_info_and_verbose_shows_debug(monkeypatch, example_dir):
    _logging_validate(monkeypatch)
    quiet = runner.invoke(app, ["-q", "validate", str(example_dir)])
    assert quiet.exit_code == 2
    assert "info from the package" not in quiet.stderr
    assert "warning from the package" in quiet.stderr
    verbose = runner.invoke(app, ["--verbose", "validate", str(example_dir)])
    assert verbose.exit_code == 2
    assert "debug from the package" in verbose.stderr
    assert "info from another library" not in verbose.stderr
    both = runner.invoke(app, ["-v", "-q", "validate", str(example_dir)])
    assert both.exit_code == 2 and "not both" in both.output


def test_long_log_lines_stay_one_line_off_a_terminal(monkeypatch, example_dir):
    from urbanverse.scene import checks

    long = "word " * 60 + "end"

    def logs_long(*_args, **_kwargs):
        logging.getLogger("urbanverse.scene.checks").warning(long)
        raise InputError("stopped")

    monkeypatch.setattr(checks, "validate_scene_folder", logs_long)
    result = runner.invoke(app, ["validate", str(example_dir)])
    assert f"warning: {long}\n" in result.stderr


def test_internal_error_traceback_with_urbanverse_debug(monkeypatch, example_dir):
    from urbanverse.scene import checks

    def boom(*_args, **_kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(checks, "run_physics_check", boom)
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 1 and "URBANVERSE_DEBUG=1" in result.stderr
    monkeypatch.setenv("URBANVERSE_DEBUG", "1")
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 1 and isinstance(result.exception, RuntimeError)


def test_ctrl_c_inside_an_import_is_an_interruption(monkeypatch, example_dir):
    """A SIGINT that stops a C extension's initialisation surfaces as ``ImportError: initialization
    failed`` raised from the ``KeyboardInterrupt``: still Ctrl-C, exit 130 with one line, not an
    internal error."""
    from urbanverse.scene import checks

    def interrupted_import(*_args, **_kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(checks, "run_physics_check", interrupted_import)
    result = runner.invoke(app, ["check", str(example_dir)])
    assert result.exit_code == 130, result.stderr
    assert (
        result.stderr.strip().startswith("error: interrupted (Ctrl-C)")
        and "internal error" not in result.stderr
    )
