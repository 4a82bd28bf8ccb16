"""Fixed evaluation episodes: the file format, drawing them, checking them, and running them in NavVecEnv."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from urbanverse.errors import InputError
from urbanverse.sim import LidarCfg, NavEnvCfg, NavVecEnv, PedestrianCfg, PointNavCfg, WorldCfg
from urbanverse.sim.episodes import Episode, load_episode_world, load_episodes, make_episodes, save_episodes
from urbanverse.sim.geodesic import coarse_grid, compute_goal_fields, with_goals
from urbanverse.sim.robots import WHEELED
from urbanverse.sim.world import compile_world
from urbanverse.sim.world_batch import WorldBatch
from urbanverse.sim.world_loading import goal_spec

from .conftest import EXAMPLE, box, write_scene

TASK = PointNavCfg()


@pytest.fixture(scope="module")
def islands(tmp_path_factory) -> Path:
    """Two 8 m x 8 m plazas (x in [0, 8] and [11, 19]) with a road between them: no walkable route."""
    return write_scene(
        tmp_path_factory.mktemp("scenes") / "islands",
        [
            ("a", "plaza", box(0, 0, 8, 8), 0.0),
            ("road", "road", box(8, 0, 11, 8), 0.0),
            ("b", "plaza", box(11, 0, 19, 8), 0.0),
        ],
    )


def _ep(id_, scene, start, goal, max_steps=None) -> Episode:
    return Episode(id=id_, scene=str(scene), start=start, goal=goal, max_steps=max_steps)


# ------------------------------------------------------------------------------------------- files
def test_save_load_round_trip_with_relative_scene_paths(tmp_path):
    near = tmp_path / "scenes" / "a"  # a sibling of the file's folder
    inside = tmp_path / "eps" / "b"
    eps = [
        Episode(
            id="1", scene=str(near), start=(1.0, 2.0, 0.5), goal=(3.0, 4.0), max_steps=50, geodesic_m=2.8
        ),
        Episode(id="2", scene=str(inside), start=(0.0, 0.0, -3.0), goal=(1.5, 0.25)),
        Episode(id="3", scene="/elsewhere/deep/c", start=(0.0, 0.0, 0.0), goal=(1.0, 1.0)),
    ]
    path = save_episodes(tmp_path / "eps" / "test.jsonl", eps)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["scene"] for r in rows] == ["../scenes/a", "b", "/elsewhere/deep/c"]
    assert rows[1]["max_steps"] is None and rows[1]["geodesic_m"] is None
    assert load_episodes(path) == eps
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


GOOD = {"id": "a", "scene": "s", "start": [0, 0, 0], "goal": [1, 1]}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not a JSON object"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "goal"}), "field 'goal' is missing"),
        (json.dumps(GOOD | {"start": [0, 0]}), "field 'start': expected [x, y, yaw]"),
        (json.dumps(GOOD | {"start": [0, "1", 0]}), "field 'start': expected a finite number"),
        (json.dumps(GOOD | {"goal": [0, True]}), "field 'goal': expected a finite number"),
        (json.dumps(GOOD).replace("[1, 1]", "[NaN, 1]"), "field 'goal': expected a finite number"),
        (json.dumps(GOOD | {"geodesic_m": 1e999}), "field 'geodesic_m': expected a finite number"),
        (json.dumps(GOOD | {"max_steps": 0}), "field 'max_steps'"),
        (json.dumps(GOOD | {"max_steps": 2.5}), "field 'max_steps'"),
        (json.dumps(GOOD | {"id": 3}), "field 'id': expected a non-empty string"),
        (json.dumps(GOOD | {"scene": ""}), "field 'scene': expected a non-empty string"),
        (json.dumps(GOOD | {"yaw": 1}), "unknown field 'yaw'"),
        (json.dumps(GOOD | {"id": "first"}), "field 'id': 'first' already used on line 1"),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, line, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD | {"id": "first"}) + "\n\n" + line + "\n")
    with pytest.raises(InputError) as err:
        load_episodes(path)
    assert f"{path}:3:" in str(err.value) and message in str(err.value)


def test_empty_or_missing_file_is_an_input_error(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="holds no episodes"):
        load_episodes(tmp_path / "empty.jsonl")
    with pytest.raises(InputError, match="cannot read"):
        load_episodes(tmp_path / "missing.jsonl")


# ------------------------------------------------------------------------------------------ making
def test_make_episodes_is_deterministic_in_range_and_spawnable():
    args = (WHEELED, TASK, WorldCfg())
    eps = make_episodes([EXAMPLE], 12, 3, *args)
    assert eps == make_episodes([EXAMPLE], 12, 3, *args)
    assert eps != make_episodes([EXAMPLE], 12, 4, *args)
    assert len({e.id for e in eps}) == 12
    assert all(TASK.min_goal_distance <= e.geodesic_m <= TASK.max_goal_distance for e in eps)
    assert all(-math.pi <= e.start[2] <= math.pi for e in eps)
    world = compile_world(EXAMPLE, WorldCfg())
    grid = coarse_grid(world, goal_spec(TASK, WHEELED))
    cells = grid.cells(np.array([e.start[:2] for e in eps]))
    assert (cells >= 0).all() and grid.spawnable.ravel()[cells].all()
    # Checked against the scene again, every one is runnable at the geodesic distance it recorded.
    _, plan = load_episode_world((EXAMPLE,), WorldCfg(), TASK, WHEELED, "cpu", eps)
    assert plan.status == ("ok",) * 12
    assert np.allclose(plan.geodesic_m, [e.geodesic_m for e in eps], atol=1e-3)


def test_appended_goals_leave_random_draws_unchanged():
    world = compile_world(EXAMPLE, WorldCfg())
    spec = goal_spec(TASK, WHEELED)
    base = compute_goal_fields(world, spec)
    extra = with_goals(base, coarse_grid(world, spec), spec, np.array([[1.0, 0.5], [500.0, 500.0]]))
    assert extra.candidates == len(base.goals_xy) and len(extra.goals_xy) == len(base.goals_xy) + 2
    assert np.isinf(extra.distance[-1]).all()  # a goal off the grid reaches nothing
    draws = []
    for fields in (base, extra):
        batch = WorldBatch([world], [fields])
        draws.append(
            batch.sample_goal_and_spawn(torch.zeros(64, dtype=torch.long), torch.Generator().manual_seed(0))
        )
        draws.append(
            batch.sample_walkable(torch.zeros(2, dtype=torch.long), 8, torch.Generator().manual_seed(1))
        )
    for a, b in zip(draws[0], draws[2], strict=True):
        assert torch.equal(a, b)
    assert torch.equal(draws[1], draws[3])


# ----------------------------------------------------------------------------------------- running
def _env(scene, episodes, num_envs=2, peds=0) -> NavVecEnv:
    cfg = NavEnvCfg(
        scene_dirs=(scene,),
        num_envs=num_envs,
        lidar=LidarCfg(num_beams=8),
        pedestrians=PedestrianCfg(count=peds),
    )
    return NavVecEnv(cfg, episodes=episodes)


def test_env_starts_planned_episodes_at_their_pose_and_goal():
    eps = make_episodes([EXAMPLE], 3, 0, WHEELED, TASK, WorldCfg())
    eps = [
        eps[0],
        Episode(id="x", scene=eps[1].scene, start=eps[1].start, goal=(1.23, 0.51), max_steps=4),
    ] + eps[2:]
    env = _env(EXAMPLE, eps, peds=2)
    assert env.plan.status == ("ok", "ok", "ok") and env.episode_queues == [[0, 2], [1]]
    for i in range(2):
        assert env.robot.data.pos_w[i].tolist() == pytest.approx(eps[i].start[:2])
        assert float(env.robot.data.yaw_w[i]) == pytest.approx(eps[i].start[2])
        assert env.goal_xy[i].tolist() == pytest.approx(eps[i].goal)
        assert float(env.start_geodesic[i]) == pytest.approx(env.plan.geodesic_m[i])
    assert env.episode_limit.tolist() == [TASK.max_episode_steps, 4]
    finished = []
    for step in range(1, 5):
        _, _, _, extras = env.step(torch.zeros(2, 2))
        if "episode_index" in extras:
            finished += [
                (step, e, n)
                for e, n in zip(
                    extras["episode_index"].tolist(), extras["episode_steps"].tolist(), strict=True
                )
            ]
            assert bool(extras["time_outs"][1])
    assert finished == [(4, 1, 4)]  # episode 1 timed out after its own 4 steps
    # Environment 1's queue is done: it samples as usual (index -1); environment 0 still runs episode 0.
    assert env.episode_index.tolist() == [0, -1]
    env.reset()
    assert env.episode_index.tolist() == [0, 1]  # reset starts the plan over


def test_blocked_and_unreachable_episodes_are_reported_and_not_run(islands):
    eps = [
        _ep("ok", islands, (2.0, 4.0, 0.0), (6.0, 4.0), max_steps=3),
        _ep("start-in-road", islands, (9.5, 4.0, 0.0), (6.0, 4.0)),
        _ep("start-at-wall", islands, (0.05, 4.0, 0.0), (6.0, 4.0)),
        _ep("start-off-scene", islands, (-50.0, 4.0, 0.0), (6.0, 4.0)),
        _ep("goal-in-road", islands, (2.0, 4.0, 0.0), (9.5, 4.0)),
        _ep("other-island", islands, (2.0, 4.0, 0.0), (15.0, 4.0)),
    ]
    env = _env(islands, eps)
    assert env.plan.status == (
        "ok",
        "start_blocked",
        "start_blocked",
        "start_blocked",
        "goal_blocked",
        "unreachable",
    )
    assert env.plan.geodesic_m[0] == pytest.approx(4.0, abs=0.25) and np.isinf(env.plan.geodesic_m[1:]).all()
    assert env.episode_queues == [[0], []]
    ran = []
    for _ in range(8):
        _, _, _, extras = env.step(torch.zeros(2, 2))
        if "episode_index" in extras:
            ran += [e for e in extras["episode_index"].tolist() if e >= 0]
    assert ran == [0]


def test_an_episode_in_another_scene_is_refused(islands):
    with pytest.raises(InputError, match="not among the environment's scenes"):
        _env(islands, [_ep("a", EXAMPLE, (0.0, 0.0, 0.0), (1.0, 1.0))])
