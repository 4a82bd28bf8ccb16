"""One truth per physical rule: the robot's collision check (torch and numba), the LiDAR's step
walls and the goal and spawn fields agree on every ground step, swept around each robot's
climb limit.

The world: two plazas side by side, ``[0, 4] x [0, 4]`` and ``[4, 8] x [0, 4]``, with a ground
step at ``x = 4`` (up or down). The robot starts at ``(2.5, 2)`` and drives along +x into it.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from urbanverse.sim import kernels, rules
from urbanverse.sim.geodesic import GoalFieldsSpec, compute_goal_fields
from urbanverse.sim.robots import LEGGED, WHEELED, Robot
from urbanverse.sim.sensors import Lidar, LidarCfg
from urbanverse.sim.world import WorldCfg, compile_world, step_edges
from urbanverse.sim.world_batch import WorldBatch

from .conftest import box, write_scene

ROBOTS = {"wheeled": WHEELED, "legged": LEGGED}
STEP_X = 4.0
START = (2.5, 2.0)
AHEAD = 2  # LiDAR beams at -pi, -pi/2, 0, pi/2 about body +x

#: Fixed corpus: (robot, base elevation m, step height m, up, climbable). The exact-limit steps are
#: the case the simulator once disagreed on: its collision kernel blocked a 5 cm path for the
#: wheeled robot (5 cm climb limit), while the LiDAR and spawn planning saw no step there.
CORPUS = [
    ("wheeled", 0.0, 0.05, True, True),
    ("wheeled", 0.0, 0.05, False, True),
    ("wheeled", 0.5, 0.05, True, True),  # 0.55 - 0.5 rounds above 0.05 in float32
    ("wheeled", 0.15, 0.05, True, True),
    ("wheeled", 0.0, 0.0501, True, True),
    ("wheeled", 0.0, 0.0502, True, False),
    ("wheeled", 0.0, 0.06, True, False),
    ("wheeled", 0.0, 0.04, False, True),
    ("wheeled", 0.0, 0.15, False, False),
    ("legged", 0.0, 0.20, True, True),
    ("legged", 0.15, 0.20, False, True),
    ("legged", 0.0, 0.2002, True, False),
    ("legged", 0.0, 0.15, True, True),
    ("legged", 0.0, 0.25, True, False),
]


def _world(folder, cfg, base: float, step: float, up: bool):
    """The two-plaza world, compiled with ``cfg``'s clearances and climb limit."""
    near, far = (base, base + step) if up else (base + step, base)
    regions = [("a", "plaza", box(0, 0, STEP_X, 4), near), ("b", "plaza", box(STEP_X, 0, 8, 4), far)]
    write_scene(folder, regions)
    spec = GoalFieldsSpec(
        clearance=cfg.radius, spawn_clearance=cfg.circumradius, max_step=cfg.max_step_height, min_distance=1.0
    )
    world = compile_world(folder, WorldCfg())
    return WorldBatch([world], [compute_goal_fields(world, spec)])


def _drive(cfg, world, fused: bool, steps: int = 20) -> tuple[float, int]:
    """Drive from ``START`` along +x at full speed through the numba kernel or the torch code:
    (final x m, blocked moves)."""
    robot = Robot(cfg, 1, "cpu")
    scene = torch.zeros(1, dtype=torch.long)
    robot.reset(torch.tensor([0]), world, scene, torch.tensor([START]), torch.zeros(1))
    action = torch.zeros(1, cfg.action_dim)
    action[0, 0] = 1.0
    original = kernels.available
    kernels.available = original if fused else (lambda device: False)
    try:
        for _ in range(steps):
            robot.step(action, 0.1, world, scene)
    finally:
        kernels.available = original
    return float(robot.data.pos_w[0, 0]), int(robot.data.contact_count[0])


