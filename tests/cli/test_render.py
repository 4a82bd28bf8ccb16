"""``urbanverse render-tour --json``: the written files and counts as one JSON document."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from urbanverse.cli import app

runner = CliRunner()


def test_render_tour_json(example_dir, tmp_path):
    out = tmp_path / "walk.mp4"
    args = ["render-tour", str(example_dir), "-o", str(out), "--seconds", "0.4", "--fps", "5"]
    result = runner.invoke(app, args + ["--width", "64", "--height", "48", "--no-shadows", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["video"] == str(out) and report["frames"] == 2
    assert json.loads((tmp_path / "walk_gt.json").read_text())["frames"]
