"""``urbanverse gen --per-shot`` on an edited video of two shots: one scene each, resume, failures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import av
import cv2
import pytest
from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.errors import InputError
from urbanverse.gen import shots
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import run_gen
from urbanverse.gen.stages import replace_stage
from urbanverse.gen.table import STAGES
from urbanverse.scene.record import load_scene
from urbanverse.viewer.catalog import list_scenes

runner = CliRunner()


@pytest.fixture(scope="module")
def two_shots(walk_video, tmp_path_factory) -> Path:
    """The rendered walk (5 s), cut to the same walk in other colours (a second shot, 5-10 s)."""
    root = tmp_path_factory.mktemp("shots")
    with av.open(str(walk_video)) as container:
        frames = [f.to_ndarray(format="bgr24") for f in container.decode(video=0)]
    video = root / "two_shots.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10.0, (480, 270))
    for frame in frames + [f[..., [1, 2, 0]].copy() for f in frames]:  # the cut: colours swapped
        writer.write(frame)
    writer.release()
    return video


@pytest.fixture(scope="module")
def generated(two_shots, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen") / "walk"
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(out), "--per-shot"])
    assert result.exit_code == 0, result.output
    return out


def test_one_valid_scene_per_shot(generated):
    report = json.loads((generated / "report.json").read_text())
    assert [(s["shot"], s["folder"], s["status"]) for s in report["shots"]] == [
        (0, "shot_00", "ok"),
        (1, "shot_01", "ok"),
    ]
    assert [(s["start_s"], s["end_s"]) for s in report["shots"]] == [(0.0, 5.0), (5.0, 10.0)]
    assert sorted(list_scenes(generated)) == ["shot_00", "shot_01"]  # what `urbanverse view` lists
    for shot in ("shot_00", "shot_01"):
        scene = load_scene(generated / shot)
        assert scene.name == f"walk_{shot}" and scene.ground and len(scene.camera_trajectory) >= 3
        frames = scene.source.frames_used
        assert frames and (all(f < 50 for f in frames) if shot == "shot_00" else all(f >= 50 for f in frames))
        shot_report = json.loads((generated / shot / "report.json").read_text())
        assert shot_report["video_seconds"] == 5.0
        assert runner.invoke(app, ["validate", str(generated / shot)]).exit_code == 0


def test_rerun_resumes_every_shot_and_gives_the_same_scenes(generated, two_shots):
    before = {s: (generated / s / "scene.json").read_text() for s in ("shot_00", "shot_01")}
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(generated), "--per-shot"])
    assert result.exit_code == 0, result.output
    for shot, text in before.items():
        cached = json.loads((generated / shot / "report.json").read_text())["cached_stages"]
        assert len(cached) == len(STAGES) - 2  # all but the shared video stage and the candidates warm-up
        assert (generated / shot / "scene.json").read_text() == text


def test_a_run_of_the_other_kind_is_refused_and_the_folder_kept(generated, two_shots, tmp_path):
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(generated)])
    assert result.exit_code == 2 and "--per-shot" in result.output
    assert (generated / "shot_00" / "scene.json").is_file() and not (generated / "error.json").exists()
    one = tmp_path / "one"
    one.mkdir()
    (one / "scene.json").write_text("{}")
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(one), "--per-shot"])
    assert result.exit_code == 2 and (one / "scene.json").read_text() == "{}"


def _failing(shot_to_fail: int | None):
    real = shots.run_scene_stages

    def stages(shot, *args, **kwargs):
        if shot_to_fail is None or shot.video.keyframes.selected_shots == (shot_to_fail,):
            raise InputError(f"{shot.source}: no usable ground was seen")
        return real(shot, *args, **kwargs)

    return stages


def test_a_failing_shot_leaves_its_error_json_and_the_others_their_scenes(two_shots, tmp_path, monkeypatch):
    monkeypatch.setattr(shots, "run_scene_stages", _failing(1))
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(out), "--per-shot"])
    assert result.exit_code == 0, result.output
    assert "shot 1 (5.0-10.0 s) gave no scene" in result.output
    assert sorted(p.name for p in (out / "shot_01").iterdir()) == ["error.json"]
    assert (out / "shot_00" / "scene.json").is_file()
    report = json.loads((out / "report.json").read_text())
    assert [s["status"] for s in report["shots"]] == ["ok", "error"]


def test_no_shot_giving_a_scene_exits_2_leaving_only_error_json(two_shots, tmp_path, monkeypatch):
    monkeypatch.setattr(shots, "run_scene_stages", _failing(None))
    out = tmp_path / "out"
    result = runner.invoke(app, ["gen", str(two_shots), "-o", str(out), "--per-shot"])
    assert result.exit_code == 2
    assert sorted(p.name for p in out.iterdir()) == ["error.json"]
    assert "no shot gave a scene" in json.loads((out / "error.json").read_text())["error"]


def test_gen_falls_back_to_the_next_shot_and_reports_why(two_shots, tmp_path):
    """A detection stage that fails on shot 0 (the first tried of two equally long shots): gen makes
    the scene of shot 1, and report.json says which shot it used and why shot 0 was left."""
    detect = next(s for s in STAGES if s.name == "detect")

    def fails_on_shot_0(video, *, cfg, env):
        if video.keyframes.selected_shots == (0,):
            raise InputError("no usable ground was seen (a test stage)")
        return detect.run(video, cfg=cfg, env=env)

    table = replace_stage(STAGES, dataclasses.replace(detect, run=fails_on_shot_0))
    report = run_gen(two_shots, tmp_path / "scene", GenCfg(), stages=table)
    assert report.shot == 1 and [s.shot for s in report.skipped_shots] == [0]
    assert "a test stage" in report.skipped_shots[0].reason
    saved = json.loads((tmp_path / "scene" / "report.json").read_text())
    assert saved["shot"] == 1 and saved["skipped_shots"][0]["shot"] == 0
    assert all(f >= 50 for f in load_scene(tmp_path / "scene").source.frames_used)

    def fails_always(video, *, cfg, env):
        raise InputError("no camera pose (a test stage)")

    table = replace_stage(STAGES, dataclasses.replace(detect, run=fails_always))
    with pytest.raises(InputError, match=r"no shot gave a scene \(shot 0 .*; shot 1 "):
        run_gen(two_shots, tmp_path / "none", GenCfg(), stages=table)


def test_max_walk_m_cuts_the_walk_where_the_camera_passes_each_multiple(walk_video, tmp_path):
    """``--max-walk-m``: the camera stage measures the whole shot's walk, then each segment of at most
    that many metres becomes a scene of its own (``shot_<nn>_walk_<kk>``), and the segments together
    hold every keyframe once."""
    from types import SimpleNamespace

    from urbanverse.video.record import load_keyframes

    out = tmp_path / "walks"
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(out), "--max-walk-m", "5"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    walks = [s for s in report["shots"] if s["status"] == "ok"]
    assert walks and [s["walk"] for s in report["shots"]] == list(range(len(report["shots"])))
    for shot in walks:
        assert shot["folder"] == f"shot_00_walk_{shot['walk']:02d}"
        assert load_scene(out / shot["folder"]).objects is not None
    assert (out / "work" / "shot_00_walk" / "05_camera").is_dir()  # the survey of the whole shot
    # The cut itself, on 28 keyframes (the shot's, four times over) of a camera walking 1 m between them:
    kfs = load_keyframes(out / "work" / "01_video")
    many = [dataclasses.replace(k, index=i) for i, k in enumerate(kfs.keyframes * 4)]
    kfs = dataclasses.replace(kfs, keyframes=tuple(many))
    recon = SimpleNamespace(
        registered=[SimpleNamespace(index=i, position=(float(i), 0.0, 0.0)) for i in range(28)]
    )
    parts = shots.walk_segments(kfs, recon, max_walk_m=5.0)
    assert [len(p.keyframes) for p, _ in parts] == [5, 5, 5, 5, 8]  # the last 3 join the one before
    assert [metres for _, metres in parts] == [4.0, 4.0, 4.0, 4.0, 7.0]
    assert all(p.keyframes[0].index == 0 for p, _ in parts)


def test_max_walk_m_refuses_a_length_outside_its_range(walk_video, tmp_path):
    result = runner.invoke(app, ["gen", str(walk_video), "-o", str(tmp_path / "w"), "--max-walk-m", "1"])
    assert result.exit_code == 2 and "--max-walk-m: expected 5..10000 m, got 1" in result.output
