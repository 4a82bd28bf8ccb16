"""CIELAB colour conversions: the one home for sRGB -> L*a*b* (D65) in the package.

Three scales are in use, each by code whose thresholds are written in it, so each is kept exactly:

- :func:`srgb8_to_lab`: exact CIE formulas in float64; L* in [0, 100], a*, b* signed (about
  [-128, 127]). For colour distances between assets, materials and crops.
- :func:`srgb_to_lab_opencv`: OpenCV's float conversion (float32) of sRGB in [0, 1]; the same scale
  (L* in [0, 100], a*, b* signed), OpenCV's arithmetic. For the ground map's colour clustering.
- :func:`srgb8_to_lab_opencv8`: OpenCV's 8-bit conversion, L* x 255 / 100, a* + 128, b* + 128, each
  rounded to an integer in [0, 255] (returned as float64). For the facade cuts' colour steps.

Imports numpy and OpenCV only, so every layer may use it.
"""

from __future__ import annotations

import cv2
import numpy as np

_SRGB_TO_XYZ = np.array(
    [[0.4124564, 0.3575761, 0.1804375], [0.2126729, 0.7151522, 0.0721750], [0.0193339, 0.1191920, 0.9503041]]
)
"""Linear sRGB -> CIE XYZ (D65), rows X, Y, Z."""
_D65 = np.array([0.95047, 1.0, 1.08883])
"""The D65 white point in XYZ (Y = 1)."""


def _srgb8_to_linear_table() -> np.ndarray:
    """Linear light of each 8-bit sRGB code value (IEC 61966-2-1), ``(256,)`` float64."""
    c = np.arange(256) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


_SRGB8_TO_LINEAR = _srgb8_to_linear_table()


def srgb8_to_lab(rgb: np.ndarray) -> np.ndarray:
    """uint8 sRGB ``(..., 3)`` -> CIE L*a*b* (D65) float64 ``(..., 3)``: L* in [0, 100], a*, b* about
    [-128, 127]. Exact formulas, so distances mean the same everywhere."""
    xyz = _SRGB8_TO_LINEAR[np.asarray(rgb, dtype=np.uint8)] @ (_SRGB_TO_XYZ.T / _D65)
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def _as_image(values: np.ndarray) -> np.ndarray:
    """An ``(H, W, 3)`` array as it is, anything else ``(..., 3)`` as an ``(N, 1, 3)`` image."""
    return values if values.ndim == 3 else values.reshape(-1, 1, 3)


def srgb_to_lab_opencv(rgb: np.ndarray) -> np.ndarray:
    """sRGB in [0, 1] ``(..., 3)`` -> CIE L*a*b* float32 ``(..., 3)`` by OpenCV (``COLOR_RGB2Lab`` on
    float32): L* in [0, 100], a*, b* signed. Fast on whole grids."""
    rgb = np.asarray(rgb)
    lab = cv2.cvtColor(_as_image(rgb.astype(np.float32)), cv2.COLOR_RGB2Lab)
    return lab.reshape(rgb.shape)


def srgb8_to_lab_opencv8(rgb: np.ndarray) -> np.ndarray:
    """sRGB ``(..., 3)`` (cast to uint8) -> OpenCV's 8-bit L*a*b* as float64 ``(..., 3)``: L* x 255 / 100,
    a* + 128, b* + 128, each rounded to an integer in [0, 255]. Coarse, one byte per channel."""
    rgb = np.asarray(rgb)
    lab = cv2.cvtColor(_as_image(rgb.astype(np.uint8)), cv2.COLOR_RGB2LAB)
    return lab.reshape(rgb.shape).astype(float)


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 colour difference between CIE L*a*b* colours ``(..., 3)`` (broadcast), with the
    parametric factors kL = kC = kH = 1: about 1 is a just-noticeable difference, 10 a clearly
    different shade. Written out (Sharma, Wu and Dalal 2005) because neither OpenCV nor numpy has it,
    and scikit-image, which does, is a large install for one formula."""
    lab1, lab2 = np.broadcast_arrays(np.asarray(lab1, np.float64), np.asarray(lab2, np.float64))
    (l1, a1, b1), (l2, a2, b2) = np.moveaxis(lab1, -1, 0), np.moveaxis(lab2, -1, 0)
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean**7 / (c_mean**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    chroma_zero = (c1p * c2p) == 0
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(chroma_zero, 0.0, dh)
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_mean = np.where(
        np.abs(h1p - h2p) <= 180, h_sum / 2, np.where(h_sum < 360, (h_sum + 360) / 2, (h_sum - 360) / 2)
    )
    h_mean = np.where(chroma_zero, h_sum, h_mean)
    t = (
        1
        - 0.17 * np.cos(np.radians(h_mean - 30))
        + 0.24 * np.cos(np.radians(2 * h_mean))
        + 0.32 * np.cos(np.radians(3 * h_mean + 6))
        - 0.20 * np.cos(np.radians(4 * h_mean - 63))
    )
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / np.sqrt(20 + (l_mean - 50) ** 2)
    s_c = 1 + 0.045 * cp_mean
    s_h = 1 + 0.015 * cp_mean * t
    r_t = (
        -2
        * np.sqrt(cp_mean**7 / (cp_mean**7 + 25.0**7))
        * np.sin(np.radians(60 * np.exp(-(((h_mean - 275) / 25) ** 2))))
    )
    return np.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h))
