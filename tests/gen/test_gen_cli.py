"""``urbanverse gen`` end to end on a short rendered walk: outputs, resume, bad input."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
import shapely
from typer.testing import CliRunner

from urbanverse.assets.taxonomy import get_class
from urbanverse.cli import app
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import run_gen
from urbanverse.gen.stages import replace_stage
from urbanverse.gen.table import STAGES
from urbanverse.perception.record import FrameDetections
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import load_scene

runner = CliRunner()


@pytest.fixture(scope="module")
def generated(walk_video, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "scene"
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_gen_writes_a_valid_scene_with_previews_and_report(generated):
    scene = load_scene(generated)
    assert scene.source.kind == "video" and scene.ground and scene.camera_trajectory
    for name in ("scene.usda", "preview.png", "report.json", "compare_0.png"):
        assert (generated / name).is_file(), name
    report = json.loads((generated / "report.json").read_text())
    assert report["counts"]["keyframes"] >= 5 and set(report["seconds"]) >= {"01_video", "13_scene", "total"}
    assert isinstance(report["counts"]["objects_from_dense_points"], int)
    assert isinstance(report["counts"]["building_facades"], int)
    assert "size_scale" in report  # the object-size cross-check (None: no person or car measured)
    result = runner.invoke(app, ["validate", str(generated)])
    assert result.exit_code == 0, result.output
    # The camera path is the walk: about 1.2-1.5 m/s for 5 s.
    path = np.array([c.position for c in scene.camera_trajectory])
    assert 2.0 < np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1).sum() < 12.0


def test_rerun_resumes_every_stage_and_gives_the_same_scene(generated, walk_video):
    before = (generated / "scene.json").read_text()
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(generated), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output[result.output.index("{") :])
    assert len(report["cached_stages"]) == len(STAGES) - 1  # all but the uncached candidates warm-up
    assert (generated / "scene.json").read_text() == before


def _write_video(path: Path, seconds: float, fps: float = 10.0) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (64, 48))
    for k in range(int(seconds * fps)):
        writer.write(np.full((48, 64, 3), k % 255, np.uint8))
    writer.release()


@pytest.mark.parametrize("case", ["missing", "not_a_video", "too_short", "blank"])
def test_bad_input_exits_2_and_leaves_only_error_json(tmp_path, case):
    source = tmp_path / "input.mp4"
    if case == "not_a_video":
        source.write_text("this is not a video\n")
    elif case == "too_short":
        _write_video(source, seconds=1.0)
    elif case == "blank":  # flat colours only: no ground, nothing to reconstruct
        _write_video(source, seconds=3.0)
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", str(source), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert sorted(p.name for p in out.iterdir()) == ["error.json"]
    assert json.loads((out / "error.json").read_text())["error"]


def test_a_detection_error_beside_the_camera_stage_exits_2_and_leaves_only_error_json(
    walk_video, tmp_path, monkeypatch
):
    """Detection runs on a second thread while the camera stage runs: its error still reaches the
    command line once both have stopped, and nothing either wrote is left behind."""
    import urbanverse.gen.table as table
    from urbanverse.errors import InputError

    def broken(*_args, **_kwargs):
        raise InputError("detector broke")

    monkeypatch.setattr(table, "run_detection", broken)
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out)])
    assert result.exit_code == 2 and "detector broke" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["error.json"]


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ("lift.nope=1", "nope"),
        ("ground.threads=0", "ground.threads"),
        ("ground.crossing_length_m=[20, 3]", "ground.crossing_length_m"),
        ("ground.curb_reach_m=-5", "ground.curb_reach_m"),
        ("ground.lightness_weight=0", "ground.lightness_weight"),
        ("dense.threads=0", "dense.threads"),
        ("lift.consensus_m=-1", "lift.consensus_m"),
        ("retrieval.size_keep=0", "retrieval.size_keep"),
        ("retrieval.embedder=resnet", "mobilenetv2"),
    ],
)
def test_unknown_or_bad_setting_is_a_clear_error(walk_video, tmp_path, setting, said):
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(tmp_path / "o"), "--set", setting])
    assert result.exit_code == 2 and said in result.output


def test_a_library_that_is_not_there_is_a_clear_error(walk_video, tmp_path):
    result = runner.invoke(
        app, ["gen", str(walk_video), "-o", str(tmp_path / "o"), "--library", str(tmp_path / "no")]
    )
    assert result.exit_code == 2 and "no asset library here" in result.output
    assert not (tmp_path / "o" / "scene.json").exists()


def test_a_static_camera_gives_a_single_view_scene(walk_video, tmp_path):
    # No camera motion: one pose, no dense points (a case that once crashed the object proposals).
    capture = cv2.VideoCapture(str(walk_video))
    ok, frame = capture.read()
    capture.release()
    assert ok
    still = tmp_path / "still.mp4"
    writer = cv2.VideoWriter(str(still), cv2.VideoWriter_fourcc(*"mp4v"), 10.0, frame.shape[1::-1])
    rng = np.random.default_rng(0)
    for _ in range(30):  # 3 s; sensor noise, no motion
        writer.write(np.clip(frame + rng.normal(0, 1.0, frame.shape), 0, 255).astype(np.uint8))
    writer.release()
    result = runner.invoke(app, ["gen", str(still), "-o", str(tmp_path / "scene"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "scene" / "report.json").read_text())
    assert report["recon_mode"] == "single_view" and report["counts"]["ground_regions"] >= 1
    assert load_scene(tmp_path / "scene").ground


VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


@pytest.mark.skipif(not VTEST.is_file(), reason="opencv-doc absent")
def test_real_footage_lifts_the_parked_van_and_keeps_every_object_on_the_fitted_ground(tmp_path):
    """vtest.avi (a static camera high over a campus street, people walking): the van parked at the
    far end stands near the horizon, where a ray cast onto the road level (a curb below the pavement)
    runs out of range; it must fall back to the pavement's plane, not lose the van. It stands on a
    side street 28 m off the street fitted to the ground seen (intersections are not fitted), so the
    scene drops it with a warning rather than leave it floating; the lamp post stays on the ground."""
    result = runner.invoke(app, ["gen", str(VTEST), "-o", str(tmp_path / "scene")])
    assert result.exit_code == 0, result.output
    lifted = json.loads((tmp_path / "scene" / "work" / "09_objects" / "objects.json").read_text())
    lifted_families = sorted(get_class(o["category"]).l1 for o in lifted["objects"])
    assert lifted_families == ["lighting", "lighting", "vehicles"], lifted_families  # no pedestrian
    scene = load_scene(tmp_path / "scene")
    assert sorted({get_class(o.category).l1 for o in scene.objects}) == ["lighting"]
    report = json.loads((tmp_path / "scene" / "report.json").read_text())
    vehicle = next(o["category"] for o in lifted["objects"] if get_class(o["category"]).l1 == "vehicles")
    assert any("dropped" in w and vehicle in w for w in report["warnings"]), report["warnings"]
    tops = top_height_at(scene.ground, np.array([o.position[:2] for o in scene.objects]))
    assert np.allclose(tops, [o.position[2] for o in scene.objects], atol=0.02)
    # the people walking the campus paths: tracked every 0.5 s, at walking speed, mostly over the ground
    assert report["counts"]["people"] == len(scene.agents) >= 20 and scene.flow is not None
    assert 0.7 <= np.median([a.speed_mean for a in scene.agents]) <= 1.6
    points = np.concatenate([np.asarray(a.trajectory)[:, 1:] for a in scene.agents])
    ground = shapely.union_all([shapely.Polygon(r.polygon) for r in scene.ground])
    assert shapely.contains_xy(ground, points[:, 0], points[:, 1]).mean() > 0.85


@pytest.mark.skipif(not (VTEST.parent / "leuvenB.jpg").is_file(), reason="opencv-doc absent")
def test_an_image_pair_keeps_what_one_view_alone_sees(tmp_path):
    """leuvenA/B (a cobbled street from two viewpoints 22 deg apart): the bicycles against the wall
    are in view B only. As in a single photo, an object seen in one view of a pair is placed (before,
    tracks needed two views and the scene had no object)."""
    pair = tmp_path / "pair"
    pair.mkdir()
    for name in ("leuvenA.jpg", "leuvenB.jpg"):
        shutil.copyfile(VTEST.parent / name, pair / name)
    result = runner.invoke(app, ["gen", str(pair), "-o", str(tmp_path / "scene")])
    assert result.exit_code == 0, result.output
    scene = load_scene(tmp_path / "scene")
    bicycles = [o for o in scene.objects if o.category == "bicycle"]
    assert len(bicycles) == 1, [o.category for o in scene.objects]  # the two, side by side, merge
    camera = np.array(scene.camera_trajectory[-1].position[:2])
    assert 2.0 < np.linalg.norm(np.array(bicycles[0].position[:2]) - camera) < 12.0


def test_a_swapped_detector_is_one_table_entry_and_reruns_only_what_reads_it(generated, tmp_path):
    """Swap gen's detection stage for one that sees nothing: the camera stage stays cached (it reads
    no detections), the stages that read them, directly or not, rerun, and the scene keeps only the
    objects the dense points alone show."""
    out = tmp_path / "scene"
    shutil.copytree(generated, out)
    (out / "work" / "manifest.json").write_text((generated / "work" / "manifest.json").read_text())
    detect = next(s for s in STAGES if s.name == "detect")

    def sees_nothing(video, *, cfg, env) -> FrameDetections:
        return FrameDetections(detectors=("nothing",), frames=())

    blind = dataclasses.replace(detect, run=sees_nothing, key_parts=lambda cfg: "sees nothing")
    report = run_gen(json.loads((generated / "report.json").read_text())["input"], out, GenCfg(),
                     stages=replace_stage(STAGES, blind))  # fmt: skip
    assert {"01_video", "05_camera"} <= set(report.cached_stages)
    assert not {"02_detect", "03_track", "09_objects", "13_scene"} & set(report.cached_stages)
    assert report.counts["detections"] == 0 and report.counts["tracks"] == 0
    proposals = report.counts["objects_from_dense_points"] + report.counts["building_facades"]
    assert len(load_scene(out).objects) <= proposals
