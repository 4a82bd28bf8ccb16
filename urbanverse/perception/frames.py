"""Keyframe inputs of the perception stages: ``(keyframe index, RGB array or image path)`` pairs.

The stages do not depend on the video module: the caller hands keyframes as a sequence of
``(index, image)`` where ``image`` is an ``(H, W, 3)`` uint8 RGB array or the path of an image
file. Paths are read lazily, one frame at a time, so a long video never sits in memory.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError

#: One keyframe as given by the caller.
FrameInput = tuple[int, "np.ndarray | str | Path"]


def check_frames(frames: Sequence[FrameInput]) -> list[tuple[int, np.ndarray | Path]]:
    """Validate the list (indices unique ints, images arrays or existing files) without reading files."""
    out: list[tuple[int, np.ndarray | Path]] = []
    seen: set[int] = set()
    for pos, item in enumerate(frames):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise InputError(f"frames[{pos}]: expected (keyframe index, image), got {type(item).__name__}")
        index, image = item
        if isinstance(index, bool) or not isinstance(index, int | np.integer):
            raise InputError(f"frames[{pos}]: keyframe index must be an int, got {index!r}")
        if int(index) in seen:
            raise InputError(f"frames[{pos}]: duplicate keyframe index {int(index)}")
        seen.add(int(index))
        if isinstance(image, np.ndarray):
            if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3 or min(image.shape[:2]) < 8:
                raise InputError(
                    f"frames[{pos}]: expected an (H, W, 3) uint8 RGB image, got {image.dtype} {image.shape}"
                )
            out.append((int(index), image))
        elif isinstance(image, str | Path):
            path = Path(image)
            if not path.is_file():
                raise InputError(f"{path}: file not found")
            out.append((int(index), path))
        else:
            raise InputError(f"frames[{pos}]: image must be an array or a path, got {type(image).__name__}")
    return out


def read_rgb(image: np.ndarray | Path) -> np.ndarray:
    """The ``(H, W, 3)`` uint8 RGB pixels of an array (returned as is) or an image file."""
    if isinstance(image, np.ndarray):
        return image
    import cv2

    bgr = cv2.imread(str(image), cv2.IMREAD_COLOR)
    if bgr is None:
        raise InputError(f"{image}: not a readable image")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def iter_frames(frames: Sequence[FrameInput]) -> Iterator[tuple[int, np.ndarray, str | None]]:
    """Yield ``(index, rgb, path or None)`` for each validated keyframe, reading files one at a time."""
    for index, image in check_frames(frames):
        yield index, read_rgb(image), (str(image) if isinstance(image, Path) else None)


def crop(rgb: np.ndarray, box, pad: float = 0.0, min_size: int = 2) -> np.ndarray | None:
    """The pixels of ``box`` (xyxy px) grown by ``pad`` x its size on each side, clipped to the image.

    Returns None when the clipped crop is smaller than ``min_size`` px on a side.
    """
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = (float(v) for v in box)
    bw, bh = x2 - x1, y2 - y1
    x1, x2 = max(0, int(np.floor(x1 - pad * bw))), min(w, int(np.ceil(x2 + pad * bw)))
    y1, y2 = max(0, int(np.floor(y1 - pad * bh))), min(h, int(np.ceil(y2 + pad * bh)))
    if x2 - x1 < min_size or y2 - y1 < min_size:
        return None
    return rgb[y1:y2, x1:x2]
