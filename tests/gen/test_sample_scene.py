"""The README's main job: the bundled city walk gives one whole street that passes ``urbanverse check``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import shapely
from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import load_scene

SAMPLE = Path(__file__).resolve().parents[2] / "assets" / "samples" / "city_walk.mp4"
runner = CliRunner()


def test_the_sample_walk_is_one_street_under_every_object_and_passes_the_physics_check(tmp_path):
    out = tmp_path / "city_walk"
    result = runner.invoke(app, ["gen", str(SAMPLE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    scene = load_scene(out)
    union = shapely.union_all([shapely.Polygon(r.polygon) for r in scene.ground])
    assert isinstance(union, shapely.Polygon) and not union.interiors  # one piece, no holes
    walk = shapely.LineString([p.position[:2] for p in scene.camera_trajectory])
    assert union.buffer(1e-3).covers(walk.buffer(19.9))  # the walk plus its 20 m margin
    xy = np.array([o.position[:2] for o in scene.objects])
    assert shapely.contains_xy(union, xy[:, 0], xy[:, 1]).all()
    assert np.allclose(top_height_at(scene.ground, xy), [o.position[2] for o in scene.objects], atol=0.02)
    report = json.loads((out / "report.json").read_text())
    assert report["ground_model"]["kind"] == "street", report["ground_model"]
    assert {r.type for r in scene.ground} >= {"road", "sidewalk"}
    checked = runner.invoke(app, ["check", str(out)])
    assert checked.exit_code == 0, checked.output
