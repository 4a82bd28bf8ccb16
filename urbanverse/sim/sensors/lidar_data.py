"""Output buffers of the planar LiDAR."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class LidarData:
    """Latest scans, batch-first over environments (N) and beams (B)."""

    ranges: torch.Tensor
    """Range per beam, (N, B) m in [0, max_range]."""
    angles_b: torch.Tensor
    """Beam angles in the body frame, (B,) rad."""
