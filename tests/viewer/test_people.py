"""People in the viewer: the scene data carries them, the Scenes tab draws their paths and walks their
bodies (over the websocket and in headless Chromium), the map draws their paths."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import EXAMPLE_SCENE
from tests.scene.test_usd_agents import SIDEWALK_TOP, example_agents
from urbanverse.scene.agents import agent_colour, position_at
from urbanverse.scene.record import load_scene, save_scene
from urbanverse.viewer import topdown
from urbanverse.viewer.cache import ViewerCache
from urbanverse.viewer.geometry import overview_camera

#: The scene with people in ``people_dir``.
NAME = "example_people"
#: Where the GUI panel begins over the canvas, as a fraction of its width (it hides what is right of it).
PANEL_LEFT = 0.6


@pytest.fixture(scope="module")
def people_dir(tmp_path_factory) -> Path:
    """``<tmp>/people/example_people``: the example scene with :func:`example_agents`."""
    root = tmp_path_factory.mktemp("people")
    folder = root / NAME
    shutil.copytree(EXAMPLE_SCENE, folder, ignore=shutil.ignore_patterns("physics_check.json"))
    scene = dataclasses.replace(load_scene(folder), name=NAME, agents=example_agents())
    save_scene(scene, folder)
    return root


def test_scene_data_carries_the_people_on_the_ground(people_dir: Path) -> None:
    loaded = ViewerCache().scene(people_dir / NAME)
    people, agents = loaded.people, loaded.scene.agents
    assert people.ids == tuple(a.id for a in agents) and people.count == 3
    assert (people.start_s, people.end_s) == (1.0, 24.0)
    for t in (0.5, 3.3, 12.0, 23.9):
        positions, wxyz, present = people.poses_at(t)
        for i, agent in enumerate(agents):
            assert positions[i, :2] == pytest.approx(position_at(agent, [t])[0])
            start, end = agent.trajectory[0][0], agent.trajectory[-1][0]
            assert present[i] == (start <= t <= end)
        assert positions[0, 2] == pytest.approx(SIDEWALK_TOP)
        assert np.allclose(np.linalg.norm(wxyz, axis=1), 1.0)
    scales = people.body_scales(people.poses_at(2.0)[2])
    assert scales[0] == pytest.approx([1.0, 1.0, 1.0]) and np.all(scales[2] == 0)  # crosser not yet seen
    segments, colours = people.path_segments(0.05)
    assert segments.shape == (sum(len(a.trajectory) - 1 for a in agents), 2, 3)
    assert tuple(colours[0, 0]) == agent_colour(0) and tuple(colours[-1, 1]) == agent_colour(2)
    assert people.loop_time(24.5) == pytest.approx(1.5)
    assert ViewerCache().scene(EXAMPLE_SCENE).people is None


def test_map_draws_each_persons_path_in_its_colour(people_dir: Path) -> None:
    scene = load_scene(people_dir / NAME)
    image = np.asarray(topdown.render_map(scene, 600)).astype(int)
    for i in range(len(scene.agents)):
        assert (np.abs(image - agent_colour(i)).sum(axis=-1) < 40).any(), i
    bare = np.asarray(topdown.render_map(scene, 600, people=False)).astype(int)
    assert not (np.abs(bare - agent_colour(0)).sum(axis=-1) < 40).any()


pytest.importorskip("viser", reason="viser is not installed (pip install viser)")


@pytest.fixture(scope="module")
def viewer(people_dir, tmp_path_factory):
    from urbanverse.viewer.app import ViewerApp, ViewerCfg

    app = ViewerApp(ViewerCfg(scenes_dir=people_dir, port=0, library=tmp_path_factory.mktemp("no_library")))
    yield app
    app.close()


def _layer(app):
    """The people layer of the only browser connected to ``app``."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        layers = [s.scenes.people for s in app.sessions.values() if s.scenes.people is not None]
        if layers:
            return layers[0]
        time.sleep(0.1)
    raise TimeoutError("no people layer drawn")


def test_people_walk_and_the_browser_can_pause_and_scrub(viewer) -> None:
    from urbanverse.bench.viewer_load import ViewerClient

    async def browse() -> None:
        async with ViewerClient(viewer.url) as client:
            await client.wait_for(lambda: "3 people" in (client.markdown(f"**{NAME}**") or ""), "title")
            for label in ("people: paths", "people: bodies", "play"):
                assert client.find(label, "GuiCheckboxMessage"), label
            assert (client.markdown("**3 people**") or "").startswith("**3 people** seen walking")
            slider = client.find("time (s)", "GuiSliderMessage")
            first = client.gui[slider].value
            await client.wait_for(lambda: client.gui[slider].value != first, "the slider to move")
            await client.set_value(client.find("play", "GuiCheckboxMessage"), False)
            await client.set_value(slider, 12.0)
            layer = await asyncio.to_thread(_layer, viewer)
            await client.wait_for(lambda: not layer.playing and layer.time_s == 12.0, "pause at 12 s")
            await asyncio.sleep(0.5)
            assert layer.time_s == 12.0

    asyncio.run(browse())


def test_browser_draws_the_walking_people(viewer, people_dir) -> None:
    from tests.viewer.test_browser import OUT, _project, open_viewer_page

    scene = load_scene(people_dir / NAME)
    with open_viewer_page(viewer.url) as page:
        page.get_by_text("3 people seen walking", exact=False).first.wait_for(timeout=60_000)
        layer = _layer(viewer)
        layer.set_playing(False)
        layer.set_time(10.0)
        page.get_by_role("textbox").and_(page.locator("[value='10']")).first.wait_for(timeout=20_000)
        time.sleep(2)
        box = page.locator("canvas").first.bounding_box()
        png = page.screenshot(clip=box)
        page.screenshot(path=OUT / "viewer_people.png")
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)
    positions, _, present = layer.tracks.poses_at(10.0)
    assert present.all()
    view = overview_camera(scene)
    seen = 0
    for i, position in enumerate(positions):
        x, y = _project(view, position + [0.0, 0.0, 1.0], box["width"], box["height"])
        if x > PANEL_LEFT * box["width"]:
            continue  # behind the GUI panel
        near = pixels[int(y) - 6 : int(y) + 7, int(x) - 6 : int(x) + 7]
        distance = np.abs(near - agent_colour(i)).sum(axis=-1)
        assert distance.min() < 120, (scene.agents[i].id, distance.min())
        seen += 1
    assert seen >= 2
