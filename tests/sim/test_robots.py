"""Robot kinematics and collision: stop, slide, curbs, ramps; fused kernel against torch."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from urbanverse.sim import kernels
from urbanverse.sim.robots import LEGGED, WHEELED, Robot

from .conftest import EXAMPLE, world_batch


@pytest.fixture(scope="module")
def plaza(plaza_dir):
    return world_batch(plaza_dir)


@pytest.fixture(scope="module")
def example():
    return world_batch(EXAMPLE)


@pytest.fixture(params=["fused", "torch"])
def path(request, monkeypatch):
    """Run each test through the numba kernel and through the torch reference."""
    if request.param == "torch":
        monkeypatch.setattr(kernels, "available", lambda device: False)
    elif kernels.numba is None:
        pytest.skip("numba not installed")
    return request.param


def _drive(cfg, world, pos, yaw, action, steps):
    robot = Robot(cfg, 1, "cpu")
    scene = torch.zeros(1, dtype=torch.long)
    robot.reset(torch.tensor([0]), world, scene, torch.tensor([pos]), torch.tensor([yaw]))
    heights = []
    for _ in range(steps):
        robot.step(torch.tensor([action]), 0.1, world, scene)
        heights.append(float(robot.data.height_w[0]))
    return robot.data, heights


def test_driving_into_a_wall_stops_and_counts_contacts(plaza, path):
    cfg = dataclasses.replace(WHEELED, collision_response="stop")
    d, _ = _drive(cfg, plaza, (7.0, 5.0), 0.0, [1.0, 0.0], 40)
    front = float(d.pos_w[0, 0]) + 0.35
    assert 9.5 < front <= 10.0 + 1e-3  # stopped at the wall (x = 10), never through it
    assert int(d.contact_count[0]) > 10 and bool(d.contact[0])
    assert float(d.vel_b[0, 0]) == 0.0


def test_sliding_along_a_wall(plaza, path):
    d, _ = _drive(WHEELED, plaza, (8.5, 3.0), math.pi / 4, [0.5, 0.0], 40)
    assert float(d.pos_w[0, 0]) < 10.0 - 0.2  # the footprint stays inside
    assert float(d.pos_w[0, 1]) > 5.0  # but it kept moving along +y
    stop = dataclasses.replace(WHEELED, collision_response="stop")
    d_stop, _ = _drive(stop, plaza, (8.5, 3.0), math.pi / 4, [0.5, 0.0], 40)
    assert float(d_stop.pos_w[0, 1]) < float(d.pos_w[0, 1]) - 1.0


def test_curbs_stop_wheeled_but_not_legged(example, path):
    # Road at x = -15 heading +y into the 15 cm north curb at y = 3.5.
    wheeled, _ = _drive(WHEELED, example, (-15.0, 1.5), math.pi / 2, [0.5, 0.0], 40)
    assert float(wheeled.pos_w[0, 1]) < 3.5 and int(wheeled.contact_count[0]) > 0
    legged, heights = _drive(LEGGED, example, (-15.0, 1.5), math.pi / 2, [0.5, 0.0, 0.0], 40)
    assert float(legged.pos_w[0, 1]) > 4.0 and heights[-1] == pytest.approx(0.15)
    assert int(legged.contact_count[0]) == 0


def test_wheeled_climbs_the_ramp(example, path):
    # From the crosswalk up the north curb ramp (x in [-2, 2], y from 3.5 to 4.7) onto the sidewalk.
    d, heights = _drive(WHEELED, example, (0.0, 1.0), math.pi / 2, [0.5, 0.0], 48)
    assert float(d.pos_w[0, 1]) > 5.0 and heights[-1] == pytest.approx(0.15)
    assert int(d.contact_count[0]) == 0
    assert max(b - a for a, b in zip(heights, heights[1:], strict=False)) <= WHEELED.max_step_height


def test_non_finite_actions_become_standstill(plaza, path):
    d, _ = _drive(LEGGED, plaza, (5.0, 5.0), 0.0, [float("nan"), float("inf"), -float("inf")], 3)
    assert torch.isfinite(d.pos_w).all() and torch.isfinite(d.vel_b).all()
    assert d.last_action.tolist() == [[0.0, 0.0, 0.0]]  # NaN and inf -> 0: a standstill
    assert torch.equal(d.pos_w, torch.tensor([[5.0, 5.0]]))
    d, _ = _drive(LEGGED, plaza, (5.0, 5.0), 0.0, [5.0, -3.0, 0.5], 1)
    assert d.last_action.tolist() == [[1.0, -1.0, 0.5]]  # finite values are clamped to [-1, 1]
