"""scene.json's people: agents and the flow field load and save, and bad values are refused by their
JSON path."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from urbanverse.errors import InputError
from urbanverse.scene.agents import flow_field, make_agent
from urbanverse.scene.record import load_scene, save_scene

EXAMPLE = Path(__file__).resolve().parents[2] / "scenes" / "example"


@pytest.fixture
def scene_with_people(tmp_path: Path) -> Path:
    folder = tmp_path / "scene"
    shutil.copytree(EXAMPLE, folder)
    t = np.arange(0.0, 8.0, 0.5)
    agents = (
        make_agent("p0", np.column_stack([t, 1.2 * t - 5, np.full_like(t, 5.0)]), np.full(len(t), 0.8)),
        make_agent(
            "p1",
            np.column_stack([t + 2, 5 - 1.1 * t, np.full_like(t, -5.0)]),
            np.ones(len(t)),
            source_track=7,
        ),
    )
    scene = dataclasses.replace(load_scene(folder), agents=agents, flow=flow_field(agents))
    save_scene(scene, folder)
    return folder


def test_people_round_trip_through_scene_json(scene_with_people: Path) -> None:
    scene = load_scene(scene_with_people)
    assert [a.id for a in scene.agents] == ["p0", "p1"] and scene.agents[1].source_track == 7
    assert scene.agents[0].speed_mean == pytest.approx(1.2) and scene.flow is not None and scene.flow.cells


def _edit(folder: Path, change) -> None:
    data = json.loads((folder / "scene.json").read_text())
    change(data)
    (folder / "scene.json").write_text(json.dumps(data))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d["agents"][0]["trajectory"].__setitem__(3, [0.5, 0, 5]),
            r"agents\[0\].trajectory\[3\].t: times must increase",
        ),
        (lambda d: d["agents"][1]["confidence"].pop(), r"agents\[1\].confidence: expected 16 numbers"),
        (
            lambda d: d["agents"][0].__setitem__("trajectory", d["agents"][0]["trajectory"][:1]),
            "at least 2 points",
        ),
        (lambda d: d["agents"][0].__setitem__("speed_mean", 40.0), r"agents\[0\].speed_mean: 40 is outside"),
        (lambda d: d["agents"][1].__setitem__("id", "p0"), "duplicate id 'p0'"),
        (lambda d: d["agents"][0].__setitem__("kind", "car"), "kind"),
        (lambda d: d["flow"]["cells"][0].__setitem__("row", 10**6), r"flow.cells\[0\]: cell \(1000000"),
        (lambda d: d["flow"]["cells"][0].__setitem__("density", 50.0), r"flow.cells\[0\].density"),
    ],
)
def test_bad_people_are_refused_by_json_path(scene_with_people: Path, change, message: str) -> None:
    _edit(scene_with_people, change)
    with pytest.raises(InputError, match=message):
        load_scene(scene_with_people)
