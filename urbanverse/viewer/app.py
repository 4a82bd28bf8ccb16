"""The viewer application: one viser server with a Scenes tab and an Assets tab.

``ViewerApp(ViewerCfg(...))`` starts serving at once (viser runs its own thread);
``serve(cfg)`` also blocks until Ctrl-C. The server binds to ``127.0.0.1`` unless told
otherwise, so a scene folder is not exposed to the network by accident.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.viewer.catalog import list_scenes
from urbanverse.viewer.geometry import overview_camera

log = logging.getLogger(__name__)


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


class ViewerApp:
    """A running viewer. ``port`` is the port actually bound; ``close()`` stops the server."""

    def __init__(self, cfg: ViewerCfg):
        import viser

        from urbanverse.viewer.asset_panel import AssetPanel
        from urbanverse.viewer.scene_panel import ScenePanel

        self.cfg = cfg
        scenes = list_scenes(cfg.scenes_dir)
        self.server = viser.ViserServer(host=cfg.host, port=cfg.port, label="UrbanVerse", verbose=False)
        self.server.scene.set_up_direction("+z")
        self.server.scene.configure_environment_map("city", environment_intensity=0.6)
        self.server.scene.add_light_directional(
            "/sun", intensity=1.8, wxyz=(0.88, 0.28, -0.37, 0.0), cast_shadow=False
        )
        # no share button: sharing would tunnel the local scenes to a public relay
        self.server.gui.configure_theme(control_width="large", dark_mode=False, show_share_button=False)
        self.server.gui.set_panel_label("UrbanVerse")
        tabs = self.server.gui.add_tab_group()
        with tabs.add_tab("Scenes"):
            self.scenes = ScenePanel(self.server, cfg.scenes_dir)
        with tabs.add_tab("Assets"):
            library = cfg.library if cfg.library is not None else default_library()
            self.assets = AssetPanel(self.server, library, on_back=self._back_to_scene)
        if scenes:
            self.scenes.open(next(iter(scenes)))

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        return self.server.get_port()

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = self.server.get_host()
        return f"http://{'127.0.0.1' if host in ('0.0.0.0', '') else host}:{self.port}"

    def _back_to_scene(self) -> None:
        if self.scenes.scene is not None:
            self.scenes.set_camera(overview_camera(self.scenes.scene))

    def close(self) -> None:
        """Stop serving and release the asset store."""
        self.assets.close()
        self.server.stop()


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
