"""Work beside the camera stage: OpenCV runs one thread per stage while both run and gets its
threads back when the work beside ends and when the body fails; a failing or interrupted body tells
the work beside to stop."""

from __future__ import annotations

import threading

import cv2
import pytest

from urbanverse.gen.pipeline import _beside


@pytest.fixture
def three_opencv_threads():
    before = cv2.getNumThreads()
    cv2.setNumThreads(3)
    yield
    cv2.setNumThreads(before)


def test_opencv_runs_one_thread_each_while_work_runs_beside(three_opencv_threads) -> None:
    seen: dict[str, object] = {}
    release = threading.Event()

    def work(stop: threading.Event) -> str:
        seen["work"] = cv2.getNumThreads()
        release.wait(10)
        seen["stop"] = stop.is_set()
        return "done"

    with _beside(work) as future:
        seen["body"] = cv2.getNumThreads()
        release.set()
        assert future.result() == "done"
        seen["body after the work"] = cv2.getNumThreads()
    assert seen == {"work": 1, "body": 1, "stop": False, "body after the work": 3}
    assert cv2.getNumThreads() == 3


@pytest.mark.parametrize("failure", [RuntimeError("camera stage failed"), KeyboardInterrupt()])
def test_a_failing_or_interrupted_body_stops_the_work_beside(three_opencv_threads, failure) -> None:
    started = threading.Event()
    seen: dict[str, bool] = {}

    def work(stop: threading.Event) -> None:
        started.set()
        seen["stopped"] = stop.wait(30)  # False after 30 s if nobody says stop

    with pytest.raises(type(failure)), _beside(work):
        assert started.wait(10) and cv2.getNumThreads() == 1
        raise failure
    assert seen == {"stopped": True}
    assert cv2.getNumThreads() == 3
