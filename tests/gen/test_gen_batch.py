"""``urbanverse gen`` on a batch: a folder of videos with one bad file, local processes and Ray."""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.longjobs.helpers import error_lines, run_until
from urbanverse.cli import app
from urbanverse.gen.batch import RUNNING_FILE, batch_inputs, scene_names

runner = CliRunner()


@pytest.fixture(scope="module")
def videos(walk_video, tmp_path_factory) -> Path:
    """Three copies of the rendered walk and one truncated file, in one folder."""
    folder = tmp_path_factory.mktemp("videos")
    for name in ("a_walk", "b_walk", "c_walk"):
        shutil.copy(walk_video, folder / f"{name}.mp4")
    (folder / "d_broken.mp4").write_bytes(walk_video.read_bytes()[:5000])
    (folder / "notes.txt").write_text("not a video")  # ignored: the folder's videos are the inputs
    return folder


def statuses(out: Path) -> dict[str, str]:
    return {e["name"]: e["status"] for e in json.loads((out / "index.json").read_text())["inputs"]}


def errors(out: Path) -> dict[str, str]:
    """The error of each failed input (for assertion messages)."""
    return {
        e["name"]: e["error"] for e in json.loads((out / "index.json").read_text())["inputs"] if e["error"]
    }


@pytest.mark.parametrize("executor", [["--jobs", "2"], ["--ray"]], ids=["processes", "ray"])
def test_a_folder_of_four_videos_gives_three_scenes_and_one_error(videos, tmp_path, executor) -> None:
    if "--ray" in executor:
        pytest.importorskip("ray")
    out = tmp_path / "batch"
    result = runner.invoke(app, ["gen", str(videos), "-o", str(out), *executor])
    assert result.exit_code == 1, result.output  # some inputs made their scenes
    assert statuses(out) == {"a_walk": "ok", "b_walk": "ok", "c_walk": "ok", "d_broken": "error"}, errors(out)
    for name in ("a_walk", "b_walk", "c_walk"):
        assert (out / name / "scene.json").is_file() and (out / name / "scene.usda").is_file()
        assert not (out / name / ".gen_running").exists()
    assert [p.name for p in (out / "d_broken").iterdir()] == ["error.json"]
    error = json.loads((out / "d_broken" / "error.json").read_text())["error"]
    assert "FFmpeg" in error
    assert "3 of 4 inputs made their scenes" in result.output


def test_a_rerun_skips_finished_inputs_and_resumes_an_interrupted_one(videos, tmp_path) -> None:
    out = tmp_path / "batch"
    listing = tmp_path / "inputs.txt"
    listing.write_text(f"# two walks\n{videos / 'a_walk.mp4'}\n{videos / 'b_walk.mp4'}\n")
    assert runner.invoke(app, ["gen", str(listing), "-o", str(out)]).exit_code == 0  # all made
    # a driver killed while b_walk ran: its entry says running and its report is not written yet
    index = json.loads((out / "index.json").read_text())
    index["inputs"][1]["status"] = "running"
    (out / "index.json").write_text(json.dumps(index))
    (out / "b_walk" / "report.json").unlink()
    result = runner.invoke(app, ["gen", str(listing), "-o", str(out), "--json"])
    assert result.exit_code == 0
    assert "a_walk: done before (skipped)" in result.output
    assert statuses(out) == {"a_walk": "ok", "b_walk": "ok"}
    assert (out / "b_walk" / "report.json").is_file()


def test_ctrl_c_stops_the_workers_and_a_rerun_finishes(videos, tmp_path) -> None:
    out = tmp_path / "batch"
    # Ctrl-C (SIGINT to the process group, workers included) once a worker runs a stage
    stopped = run_until(
        ["gen", str(videos), "-o", str(out), "--jobs", "2"],
        lambda: any(out.glob(f"*/{RUNNING_FILE}")),
        signal.SIGINT,
        delay=0.5,
    )
    assert stopped.returncode == 130, stopped.stderr[-800:]
    assert "Traceback" not in stopped.stderr
    assert error_lines(stopped.stderr) == [
        "error: interrupted (Ctrl-C); what finished is kept; run the same command again to resume"
    ]
    assert set(statuses(out)) == {"a_walk", "b_walk", "c_walk", "d_broken"}  # the index is whole
    result = runner.invoke(app, ["gen", str(videos), "-o", str(out), "--jobs", "2"])
    assert result.exit_code == 1
    assert statuses(out) == {"a_walk": "ok", "b_walk": "ok", "c_walk": "ok", "d_broken": "error"}


def test_a_batch_where_nothing_works_exits_2(tmp_path) -> None:
    for name in ("x.mp4", "y.avi"):
        (tmp_path / name).write_bytes(b"\x00" * 100)
    result = runner.invoke(
        app, ["gen", str(tmp_path / "x.mp4"), str(tmp_path / "y.avi"), "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 2 and "0 of 2 inputs" in result.output
    assert statuses(tmp_path / "o") == {"x": "error", "y": "error"}


def test_inputs_and_names(tmp_path, walk_video) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first, second = tmp_path / "one" / "walk.mp4", tmp_path / "two" / "walk.mp4"
    for p in (first, second):
        shutil.copy(walk_video, p)
    assert batch_inputs([walk_video]) is None  # one video: single gen
    assert batch_inputs([tmp_path / "one"]) == [first]  # a folder of videos: a batch
    images = tmp_path / "frames"
    images.mkdir()
    (images / "f0.jpg").write_bytes(b"")
    assert batch_inputs([images]) is None  # a folder of images stays one input
    names = scene_names([first, second], {})
    assert len(set(names.values())) == 2 and all(n.startswith("walk-") for n in names.values())
    kept = scene_names([first, second], {str(first.resolve()): "walk"})  # a name once given is kept
    assert kept[str(first.resolve())] == "walk" and kept[str(second.resolve())] != "walk"
    with pytest.raises(ValueError, match="no such file"):
        batch_inputs([first, tmp_path / "missing.mp4"])
