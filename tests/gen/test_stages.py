"""The resumable stage runner: a cached stage is loaded, one whose cached output no longer loads
(written by an older version) runs again instead of failing the resume, and stages run on several
threads all reach the manifest."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.gen.stages import StageRunner


def _compute(calls: list[str]):
    def compute(work: Path) -> str:
        calls.append("run")
        (work / "out.json").write_text(json.dumps({"value": 1}))
        return "fresh"

    return compute


def _load(work: Path) -> str:
    data = json.loads((work / "out.json").read_text())
    if data != {"value": 1}:
        raise InputError(f"{work / 'out.json'}: unexpected field")
    return "cached"


def test_a_cached_stage_is_loaded(tmp_path: Path) -> None:
    calls: list[str] = []
    assert StageRunner(tmp_path).run("01_a", "k", "out.json", _compute(calls), _load) == "fresh"
    again = StageRunner(tmp_path)
    assert again.run("01_a", "k", "out.json", _compute(calls), _load) == "cached"
    assert calls == ["run"] and again.cached == ["01_a"]


def test_an_unreadable_cached_output_runs_the_stage_again(tmp_path: Path) -> None:
    calls: list[str] = []
    StageRunner(tmp_path).run("01_a", "k", "out.json", _compute(calls), _load)
    (tmp_path / "01_a" / "out.json").write_text(json.dumps({"value": 1, "old_field": "none"}))
    again = StageRunner(tmp_path)
    assert again.run("01_a", "k", "out.json", _compute(calls), _load) == "fresh"
    assert calls == ["run", "run"] and again.cached == []
    assert json.loads((tmp_path / "01_a" / "out.json").read_text()) == {"value": 1}


def test_stages_on_several_threads_all_reach_the_manifest(tmp_path: Path) -> None:
    """gen runs detection and tracking beside the camera stage: every stage that finished on any
    thread is in the manifest, so a rerun loads them all."""
    runner = StageRunner(tmp_path)
    names = [f"{i:02d}_stage" for i in range(16)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda name: runner.run(name, "k", "out.json", _compute([]), _load), names))
    again = StageRunner(tmp_path)
    assert [again.run(name, "k", "out.json", _compute([]), _load) for name in names] == ["cached"] * 16
    assert set(json.loads((tmp_path / "manifest.json").read_text())) == set(names)
