"""The "Scenes" tab of the viewer: scene list, 3D scene, layers, object attributes and cousins, map.

Every browser gets its own panel (``client.gui``, ``client.scene``): what one browser opens, selects
or swaps is drawn in that browser only. Scenes, meshes and thumbnails come from the viewer's shared
``ViewerCache``. The panel's actions run one at a time, and a burst of requests of one kind (a
browser clicking "Open" ten times) runs only the latest, so a busy browser never queues work the
others wait behind.

Scene graph names in viser (per browser)::

    /scene/ground/<type>/<id>   ground meshes (textured), one frame per ground type (layer toggles)
    /scene/objects/<id>         visual GLB of the object's shown asset (clickable)
    /scene/collision/<id>       convex collision parts (built the first time the layer is shown)
    /scene/walkable, /scene/camera_path, /scene/episode, /scene/selection
    /scene/people/paths, /scene/people/bodies   the people seen walking (``people_layer``)
"""

from __future__ import annotations

import io
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path

import numpy as np
from PIL import Image

from urbanverse.assets.record import Asset
from urbanverse.errors import InputError
from urbanverse.scene.record import AssetRef, Scene, SceneObject, resolve_inside
from urbanverse.viewer.cache import ViewerCache
from urbanverse.viewer.catalog import Episode, list_scenes, scene_folder
from urbanverse.viewer.geometry import (
    CameraView,
    flat_overlay,
    markdown_table,
    object_attributes,
    object_camera,
    overlay_height,
    overview_camera,
    polyline_segments,
    sky_gradient,
    yaw_wxyz,
)
from urbanverse.viewer.people_layer import Animator, PeopleLayer

log = logging.getLogger(__name__)

NO_SELECTION = "(none)"
NO_EPISODE = "(none)"
SCREENSHOT_SIZE = (720, 1280)  # height, width in pixels
MAP_WIDTH = 480  # pixels
#: Seconds a browser has to return a screenshot (a browser that never answers holds no thread longer).
SCREENSHOT_TIMEOUT_S = 30.0


def set_camera(client, view: CameraView) -> None:
    """Move one browser's camera (a viser ``ClientHandle``) to ``view``."""
    with client.atomic():
        client.camera.fov = view.fov
        client.camera.position = view.position
        client.camera.look_at = view.look_at


