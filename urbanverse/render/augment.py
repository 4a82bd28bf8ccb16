"""Camera-like image degradations for domain randomisation: exposure, colour cast, blur, sensor noise."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from urbanverse.errors import InputError


@dataclasses.dataclass(frozen=True, kw_only=True)
class AugmentCfg:
    """Ranges drawn per frame (uniformly) unless noted; zero disables a term."""

    exposure_stops: float = 0.4
    """Exposure change within +- this many stops (x 2^u)."""
    color_jitter: float = 0.06
    """Per-channel gain within 1 +- this (white-balance error)."""
    blur_sigma_px: float = 0.8
    """Gaussian blur sigma within [0, this] pixels (defocus, motion)."""
    noise_std: float = 3.0
    """Additive Gaussian sensor noise, standard deviation in 8-bit levels."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if getattr(self, f.name) < 0:
                raise InputError(f"AugmentCfg.{f.name}: must be >= 0, got {getattr(self, f.name)}")


def augment(rgb: np.ndarray, cfg: AugmentCfg, rng: np.random.Generator) -> np.ndarray:
    """A degraded copy of an ``(H, W, 3)`` uint8 image; geometry is unchanged (ids stay aligned)."""
    image = rgb.astype(np.float32)
    gain = 2.0 ** rng.uniform(-cfg.exposure_stops, cfg.exposure_stops)
    image *= gain * (1.0 + rng.uniform(-cfg.color_jitter, cfg.color_jitter, size=3)).astype(np.float32)
    sigma = rng.uniform(0.0, cfg.blur_sigma_px)
    if sigma > 0.05:
        image = cv2.GaussianBlur(image, (0, 0), sigma)
    if cfg.noise_std > 0:
        image += rng.normal(0.0, cfg.noise_std, size=image.shape).astype(np.float32)
    return np.clip(image, 0, 255).astype(np.uint8)
