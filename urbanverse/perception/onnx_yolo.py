"""YOLO detectors exported to ONNX, run with ``cv2.dnn`` (no ultralytics or torch at run time).

A model is ``<name>.onnx`` plus a sidecar ``<name>.json``: ``{"names": [...], "imgsz": [h, w],
"task": "detect"}`` (written by ``tools/train_detector.py``). The network takes a letterboxed
``(1, 3, h, w)`` RGB input in [0, 1] and returns ``(1, 4 + nc, N)``: box centre, size (input px)
and per-class scores for ``N`` anchors (the ultralytics YOLOv8 / YOLO11 export layout).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError
from urbanverse.perception.boxes import Candidate, nms


def sidecar(path: Path) -> Path:
    return Path(path).with_suffix(".json")


def is_onnx_yolo(path_or_name: str) -> bool:
    """True for an ``.onnx`` file with its ``.json`` sidecar."""
    p = Path(path_or_name).expanduser()
    return p.suffix.lower() == ".onnx" and p.is_file() and sidecar(p).is_file()


@functools.cache
def _load(path: str):
    import cv2

    meta_path = sidecar(Path(path))
    try:
        meta = json.loads(meta_path.read_text())
        names = [str(n) for n in meta["names"]]
        ih, iw = (int(v) for v in meta["imgsz"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{meta_path}: expected {{'names': [...], 'imgsz': [h, w]}} ({exc})") from None
    try:
        net = cv2.dnn.readNetFromONNX(path)
    except cv2.error as exc:
        raise InputError(f"--detector {path}: OpenCV cannot load this ONNX model ({exc})") from None
    return net, names, (ih, iw)


class OnnxYoloDetector:
    """``detector(rgb, min_score) -> [Candidate]`` for an exported YOLO (see the module docstring)."""

    def __init__(self, path: str, nms_iou: float = 0.5) -> None:
        self.path = str(Path(path).expanduser())
        self.net, self.names, self.imgsz = _load(self.path)
        self.name = f"yolo_onnx:{Path(path).stem}"
        self.nms_iou = nms_iou

    def __call__(self, rgb: np.ndarray, min_score: float) -> list[Candidate]:
        import cv2

        h, w = rgb.shape[:2]
        ih, iw = self.imgsz
        r = min(ih / h, iw / w)
        nh, nw = round(h * r), round(w * r)
        top, left = (ih - nh) // 2, (iw - nw) // 2
        canvas = np.full((ih, iw, 3), 114, dtype=np.uint8)
        canvas[top : top + nh, left : left + nw] = cv2.resize(rgb, (nw, nh), interpolation=cv2.INTER_LINEAR)
        blob = canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        self.net.setInput(blob)
        out = np.asarray(self.net.forward()).reshape(4 + len(self.names), -1).T  # (N, 4 + nc)
        scores = out[:, 4:]
        cls = scores.argmax(axis=1)
        conf = scores[np.arange(len(cls)), cls]
        keep = conf >= min_score
        if not keep.any():
            return []
        xywh, cls, conf = out[keep, :4], cls[keep], conf[keep]
        top_k = np.argsort(-conf)[:300]  # bound the NMS work at low thresholds
        xywh, cls, conf = xywh[top_k], cls[top_k], conf[top_k]
        boxes = np.stack(
            [xywh[:, 0] - xywh[:, 2] / 2, xywh[:, 1] - xywh[:, 3] / 2,
             xywh[:, 0] + xywh[:, 2] / 2, xywh[:, 1] + xywh[:, 3] / 2], axis=1,
        )  # fmt: skip
        boxes = (boxes - [left, top, left, top]) / r
        boxes = np.clip(boxes, 0, [w, h, w, h])
        out_c: list[Candidate] = []
        for c in np.unique(cls):  # per-class NMS
            idx = np.flatnonzero(cls == c)
            for k in nms(boxes[idx], conf[idx], self.nms_iou):
                j = idx[k]
                if boxes[j, 2] - boxes[j, 0] >= 2 and boxes[j, 3] - boxes[j, 1] >= 2:
                    label = self.names[int(c)]
                    out_c.append(Candidate(label=label, score=float(conf[j]), box=boxes[j], source=self.name))
        return out_c
