"""Box geometry and the in-memory detection candidate shared by the detectors.

Boxes are ``(x1, y1, x2, y2)`` pixels; arrays of boxes are ``(N, 4)`` float.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Candidate:
    """A detection before label mapping: the detector's ``label``, ``score`` in [0, 1], ``box`` xyxy px,
    ``source`` detector name, optional boolean full-frame ``mask`` ``(H, W)``, and the crop classifier's
    verdict once consulted."""

    label: str
    score: float
    box: np.ndarray
    source: str
    mask: np.ndarray | None = None
    classifier_label: str | None = None
    classifier_score: float | None = None
    extra: dict = field(default_factory=dict)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU ``(len(a), len(b))`` of two box arrays ``(N, 4)`` and ``(M, 4)``."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    ix1 = np.maximum(a[:, None, 0], b[None, :, 0])
    iy1 = np.maximum(a[:, None, 1], b[None, :, 1])
    ix2 = np.minimum(a[:, None, 2], b[None, :, 2])
    iy2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(ix2 - ix1, 0, None) * np.clip(iy2 - iy1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)


def containment_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(N, M)``: fraction of each box of ``a`` covered by each box of ``b`` (intersection / area of a)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    ix = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    area_a = np.maximum((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]), 1e-12)
    return ix * iy / area_a[:, None]


def nms(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> list[int]:
    """Greedy non-maximum suppression; indices of kept boxes, highest score first."""
    order = list(np.argsort(-np.asarray(scores), kind="stable"))
    keep: list[int] = []
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    while order:
        i = order.pop(0)
        keep.append(int(i))
        if order:
            ious = iou_matrix(boxes[i : i + 1], boxes[order])[0]
            order = [j for j, v in zip(order, ious, strict=True) if v <= iou_threshold]
    return keep


def clip_box(box, width: int, height: int) -> np.ndarray:
    """``box`` clipped to the image ``[0, width] x [0, height]``."""
    b = np.asarray(box, dtype=np.float64).copy()
    b[[0, 2]] = np.clip(b[[0, 2]], 0, width)
    b[[1, 3]] = np.clip(b[[1, 3]], 0, height)
    return b
