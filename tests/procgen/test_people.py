"""Procedural pedestrians: on the pavement, clear of objects, at walking speed, over the whole span,
deterministic."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from urbanverse.errors import InputError
from urbanverse.procgen.people import PeopleCfg, street_people
from urbanverse.render.walk import PEDESTRIAN_GROUND
from urbanverse.scene.agents import point_speeds
from urbanverse.scene.ground import footprint
from urbanverse.scene.record import load_scene


def test_people_walk_the_pavement_clear_of_objects(example_dir):
    scene = load_scene(example_dir)
    cfg = PeopleCfg(seconds=40.0)
    agents = street_people(scene, cfg, np.random.default_rng(4))
    assert cfg.count[0] <= len(agents) <= cfg.count[1]
    pavement = shapely.union_all(
        [shapely.Polygon(r.polygon) for r in scene.ground if r.type in PEDESTRIAN_GROUND]
    )
    objects = shapely.union_all([footprint(o.position, o.yaw, o.size) for o in scene.objects])
    for agent in agents:
        traj = np.asarray(agent.trajectory)
        assert traj[0, 0] == 0.0 and traj[-1, 0] == pytest.approx(cfg.seconds)
        assert np.allclose(np.diff(traj[:, 0]), cfg.step_s, atol=2e-3)
        points = shapely.points(traj[:, 1:])
        assert pavement.contains(points).all(), agent.id
        assert shapely.distance(objects, points).min() >= agent.radius, agent.id
        speeds = point_speeds(traj)
        assert cfg.speed_range[0] * 0.85 <= agent.speed_mean <= cfg.speed_range[1] * 1.1
        assert speeds.max() <= cfg.speed_range[1] * 1.2  # no jumps
        assert cfg.height_range[0] <= agent.height <= cfg.height_range[1]
    assert len({a.id for a in agents}) == len(agents)


def test_same_generator_same_people_and_none_when_asked(example_dir):
    scene = load_scene(example_dir)
    a = street_people(scene, PeopleCfg(), np.random.default_rng(7))
    assert a == street_people(scene, PeopleCfg(), np.random.default_rng(7))
    assert a != street_people(scene, PeopleCfg(), np.random.default_rng(8))
    assert street_people(scene, PeopleCfg(count=(0, 0)), np.random.default_rng(7)) == ()
    with pytest.raises(InputError, match="count"):
        PeopleCfg(count=(5, 2))
