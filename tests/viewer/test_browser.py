"""The viewer in headless Chromium (Playwright): scene list, 3D canvas, clicking objects, cousins, assets.

Needs the ``playwright`` package and Debian's Chromium at /usr/bin/chromium (``.ci/run`` installs
both); Playwright never downloads a browser here. Screenshots go to ``out/viewer_*.png``.
The server also gets plain HTTP requests that try to climb out of its folder.
"""

from __future__ import annotations

import contextlib
import io
import math
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import REPO
from tests.viewer.conftest import COUSIN_OBJECT, COUSIN_UID
from urbanverse.scene.record import load_scene
from urbanverse.viewer.geometry import overview_camera

pytest.importorskip("viser", reason="viser is not installed (pip install viser)")

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1100, "height": 700}
OUT = REPO / "out"
#: The object the click test clicks (in plain view from the initial camera).
CLICKED = "bench_1"


def _browser_skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not CHROMIUM.is_file():
        return f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)"
    return None


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A 60-asset library built in a temporary cache."""
    from urbanverse.assets.catalogue import build_catalogue
    from urbanverse.assets.store import AssetStore

    mp = pytest.MonkeyPatch()
    mp.setenv("URBANVERSE_CACHE", str(tmp_path_factory.mktemp("cache")))
    root = tmp_path_factory.mktemp("library")
    with AssetStore(root) as store:
        build_catalogue(store, size=60, workers=1)
    yield root
    mp.undo()


@pytest.fixture(scope="module")
def viewer(scenes_dir, library):
    from urbanverse.viewer.app import ViewerApp, ViewerCfg

    app = ViewerApp(ViewerCfg(scenes_dir=scenes_dir, port=0, library=library))
    yield app
    app.close()


@pytest.mark.parametrize(
    "path",
    [
        "/../example/scene.json",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/example/scene.json",
        "/scene.json",
        "/assets/car_sedan_a/asset.json",
    ],
)
def test_http_serves_nothing_from_the_scenes_folder_or_above(viewer, path: str) -> None:
    try:
        with urllib.request.urlopen(viewer.url + path, timeout=10) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        assert exc.code == 404
        return
    assert b"schema_version" not in body and b"root:" not in body


def test_http_serves_the_client_and_binds_to_localhost(viewer) -> None:
    with urllib.request.urlopen(viewer.url + "/", timeout=10) as response:
        assert response.status == 200 and b"<html" in response.read().lower()
    assert viewer.server.get_host() == "127.0.0.1"


@contextlib.contextmanager
def open_viewer_page(url: str):
    """A headless Chromium page on the viewer at ``url``, its canvas up and notices closed (the test
    is skipped where no browser can run)."""
    reason = _browser_skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    OUT.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url)
        page.wait_for_selector("canvas", timeout=60_000)
        _dismiss_notifications(page)
        yield page
        browser.close()


@pytest.fixture(scope="module")
def page(viewer):
    with open_viewer_page(viewer.url) as page:
        yield page


def _dismiss_notifications(page) -> None:
    """Close Chromium's "software WebGL" notice so that it does not cover screenshots."""
    notice = page.get_by_text("Software WebGL rendering detected")
    try:
        notice.wait_for(timeout=10_000)
    except Exception:  # no notice: nothing to close
        return
    _mouse_click(page, page.locator(".mantine-Notification-closeButton").first)


def _canvas_pixels(page) -> np.ndarray:
    box = page.locator("canvas").first.bounding_box()
    png = page.screenshot(clip=box)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.float64)


def _project(view, point, width: float, height: float) -> tuple[float, float]:
    """Pixel of a world point in a Z-up perspective camera (three.js conventions)."""
    eye, target = np.array(view.position), np.array(view.look_at)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    d = np.asarray(point) - eye
    depth, tan = d @ forward, math.tan(view.fov / 2)
    x_ndc = (d @ right) / (depth * tan * width / height)
    y_ndc = (d @ up) / (depth * tan)
    return (x_ndc + 1) / 2 * width, (1 - y_ndc) / 2 * height


def _mouse_click(page, locator) -> None:
    """Click the middle of an element with the mouse (viser's dock tabs ignore synthetic clicks)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _choose(page, label: str, option: str) -> None:
    """Pick ``option`` in the viser dropdown labelled ``label``."""
    page.get_by_role("combobox", name=label, exact=True).first.click()
    page.get_by_role("option", name=option, exact=True).first.click()


def test_scene_list_shows_example(page) -> None:
    page.get_by_role("button", name="Open example", exact=True).wait_for(timeout=30_000)
    assert page.get_by_text("11 objects").count() >= 1


def test_canvas_is_not_blank(page) -> None:
    deadline = time.monotonic() + 60
    std = 0.0
    while time.monotonic() < deadline:
        std = float(_canvas_pixels(page).std(axis=(0, 1)).mean())
        if std > 15:
            break
        time.sleep(1)
    page.screenshot(path=OUT / "viewer_scene.png")
    assert std > 15, f"canvas looks blank (pixel std {std:.1f})"


def test_clicking_an_object_shows_its_attributes(page, scenes_dir) -> None:
    scene = load_scene(scenes_dir / "example")
    bench = next(o for o in scene.objects if o.id == CLICKED)  # unoccluded in the initial view
    box = page.locator("canvas").first.bounding_box()
    centre = np.array(bench.position) + [0.0, 0.0, 0.5 * bench.size[2]]
    x, y = _project(overview_camera(scene), centre, box["width"], box["height"])
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.get_by_text(bench.asset.uid).first.wait_for(timeout=20_000)
    assert page.get_by_text(CLICKED, exact=True).count() >= 1
    for label in ("mass", "friction", "body type", "source track", "confidence", "dimensions"):
        assert page.get_by_text(label, exact=False).count() >= 1, label
    page.locator("strong:visible", has_text="confidence").first.scroll_into_view_if_needed()
    page.screenshot(path=OUT / "viewer_object.png")


def test_switching_to_a_cousin(page) -> None:
    _choose(page, "object", COUSIN_OBJECT)
    page.get_by_role("heading", name=COUSIN_OBJECT).first.wait_for(timeout=20_000)
    _choose(page, "shown asset", COUSIN_UID)
    page.get_by_text("shown cousin").wait_for(timeout=20_000)
    page.screenshot(path=OUT / "viewer_cousin.png")


def test_asset_search_returns_results(page) -> None:
    _mouse_click(page, page.get_by_role("tab", name="Assets"))
    page.get_by_role("button", name="Search assets").wait_for(timeout=30_000)
    # viser's text inputs are not tied to their labels (label "for" differs from the input id)
    page.locator("input.mantine-TextInput-input:visible").first.fill("wooden bench")
    page.get_by_role("button", name="Search assets").click()
    page.get_by_text("results for wooden bench").wait_for(timeout=60_000)
    page.locator("strong:visible", has_text="taxonomy").first.wait_for(timeout=60_000)
    assert page.locator("code:visible", has_text="bench").count() >= 1
    time.sleep(2)
    page.screenshot(path=OUT / "viewer_assets.png")
    assert float(_canvas_pixels(page).std(axis=(0, 1)).mean()) > 5
