"""The cv2.dnn runner of YOLO models exported to ONNX: letterbox in, boxes back in frame pixels."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from urbanverse.errors import InputError
from urbanverse.perception.detect import DetectionCfg, run_detection
from urbanverse.perception.onnx_yolo import OnnxYoloDetector, is_onnx_yolo


def _export_fixed_head(path, rows: np.ndarray, imgsz=(192, 320)) -> None:
    """An ONNX 'detector' whose output is the constant ``rows`` (N, 4 + nc) in the YOLO layout
    ``(1, 4 + nc, N)``, whatever the input (the input still flows through, so shapes are checked)."""
    torch = pytest.importorskip("torch")

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("out", torch.tensor(rows.T[None], dtype=torch.float32))

        def forward(self, x):
            return self.out + 0.0 * x.mean()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Head(), (torch.zeros(1, 3, *imgsz),), str(path), dynamo=False, opset_version=17)


def test_letterboxed_boxes_come_back_in_frame_pixels(tmp_path):
    # input 192 x 320 (h x w); a 640 x 480 frame is scaled by 0.4 to 256 x 192: no vertical pad,
    # 32 px of padding left and right
    rows = np.array(
        [
            [32 + 40, 96, 40, 80, 0.9, 0.05],  # class 0 ("tree") centred at x=72, y=96 in input px
            [32 + 41, 97, 40, 80, 0.8, 0.02],  # a duplicate: suppressed by NMS
            [200, 50, 20, 20, 0.1, 0.7],  # class 1 ("car")
            [100, 100, 10, 10, 0.2, 0.1],  # below the threshold
        ]
    )
    model = tmp_path / "det.onnx"
    _export_fixed_head(model, rows)
    (tmp_path / "det.json").write_text(json.dumps({"names": ["tree", "car"], "imgsz": [192, 320]}))
    assert is_onnx_yolo(str(model))
    det = OnnxYoloDetector(str(model))
    cands = det(np.zeros((480, 640, 3), np.uint8), min_score=0.5)
    by_label = {c.label: c for c in cands}
    assert sorted(by_label) == ["car", "tree"] and len(cands) == 2
    assert np.allclose(
        by_label["tree"].box, [(72 - 20 - 32) / 0.4, (96 - 40) / 0.4, (72 + 20 - 32) / 0.4, 340]
    )
    assert by_label["car"].score == pytest.approx(0.7)
    # through run_detection, labels map to the taxonomy
    fd = run_detection(
        [(0, np.zeros((480, 640, 3), np.uint8))],
        DetectionCfg(
            detector=str(model), classifier="off", crop_classifier="", poles=False, vegetation=False
        ),
    )
    assert fd.detectors == ("yolo_onnx:det",)
    assert sorted(d.category for d in fd.frames[0].detections) == ["broadleaf_tree", "sedan"]


def test_bad_sidecar(tmp_path):
    model = tmp_path / "m.onnx"
    _export_fixed_head(model, np.zeros((3, 6)))
    (tmp_path / "m.json").write_text("{}")
    with pytest.raises(InputError, match="m.json"):
        OnnxYoloDetector(str(model))
