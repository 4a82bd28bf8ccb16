"""What every browser of one viewer shares: scenes read once, their ground meshes, thumbnails, assets
and the GLB bytes sent to browsers.

Each connected browser has its own panels (its own scene, selection and camera), so fifty browsers
switching scenes must not mean fifty reads and fifty mesh exports: the first request reads and
converts, the others reuse the result. Entries are keyed by the file they came from and its
modification time (an edited ``scene.json`` is read again), and each kind is bounded by a count
(least recently used first out), so memory does not grow with the number of requests.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from urbanverse.assets.record import ASSET_FILE, Asset, load_asset, load_collision_parts
from urbanverse.scene.record import SCENE_FILE, Scene, load_scene
from urbanverse.viewer.catalog import Episode, load_episodes
from urbanverse.viewer.geometry import ground_display_mesh, object_glb
from urbanverse.viewer.people import PeopleTracks, people_tracks
from urbanverse.viewer.topdown import render_map, render_thumbnail

#: Most scenes kept read (each with its ground GLBs).
MAX_SCENES = 16
#: Most top-down maps kept (one per scene, episode shown and object highlighted).
MAX_MAPS = 256
#: Most assets kept (record, visual GLB and merged collision mesh each).
MAX_ASSETS = 512


@dataclass(frozen=True)
class LoadedScene:
    """A scene as the viewer draws it: the record, one GLB per ground region (``region id -> bytes``,
    in ``scene.ground`` order), the recorded episodes and the people seen walking (None without)."""

    folder: Path
    scene: Scene
    ground_glbs: dict[str, bytes]
    episodes: dict[str, Episode]
    people: PeopleTracks | None


class _Lru:
    """A thread-safe mapping bounded to ``size`` entries; ``get(key, make)`` computes a missing
    value outside the lock (two threads may both compute it once; the first stored wins)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, make: Callable[[], object]):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        with self._lock:
            value = self._items.setdefault(key, value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._items)


def _stamp(path: Path) -> tuple[str, int]:
    """Cache key of a file: its path and modification time (-1 when missing: the read then fails)."""
    try:
        return str(path), path.stat().st_mtime_ns
    except OSError:
        return str(path), -1


class ViewerCache:
    """Scenes, thumbnails and assets shared by every browser of one viewer (module docstring)."""

    def __init__(self, max_scenes: int = MAX_SCENES, max_assets: int = MAX_ASSETS):
        self._scenes = _Lru(max_scenes)
        self._thumbnails = _Lru(max_scenes * 4)
        self._maps = _Lru(MAX_MAPS)
        self._assets = _Lru(max_assets)
        self._glbs = _Lru(max_assets)
        self._collision = _Lru(max_assets)

    def scene(self, folder: Path) -> LoadedScene:
        """The scene in ``folder`` (a scene folder of the listing); ``InputError`` when it does not read."""
        folder = Path(folder)
        return self._scenes.get(_stamp(folder / SCENE_FILE), lambda: self._read_scene(folder))

    @staticmethod
    def _read_scene(folder: Path) -> LoadedScene:
        scene = load_scene(folder)
        glbs = {}
        for region in scene.ground:
            buffer = io.BytesIO()
            ground_display_mesh(region, folder).export(buffer, file_type="glb")
            glbs[region.id] = buffer.getvalue()
        episodes = {e.name: e for e in load_episodes(folder)}
        return LoadedScene(folder, scene, glbs, episodes, people_tracks(scene))

    def thumbnail(self, folder: Path) -> np.ndarray:
        """The scene's top-down thumbnail, ``(H, W, 3)`` uint8."""
        folder = Path(folder)
        return self._thumbnails.get(
            _stamp(folder / SCENE_FILE), lambda: np.asarray(render_thumbnail(self.scene(folder).scene))
        )

    def map(self, folder: Path, width: int, episode: str | None, highlight: str | None) -> np.ndarray:
        """The scene's top-down map ``(H, width, 3)`` uint8 with the recorded ``episode`` (a name) drawn
        and the object ``highlight`` (an id) marked."""
        folder = Path(folder)

        def draw() -> np.ndarray:
            loaded = self.scene(folder)
            path = loaded.episodes[episode].positions if episode in loaded.episodes else None
            return np.asarray(render_map(loaded.scene, width, episode=path, highlight=highlight))

        return self._maps.get((*_stamp(folder / SCENE_FILE), width, episode, highlight), draw)

    def asset(self, folder: Path) -> Asset:
        """The asset record in ``folder`` (already resolved inside the scene folder)."""
        return self._assets.get(_stamp(Path(folder) / ASSET_FILE), lambda: load_asset(folder))

    def glb(self, folder: Path) -> bytes:
        """The asset's visual mesh as GLB bytes (:func:`urbanverse.viewer.geometry.object_glb`)."""
        asset = self.asset(folder)
        return self._glbs.get(_stamp(Path(folder) / ASSET_FILE), lambda: object_glb(folder, asset))

    def collision(self, folder: Path) -> trimesh.Trimesh:
        """The asset's convex collision parts merged into one mesh (asset frame, metres)."""
        asset = self.asset(folder)
        return self._collision.get(
            _stamp(Path(folder) / ASSET_FILE),
            lambda: trimesh.util.concatenate(load_collision_parts(folder, asset)),
        )

    def sizes(self) -> dict[str, int]:
        """How many entries of each kind are held (for the load benchmark)."""
        return {
            "scenes": len(self._scenes),
            "thumbnails": len(self._thumbnails),
            "assets": len(self._assets),
            "glbs": len(self._glbs),
            "maps": len(self._maps),
        }
