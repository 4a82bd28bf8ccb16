"""The viewer under load: simulated browsers on loopback switch scenes and cousins at once.

Each browser speaks viser's websocket protocol (``urbanverse.bench.viewer_load``), clicks "Open
<scene>" in turn and swaps the cousin of ``bench_1``, and times every request until the page shows
its answer. Every request must be answered, every browser's state must be released when it leaves,
and memory and response time must stay bounded: a second run of the same load must not grow the
server's memory much, and the slowest answers under load are compared with one browser's, measured
side by side on the same machine (a generous ratio, not an absolute time). The 50-browser run is
``-m slow``; ``tools/bench_viewer.py`` prints the figures.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.viewer.conftest import COUSIN_OBJECT, COUSIN_UID, SCENES
from urbanverse.scene.record import load_scene

pytest.importorskip("viser", reason="viser is not installed (pip install viser)")

from urbanverse.bench.viewer_load import ViewerClient, rss_bytes, run_load  # noqa: E402
from urbanverse.viewer.scene_panel import ScenePanel  # noqa: E402

#: Generous factor on (browsers x one browser's median answer) that the 99th percentile stays under.
RATIO = 10


@pytest.fixture(scope="module")
def viewer(scenes_dir, tmp_path_factory):
    from urbanverse.viewer.app import ViewerApp, ViewerCfg

    app = ViewerApp(ViewerCfg(scenes_dir=scenes_dir, port=0, library=tmp_path_factory.mktemp("no_library")))
    yield app
    app.close()


def _cousin(scenes_dir: Path) -> tuple[str, str, str]:
    obj = next(o for o in load_scene(scenes_dir / SCENES[0]).objects if o.id == COUSIN_OBJECT)
    return COUSIN_OBJECT, obj.asset.uid, COUSIN_UID


def _wait_released(app, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (app.sessions or app.server.get_clients()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not app.sessions and not app.server.get_clients(), "browser state kept after disconnect"


def _load(app, scenes_dir: Path, clients: int, seconds: float):
    result = asyncio.run(run_load(app.url, clients, seconds, list(SCENES), _cousin(scenes_dir)))
    _wait_released(app)
    return result


def test_one_browser_switches_scenes_and_cousins(viewer, scenes_dir) -> None:
    object_id, asset_uid, cousin_uid = _cousin(scenes_dir)

    async def browse() -> None:
        async with ViewerClient(viewer.url) as client:
            for name in (SCENES[1], SCENES[0]):
                await client.open_scene(name)
            await client.show_variant(object_id, cousin_uid, True)
            table = client.markdown(f"### {object_id}\n")
            assert f"**shown cousin** | {cousin_uid}" in table
            await client.show_variant(object_id, asset_uid, False)
            assert "shown cousin" not in client.markdown(f"### {object_id}\n")

    asyncio.run(browse())
    _wait_released(viewer)


def test_browsers_do_not_move_each_other(viewer) -> None:
    async def two() -> None:
        async with ViewerClient(viewer.url) as a, ViewerClient(viewer.url) as b:
            await a.open_scene(SCENES[1])
            await b.open_scene(SCENES[0])
            await a.wait_for(lambda: a.markdown("**"), "title")
            assert a.markdown("**").startswith(f"**{SCENES[1]}**")

    asyncio.run(two())
    _wait_released(viewer)


def test_a_browser_flooding_clicks_gets_its_last_scene_and_others_are_answered(
    viewer, scenes_dir, monkeypatch
) -> None:
    opened: list[str] = []
    real_open = ScenePanel.open

    def counting_open(self, name: str) -> None:
        opened.append(name)
        real_open(self, name)

    monkeypatch.setattr(ScenePanel, "open", counting_open)
    clicks = 200

    async def flood() -> None:
        async with ViewerClient(viewer.url) as flooder, ViewerClient(viewer.url) as other:
            await flooder.open_scene(SCENES[0])
            buttons = [
                await flooder.wait_for(
                    lambda n=n: flooder.find(f"Open {n}", "GuiButtonMessage"), "scene list"
                )
                for n in SCENES
            ]
            start = len(opened)
            for i in range(clicks):  # without waiting for answers; the last click opens SCENES[1]
                await flooder.set_value(buttons[i % 2], True)
            await other.open_scene(SCENES[1])
            await flooder.wait_for(
                lambda: (flooder.markdown("**") or "").startswith(f"**{SCENES[1]}**"), "title"
            )
            settled = -1
            while settled != len(opened):  # until no more opens run
                settled = len(opened)
                await asyncio.sleep(1.0)
            assert flooder.markdown("**").startswith(f"**{SCENES[1]}**")
            assert settled - start < clicks // 4, f"{settled - start} scene draws for {clicks} clicks"

    asyncio.run(flood())
    _wait_released(viewer)


def test_ten_browsers_are_all_answered_and_memory_and_latency_stay_bounded(viewer, scenes_dir) -> None:
    single = _load(viewer, scenes_dir, clients=1, seconds=2.0)
    first = _load(viewer, scenes_dir, clients=10, seconds=3.0)
    before = rss_bytes()
    second = _load(viewer, scenes_dir, clients=10, seconds=3.0)
    after = rss_bytes()
    for run in (single, first, second):
        assert not run.failures, run.failures[:3]
        assert len(run.times) >= run.clients
    # steady state: the same load again keeps its memory (caches are bounded, sessions released)
    assert after < 1.25 * before + 64 * 2**20, (before, after)
    assert viewer.cache.sizes()["scenes"] <= len(SCENES)
    # each browser's requests queue behind the others' at worst once: p99 within a generous multiple
    # of (browsers x one browser's median answer)
    assert second.percentile(99) <= RATIO * second.clients * max(single.percentile(50), 0.05), (
        second.percentile(99),
        single.percentile(50),
    )


@pytest.mark.slow
def test_fifty_browsers_for_twenty_seconds(viewer, scenes_dir) -> None:
    single = _load(viewer, scenes_dir, clients=1, seconds=3.0)
    _load(viewer, scenes_dir, clients=50, seconds=5.0)
    before = rss_bytes()
    result = _load(viewer, scenes_dir, clients=50, seconds=20.0)
    after = rss_bytes()
    assert not result.failures, result.failures[:3]
    assert len(result.times) >= 50
    assert after < 1.25 * before + 128 * 2**20, (before, after)
    assert result.percentile(99) <= RATIO * result.clients * max(single.percentile(50), 0.05)
