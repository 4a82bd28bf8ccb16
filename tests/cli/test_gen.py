"""``urbanverse gen --json`` on a stand-in pipeline: one JSON document on stdout, progress and logs on stderr.

The pipeline itself is tested end to end in tests/gen/; here ``run_gen`` is replaced so that
only the command's own work (options -> config, output streams, exit codes) runs.
"""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.errors import InputError

runner = CliRunner()


def _stand_in(seen: dict):
    def run_gen(source, out_dir, cfg, resume=True, progress=None):
        seen.update(source=source, cfg=cfg, resume=resume)
        progress("video", "run")
        logging.getLogger("urbanverse.gen.stages").warning("a stage warned")
        progress("video", "done")
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "report.json").write_text(json.dumps({"counts": {"objects": 3}, "warnings": ["w"]}))
        counts = {"objects": 3, "ground_regions": 2, "people": 4, "keyframes": 5}
        return SimpleNamespace(counts=counts, recon_mode="sfm", seconds={"total": 1.5}, warnings=("w",))

    return run_gen


def test_gen_json_is_the_report_alone_on_stdout(tmp_path, monkeypatch):
    from urbanverse.gen import pipeline

    seen: dict = {}
    monkeypatch.setattr(pipeline, "run_gen", _stand_in(seen))
    video = tmp_path / "walk.mp4"
    out = tmp_path / "scene"
    args = ["gen", str(video), "-o", str(out), "--camera-height", "1.5", "--json"]
    result = runner.invoke(app, args + ["--set", "retrieval.k=2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"counts": {"objects": 3}, "warnings": ["w"]}
    assert "video: done" in result.stderr and "a stage warned" in result.stderr
    assert seen["cfg"].recon.camera_height_m == 1.5 and seen["cfg"].retrieval.k == 2
    result = runner.invoke(app, ["gen", str(video), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(
        f"wrote {out}/scene.json and scene.usda: 3 objects, 2 ground regions, 4 people walking"
    )
    assert "warning: w" in result.stderr


def test_gen_bad_input_exits_2_and_leaves_error_json(tmp_path, monkeypatch):
    from urbanverse.gen import pipeline

    def bad(*_args, **_kwargs):
        raise InputError("walk.mp4: not a video")

    monkeypatch.setattr(pipeline, "run_gen", bad)
    out = tmp_path / "scene"
    result = runner.invoke(app, ["gen", str(tmp_path / "walk.mp4"), "-o", str(out), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip() == "error: walk.mp4: not a video"
    assert json.loads((out / "error.json").read_text())["error"]
