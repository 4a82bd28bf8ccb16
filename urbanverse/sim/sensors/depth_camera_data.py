"""Output buffers of the depth camera."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class DepthCameraData:
    """Latest depth images, batch-first over environments (N)."""

    depth: torch.Tensor
    """Distance along the optical axis per pixel, (N, H, W) m in (0, max_range]; row 0 is the top."""
