"""Work beside the camera stage: OpenCV runs one thread per stage while both run, and gets its
threads back when the work beside ends, and when the body fails."""

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
    seen: dict[str, int] = {}
    release = threading.Event()

    def work() -> str:
        seen["work"] = cv2.getNumThreads()
        release.wait(10)
        return "done"

    with _beside(work) as future:
        seen["body"] = cv2.getNumThreads()
        release.set()
        assert future.result() == "done"
        seen["body after the work"] = cv2.getNumThreads()
    assert seen == {"work": 1, "body": 1, "body after the work": 3}
    assert cv2.getNumThreads() == 3


def test_opencv_gets_its_threads_back_when_the_body_fails(three_opencv_threads) -> None:
    release = threading.Event()
    with pytest.raises(RuntimeError, match="camera"), _beside(lambda: release.wait(10)):
        assert cv2.getNumThreads() == 1
        release.set()
        raise RuntimeError("camera stage failed")
    assert cv2.getNumThreads() == 3