class ActionQueue:
    """A panel's actions, run one at a time on ``executor`` (a thread pool shared by every panel);
    while one runs, a newer request of the same kind replaces the waiting one (latest wins, order of
    kinds kept). ``submit`` never blocks, so it may be called from viser's event loop. Bad input met
    by an action (``InputError``) goes to ``on_error`` instead of the log as a traceback. Actions
    asked for before ``start()`` (a browser clicking while its panel is still being built) wait."""

    def __init__(self, executor: Executor, on_error: Callable[[InputError], None]):
        self._executor = executor
        self._pending: OrderedDict[str, Callable[[], None]] = OrderedDict()
        self._lock = threading.Lock()
        self._running = True  # until start()
        self._closed = False
        self._on_error = on_error

    def start(self) -> None:
        """Begin running actions (those already asked for first)."""
        with self._lock:
            self._running = bool(self._pending)
        if self._running:
            self._executor.submit(self._drain)

    def close(self) -> None:
        """Drop waiting actions and refuse new ones (the browser left)."""
        with self._lock:
            self._closed = True
            self._pending.clear()

    def submit(self, kind: str, action: Callable[[], None]) -> None:
        """Run ``action`` after the running one (replacing a waiting action of the same ``kind``)."""
        with self._lock:
            if self._closed:
                return
            self._pending.pop(kind, None)
            self._pending[kind] = action
            if self._running:
                return
            self._running = True
        self._executor.submit(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._running = False
                    return
                _, action = self._pending.popitem(last=False)
            try:
                action()
            except InputError as exc:
                self._on_error(exc)
            except Exception:
                log.exception("viewer: an action failed")


def on_browser(actions: ActionQueue, kind: str, act: Callable[[object], None]) -> Callable:
    """A viser callback (GUI input update or click) that queues ``act(value)`` on ``actions`` when a
    browser caused the event. It is async, so viser runs it on its event loop as each message
    arrives: actions queue in the order the browser sent them, each with the value the browser
    chose (``None`` for a scene click), even if a scene opening meanwhile resets the inputs. The
    panel's own changes, which viser also reports, are already drawn and queue nothing."""

    async def callback(event) -> None:
        if event.client_id is not None:
            target = getattr(event, "target", None)
            value = getattr(target, "value", None)
            actions.submit(kind, lambda: act(value))

    return callback


class ScenePanel:
    """Builds the Scenes tab inside the current GUI container of one browser (a viser ``ClientHandle``)
    and draws the scene that browser selects, starting with the scene called ``first``; its people
    walk on the viewer's ``animator``."""

    def __init__(
        self,
        client,
        scenes_root: Path,
        cache: ViewerCache,
        executor: Executor,
        animator: Animator,
        first: str | None = None,
    ):
        self.actions = ActionQueue(executor, self._show_error)
        if first is not None:  # before the buttons exist: the browser's own clicks come after it
            self.actions.submit("open", lambda: self.open(first))
        self.client = client
        self.gui, self.api = client.gui, client.scene
        self.root = Path(scenes_root).resolve()
        self.cache = cache
        self.executor = executor
        self.animator = animator
        self.people: PeopleLayer | None = None
        self._closed = False
        self.scene: Scene | None = None
        self.scene_dir: Path | None = None
        self.episodes: dict[str, Episode] = {}
        self.shown_variant: dict[str, AssetRef] = {}
        self._lock = threading.RLock()
        self._layer_handles: list = []
        self._collision_built = False
        self._build_gui()
        self.actions.start()

    # ------------------------------------------------------------------ GUI
    def _build_gui(self) -> None:
        gui = self.gui
        scenes = list_scenes(self.root)
        with gui.add_folder("Scene list"):
            if not scenes:
                gui.add_markdown(f"No scene folders (with scene.json) in `{self.root}`.")
            for name, folder in scenes.items():
                try:
                    thumb = self.cache.thumbnail(folder)
                except InputError as exc:
                    gui.add_markdown(f"**{name}**: cannot be read ({exc})")
                    continue
                gui.add_image(thumb, label=name, format="png")
                button = gui.add_button(f"Open {name}", hint=f"Show scene {name!r} in 3D")
                button.on_click(on_browser(self.actions, "open", lambda _v, n=name: self.open(n)))
        self.title = gui.add_markdown("No scene open.")
        self.layers_folder = gui.add_folder("Layers")
        with gui.add_folder("Selected object"):
            self.object_dropdown = gui.add_dropdown("object", (NO_SELECTION,), hint="Or click it in 3D")
            self.variant_dropdown = gui.add_dropdown("shown asset", ("-",), hint="The asset or a cousin")
            self.fly_button = gui.add_button("Fly to object")
            self.attributes = gui.add_markdown("Click an object in the 3D view.")
        with gui.add_folder("Map", expand_by_default=False):
            self.map_image = gui.add_image(np.full((8, 8, 3), 230, np.uint8), format="png")
        self.screenshot_button = gui.add_button("Screenshot", hint="Download a PNG of the 3D view")
        # each action keeps the value the browser chose (a scene opening meanwhile resets the inputs)
        self.object_dropdown.on_update(on_browser(self.actions, "select", self.select))
        self.variant_dropdown.on_update(on_browser(self.actions, "variant", self._show_variant))
        self.fly_button.on_click(on_browser(self.actions, "camera", lambda _v: self._fly_to_selection()))
        self.screenshot_button.on_click(on_browser(self.actions, "screenshot", lambda _v: self._screenshot()))

    def _show_error(self, exc: InputError) -> None:
        log.warning("viewer: %s", exc)
        self.title.content = f"**cannot show**: {exc}"

    def _build_layers(self) -> None:
        for handle in self._layer_handles:
            handle.remove()
        self._layer_handles = []
        gui, scene = self.gui, self.scene
        with self.layers_folder:
            for kind in sorted({r.type for r in scene.ground}):
                self._toggle(f"ground: {kind}", f"/scene/ground/{kind}", True)
            self._toggle("objects", "/scene/objects", True)
            collision = gui.add_checkbox("collision parts", False)
            collision.on_update(on_browser(self.actions, "collision", self._set_collision))
            self._layer_handles.append(collision)
            if scene.walkable_area:
                self._toggle("walkable area", "/scene/walkable", False)
            if scene.camera_trajectory:
                self._toggle("camera path", "/scene/camera_path", True)
            if self.people is not None:
                self._toggle("people: paths", "/scene/people/paths", True)
                self._toggle("people: bodies", "/scene/people/bodies", True)
                self._layer_handles += self.people.add_controls(
                    gui,
                    on_browser(self.actions, "people time", self.people.set_time),
                    on_browser(self.actions, "people play", self.people.set_playing),
                )
            if self.episodes:
                episode = gui.add_dropdown("episode", (NO_EPISODE, *self.episodes))
                episode.on_update(on_browser(self.actions, "episode", self._show_episode))
                self._layer_handles.append(episode)

    def _toggle(self, label: str, node: str, initial: bool) -> None:
        box = self.gui.add_checkbox(label, initial)

        def update(_event) -> None:
            handle = self.api.get_handle_by_name(node)
            if handle is not None:
                handle.visible = box.value

        box.on_update(update)
        self._layer_handles.append(box)

    # --------------------------------------------------------------- scenes
    def open(self, name: str) -> None:
        """Load the scene called ``name`` (from the listing only) and draw it."""
        with self._lock:
            if self._closed:
                return
            loaded = self.cache.scene(scene_folder(self.root, name))
            scene = loaded.scene
            self.scene, self.scene_dir, self.episodes = scene, loaded.folder, loaded.episodes
            self.shown_variant = {o.id: o.asset for o in scene.objects}
            self._collision_built = False
            self._stop_people()
            self.api.remove_by_name("/scene")
            self.api.add_frame("/scene", show_axes=False)
            self.api.set_background_image(sky_gradient(scene.sky), format="png")
            self._draw_ground(loaded.ground_glbs)
            self._draw_objects()
            self._draw_overlays()
            if loaded.people is not None:
                self.people = PeopleLayer(self.client, loaded.people, overlay_height(scene))
            self._build_layers()
            self.object_dropdown.options = (NO_SELECTION, *(o.id for o in scene.objects))
            self.object_dropdown.value = NO_SELECTION
            self.select(NO_SELECTION)
            self.set_camera(overview_camera(scene))
            if self.people is not None:
                self.animator.add(self.people)
            people = f", {len(scene.agents)} people" if scene.agents else ""
            # last: a title naming the scene tells the browser the scene is complete
            self.title.content = (
                f"**{scene.name}**: {len(scene.ground)} ground regions, {len(scene.objects)} objects"
                f"{people} ({scene.source.kind})"
            )

    def _stop_people(self) -> None:
        if self.people is not None:
            self.animator.discard(self.people)
            self.people.close()
            self.people = None

    def close(self) -> None:
        """The browser left: drop its waiting actions and stop its people walking (on the executor,
        after a scene opening under way, so that the caller never waits)."""
        self._closed = True
        self.actions.close()

        def stop() -> None:
            with self._lock:
                self._stop_people()

        try:
            self.executor.submit(stop)
        except RuntimeError:  # the viewer is shutting down: its animator has stopped already
            pass

    def set_camera(self, view: CameraView) -> None:
        """Move this browser's camera to ``view``."""
        set_camera(self.client, view)

    def _draw_ground(self, glbs: dict[str, bytes]) -> None:
        for kind in sorted({r.type for r in self.scene.ground}):
            self.api.add_frame(f"/scene/ground/{kind}", show_axes=False)
        for region in self.scene.ground:
            self.api.add_glb(f"/scene/ground/{region.type}/{region.id}", glb_data=glbs[region.id])

    def _asset(self, ref: AssetRef, where: str) -> tuple[Path, Asset]:
        folder = resolve_inside(self.scene_dir, ref.path, where)
        return folder, self.cache.asset(folder)

    def _draw_object(self, obj: SceneObject, ref: AssetRef) -> None:
        folder, _ = self._asset(ref, f"object {obj.id}")
        handle = self.api.add_glb(
            f"/scene/objects/{obj.id}",
            glb_data=self.cache.glb(folder),
            scale=tuple(obj.scale),
            wxyz=yaw_wxyz(obj.yaw),
            position=tuple(obj.position),
        )
        handle.on_click(on_browser(self.actions, "select", lambda _v, oid=obj.id: self.select(oid)))

    def _draw_objects(self) -> None:
        self.api.add_frame("/scene/objects", show_axes=False)
        for obj in self.scene.objects:
            self._draw_object(obj, obj.asset)

    def _draw_overlays(self) -> None:
        scene, api = self.scene, self.api
        z = overlay_height(scene)
        if scene.walkable_area:
            api.add_frame("/scene/walkable", show_axes=False, visible=False)
            for i, poly in enumerate(scene.walkable_area):
                verts, faces = flat_overlay(poly, z)
                api.add_mesh_simple(
                    f"/scene/walkable/{i}", verts, faces, color=(60, 200, 90), opacity=0.45, side="double"
                )
        if scene.camera_trajectory:
            api.add_frame("/scene/camera_path", show_axes=False)
            points = np.array([p.position for p in scene.camera_trajectory])
            if len(points) >= 2:
                api.add_line_segments(
                    "/scene/camera_path/line", polyline_segments(points), (200, 40, 200), thickness=0.08
                )
            step = max(1, len(scene.camera_trajectory) // 12)
            for i, pose in enumerate(scene.camera_trajectory[::step]):
                api.add_camera_frustum(
                    f"/scene/camera_path/frame_{i}",
                    fov=0.9,
                    aspect=16 / 9,
                    scale=0.4,
                    color=(200, 40, 200),
                    wxyz=pose.quat_wxyz,
                    position=pose.position,
                )

    def _show_episode(self, name: str) -> None:
        self.api.remove_by_name("/scene/episode")
        episode = self.episodes.get(name)
        if episode is not None:
            pts = episode.positions.copy()
            pts[:, 2] += overlay_height(self.scene)
            colour = (20, 120, 230) if episode.success is not False else (230, 60, 30)
            self.api.add_line_segments("/scene/episode/path", polyline_segments(pts), colour, thickness=0.1)
            if episode.goal is not None:
                goal = (*episode.goal, pts[0, 2])
                self.api.add_icosphere("/scene/episode/goal", radius=0.4, color=(250, 200, 0), position=goal)
        self._update_map()

    def _set_collision(self, visible: bool) -> None:
        with self._lock:
            if visible and not self._collision_built:
                self._draw_collision()
            handle = self.api.get_handle_by_name("/scene/collision")
            if handle is not None:
                handle.visible = visible

    def _draw_collision(self) -> None:
        self.api.add_frame("/scene/collision", show_axes=False)
        for obj in self.scene.objects:
            folder, _ = self._asset(self.shown_variant[obj.id], f"object {obj.id}")
            merged = self.cache.collision(folder)
            self.api.add_mesh_simple(
                f"/scene/collision/{obj.id}",
                merged.vertices,
                merged.faces,
                color=(255, 120, 20),
                opacity=0.5,
                flat_shading=True,
                scale=tuple(obj.scale),
                wxyz=yaw_wxyz(obj.yaw),
                position=tuple(obj.position),
            )
        self._collision_built = True

    # ------------------------------------------------------------ selection
    def _object(self, object_id: str) -> SceneObject | None:
        return next((o for o in self.scene.objects if o.id == object_id), None) if self.scene else None

    def select(self, object_id: str) -> None:
        """Show the attributes and cousins of ``object_id`` (``NO_SELECTION`` clears)."""
        with self._lock:
            obj = self._object(object_id)
            if self.object_dropdown.value != (obj.id if obj else NO_SELECTION):
                self.object_dropdown.value = obj.id if obj else NO_SELECTION
            self.api.remove_by_name("/scene/selection")
            if obj is None:
                self.attributes.content = "Click an object in the 3D view."
                self.variant_dropdown.options = ("-",)
                self._update_map()
                return
            variants = (obj.asset.uid, *(c.uid for c in obj.cousins))
            shown = self.shown_variant[obj.id].uid
            self.variant_dropdown.options = variants
            self.variant_dropdown.value = shown
            self._describe(obj)
            centre = np.array(obj.position) + np.array([0.0, 0.0, obj.size[2] / 2])
            self.api.add_box(
                "/scene/selection",
                color=(230, 30, 60),
                dimensions=tuple(s + 0.1 for s in obj.size),
                wireframe=True,
                wxyz=yaw_wxyz(obj.yaw),
                position=tuple(centre),
            )
            self._update_map()

    def _describe(self, obj: SceneObject) -> None:
        ref = self.shown_variant[obj.id]
        _, asset = self._asset(ref, f"object {obj.id}")
        rows = object_attributes(obj, asset)
        if ref.uid != obj.asset.uid:
            rows.insert(3, ("shown cousin", ref.uid))
        self.attributes.content = f"### {obj.id}\n" + markdown_table(rows)

    def _show_variant(self, uid: str) -> None:
        with self._lock:
            obj = self._object(self.object_dropdown.value)
            if obj is None:
                return
            ref = next((r for r in (obj.asset, *obj.cousins) if r.uid == uid), None)
            if ref is None or ref == self.shown_variant[obj.id]:
                return
            self.shown_variant[obj.id] = ref
            self._draw_object(obj, ref)
            if self._collision_built:
                self._draw_collision()
            self._describe(obj)

    def _fly_to_selection(self) -> None:
        obj = self._object(self.object_dropdown.value)
        if obj is not None:
            self.set_camera(object_camera(obj))

    def _update_map(self) -> None:
        if self.scene is None:
            return
        episode = None
        for handle in self._layer_handles:
            if getattr(handle, "label", None) == "episode" and handle.value in self.episodes:
                episode = handle.value
        self.map_image.image = self.cache.map(self.scene_dir, MAP_WIDTH, episode, self.object_dropdown.value)

    def _screenshot(self) -> None:
        client = self.client
        height, width = SCREENSHOT_SIZE
        try:
            pixels = client.get_render(
                height=height, width=width, transport_format="png", timeout=SCREENSHOT_TIMEOUT_S
            )
        except TimeoutError:
            log.warning("viewer: the browser sent no screenshot within %.0f s", SCREENSHOT_TIMEOUT_S)
            return
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(pixels)[..., :3]).save(buffer, format="PNG")
        name = self.scene.name if self.scene else "urbanverse"
        client.send_file_download(f"{name}.png", buffer.getvalue())
