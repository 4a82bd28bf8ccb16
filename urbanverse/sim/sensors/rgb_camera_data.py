"""Output buffers of the RGB camera."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class RgbCameraData:
    """Latest images, batch-first over environments (N); row 0 is the top."""

    rgb: torch.Tensor
    """sRGB images, (N, H, W, 3) uint8."""
    depth: torch.Tensor | None = None
    """Z-depth along the optical axis, (N, H, W) float32 m, ``max_range`` where nothing was hit
    (columns renderer only)."""
    semantic: torch.Tensor | None = None
    """Semantic ids (``urbanverse.render.scene_model.semantic_classes``), (N, H, W) uint8, 0 sky
    (columns renderer only)."""
