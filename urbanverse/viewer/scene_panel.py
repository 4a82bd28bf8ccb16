"""The "Scenes" tab of the viewer: scene list, 3D scene, layers, object attributes and cousins, map.

Scene graph names in viser::

    /scene/ground/<type>/<id>   ground meshes (textured), one frame per ground type (layer toggles)
    /scene/objects/<id>         visual GLB of the object's shown asset (clickable)
    /scene/collision/<id>       convex collision parts (built the first time the layer is shown)
    /scene/walkable, /scene/camera_path, /scene/episode, /scene/selection
"""

from __future__ import annotations

import io
import logging
import threading
from pathlib import Path

import numpy as np
import trimesh
from PIL import Image

from urbanverse.assets.record import Asset, load_asset, load_collision_parts
from urbanverse.errors import InputError
from urbanverse.scene.record import AssetRef, Scene, SceneObject, load_scene, resolve_inside
from urbanverse.viewer.catalog import Episode, list_scenes, load_episodes, scene_folder
from urbanverse.viewer.geometry import (
    CameraView,
    flat_overlay,
    ground_display_mesh,
    markdown_table,
    object_attributes,
    object_camera,
    object_glb,
    overlay_height,
    overview_camera,
    polyline_segments,
    sky_gradient,
    yaw_wxyz,
)
from urbanverse.viewer.topdown import render_map, render_thumbnail

log = logging.getLogger(__name__)

NO_SELECTION = "(none)"
NO_EPISODE = "(none)"
SCREENSHOT_SIZE = (720, 1280)  # height, width in pixels


def set_camera(server, view: CameraView) -> None:
    """Move every connected client's camera to ``view``."""
    for client in server.get_clients().values():
        with client.atomic():
            client.camera.fov = view.fov
            client.camera.position = view.position
            client.camera.look_at = view.look_at


