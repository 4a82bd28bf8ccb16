"""The viewer application: one viser server with a Scenes tab and an Assets tab.

``ViewerApp(ViewerCfg(...))`` starts serving at once (viser runs its own thread);
``serve(cfg)`` also blocks until Ctrl-C. Each browser gets its own Scenes and Assets tabs, so what
one opens or selects does not move the others. The server binds to ``127.0.0.1`` unless told
otherwise, so a scene folder is not exposed to the network by accident.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.viewer.asset_panel import AssetPanel, Library
from urbanverse.viewer.cache import ViewerCache
from urbanverse.viewer.catalog import list_scenes
from urbanverse.viewer.geometry import overview_camera
from urbanverse.viewer.guard import MAX_MESSAGE_BYTES
from urbanverse.viewer.guard import install as install_guard
from urbanverse.viewer.people_layer import Animator
from urbanverse.viewer.scene_panel import ScenePanel

log = logging.getLogger(__name__)

#: Threads that run the browsers' actions (each browser's one at a time).
ACTION_THREADS = 8


@dataclass(frozen=True, kw_only=True)
class ViewerCfg:
    """Where the viewer reads from and listens on."""

    scenes_dir: Path
    """A folder of scene folders, or one scene folder."""
    host: str = "127.0.0.1"
    """Interface to bind; ``0.0.0.0`` exposes the viewer to the network."""
    port: int = 8080
    """TCP port; 0 picks a free one (read it back from ``ViewerApp.port``)."""
    library: Path | None = None
    """Asset library folder for the Assets tab (None: ``$URBANVERSE_LIBRARY``, else none)."""
    max_message_bytes: int = MAX_MESSAGE_BYTES
    """Largest websocket message a browser may send, bytes (a larger one closes its connection)."""

    def __post_init__(self) -> None:
        if not Path(self.scenes_dir).is_dir():
            raise InputError(f"SCENES_DIR: {self.scenes_dir} is not a folder")
        if not 0 <= self.port <= 65535:
            raise InputError(f"--port: {self.port} is not a TCP port")


def default_library() -> Path | None:
    """``$URBANVERSE_LIBRARY`` when set, else the cache's ``library/`` folder if one was built there."""
    from urbanverse.assets.store import DB_FILE
    from urbanverse.paths import cache_dir

    if os.environ.get("URBANVERSE_LIBRARY"):
        return Path(os.environ["URBANVERSE_LIBRARY"])
    root = cache_dir("library")
    return root if (root / DB_FILE).is_file() else None


@dataclass
class Session:
    """One connected browser's panels."""

    scenes: ScenePanel
    assets: AssetPanel


class ViewerApp:
    """A running viewer. ``port`` is the port actually bound; ``close()`` stops the server.

    Every browser that connects gets its own tabs (``sessions``, by viser client id), drawn from the
    shared ``cache`` and ``library``; each opens the first scene of the listing. ``guard`` checks every
    message browsers send (:mod:`urbanverse.viewer.guard`); ``animator`` walks every browser's people.
    """

    def __init__(self, cfg: ViewerCfg):
        import viser

        self.cfg = cfg
        self.root = Path(cfg.scenes_dir).resolve()
        scenes = list_scenes(self.root)
        self.cache = ViewerCache()
        self.library = Library(cfg.library if cfg.library is not None else default_library())
        self.sessions: dict[int, Session] = {}
        self.executor = ThreadPoolExecutor(max_workers=ACTION_THREADS, thread_name_prefix="viewer")
        self.animator = Animator()
        self._sessions_lock = threading.Lock()
        self.server = viser.ViserServer(host=cfg.host, port=cfg.port, label="UrbanVerse", verbose=False)
        self.guard = install_guard(self.server, cfg.max_message_bytes)
        self.server.scene.set_up_direction("+z")
        self.server.scene.configure_environment_map("city", environment_intensity=0.6)
        self.server.scene.add_light_directional(
            "/sun", intensity=1.8, wxyz=(0.88, 0.28, -0.37, 0.0), cast_shadow=False
        )
        # no share button: sharing would tunnel the local scenes to a public relay
        self.server.gui.configure_theme(control_width="large", dark_mode=False, show_share_button=False)
        self.server.gui.set_panel_label("UrbanVerse")
        self.first_scene = next(iter(scenes), None)
        if self.first_scene is not None:
            try:
                view = overview_camera(self.cache.scene(scenes[self.first_scene]).scene)
                cam = self.server.initial_camera
                cam.position, cam.look_at, cam.fov = view.position, view.look_at, view.fov
            except InputError as exc:
                log.warning("viewer: %s", exc)
        self.server.on_client_connect(self._connect)
        self.server.on_client_disconnect(self._disconnect)

    def _connect(self, client) -> None:
        tabs = client.gui.add_tab_group()
        with tabs.add_tab("Scenes"):
            scenes = ScenePanel(
                client, self.root, self.cache, self.executor, self.animator, first=self.first_scene
            )
        with tabs.add_tab("Assets"):
            assets = AssetPanel(client, self.library, lambda: self._back_to_scene(scenes), self.executor)
        with self._sessions_lock:
            if client.client_id not in self.server.get_clients():
                return  # gone while its tabs were built
            self.sessions[client.client_id] = Session(scenes, assets)

    def _disconnect(self, client) -> None:
        with self._sessions_lock:
            session = self.sessions.pop(client.client_id, None)
        if session is not None:
            session.scenes.close()
            session.assets.actions.close()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return self.server.get_port()

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = self.server.get_host()
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}"

    @staticmethod
    def _back_to_scene(scenes: ScenePanel) -> None:
        if scenes.scene is not None:
            scenes.set_camera(overview_camera(scenes.scene))

    def close(self) -> None:
        """Stop serving and release the asset store."""
        self.animator.close()
        self.server.stop()
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.library.close()


def serve(cfg: ViewerCfg) -> None:
    """Run the viewer until Ctrl-C."""
    app = ViewerApp(cfg)
    print(f"UrbanVerse viewer: {app.url}  (Ctrl-C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        app.close()
