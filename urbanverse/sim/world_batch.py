"""Many compiled worlds as padded torch tensors on one device, with batched point queries.

Every query takes ``scene`` (K,) int64 scene indices and points ``xy`` (K, ..., 2) in the world
frame (m) and returns values at the nearest cell. Points off a scene's grid read its padding,
which is occupied (sdf < 0) and not walkable, so the edge of a scene behaves as a wall.
``ScenePeople`` packs the people seen in each scene (``Scene.agents``, ``Scene.flow``) the same way
for the pedestrians that replay them or walk with their flow (``urbanverse.sim.crowd``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from scipy import ndimage

from urbanverse.errors import InputError
from urbanverse.scene.agents import flow_arrays
from urbanverse.scene.record import Scene
from urbanverse.sim import rules
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
    ``candidate_count`` (M,) the goals random draws pick from (the first ones; ``GoalFields.candidates``);
    ``geodesic`` (M, G, Hc, Wc) float32 m (inf: unreachable); ``spawn_cells`` (M, G, S) int64;
    ``spawn_count`` (M, G); ``people``: the people seen in each scene (``ScenePeople``), or None.
    """

    def __init__(
        self,
        worlds: Sequence[CompiledWorld],
        goals: Sequence[GoalFields],
        device: str = "cpu",
        people: ScenePeople | None = None,
    ):
        if not worlds:
            raise InputError("WorldBatch: need at least one scene")
        resolutions = {w.resolution for w in worlds}
        coarse = {g.resolution for g in goals}
        if len(resolutions) != 1 or len(coarse) != 1:
            raise InputError("WorldBatch: every scene must be compiled at the same resolutions")
        self.device = device
        self.names = [w.name for w in worlds]
        self.worlds = list(worlds)
        if people is not None and people.num_scenes != len(worlds):
            raise InputError(f"WorldBatch: people of {people.num_scenes} scenes for {len(worlds)} worlds")
        self.people = people
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
        self.candidate_count = torch.tensor(
            [len(g.goals_xy) if g.candidates is None else g.candidates for g in goals], device=device
        )
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
        k = max(1, round(WALKER_CELL_M / self.resolution))
        self.walker_factor = k
        self.walker_resolution = self.resolution * k
        self.walker_shape = (-(-self.shape[0] // k), -(-self.shape[1] // k))
        self._walker: dict[float, torch.Tensor] = {}

    def walked(self) -> torch.Tensor:
        """(M, H, W) bool: the world cells whose centre lies in a flow cell where the video saw people
        walk (``ScenePeople``; none without people). People walk there whatever its ground type (a
        campus road, a lawn), so the ``flow`` pedestrians may too."""
        walked = torch.zeros_like(self.walkable)
        people = self.people
        if people is None or not bool(people.has_flow.any()):
            return walked
        rows, cols = self.shape
        j = (torch.arange(cols, device=self.device) + 0.5) * self.resolution
        i = (torch.arange(rows, device=self.device) + 0.5) * self.resolution
        for m in torch.nonzero(people.has_flow).flatten().tolist():
            cell = people.flow_cell[m]
            fx = ((self.origin[m, 0] + j - people.flow_origin[m, 0]) / cell).floor().long()
            fy = ((self.origin[m, 1] + i - people.flow_origin[m, 1]) / cell).floor().long()
            w, h = people.flow_size[m].tolist()
            inside = (fy[:, None] >= 0) & (fy[:, None] < h) & (fx[None, :] >= 0) & (fx[None, :] < w)
            seen = people.flow_table[
                m, fy.clamp(0, h - 1)[:, None], fx.clamp(0, w - 1)[None, :], ScenePeople.FLOW_SEEN
            ]
            walked[m] = inside & (seen > 0)
        return walked

    def walker_grid(self, radius: float) -> torch.Tensor:
        """(M, Hw, Ww) int16: what a walking body of ``radius`` m reads from the ground, on cells of
        ``walker_resolution`` m (blocks of ``walker_factor`` x ``walker_factor`` world cells from the
        same origin; ``walker_shape`` (Hw, Ww)), packed so that a crowd's lookups stay in cache: twice
        the block's smallest sdf in whole centimetres (clamped to +-163 m), plus 1 where every cell of
        the block is walkable with more than ``radius`` m to the nearest obstacle
        (``rules.has_margin``). So a body on a free block stands on free world cells. Read it with
        ``walker_lookup``, ``walker_sdf`` and ``walker_free``. Made once per radius."""
        if radius not in self._walker:
            k, (hw, ww) = self.walker_factor, self.walker_shape
            pad = (0, ww * k - self.shape[1], 0, hw * k - self.shape[0])  # the padding is occupied
            sdf = torch.nn.functional.pad(self.sdf, pad, value=-self.resolution)
            free = torch.nn.functional.pad(self.walkable | self.walked(), pad, value=False)
            free &= rules.has_margin(sdf, rules.clearance_limit(radius))
            m = self.num_scenes
            sdf = sdf.view(m, hw, k, ww, k).amin(dim=(2, 4))
            free = free.view(m, hw, k, ww, k).all(dim=4).all(dim=2)
            cm = (sdf * 100).round().clamp(-16383, 16383).to(torch.int16)
            self._walker[radius] = (cm * 2 + free.to(torch.int16)).contiguous()
        return self._walker[radius]

    def walker_lookup(self, radius: float, scene: torch.Tensor, xy: torch.Tensor) -> torch.Tensor:
        """``walker_grid(radius)`` values (int16) at points ``xy`` (K, ..., 2): shape ``xy.shape[:-1]``."""
        h, w = self.walker_shape
        extra = (1,) * (xy.dim() - 2)
        rel = (xy - self.origin[scene].view(-1, *extra, 2)) / self.walker_resolution
        ix = rel[..., 0].floor().clamp_(0, w - 1).long()
        iy = rel[..., 1].floor().clamp_(0, h - 1).long()
        return self.walker_grid(radius).view(-1)[scene.view(-1, *extra) * (h * w) + iy * w + ix]

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
        """A uniform goal candidate, then a uniform valid spawn cell: goal (K,), goal, spawn xy (K, 2) m."""
        u = torch.rand((scene.numel(), 2), generator=generator, device=scene.device)
        n = self.candidate_count[scene]
        goal = (u[:, 0] * n).long().clamp_max(n - 1)
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


#: Side (cells) of the window whose seen cells give a two-way flow cell its main axis.
AXIS_WINDOW_CELLS = 5


def walker_sdf(code: torch.Tensor) -> torch.Tensor:
    """Signed distance (m, float32, 1 cm steps) of ``WorldBatch.walker_grid`` values ``code``."""
    return torch.div(code, 2, rounding_mode="floor").float() * 0.01


def walker_free(code: torch.Tensor) -> torch.Tensor:
    """Whether a walker may stand where ``WorldBatch.walker_grid`` reads ``code`` (bool)."""
    return (code & 1).bool()


#: Cell size (m) of ``WorldBatch.walker_grid`` (rounded to whole world cells): a pedestrian's body
#: spans 6 of them, and the grid is a quarter of the world grid's cells at its default 0.05 m.
WALKER_CELL_M = 0.1


class ScenePeople:
    """The people seen in M scenes, packed as padded tensors on ``device``.

    Replay (``Scene.agents``): the trajectory points of every agent of every scene are concatenated,
    agent after agent, into ``knot_key`` (K,) float64 s and ``knot_xy`` (K, 2) float64 m. Point ``k``
    of agent ``a`` of scene ``m`` is entry ``agent_first[m, a] + k``; its key is
    ``agent_key[m, a] + t_k - agent_start[m, a]`` (``t_k`` its time), and the offsets ``agent_key``
    keep the keys increasing across agents, so one ``searchsorted`` over ``knot_key`` finds the
    segment of every replayed pedestrian at once. ``agent_count`` (M,); ``agent_first``,
    ``agent_points`` (M, A) int64; ``agent_start`` (time of the first point) and ``agent_duration``
    (M, A) float64 s. Agents with fewer than two points are left out.

    Flow (``Scene.flow``): ``flow_origin`` (M, 2) m, ``flow_cell`` (M,) m, ``flow_size`` (M, 2)
    int64 (cols, rows) and ``flow_table`` (M, R, C, FLOW_CHANNELS) float32, channels ``FLOW_*``: the
    unit mean walking direction and the coherence ``|mean velocity| / mean speed`` (1: everyone went
    one way, near 0: people went both ways); the cell's main axis (unit; the principal direction of
    the seen cells around it, which a two-way cell walks along); the mean speed (m/s; an unseen cell
    holds its nearest seen cell's); the centre of the nearest seen cell (world xy, m); and whether
    the cell was seen (1/0). Spawning samples seen cells by density: ``spawn_cdf`` (M, S) float64
    (the cumulative density share of each scene's seen cells, padded with 2),
    ``spawn_corner`` (M, S, 2) m (lower-left corners) and ``spawn_count`` (M,).
    ``has_agents``, ``has_flow`` (M,) bool.
    """

    FLOW_DIR, FLOW_COHERENCE, FLOW_AXIS, FLOW_SPEED, FLOW_HOME, FLOW_SEEN = 0, 2, 3, 5, 6, 8
    FLOW_CHANNELS = 9

    def __init__(self, scenes: Sequence[Scene], device: str = "cpu"):
        self.num_scenes = len(scenes)
        self.device = device
        self._pack_agents(scenes, device)
        self._pack_flow(scenes, device)
        self._np: dict | None = None

    def numpy_views(self) -> dict:
        """Zero-copy numpy views of the packed tensors for the fused CPU kernels (``kernels.py``)."""
        if self._np is None:
            self._np = {
                "agents_per_scene": self.agent_first.shape[1],
                "agent_count": self.agent_count.numpy(),
                "agent_key": self.agent_key.view(-1).numpy(),
                "agent_first": self.agent_first.view(-1).numpy(),
                "agent_points": self.agent_points.view(-1).numpy(),
                "agent_duration": self.agent_duration.view(-1).numpy(),
                "knot_key": self.knot_key.numpy(),
                "knot_xy": self.knot_xy.numpy(),
                "flow_table": self.flow_table.view(-1, self.FLOW_CHANNELS).numpy(),
                "flow_hw": tuple(self.flow_table.shape[1:3]),
                "flow_origin": self.flow_origin.numpy(),
                "flow_cell": self.flow_cell.numpy(),
                "flow_size": self.flow_size.numpy(),
            }
        return self._np

    def _pack_agents(self, scenes: Sequence[Scene], device: str) -> None:
        trajectories = [
            [np.asarray(a.trajectory, dtype=np.float64) for a in s.agents if len(a.trajectory) >= 2]
            for s in scenes
        ]
        a_max = max(1, *(len(t) for t in trajectories))
        m = len(scenes)
        first = np.zeros((m, a_max), np.int64)
        points = np.full((m, a_max), 2, np.int64)
        start = np.zeros((m, a_max))
        duration = np.ones((m, a_max))
        key_base = np.zeros((m, a_max))
        keys, xys = [np.array([0.0, 1.0])], [np.zeros((2, 2))]  # the padding agents' two points
        offset, count = 1.0, 2  # every agent's keys start 1 s after the previous agent's last
        for i, trajs in enumerate(trajectories):
            for a, traj in enumerate(trajs):
                first[i, a], points[i, a] = count, len(traj)
                start[i, a] = traj[0, 0]
                duration[i, a] = traj[-1, 0] - traj[0, 0]
                key_base[i, a] = offset + 1.0
                keys.append(key_base[i, a] + traj[:, 0] - traj[0, 0])
                xys.append(traj[:, 1:])
                offset, count = keys[-1][-1], count + len(traj)
        self.agent_count = torch.tensor([len(t) for t in trajectories], device=device)
        self.has_agents = self.agent_count > 0
        self.agent_first = torch.from_numpy(first).to(device)
        self.agent_points = torch.from_numpy(points).to(device)
        self.agent_start = torch.from_numpy(start).to(device)
        self.agent_duration = torch.from_numpy(duration).to(device)
        self.agent_key = torch.from_numpy(key_base).to(device)
        self.knot_key = torch.from_numpy(np.concatenate(keys)).to(device)
        self.knot_xy = torch.from_numpy(np.concatenate(xys)).to(device)

    def _pack_flow(self, scenes: Sequence[Scene], device: str) -> None:
        tables, cdfs, corners = [], [], []
        origin, cell, size = [], [], []
        for s in scenes:
            flow = s.flow if s.flow is not None and s.flow.cells else None
            if flow is None:
                tables.append(np.zeros((1, 1, self.FLOW_CHANNELS), np.float32))
                cdfs.append(np.zeros(0))
                corners.append(np.zeros((0, 2)))
                origin.append((0.0, 0.0))
                cell.append(1.0)
                size.append((1, 1))
                continue
            tables.append(_flow_table(flow))
            cells = sorted(flow.cells, key=lambda c: (c.row, c.col))
            weight = np.array([max(c.density, 0.0) for c in cells])
            weight = weight if weight.sum() > 0 else np.ones(len(cells))
            cdfs.append(np.cumsum(weight) / weight.sum())
            corners.append(
                np.asarray(flow.origin) + flow.cell * np.array([(c.col, c.row) for c in cells], np.float64)
            )
            origin.append(flow.origin)
            cell.append(flow.cell)
            size.append((flow.cols, flow.rows))
        self.has_flow = torch.tensor([len(c) > 0 for c in cdfs], device=device)
        self.flow_table = pad_stack(tables, 0.0, torch.float32, device)
        self.flow_origin = torch.tensor(origin, dtype=torch.float32, device=device)
        self.flow_cell = torch.tensor(cell, dtype=torch.float32, device=device)
        self.flow_size = torch.tensor(size, dtype=torch.int64, device=device)
        s_max = max(1, *(len(c) for c in cdfs))
        self.spawn_count = torch.tensor([len(c) for c in cdfs], device=device)
        self.spawn_cdf = torch.from_numpy(
            np.stack([np.pad(c, (0, s_max - len(c)), constant_values=2.0) for c in cdfs])
        ).to(device)
        self.spawn_corner = torch.from_numpy(
            np.stack([np.pad(c, ((0, s_max - len(c)), (0, 0))) for c in corners]).astype(np.float32)
        ).to(device)


def _flow_table(flow) -> np.ndarray:
    """The ``ScenePeople.flow_table`` grid (rows, cols, FLOW_CHANNELS) of one scene's ``FlowField``."""
    grids = flow_arrays(flow)
    seen, velocity, speed = grids["seen"], grids["velocity"], grids["speed"]
    rows, cols = seen.shape
    table = np.zeros((rows, cols, ScenePeople.FLOW_CHANNELS), np.float32)
    norm = np.hypot(velocity[..., 0], velocity[..., 1])
    table[..., 0:2] = velocity / np.maximum(norm, 1e-6)[..., None]
    table[..., 2] = np.where(seen, norm / np.maximum(speed, 1e-6), 0.0)
    # Main axis: principal direction of the seen cells in a window (second moments of their centres).
    yy, xx = np.mgrid[0:rows, 0:cols].astype(np.float64)
    w = seen.astype(np.float64)

    def mean(a):
        return ndimage.uniform_filter(a * w, AXIS_WINDOW_CELLS, mode="constant")

    n = np.maximum(mean(np.ones_like(w)), 1e-9)
    mx, my = mean(xx) / n, mean(yy) / n
    cxx, cyy, cxy = mean(xx * xx) / n - mx * mx, mean(yy * yy) / n - my * my, mean(xx * yy) / n - mx * my
    angle = 0.5 * np.arctan2(2 * cxy, cxx - cyy)
    table[..., 3], table[..., 4] = np.cos(angle), np.sin(angle)
    # Nearest seen cell of every cell: where unseen cells steer to, and the speed they walk at.
    _, (near_row, near_col) = ndimage.distance_transform_edt(~seen, return_indices=True)
    table[..., 5] = speed[near_row, near_col]
    table[..., 6] = flow.origin[0] + (near_col + 0.5) * flow.cell
    table[..., 7] = flow.origin[1] + (near_row + 0.5) * flow.cell
    table[..., 8] = seen
    return table
