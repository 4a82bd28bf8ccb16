"""The top-down preview draws each person's path in its colour (start dot, end arrow) and the flow field."""

from __future__ import annotations

import dataclasses

import numpy as np

from tests.scene.test_usd_agents import example_agents
from urbanverse.scene.agents import agent_colour, flow_field, make_agent
from urbanverse.scene.preview import render_preview
from urbanverse.scene.record import load_scene


def _has_colour(image: np.ndarray, colour, tolerance: int = 30) -> bool:
    return bool((np.abs(image - np.asarray(colour)).sum(axis=-1) < tolerance).any())


def test_each_person_is_drawn_in_its_colour_and_the_map_grows_to_hold_them(example_dir) -> None:
    scene = load_scene(example_dir)
    agents = example_agents()
    # a fourth person walks off the ground, east of the scene
    off = make_agent("stroller", np.array([[0.0, 21.0, 0.0], [5.0, 28.0, 0.0]]), np.ones(2))
    with_people = dataclasses.replace(scene, agents=(*agents, off), flow=flow_field(agents))
    bare = np.asarray(render_preview(scene, 800)).astype(int)
    drawn = np.asarray(render_preview(with_people, 800)).astype(int)
    for i in range(4):
        assert _has_colour(drawn, agent_colour(i)), i
        assert not _has_colour(bare, agent_colour(i)), i
    # the same width holds 8 m more of x, so the map is drawn at a smaller scale: less tall
    assert drawn.shape[0] < bare.shape[0]
