"""The "Assets" tab of the viewer: search the asset library (text + filters), look at an asset in 3D.

The library's SQLite connection belongs to one thread, so every store call of every browser runs
on the one worker thread of a shared ``Library`` that owns the ``AssetStore`` (viser runs callbacks
on a thread pool). Each browser has its own panel: while it shows an asset, its scene (``/scene``)
is hidden and the asset stands at the origin (``/asset``); "Back to scene" restores the scene.
"""

from __future__ import annotations

import logging
import math
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from urbanverse.assets.record import Asset
from urbanverse.assets.store import DB_FILE, AssetStore, SearchFilter
from urbanverse.errors import InputError
from urbanverse.viewer.geometry import CameraView, asset_rows, markdown_table, object_glb
from urbanverse.viewer.scene_panel import ActionQueue, on_browser, set_camera

log = logging.getLogger(__name__)

ANY_CATEGORY = "(any)"
NO_RESULT = "(none)"
#: Most results a search lists.
MAX_RESULTS = 30


class Library:
    """The asset library shared by every browser: one thread owns the ``AssetStore``.
    ``library``: a library folder or None."""

    def __init__(self, library: Path | None):
        self.root = Path(library) if library is not None else None
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asset-store")
        self._store: AssetStore | None = None
        self._summary: tuple[list[str], int] | None = None

    def call(self, fn, *args):
        """Run ``fn(store, *args)`` on the store's thread and return its result."""

        def run():
            if self._store is None:
                self._store = AssetStore(self.root)
            return fn(self._store, *args)

        return self._worker.submit(run).result()

    def available(self) -> bool:
        """Whether a library database exists at ``root``."""
        return self.root is not None and (self.root / DB_FILE).is_file()

    def summary(self) -> tuple[list[str], int]:
        """The library's L3 categories (sorted) and its asset count, read once."""
        if self._summary is None:
            self._summary = self.call(lambda store: (sorted(store.count_by("l3")), len(store)))
        return self._summary

    def close(self) -> None:
        """Close the store on its thread and stop the thread."""
        if self._store is not None:
            self._worker.submit(self._store.close).result()
        self._worker.shutdown(wait=True)


class AssetPanel:
    """Builds the Assets tab inside the current GUI container of one browser (a viser
    ``ClientHandle``); ``on_back`` runs when it returns to the scene; actions run on ``executor``."""

    def __init__(self, client, library: Library, on_back, executor: Executor):
        self.client = client
        self.library = library
        self.on_back = on_back
        self.hits: dict[str, Asset] = {}
        self.actions = ActionQueue(executor, self._show_error)
        self._build_gui()
        self.actions.start()

    def _show_error(self, exc: InputError) -> None:
        log.warning("viewer: %s", exc)
        self.details.content = f"**cannot show**: {exc}"

    def _call(self, fn, *args):
        return self.library.call(fn, *args)

    def _build_gui(self) -> None:
        gui = self.client.gui
        if not self.library.available():
            gui.add_markdown(
                f"No asset library at `{self.library.root}`. Build one with `urbanverse assets build` "
                "or pass `--library DIR`."
            )
            return
        categories, total = self.library.summary()
        gui.add_markdown(f"Library `{self.library.root.name}`: {total} assets.")
        self.query = gui.add_text("query", "", hint="Words describing the asset, e.g. 'wooden bench'")
        self.category = gui.add_dropdown("category", (ANY_CATEGORY, *categories))
        self.max_height = gui.add_number("max height (m)", 0.0, min=0.0, step=0.1, hint="0: no limit")
        self.search_button = gui.add_button("Search assets")
        self.summary = gui.add_markdown("")
        self.result = gui.add_dropdown("result", (NO_RESULT,))
        self.thumbnail = gui.add_image(np.full((8, 8, 3), 236, np.uint8), format="png", visible=False)
        self.details = gui.add_markdown("")
        self.back_button = gui.add_button("Back to scene", visible=False)
        self.search_button.on_click(on_browser(self.actions, "search", lambda _v: self.search()))
        self.result.on_update(on_browser(self.actions, "show", self.show))
        self.back_button.on_click(on_browser(self.actions, "back", lambda _v: self.back()))

    def search(self) -> None:
        """Run the search in the GUI fields and list the hits."""
        query = self.query.value.strip() or "street furniture"
        where = SearchFilter(
            category=None if self.category.value == ANY_CATEGORY else self.category.value,
            max_height=self.max_height.value or None,
        )
        hits = self._call(lambda store: store.search(query, k=MAX_RESULTS, where=where))
        self.hits = {h.asset.uid: h.asset for h in hits}
        self.summary.content = f"{len(hits)} results for *{query}*" + "".join(
            f"\n- `{h.asset.uid}` {h.asset.category}, {h.asset.height:.2f} m high (score {h.score:.2f})"
            for h in hits[:8]
        )
        self.result.options = (NO_RESULT, *self.hits)
        self.result.value = next(iter(self.hits), NO_RESULT)
        self.show(self.result.value)  # the panel's own choice queues no action: show the first hit here

    def show(self, uid: str) -> None:
        """Show the asset ``uid`` (from the last search) in 3D with its attributes."""
        from urbanverse.assets.catalogue import asset_folder
        from urbanverse.render.thumbnail import library_thumbnail

        asset = self.hits.get(uid)
        if asset is None:
            return
        try:
            folder = self._call(lambda store: asset_folder(asset, store.root, thumbnail=library_thumbnail))
            glb = object_glb(folder, asset)
        except (OSError, InputError, ValueError) as exc:
            self.details.content = f"cannot load `{uid}`: {exc}"
            return
        thumb = folder / (asset.thumbnail or "thumbnail.png")
        if thumb.is_file():
            self.thumbnail.image = np.asarray(Image.open(thumb).convert("RGB"))
            self.thumbnail.visible = True
        self.details.content = f"### {asset.uid}\n" + markdown_table(asset_rows(asset))
        api = self.client.scene
        scene = api.get_handle_by_name("/scene")
        if scene is not None:
            scene.visible = False
        api.remove_by_name("/asset")
        api.add_frame("/asset", show_axes=False)
        api.add_grid("/asset/grid", width=4.0, height=4.0, plane="xy", cell_size=0.25)
        api.add_glb("/asset/mesh", glb_data=glb)
        self.back_button.visible = True
        size = max(asset.length, asset.width, asset.height, 0.3)
        target = (0.0, 0.0, asset.height / 2)
        eye = (1.3 * size, -1.9 * size, 0.5 * asset.height + 1.0 * size)
        set_camera(self.client, CameraView(eye, target, math.radians(50.0)))

    def back(self) -> None:
        """Hide the asset and show the scene again."""
        self.client.scene.remove_by_name("/asset")
        scene = self.client.scene.get_handle_by_name("/scene")
        if scene is not None:
            scene.visible = True
        self.back_button.visible = False
        self.on_back()
