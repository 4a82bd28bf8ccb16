"""Navigation metrics over finished episodes, per scene and overall.

- success rate: fraction of episodes that reached the goal;
- SPL (Anderson et al. 2018): ``success * L / max(P, L)`` with ``L`` the geodesic spawn-to-goal
  distance and ``P`` the length of the path driven;
- collisions per episode: blocked moves and pedestrian hits;
- route completion: ``clip(1 - d_end / L, 0, 1)`` with ``d_end`` the geodesic distance left
  (0 where the robot ended somewhere the geodesic field does not reach).
"""

from __future__ import annotations

import torch

METRIC_NAMES = ("success_rate", "spl", "collisions_per_episode", "route_completion")


class NavMetrics:
    """Running sums on ``device`` for ``scene_names`` (M scenes)."""

    def __init__(self, scene_names: list[str], device: str):
        self.scene_names = scene_names
        self.sums = torch.zeros(len(scene_names), 1 + len(METRIC_NAMES), dtype=torch.float64, device=device)

    @staticmethod
    def episode_values(success, start_geodesic, path_length, collisions, end_geodesic) -> torch.Tensor:
        """Per-episode metric values (K, 4) in ``METRIC_NAMES`` order from (K,) tensors."""
        s = success.double()
        start = start_geodesic.double()
        spl = s * start / torch.maximum(path_length.double(), start).clamp_min(1e-6)
        rc = torch.where(
            torch.isfinite(end_geodesic), 1.0 - end_geodesic.double() / start.clamp_min(1e-6), 0.0
        )
        rc = torch.where(success, 1.0, rc.clamp(0.0, 1.0))
        return torch.stack([s, spl, collisions.double(), rc], dim=-1)

    def add(self, scene: torch.Tensor, values: torch.Tensor) -> None:
        """Accumulate finished episodes of ``scene`` (K,) with ``values`` (K, 4)."""
        row = torch.cat([torch.ones_like(values[:, :1]), values], dim=-1)
        self.sums.index_add_(0, scene, row)

    def summary(self) -> dict[str, float]:
        """``metrics/<name>`` overall and ``metrics/<scene>/<name>`` per scene, plus episode counts."""
        sums = self.sums.cpu()
        out: dict[str, float] = {}
        total = sums.sum(0)
        out["metrics/episodes"] = float(total[0])
        for i, name in enumerate(METRIC_NAMES):
            out[f"metrics/{name}"] = float(total[i + 1] / total[0]) if total[0] > 0 else float("nan")
        for m, scene in enumerate(self.scene_names):
            n = float(sums[m, 0])
            out[f"metrics/{scene}/episodes"] = n
            for i, name in enumerate(METRIC_NAMES):
                out[f"metrics/{scene}/{name}"] = float(sums[m, i + 1] / n) if n > 0 else float("nan")
        return out

    def reset(self) -> None:
        """Forget every episode."""
        self.sums.zero_()
