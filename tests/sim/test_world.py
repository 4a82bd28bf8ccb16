"""World compilation: grids of the example street, cache, bad scenes, geodesic fields."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.errors import InputError
from urbanverse.sim.geodesic import GoalFieldsSpec, compute_goal_fields
from urbanverse.sim.world import EDGE_WALL_HEIGHT, WorldCfg, compile_world, signed_distance

from .conftest import EXAMPLE, box, write_scene


def _at(world, x, y):
    iy, ix = world.cell_of(np.array([x, y]))
    return int(iy), int(ix)


def test_example_grids_have_curbs_ramps_and_obstacles():
    w = compile_world(EXAMPLE)
    assert w.resolution == 0.05 and w.shape == (262, 802)
    assert w.ground_height[_at(w, -10, 0)] == 0.0  # road
    assert w.ground_height[_at(w, -10, 5.0)] == pytest.approx(0.15)  # raised sidewalk
    assert w.ground_height[_at(w, 0, 4.1)] == pytest.approx(0.15 * (4.1 - 3.5) / 1.2, abs=0.01)  # ramp slope
    assert w.occupancy[_at(w, -12, -2.2)] and w.sdf[_at(w, -12, -2.2)] < 0  # the parked car
    assert w.surface_height[_at(w, -12, -2.2)] > 1.0
    assert not w.occupancy[_at(w, -10, 0)] and w.sdf[_at(w, -10, 0)] > 1.0
    assert w.occupancy[0].all() and w.surface_height[0, 0] == EDGE_WALL_HEIGHT  # off-map border
    assert w.walkable[_at(w, -15, 5.5)] and not w.walkable[_at(w, -10, 0)]  # sidewalk yes, road no
    again = compile_world(EXAMPLE)  # from the cache
    assert again.key == w.key and np.array_equal(again.sdf, w.sdf)


def test_signed_distance_of_a_single_cell():
    occ = np.zeros((21, 21), bool)
    occ[10, 10] = True
    sdf = signed_distance(occ, 0.1)
    assert sdf[10, 10] < 0
    assert sdf[10, 15] == pytest.approx(0.5 - 0.05)
    assert sdf[13, 14] == pytest.approx(0.5 - 0.05)


def test_scene_without_walkable_area_is_a_clear_error(tmp_path):
    scene = write_scene(tmp_path / "roads", [("r", "road", box(0, 0, 10, 10), 0.0)])
    with pytest.raises(InputError, match="no walkable area"):
        compile_world(scene)
    assert compile_world(scene, WorldCfg(walkable_types=("road",))).walkable.any()


def test_geodesic_distance_around_a_barrier(tmp_path):
    # U-shaped plaza: arms x in [0, 2] and [6, 8] joined by the strip y in [0, 2]; the road between
    # the arms is not walkable, so paths from one arm to the other go around through the strip.
    scene = write_scene(
        tmp_path / "u",
        [
            ("left", "plaza", box(0, 2, 2, 12), 0.0),
            ("bottom", "plaza", box(0, 0, 8, 2), 0.0),
            ("right", "plaza", box(6, 2, 8, 12), 0.0),
            ("road", "road", box(2, 2, 6, 12), 0.0),
        ],
    )
    world = compile_world(scene)
    clearance = 0.2
    spec = GoalFieldsSpec(
        clearance=clearance, spawn_clearance=clearance, max_step=0.05, num_goals=64, min_distance=0.5
    )
    f = compute_goal_fields(world, spec)
    g = int(np.argmin(np.linalg.norm(f.goals_xy - [1.0, 1.0], axis=1)))  # goal nearest the bottom-left
    gx, gy = (float(v) for v in f.goals_xy[g])

    def dist(x, y):
        ix, iy = int((x - f.origin[0]) / f.resolution), int((y - f.origin[1]) / f.resolution)
        centre = np.array(f.origin) + (np.array([ix, iy]) + 0.5) * f.resolution
        return float(f.distance[g, iy, ix]), centre

    # Along a row or a column the grid distance is exact.
    d, c = dist(7.0, gy)
    assert d == pytest.approx(abs(c[0] - gx), abs=1e-4)
    d, c = dist(gx, 11.0)
    assert d == pytest.approx(abs(c[1] - gy), abs=1e-4)
    # Top of the right arm: the continuous shortest path bends around the road's corner (kept
    # ``clearance`` away); the 8-connected grid may exceed it by at most 8 %, and the straight line
    # across the road (about 25 % shorter) is not possible.
    d, c = dist(7.1, 9.1)
    corner = np.array([6.0 + clearance, 2.0 - clearance])
    around = np.linalg.norm(corner - [gx, gy]) + np.linalg.norm(c - corner)
    assert around - 0.1 <= d <= 1.085 * around
    assert d > 1.15 * np.linalg.norm(c - [gx, gy])
    assert np.isinf(dist(4.0, 8.0)[0])  # on the road: not traversable


def test_unreachable_goals_are_a_clear_error(tmp_path):
    scene = write_scene(tmp_path / "small", [("p", "plaza", box(0, 0, 3, 3), 0.0)])
    world = compile_world(scene)
    spec = GoalFieldsSpec(
        clearance=0.25, spawn_clearance=0.4, max_step=0.05, min_distance=10.0, max_distance=20.0
    )
    with pytest.raises(InputError, match="no goal is reachable"):
        compute_goal_fields(world, spec)
