"""The stage table and its runner: a cached stage is loaded, one whose cached output no longer loads
runs again, a changed setting reruns that stage and those after it only, stages run two at a time with
OpenCV on one thread each, a failing stage stops the one beside it, and a table entry swapped for
another runs in its place."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import cv2
import pytest

from urbanverse.errors import InputError
from urbanverse.gen.stages import Stage, StageRunner, Store, downstream, replace_stage


def _json_store(file: str = "out.json") -> Store:
    def load(work: Path):
        data = json.loads((work / file).read_text())
        if set(data) != {"value"}:
            raise InputError(f"{work / file}: unexpected field")
        return data["value"]

    return Store(file, lambda value, work: (work / file).write_text(json.dumps({"value": value})), load)


def _counting(calls: list[str], name: str, fn):
    def run(*inputs, cfg, env):
        calls.append(name)
        return fn(*inputs, cfg)

    return run


def _table(calls: list[str]) -> tuple[Stage, ...]:
    """``a = x + cfg["a"]``, ``b = a * 2``, ``c = x + cfg["c"]`` (beside ``a``), ``d = b + c``."""
    return (
        Stage(
            "a", ("x",), _counting(calls, "a", lambda x, cfg: x + cfg["a"]), lambda c: c["a"], _json_store()
        ),
        Stage("b", ("a",), _counting(calls, "b", lambda a, cfg: a * 2), lambda c: None, _json_store()),
        Stage(
            "c", ("x",), _counting(calls, "c", lambda x, cfg: x + cfg["c"]), lambda c: c["c"], _json_store()
        ),
        Stage("d", ("b", "c"), _counting(calls, "d", lambda b, c, cfg: b + c), lambda c: None, _json_store()),
    )


def _run(tmp_path: Path, stages, cfg, resume: bool = True) -> tuple[StageRunner, dict]:
    runner = StageRunner(tmp_path / "work", resume=resume)
    return runner, runner.run_table(stages, cfg, {"x": (1, "x-key")}, tmp_path, Path("in.mp4"), "scene")


def test_a_table_runs_in_dependency_order_into_numbered_folders(tmp_path: Path) -> None:
    calls: list[str] = []
    runner, out = _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    assert out == {"x": 1, "a": 11, "b": 22, "c": 101, "d": 123}
    assert sorted(calls) == ["a", "b", "c", "d"] and calls.index("a") < calls.index("b") < calls.index("d")
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == [
        "01_a", "02_b", "03_c", "04_d", "manifest.json",
    ]  # fmt: skip
    assert set(runner.seconds) == {"01_a", "02_b", "03_c", "04_d"}


def test_a_rerun_loads_everything_and_a_changed_setting_reruns_only_what_reads_it(tmp_path: Path) -> None:
    calls: list[str] = []
    _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    calls.clear()
    runner, out = _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    assert calls == [] and sorted(runner.cached) == ["01_a", "02_b", "03_c", "04_d"] and out["d"] == 123
    runner, out = _run(tmp_path, _table(calls), {"a": 10, "c": 200})
    assert sorted(calls) == ["c", "d"] and out["d"] == 223
    assert downstream(_table([]), "c") == {"c", "d"} and downstream(_table([]), "a") == {"a", "b", "d"}


def test_an_unreadable_cached_output_runs_the_stage_again(tmp_path: Path) -> None:
    calls: list[str] = []
    _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    (tmp_path / "work" / "02_b" / "out.json").write_text(json.dumps({"value": 22, "old_field": "none"}))
    calls.clear()
    _, out = _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    assert calls == ["b"] and out["d"] == 123
    assert json.loads((tmp_path / "work" / "02_b" / "out.json").read_text()) == {"value": 22}


def test_a_swapped_stage_runs_in_its_place_under_its_own_key(tmp_path: Path) -> None:
    """Swapping a stage (another detector, a depth model, a benchmark's ground truth) is one entry."""
    calls: list[str] = []
    _run(tmp_path, _table(calls), {"a": 10, "c": 100})
    other_c = Stage(
        "c", ("x",), _counting(calls, "other c", lambda x, cfg: -x), lambda c: "negated", _json_store()
    )
    calls.clear()
    _, out = _run(tmp_path, replace_stage(_table(calls), other_c), {"a": 10, "c": 100})
    assert sorted(calls) == ["d", "other c"] and out["c"] == -1 and out["d"] == 21
    with pytest.raises(KeyError, match="no stage named 'e'"):
        replace_stage(_table(calls), Stage("e", (), lambda **_: 0, lambda c: None, None))


def test_a_stage_reading_what_no_stage_makes_is_refused(tmp_path: Path) -> None:
    bad = Stage("e", ("nowhere",), lambda *a, **k: 0, lambda c: None, None)
    with pytest.raises(ValueError, match="nowhere"):
        _run(tmp_path, (*_table([]), bad), {"a": 1, "c": 1})


@pytest.fixture
def three_opencv_threads():
    before = cv2.getNumThreads()
    cv2.setNumThreads(3)
    yield
    cv2.setNumThreads(before)


def test_two_stages_run_at_once_with_one_opencv_thread_each(tmp_path: Path, three_opencv_threads) -> None:
    running, read = threading.Barrier(2, timeout=10), threading.Barrier(2, timeout=10)
    seen: dict[str, int] = {}

    def meet(name: str):
        def run(x, *, cfg, env):
            running.wait()  # passes once the other stage runs too
            seen[name] = cv2.getNumThreads()
            read.wait()  # neither ends before both have looked
            return x

        return run

    stages = (
        Stage("a", ("x",), meet("a"), lambda c: None, None),
        Stage("b", ("x",), meet("b"), lambda c: None, None),
        Stage("c", ("a", "b"), lambda a, b, *, cfg, env: cv2.getNumThreads(), lambda c: None, None),
    )
    _, out = _run(tmp_path, stages, {})
    assert seen == {"a": 1, "b": 1} and out["c"] == 3 and cv2.getNumThreads() == 3


def test_a_failing_stage_stops_the_one_beside_it_and_is_raised(tmp_path: Path, three_opencv_threads) -> None:
    started = threading.Event()
    stopped: list[bool] = []

    def long(x, *, cfg, env):
        started.set()
        stopped.append(env.stop.wait(10))
        return x

    def failing(x, *, cfg, env):
        started.wait(10)
        raise InputError("in.mp4: no usable ground was seen")

    stages = (
        Stage("long", ("x",), long, lambda c: None, None),
        Stage("failing", ("x",), failing, lambda c: None, None),
    )
    with pytest.raises(InputError, match="no usable ground"):
        _run(tmp_path, stages, {})
    assert stopped == [True] and cv2.getNumThreads() == 3


def test_a_check_fails_a_cached_output_as_it_failed_the_computed_one(tmp_path: Path) -> None:
    def has_value(value, env) -> None:
        if value < 0:
            raise InputError(f"{env.source}: negative")

    stages = (Stage("a", ("x",), lambda x, *, cfg, env: -x, lambda c: None, _json_store(), check=has_value),)
    for _ in range(2):
        with pytest.raises(InputError, match="in.mp4: negative"):
            _run(tmp_path, stages, {})
    assert json.loads((tmp_path / "work" / "manifest.json").read_text())["01_a"]["output"] == "out.json"
