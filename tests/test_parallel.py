"""``urbanverse.parallel``: local processes and Ray (local, loopback, 2 workers), failures and retries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from urbanverse.parallel import ExecutorCfg, run_tasks


def square(x: int) -> int:
    return x * x


def fail_on_odd(x: int) -> int:
    if x % 2:
        raise ValueError(f"odd input {x}")
    return x


def die_once(marker: str) -> int:
    """Kills its worker process the first time it runs for ``marker``; returns its pid the second time."""
    if not Path(marker).exists():
        Path(marker).write_text("seen")
        os._exit(3)
    return os.getpid()


def always_die(_: int) -> int:
    os._exit(4)


def collect(fn, items, cfg) -> dict:
    return {r.key: r for r in run_tasks(fn, items, cfg)}


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_results_and_errors_per_task(executor, request) -> None:
    cfg = ExecutorCfg(jobs=2, ray=executor == "ray")
    if cfg.ray:
        request.getfixturevalue("ray_session")
    out = collect(fail_on_odd, {f"in{i}": i for i in range(4)}, cfg)
    assert {k: r.ok for k, r in out.items()} == {"in0": True, "in1": False, "in2": True, "in3": False}
    assert out["in2"].value == 2 and "ValueError: odd input 3" in out["in3"].error
    assert collect(square, {"a": 3}, cfg)["a"].value == 9


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_a_killed_worker_is_retried(executor, request, tmp_path) -> None:
    cfg = ExecutorCfg(jobs=2, ray=executor == "ray", max_retries=2)
    if cfg.ray:
        request.getfixturevalue("ray_session")
    items = {"dies": str(tmp_path / "dies.marker"), "fine": str(tmp_path / "other.marker")}
    (tmp_path / "other.marker").write_text("seen")  # never dies
    out = collect(die_once, items, cfg)
    assert out["dies"].ok and out["fine"].ok  # the killed task ran again and finished
    assert out["dies"].value != os.getpid()


def test_retries_run_out(tmp_path) -> None:
    out = collect(always_die, {"x": 0}, ExecutorCfg(jobs=1, max_retries=1))
    assert not out["x"].ok and out["x"].attempts == 2 and "died" in out["x"].error


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="--jobs"):
        ExecutorCfg(jobs=0)
