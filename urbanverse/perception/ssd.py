"""The offline default object detector: COCO SSD-MobileNet-v2 through ``cv2.dnn`` (OpenCV 4.x).

Input: an RGB frame, resized to 300 x 300 by ``blobFromImage``. Output rows
``[_, coco91_id, score, x1, y1, x2, y2]`` with normalised corners; ids use the 91-slot COCO
numbering of the TF object-detection label map (10 slots unused).
"""

from __future__ import annotations

import numpy as np

from urbanverse.assets.taxonomy import COCO_CLASSES
from urbanverse.perception.boxes import Candidate
from urbanverse.perception.models import ssd_net

_UNUSED_IDS = (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)


def _coco91() -> dict[int, str]:
    out, names = {}, iter(COCO_CLASSES)
    for i in range(1, 91):
        if i not in _UNUSED_IDS:
            out[i] = next(names)
    return out


#: TF label-map id (1..90) -> COCO class name.
COCO91: dict[int, str] = _coco91()


def detect_ssd(rgb: np.ndarray, min_score: float = 0.4) -> list[Candidate]:
    """COCO detections in an ``(H, W, 3)`` uint8 RGB frame with score >= ``min_score``; boxes in pixels."""
    import cv2

    h, w = rgb.shape[:2]
    net = ssd_net()
    # The network expects RGB; the frame already is RGB, so no channel swap.
    net.setInput(cv2.dnn.blobFromImage(rgb, size=(300, 300), swapRB=False))
    rows = net.forward().reshape(-1, 7)
    out: list[Candidate] = []
    scale = np.array([w, h, w, h], dtype=np.float64)
    for row in rows:
        score = float(row[2])
        name = COCO91.get(int(row[1]))
        if score < min_score or name is None:
            continue
        box = np.clip(row[3:7].astype(np.float64), 0.0, 1.0) * scale
        if box[2] - box[0] < 2 or box[3] - box[1] < 2:
            continue
        out.append(Candidate(label=name, score=score, box=box, source="ssd_coco"))
    return out
