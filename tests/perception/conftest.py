"""Synthetic scenes and the real street media (Debian ``opencv-doc``) the perception tests use."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

OPENCV_DATA = Path("/usr/share/doc/opencv-doc/examples/data")


def street_image(seed: int = 0, h: int = 480, w: int = 640):
    """A textured street-like RGB image with a tree (green crown on a brown trunk) and a grey lamp pole.

    Returns ``(image, tree_box, pole_box)``, boxes xyxy in pixels (pixel-edge coordinates).
    """
    import cv2

    rng = np.random.default_rng(seed)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = (150, 150, 155)  # road
    img[: h // 3] = (185, 200, 220)  # sky
    img[h // 3 : 2 * h // 3] = (150, 90, 70)  # brick wall with mortar courses
    for y in range(h // 3, 2 * h // 3, 12):
        img[y : y + 2, :] = (200, 190, 180)
    img = np.clip(img.astype(int) + rng.normal(0, 6, img.shape), 0, 255).astype(np.uint8)
    cv2.rectangle(img, (148, 250), (160, 400), (90, 60, 35), -1)  # trunk
    crown = np.zeros((h, w), np.uint8)
    cv2.ellipse(crown, (154, 190), (70, 85), 0, 0, 360, 1, -1)
    leaves = np.stack(
        [rng.integers(30, 70, (h, w)), rng.integers(90, 160, (h, w)), rng.integers(20, 60, (h, w))], -1
    ).astype(np.uint8)
    img[crown.astype(bool)] = leaves[crown.astype(bool)]
    cv2.rectangle(img, (440, 120), (448, 400), (70, 72, 75), -1)  # pole
    cv2.rectangle(img, (430, 112), (470, 122), (60, 60, 60), -1)  # lamp arm
    return img, (84.0, 105.0, 225.0, 401.0), (440.0, 112.0, 449.0, 401.0)


def box_iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


@pytest.fixture(scope="session")
def vtest_frames():
    """Six RGB frames of ``vtest.avi`` (768x576, static camera over a campus street), or skip."""
    import cv2

    path = OPENCV_DATA / "vtest.avi"
    if not path.is_file():
        pytest.skip("vtest.avi absent: apt-get install opencv-doc")
    cap = cv2.VideoCapture(str(path))
    frames = []
    for i in range(0, 300, 50):
        cap.set(cv2.CAP_PROP_POS_FRAMES, i)
        ok, bgr = cap.read()
        assert ok
        frames.append((i, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)))
    cap.release()
    return frames
