"""Many compiled worlds as padded torch tensors on one device, with batched point queries.

Every query takes ``scene`` (K,) int64 scene indices and points ``xy`` (K, ..., 2) in the world
frame (m) and returns values at the nearest cell. Points off a scene's grid read its padding,
which is occupied (sdf < 0) and not walkable, so the edge of a scene behaves as a wall.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from urbanverse.errors import InputError
from urbanverse.sim.geodesic import GoalFields
from urbanverse.sim.world import EDGE_WALL_HEIGHT, CompiledWorld


def pad_stack(arrays: Sequence[np.ndarray], fill: float, dtype: torch.dtype, device: str) -> torch.Tensor:
    h = max(a.shape[0] for a in arrays)
    w = max(a.shape[1] for a in arrays)
    out = torch.full((len(arrays), h, w, *arrays[0].shape[2:]), fill, dtype=dtype)
    for i, a in enumerate(arrays):
        out[i, : a.shape[0], : a.shape[1]] = torch.from_numpy(np.ascontiguousarray(a)).to(dtype)
    return out.to(device)


class WorldBatch:
    """Grids of M scenes (fine world grids and coarse goal fields) stacked on ``device``.

    Attributes: ``sdf``, ``ground_height``, ``surface_height`` (M, H, W) float32 m; ``walkable``
    (M, H, W) bool; ``origin`` (M, 2) m; ``goal_xy`` (M, G, 2) m; ``goal_count`` (M,);
    ``geodesic`` (M, G, Hc, Wc) float32 m (inf: unreachable); ``spawn_cells`` (M, G, S) int64;
    ``spawn_count`` (M, G).
    """

    def __init__(self, worlds: Sequence[CompiledWorld], goals: Sequence[GoalFields], device: str = "cpu"):
        if not worlds:
            raise InputError("WorldBatch: need at least one scene")
        resolutions = {w.resolution for w in worlds}
        coarse = {g.resolution for g in goals}
        if len(resolutions) != 1 or len(coarse) != 1:
            raise InputError("WorldBatch: every scene must be compiled at the same resolutions")
        self.device = device
        self.names = [w.name for w in worlds]
        self.worlds = list(worlds)
        self.resolution = worlds[0].resolution
        self.coarse_resolution = goals[0].resolution
        self.num_scenes = len(worlds)
        self.sdf = pad_stack([w.sdf for w in worlds], -self.resolution, torch.float32, device)
        self.ground_height = pad_stack([w.ground_height for w in worlds], 0.0, torch.float32, device)
        self.surface_height = pad_stack(
            [w.surface_height for w in worlds], EDGE_WALL_HEIGHT, torch.float32, device
        )
        self.walkable = pad_stack([w.walkable for w in worlds], 0, torch.bool, device)
        self.origin = torch.tensor([w.origin for w in worlds], dtype=torch.float32, device=device)
        self.shape = tuple(self.sdf.shape[1:])
        g_max = max(len(g.goals_xy) for g in goals)
        self.goal_count = torch.tensor([len(g.goals_xy) for g in goals], device=device)
        self.goal_xy = pad_stack([g.goals_xy for g in goals], 0.0, torch.float32, device)[:, :g_max]
        dist = [np.moveaxis(g.distance, 0, -1) for g in goals]  # (Hc, Wc, G) so pad_stack pads rows/cols
        self.geodesic = pad_stack(dist, float("inf"), torch.float32, device).movedim(-1, 1).contiguous()
        self.coarse_shape = tuple(self.geodesic.shape[2:])
        spawn = []
        for g in goals:  # re-express flat coarse indices in the padded coarse grid
            wc = g.traversable.shape[1]
            cells = g.spawn_cells.astype(np.int64)
            spawn.append(np.where(cells >= 0, (cells // wc) * self.coarse_shape[1] + cells % wc, -1))
        s_max = max(s.shape[1] for s in spawn)
        spawn = [
            np.pad(s, ((0, g_max - s.shape[0]), (0, s_max - s.shape[1])), constant_values=-1) for s in spawn
        ]
        self.spawn_cells = torch.from_numpy(np.stack(spawn)).to(device)
        counts = [np.pad(g.spawn_count, (0, g_max - len(g.spawn_count))) for g in goals]
        self.spawn_count = torch.from_numpy(np.stack(counts).astype(np.int64)).to(device)
        self._np: dict | None = None

    def numpy_views(self) -> dict:
        """Zero-copy numpy views of the fine grids for the fused CPU kernels (``kernels.py``)."""
        if self._np is None:
            self._np = {
                "sdf": self.sdf.view(-1).numpy(),
                "ground": self.ground_height.view(-1).numpy(),
                "walkable": self.walkable.view(-1).numpy(),
                "hw": self.shape,
                "origins": self.origin.numpy().astype(np.float64),
                "res": self.resolution,
            }
        return self._np

    # ----- fine grid queries
    def flat_index(self, scene: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
        """Flat index into an (M, H, W) grid of the cell holding each point: shape ``xy.shape[:-1]``."""
        h, w = self.shape
        extra = (1,) * (xy.dim() - 2)
        rel = (xy - self.origin[scene].view(-1, *extra, 2)) / self.resolution
        ix = rel[..., 0].floor().clamp_(0, w - 1).long()
        iy = rel[..., 1].floor().clamp_(0, h - 1).long()
        return scene.view(-1, *extra) * (h * w) + iy * w + ix

    def lookup(self, grid: torch.Tensor, scene: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
        """Values of ``grid`` (M, H, W) at points ``xy`` (K, ..., 2): shape ``xy.shape[:-1]``."""
        return grid.view(-1)[self.flat_index(scene, xy)]

    def sdf_gradient(self, scene: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
        """Unit gradient of the sdf (central differences, one cell apart) at ``xy`` (K, 2): (K, 2)."""
        e = self.resolution
        offsets = torch.tensor([[e, 0.0], [-e, 0.0], [0.0, e], [0.0, -e]], device=xy.device)
        v = self.lookup(self.sdf, scene, xy[:, None, :] + offsets)
        grad = torch.stack([v[:, 0] - v[:, 1], v[:, 2] - v[:, 3]], dim=-1)
        return grad / grad.norm(dim=-1, keepdim=True).clamp_min(1e-6)

    # ----- goal fields
    def geodesic_distance(self, scene: torch.Tensor, goal: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
        """Geodesic distance (m) from ``xy`` (K, 2) to goal ``goal`` (K,) of ``scene``; inf if unreachable."""
        hc, wc = self.coarse_shape
        rel = (xy - self.origin[scene]) / self.coarse_resolution
        ix = rel[:, 0].floor().clamp_(0, wc - 1).long()
        iy = rel[:, 1].floor().clamp_(0, hc - 1).long()
        g = self.geodesic.shape[1]
        return self.geodesic.view(-1)[((scene * g + goal) * hc + iy) * wc + ix]

    def route_waypoint(
        self, scene: torch.Tensor, goal: torch.Tensor, xy: torch.Tensor, radius: float, num_dirs: int = 24
    ) -> torch.Tensor:
        """Next waypoint of the shortest walkable route from ``xy`` (K, 2) to ``goal`` (K,): the point of
        lowest geodesic distance on a circle of ``radius`` (m) around ``xy``, sampled in ``num_dirs``
        directions; the goal itself where it is closer than ``radius`` or no circle point reaches it.
        Returns world xy (K, 2) m. A global planner on the scene map, as a delivery robot with a map has."""
        ring = torch.arange(num_dirs, device=xy.device) * (2 * torch.pi / num_dirs)
        pts = xy[:, None, :] + radius * torch.stack([ring.cos(), ring.sin()], dim=-1)
        k = xy.shape[0]
        geo = self.geodesic_distance(
            scene.repeat_interleave(num_dirs), goal.repeat_interleave(num_dirs), pts.reshape(-1, 2)
        ).view(k, num_dirs)
        best = pts[torch.arange(k, device=xy.device), geo.argmin(dim=1)]
        goal_xy = self.goal_xy[scene, goal]
        use_goal = ~torch.isfinite(geo).any(dim=1) | ((goal_xy - xy).norm(dim=-1) < radius)
        return torch.where(use_goal[:, None], goal_xy, best)

    def sample_goal_and_spawn(
        self, scene: torch.Tensor, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A uniform goal, then a uniform valid spawn cell: goal (K,), goal and spawn xy (K, 2) m."""
        u = torch.rand((scene.numel(), 2), generator=generator, device=scene.device)
        goal = (u[:, 0] * self.goal_count[scene]).long().clamp_max(self.goal_count[scene] - 1)
        count = self.spawn_count[scene, goal]
        slot = (u[:, 1] * count).long().clamp_max(count - 1)
        cell = self.spawn_cells[scene, goal, slot]
        wc = self.coarse_shape[1]
        ij = torch.stack([cell % wc, cell // wc], dim=-1).float()
        spawn = self.origin[scene] + (ij + 0.5) * self.coarse_resolution
        return goal, self.goal_xy[scene, goal], spawn

    def sample_walkable(self, scene: torch.Tensor, count: int, generator: torch.Generator) -> torch.Tensor:
        """``count`` points per scene entry on walkable spawn cells of random goals: (K, count, 2) m."""
        k = scene.numel()
        rep = scene.repeat_interleave(count)
        _, _, xy = self.sample_goal_and_spawn(rep, generator)
        return xy.view(k, count, 2)