def verdicts(folder, name: str, base: float, step: float, up: bool, lidar_methods=("sphere",)) -> dict:
    """Whether each component treats the step as a wall (True) or lets the robot climb it (False)."""
    cfg = ROBOTS[name]
    world = _world(folder, cfg, base, step, up)
    out = {}
    for path in ("torch", "numba") if kernels.numba is not None else ("torch",):
        x, contacts = _drive(cfg, world, fused=path == "numba")
        blocked = x < STEP_X
        assert blocked == (contacts > 0) and (blocked or x > STEP_X + 0.5), (path, x, contacts)
        out[f"robot_{path}"] = blocked
    grid = world.worlds[0]
    edges = step_edges(grid.ground_height, cfg.max_step_height)  # the scene's border is a step too
    iy, ix = grid.cell_of(np.array([[STEP_X - 0.5, 0.5], [STEP_X + 0.5, 3.5]]))
    out["step_edges"] = bool(edges[iy[0] : iy[1], ix[0] : ix[1]].any())
    for method in lidar_methods:
        lidar_cfg = LidarCfg(num_beams=4, method=method, max_range=8.0, lut_directions=64)
        lidar = Lidar(lidar_cfg, world, 1, "cpu", step_height=cfg.max_step_height)
        ranges = lidar.compute(torch.zeros(1, dtype=torch.long), torch.tensor([START]), torch.zeros(1))
        out[f"lidar_{method}"] = float(ranges[0, AHEAD]) < STEP_X - START[0] + 0.2
    # Goal fields: the two plazas are one region exactly when the step can be climbed ...
    res, wc, (ox, oy) = world.coarse_resolution, world.coarse_shape[1], world.origin[0].tolist()
    row, left, right = int((2.0 - oy) / res), int((2.0 - ox) / res), int((6.0 - ox) / res)
    field = world.geodesic[0]
    out["geodesic"] = not bool((field[:, row, left].isfinite() & field[:, row, right].isfinite()).any())
    # ... and spawns keep their turning circle off a step only when it cannot be climbed.
    cells = world.spawn_cells[0][world.spawn_cells[0] >= 0]
    spawn_x = (cells % wc).double() * res + res / 2 + ox
    near_step = (spawn_x - STEP_X).abs() < cfg.circumradius
    out["spawns"] = not bool(near_step.any())
    return out


@pytest.mark.parametrize(("name", "base", "step", "up", "climbable"), CORPUS)
def test_fixed_corpus_every_component_agrees(tmp_path, name, base, step, up, climbable):
    seen = verdicts(tmp_path, name, base, step, up, lidar_methods=("sphere", "lut"))
    assert seen == dict.fromkeys(seen, not climbable), seen


def test_the_rule_at_one_precision():
    # A height difference of exactly the limit, computed from float32 heights, is climbable; the
    # rule gives the same answer in numpy, torch and compiled numba code, compared in float32 or float64.
    limit = rules.step_limit(WHEELED.max_step_height)
    assert np.float32(limit) == limit and limit > 0.05
    heights = np.array([0.0, 0.05, 0.5, 0.55, 0.0502], dtype=np.float32)
    a, b = heights[[0, 2, 0]], heights[[1, 3, 4]]
    want = [False, False, True]
    assert rules.step_blocks(a, b, limit).tolist() == want
    assert rules.step_blocks(torch.from_numpy(a), torch.from_numpy(b), limit).tolist() == want
    if kernels.numba is not None:
        assert [bool(kernels._step_blocks(x, y, limit)) for x, y in zip(a, b, strict=True)] == want
    r = rules.clearance_limit(0.3)
    sdf = np.array([np.float32(0.3), np.nextafter(np.float32(0.3), np.float32(0))], dtype=np.float32)
    assert rules.clearance_blocks(sdf, r).tolist() == [False, True]
    assert rules.clearance_blocks(torch.from_numpy(sdf), r).tolist() == [False, True]
    if kernels.numba is not None:
        assert [bool(kernels._clearance_blocks(s, r)) for s in sdf] == [False, True]
    assert rules.has_margin(sdf, r).tolist() == [False, False]


def _sweep(name: str):
    """Step heights around ``name``'s climb limit: the limit, float32 neighbours, the tolerance edge."""
    limit = ROBOTS[name].max_step_height
    edge = rules.step_limit(limit)
    near = st.sampled_from([limit, edge, float(np.nextafter(np.float32(edge), np.float32(1)))])
    return st.one_of(near, st.floats(limit - 2e-3, limit + 2e-3), st.floats(0.0, 3 * limit))


_BASES = st.one_of(st.sampled_from([0.0, 0.15, 0.5, 1.0]), st.floats(0.0, 3.0))


def _agree(tmp_path_factory, name, data):
    base = data.draw(_BASES, label="base elevation (m)")
    step = data.draw(_sweep(name), label="step height (m)")
    up = data.draw(st.booleans(), label="step up")
    seen = verdicts(tmp_path_factory.mktemp("sweep"), name, base, step, up)
    assert len(set(seen.values())) == 1, (name, base, step, up, seen)


@pytest.mark.parametrize("name", ["wheeled", "legged"])
@settings(max_examples=12, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_sweep_around_the_climb_limit(tmp_path_factory, name, data):
    _agree(tmp_path_factory, name, data)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wheeled", "legged"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_long_sweep_around_the_climb_limit(tmp_path_factory, name, data):
    _agree(tmp_path_factory, name, data)