class ScenePanel:
    """Builds the Scenes tab inside the current GUI container and draws the selected scene."""

    def __init__(self, server, scenes_root: Path):
        self.server = server
        self.root = Path(scenes_root).resolve()
        self.scene: Scene | None = None
        self.scene_dir: Path | None = None
        self.episodes: dict[str, Episode] = {}
        self.shown_variant: dict[str, AssetRef] = {}
        self._assets: dict[Path, Asset] = {}
        self._glbs: dict[Path, bytes] = {}
        self._lock = threading.RLock()
        self._layer_handles: list = []
        self._collision_built = False
        self._build_gui()

    # ------------------------------------------------------------------ GUI
    def _build_gui(self) -> None:
        gui = self.server.gui
        scenes = list_scenes(self.root)
        with gui.add_folder("Scene list"):
            if not scenes:
                gui.add_markdown(f"No scene folders (with scene.json) in `{self.root}`.")
            for name, folder in scenes.items():
                try:
                    thumb = np.asarray(render_thumbnail(load_scene(folder)))
                except InputError as exc:
                    gui.add_markdown(f"**{name}**: cannot be read ({exc})")
                    continue
                gui.add_image(thumb, label=name, format="png")
                button = gui.add_button(f"Open {name}", hint=f"Show scene {name!r} in 3D")
                button.on_click(lambda _e, n=name: self.open(n))
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
        self.object_dropdown.on_update(lambda _e: self.select(self.object_dropdown.value))
        self.variant_dropdown.on_update(lambda _e: self._show_variant(self.variant_dropdown.value))
        self.fly_button.on_click(self._fly_to_selection)
        self.screenshot_button.on_click(self._screenshot)

    def _build_layers(self) -> None:
        for handle in self._layer_handles:
            handle.remove()
        self._layer_handles = []
        gui, scene = self.server.gui, self.scene
        with self.layers_folder:
            for kind in sorted({r.type for r in scene.ground}):
                self._toggle(f"ground: {kind}", f"/scene/ground/{kind}", True)
            self._toggle("objects", "/scene/objects", True)
            collision = gui.add_checkbox("collision parts", False)
            collision.on_update(lambda _e: self._set_collision(collision.value))
            self._layer_handles.append(collision)
            if scene.walkable_area:
                self._toggle("walkable area", "/scene/walkable", False)
            if scene.camera_trajectory:
                self._toggle("camera path", "/scene/camera_path", True)
            if self.episodes:
                episode = gui.add_dropdown("episode", (NO_EPISODE, *self.episodes))
                episode.on_update(lambda _e: self._show_episode(episode.value))
                self._layer_handles.append(episode)

    def _toggle(self, label: str, node: str, initial: bool) -> None:
        box = self.server.gui.add_checkbox(label, initial)

        def update(_event) -> None:
            handle = self.server.scene.get_handle_by_name(node)
            if handle is not None:
                handle.visible = box.value

        box.on_update(update)
        self._layer_handles.append(box)

    # --------------------------------------------------------------- scenes
    def open(self, name: str) -> None:
        """Load the scene called ``name`` (from the listing only) and draw it."""
        with self._lock:
            folder = scene_folder(self.root, name)
            scene = load_scene(folder)
            self.scene, self.scene_dir = scene, folder
            self.episodes = {e.name: e for e in load_episodes(folder)}
            self.shown_variant = {o.id: o.asset for o in scene.objects}
            self._collision_built = False
            self.server.scene.remove_by_name("/scene")
            self.server.scene.add_frame("/scene", show_axes=False)
            self.server.scene.set_background_image(sky_gradient(scene.sky), format="png")
            self._draw_ground()
            self._draw_objects()
            self._draw_overlays()
            self._build_layers()
            self.title.content = (
                f"**{scene.name}**: {len(scene.ground)} ground regions, {len(scene.objects)} objects"
                f" ({scene.source.kind})"
            )
            self.object_dropdown.options = (NO_SELECTION, *(o.id for o in scene.objects))
            self.object_dropdown.value = NO_SELECTION
            self.select(NO_SELECTION)
            self.set_camera(overview_camera(scene))

    def set_camera(self, view: CameraView) -> None:
        """Move every client's camera to ``view``, and make it the camera of clients that connect later."""
        cam = self.server.initial_camera
        cam.position, cam.look_at, cam.fov = view.position, view.look_at, view.fov
        set_camera(self.server, view)

    def _draw_ground(self) -> None:
        for kind in sorted({r.type for r in self.scene.ground}):
            self.server.scene.add_frame(f"/scene/ground/{kind}", show_axes=False)
        for region in self.scene.ground:
            mesh = ground_display_mesh(region, self.scene_dir)
            self.server.scene.add_mesh_trimesh(f"/scene/ground/{region.type}/{region.id}", mesh)

    def _asset(self, ref: AssetRef, where: str) -> tuple[Path, Asset]:
        folder = resolve_inside(self.scene_dir, ref.path, where)
        if folder not in self._assets:
            self._assets[folder] = load_asset(folder)
        return folder, self._assets[folder]

    def _draw_object(self, obj: SceneObject, ref: AssetRef) -> None:
        folder, asset = self._asset(ref, f"object {obj.id}")
        if folder not in self._glbs:
            self._glbs[folder] = object_glb(folder, asset)
        handle = self.server.scene.add_glb(
            f"/scene/objects/{obj.id}",
            glb_data=self._glbs[folder],
            scale=tuple(obj.scale),
            wxyz=yaw_wxyz(obj.yaw),
            position=tuple(obj.position),
        )
        handle.on_click(lambda _e, oid=obj.id: self.select(oid))

    def _draw_objects(self) -> None:
        self.server.scene.add_frame("/scene/objects", show_axes=False)
        for obj in self.scene.objects:
            self._draw_object(obj, obj.asset)

    def _draw_overlays(self) -> None:
        scene, api = self.scene, self.server.scene
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
        self.server.scene.remove_by_name("/scene/episode")
        episode = self.episodes.get(name)
        if episode is not None:
            pts = episode.positions.copy()
            pts[:, 2] += overlay_height(self.scene)
            colour = (20, 120, 230) if episode.success is not False else (230, 60, 30)
            self.server.scene.add_line_segments(
                "/scene/episode/path", polyline_segments(pts), colour, thickness=0.1
            )
            if episode.goal is not None:
                goal = (*episode.goal, pts[0, 2])
                self.server.scene.add_icosphere(
                    "/scene/episode/goal", radius=0.4, color=(250, 200, 0), position=goal
                )
        self._update_map()

    def _set_collision(self, visible: bool) -> None:
        with self._lock:
            if visible and not self._collision_built:
                self._draw_collision()
            handle = self.server.scene.get_handle_by_name("/scene/collision")
            if handle is not None:
                handle.visible = visible

    def _draw_collision(self) -> None:
        self.server.scene.add_frame("/scene/collision", show_axes=False)
        for obj in self.scene.objects:
            folder, asset = self._asset(self.shown_variant[obj.id], f"object {obj.id}")
            merged = trimesh.util.concatenate(load_collision_parts(folder, asset))
            self.server.scene.add_mesh_simple(
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
            self.server.scene.remove_by_name("/scene/selection")
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
            self.server.scene.add_box(
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

    def _fly_to_selection(self, _event) -> None:
        obj = self._object(self.object_dropdown.value)
        if obj is not None:
            self.set_camera(object_camera(obj))

    def _update_map(self) -> None:
        if self.scene is None:
            return
        episode = None
        for handle in self._layer_handles:
            if getattr(handle, "label", None) == "episode" and handle.value in self.episodes:
                episode = self.episodes[handle.value].positions
        selected = self.object_dropdown.value
        self.map_image.image = np.asarray(render_map(self.scene, 480, episode=episode, highlight=selected))

    def _screenshot(self, event) -> None:
        client = event.client
        if client is None:
            return
        height, width = SCREENSHOT_SIZE
        pixels = client.get_render(height=height, width=width, transport_format="png")
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(pixels)[..., :3]).save(buffer, format="PNG")
        name = self.scene.name if self.scene else "urbanverse"
        client.send_file_download(f"{name}.png", buffer.getvalue())
