"""Ultralytics YOLO / YOLOE / YOLO-World detectors given by weights path (``--detector PATH_OR_NAME``).

Needs the ``[yolo]`` extra (``ultralytics``, ``torchvision``). ``YOLO(path)`` picks the model
class from the file: names with ``-world`` load as YOLO-World, ``yoloe`` as YOLOE (recent
ultralytics), and segmentation weights give instance masks (``Results.masks.xy`` polygons in
frame pixels), rasterised here into full-frame boolean masks. Open-vocabulary models keep the
vocabulary saved in their weights unless ``vocabulary`` is given: setting one needs the CLIP
text encoder, which ultralytics downloads, so offline it fails with a clear error.

Weights are never downloaded: a name that is not an existing file (or a file in ultralytics'
weights folder) is an ``InputError``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError, MissingDependencyError, require
from urbanverse.perception.boxes import Candidate
from urbanverse.threads import torch_threads

#: File types ``ultralytics.YOLO`` loads (an exported OpenVINO / SavedModel folder also works).
WEIGHT_SUFFIXES = (".pt", ".onnx", ".torchscript", ".engine", ".tflite", ".mlpackage", ".yaml", ".yml")


def resolve_weights(path_or_name: str) -> Path:
    """The weights for ``--detector``: an existing file or exported-model folder, or a file of that
    name in ultralytics' ``weights_dir`` setting. ``InputError`` when neither exists or the file type
    is not a model."""
    path = Path(path_or_name).expanduser()
    if path.suffix.lower() not in WEIGHT_SUFFIXES and not path.is_dir():
        raise InputError(
            f"--detector {path_or_name}: not a YOLO model ({', '.join(WEIGHT_SUFFIXES)} or an export folder)"
        )
    if path.exists():
        return path
    try:
        from ultralytics.utils import SETTINGS

        candidate = Path(SETTINGS["weights_dir"]) / path.name
        if candidate.is_file():
            return candidate
    except Exception:  # settings unreadable: the path alone decides
        pass
    raise InputError(
        f"--detector {path_or_name}: weights file not found (weights are not downloaded; pass the path of "
        "a YOLO / YOLOE / YOLO-World .pt file, or use the offline default --detector ssd)"
    )


class YoloDetector:
    """Wraps ``ultralytics.YOLO`` for frames given as RGB arrays.

    ``weights``: path or name (see ``resolve_weights``). ``imgsz``: inference size in px.
    ``vocabulary``: class names for open-vocabulary models (needs the CLIP text encoder).
    ``threads``: torch CPU threads while it detects (ultralytics sets 1 at import; the process's
    count is restored after each frame). ``device``: "cpu", "cuda:0"...
    """

    def __init__(
        self,
        weights: str,
        imgsz: int = 640,
        vocabulary: tuple[str, ...] = (),
        threads: int = 2,
        device: str = "cpu",
    ) -> None:
        os.environ.setdefault("YOLO_OFFLINE", "1")  # no DNS look-ups at import
        ultralytics = require("ultralytics", "yolo")
        path = resolve_weights(weights)
        try:
            self.model = ultralytics.YOLO(str(path))
        except Exception as exc:  # a corrupt or foreign file
            raise InputError(f"--detector {weights}: cannot load YOLO weights ({exc})") from None
        self.threads = threads
        if vocabulary:
            if not hasattr(self.model, "set_classes"):
                raise InputError(f"--detector {weights}: not an open-vocabulary model; drop the vocabulary")
            try:
                self.model.set_classes(list(vocabulary))
            except Exception as exc:
                raise MissingDependencyError(
                    f"setting a vocabulary on {path.name} needs the CLIP text encoder, which is not "
                    f"available offline ({type(exc).__name__}: {exc}); use weights saved with their "
                    "vocabulary"
                ) from None
        self.name = f"yolo:{path.stem}"
        self.names: dict[int, str] = dict(self.model.names)
        self.imgsz = imgsz
        self.device = device

    def __call__(self, rgb: np.ndarray, min_score: float) -> list[Candidate]:
        """Detections (with masks for segmentation weights) in an ``(H, W, 3)`` uint8 RGB frame."""
        import cv2

        h, w = rgb.shape[:2]
        bgr = np.ascontiguousarray(rgb[..., ::-1])  # ultralytics reads numpy frames as BGR
        with torch_threads(self.threads):
            result = self.model.predict(
                source=bgr, imgsz=self.imgsz, conf=min_score, device=self.device, verbose=False
            )[0]
        names = result.names
        boxes = result.boxes
        if boxes is None or len(boxes) == 0:
            return []
        xyxy = boxes.xyxy.cpu().numpy().astype(np.float64)
        conf = boxes.conf.cpu().numpy()
        cls = boxes.cls.cpu().numpy().astype(int)
        polygons = result.masks.xy if result.masks is not None else None
        out: list[Candidate] = []
        for k in range(len(xyxy)):
            mask = None
            if polygons is not None and len(polygons[k]) >= 3:
                mask = np.zeros((h, w), dtype=np.uint8)
                cv2.fillPoly(mask, [np.round(polygons[k]).astype(np.int32)], 1)
                mask = mask.astype(bool)
            out.append(
                Candidate(
                    label=str(names[int(cls[k])]),
                    score=float(conf[k]),
                    box=np.clip(xyxy[k], 0, [w, h, w, h]),
                    source=self.name,
                    mask=mask,
                )
            )
        return out
