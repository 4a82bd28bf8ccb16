"""Output buffers of the RGB camera."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class RgbCameraData:
    """Latest colour images, batch-first over environments (N)."""

    rgb: torch.Tensor
    """sRGB images, (N, H, W, 3) uint8; row 0 is the top."""
