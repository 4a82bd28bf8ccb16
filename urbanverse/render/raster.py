"""A headless CPU rasterizer for textured triangle meshes: RGB, metric depth and per-pixel ids.

Engine: MuJoCo's OpenGL renderer on an EGL (or OSMesa) context, which Mesa's llvmpipe runs on the
CPU. Rasterizing beats ray casting on a CPU for whole street frames (primary rays alone cost more
than a shaded raster frame, before shading and shadow rays), and MuJoCo is already a core dependency
(the physics check), so the renderer adds no install weight. It gives textures, a directional sun
with shadow maps, a sky gradient, and a segmentation mode whose colours encode geom ids.

This module knows only meshes, textures and cameras (numpy + MuJoCo), so both the scene renderer
(``urbanverse.render.scene_model``) and the asset thumbnails (``urbanverse.render.thumbnail``) use it.

Frames: world Z-up, metres. Cameras use the OpenCV convention (x right, y down, z forward) with
``world_from_camera`` a 4x4 rigid transform. Depth is z-depth along the optical axis (m); 0 where
no surface was hit (sky). Instance and semantic ids are int32; 0 is "none" (sky).
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence

import numpy as np

from urbanverse.errors import MissingDependencyError

#: Rotation from the OpenCV camera frame (x right, y down, z forward) to MuJoCo's (x right, y up, -z fwd).
_CV_TO_MJ = np.diag([1.0, -1.0, -1.0])
#: Diffuse strength of the light that shines from the camera along its view (display units).
HEADLIGHT = 0.12


@dataclasses.dataclass(frozen=True, kw_only=True)
class PinholeCamera:
    """Pinhole intrinsics in pixels for an image ``width`` x ``height``; no distortion."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1 or self.fx <= 0 or self.fy <= 0:
            raise ValueError(f"PinholeCamera: need positive size and focal lengths, got {self}")

    @classmethod
    def from_hfov(cls, width: int, height: int, hfov_deg: float) -> PinholeCamera:
        """Square pixels, principal point at the image centre, horizontal field of view in degrees."""
        f = width / (2.0 * np.tan(np.radians(hfov_deg) / 2.0))
        return cls(width=width, height=height, fx=f, fy=f, cx=width / 2.0, cy=height / 2.0)

    @property
    def K(self) -> np.ndarray:  # noqa: N802 (the usual name of the intrinsic matrix)
        """The 3x3 intrinsic matrix."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def project(self, points_w: np.ndarray, world_from_camera: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates ``(N, 2)`` and z-depths ``(N,)`` (m) of world points ``(N, 3)``."""
        cam_from_world = np.linalg.inv(world_from_camera)
        p = np.asarray(points_w, float) @ cam_from_world[:3, :3].T + cam_from_world[:3, 3]
        z = p[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            uv = np.stack([self.fx * p[:, 0] / z + self.cx, self.fy * p[:, 1] / z + self.cy], axis=1)
        return uv, z


def look_at(eye: Sequence[float], target: Sequence[float], up: Sequence[float] = (0, 0, 1)) -> np.ndarray:
    """``world_from_camera`` (4x4, OpenCV axes) of a camera at ``eye`` looking at ``target``."""
    eye, target = np.asarray(eye, float), np.asarray(target, float)
    z = target - eye
    z /= np.linalg.norm(z)
    x = np.cross(z, np.asarray(up, float))
    if np.linalg.norm(x) < 1e-9:
        raise ValueError("look_at: view direction is parallel to up")
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([x, y, z], axis=1)
    pose[:3, 3] = eye
    return pose


def triplanar_uv(vertices: np.ndarray, faces: np.ndarray, tile_m: float) -> np.ndarray:
    """Per-corner texture coordinates ``(F, 3, 2)``: each face projected on the axis plane it faces most.

    ``tile_m``: metres per texture repeat. Written here because MuJoCo takes explicit per-corner
    coordinates and no library offers box projection for arbitrary meshes.
    """
    tri = vertices[faces]  # (F, 3, 3)
    normal = np.abs(np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]))
    axis = normal.argmax(axis=1)  # 0: faces +-X -> use (y, z); 1: (x, z); 2: (x, y)
    keep = np.array([[1, 2], [0, 2], [0, 1]])[axis]  # (F, 2)
    uv = np.take_along_axis(tri, keep[:, None, :].repeat(3, axis=1), axis=2)
    return uv / tile_m


def _split_at_centroid(vertices: np.ndarray, faces: np.ndarray, uv: np.ndarray | None):
    """One triangle ``(3, 3)`` as three around its centroid (same surface, four vertices)."""
    v = np.vstack([vertices, vertices.mean(axis=0)])
    f = np.array([[0, 1, 3], [1, 2, 3], [2, 0, 3]])
    if uv is not None:
        corners = np.asarray(uv).reshape(3, 2)
        centre = corners.mean(axis=0)
        uv = np.stack([[corners[a], corners[b], centre] for a, b, _ in f])
    return v, f, uv


@dataclasses.dataclass(frozen=True, kw_only=True)
class Lighting:
    """Sun, sky and ambient light. Colours are display (sRGB) values in [0, 1]."""

    sun_direction: tuple[float, float, float] = (-0.4, -0.3, -0.87)
    """Direction the sunlight travels (world frame, need not be unit)."""
    sun_color: tuple[float, float, float] = (0.75, 0.73, 0.68)
    ambient_color: tuple[float, float, float] = (0.38, 0.4, 0.44)
    sky_zenith: tuple[float, float, float] = (0.45, 0.62, 0.88)
    sky_horizon: tuple[float, float, float] = (0.82, 0.87, 0.93)
    shadows: bool = True
    shadow_map: int = 2048
    """Shadow map size (texels per side)."""
    shadow_softness: float = 0.3
    """Penumbra softness of the sun's shadow map filtering (MuJoCo light ``softness``)."""


@dataclasses.dataclass(frozen=True)
class Capsule:
    """A moving vertical capsule drawn over the static scene (a pedestrian): base centre ``(x, y, z)``
    on the ground (m), ``radius`` and total ``height`` (m), linear ``rgba`` in [0, 1]."""

    base: tuple[float, float, float]
    radius: float
    height: float
    rgba: tuple[float, float, float, float]


class SceneBuilder:
    """Collects textures, meshes and placed instances, then compiles a :class:`Rasterizer`."""

    def __init__(self) -> None:
        import mujoco

        self._mj = mujoco
        self.spec = mujoco.MjSpec()
        self.spec.compiler.degree = False
        self._meshes: set[str] = set()
        self._textures: set[str] = set()
        self._materials: dict[tuple, str] = {}
        self.instance_of_geom: list[int] = []
        self.semantic_of_geom: list[int] = []
        self._lo = np.full(3, np.inf)
        self._hi = np.full(3, -np.inf)

    def has_mesh(self, name: str) -> bool:
        return name in self._meshes

    def add_texture(self, name: str, rgb: np.ndarray) -> None:
        """A 2D texture from an ``(H, W, 3)`` uint8 sRGB image (row 0 at the top)."""
        if name in self._textures:
            return
        image = np.ascontiguousarray(np.flipud(np.asarray(rgb, np.uint8)[..., :3]))
        h, w = image.shape[:2]
        tex = self.spec.add_texture(name=name, type=self._mj.mjtTexture.mjTEXTURE_2D, width=w, height=h)
        tex.nchannel = 3
        tex.data = image.tobytes()
        self._textures.add(name)

    def add_mesh(self, name: str, vertices: np.ndarray, faces: np.ndarray, uv: np.ndarray | None) -> None:
        """A mesh in its own frame. ``uv``: per-corner coordinates ``(F, 3, 2)`` or None."""
        vertices = np.asarray(vertices, np.float64)
        faces = np.asarray(faces, np.int64)
        if len(vertices) < 4:  # MuJoCo needs 4 vertices: split a lone triangle at its centroid
            vertices, faces, uv = _split_at_centroid(vertices, faces, uv)
        mesh = self.spec.add_mesh(name=name)
        mesh.uservert = vertices.ravel().tolist()
        mesh.userface = faces.ravel().tolist()
        # Open surfaces (ground tops, thin parts) have no volume: shell inertia always compiles.
        mesh.inertia = self._mj.mjtMeshInertia.mjMESH_INERTIA_SHELL
        # Flat shading (one normal per face): the library's meshes are faceted solids.
        tri = vertices[faces]
        normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        mesh.usernormal = normals.ravel().tolist()
        mesh.userfacenormal = np.repeat(np.arange(len(faces)), 3).tolist()
        if uv is not None:
            mesh.usertexcoord = np.asarray(uv, np.float64).reshape(-1, 2).ravel().tolist()
            mesh.userfacetexcoord = np.arange(faces.size).tolist()
        self._meshes.add(name)

    def _material(self, rgba: Sequence[float], texture: str | None, specular: float) -> str:
        key = (tuple(round(float(c), 4) for c in rgba), texture, round(specular, 3))
        if key not in self._materials:
            name = f"mat{len(self._materials)}"
            mat = self.spec.add_material(name=name, rgba=list(key[0]), specular=specular, shininess=0.2)
            if texture is not None:
                mat.textures = ["", texture] + [""] * 8  # slot 1 is mjTEXROLE_RGB
            self._materials[key] = name
        return self._materials[key]

    def add_instance(
        self,
        mesh: str,
        *,
        position: Sequence[float],
        quat_wxyz: Sequence[float],
        rgba: Sequence[float],
        texture: str | None,
        instance_id: int,
        semantic_id: int,
        bounds: np.ndarray,
        specular: float = 0.1,
    ) -> None:
        """Place ``mesh`` at a pose with a material; ``bounds`` ``(2, 3)`` is its world AABB (m)."""
        self.spec.worldbody.add_geom(
            type=self._mj.mjtGeom.mjGEOM_MESH,
            meshname=mesh,
            pos=list(map(float, position)),
            quat=list(map(float, quat_wxyz)),
            material=self._material(rgba, texture, specular),
            contype=0,
            conaffinity=0,
            group=0,
        )
        self.instance_of_geom.append(int(instance_id))
        self.semantic_of_geom.append(int(semantic_id))
        self._lo = np.minimum(self._lo, bounds[0])
        self._hi = np.maximum(self._hi, bounds[1])

    def build(self, lighting: Lighting, max_width: int, max_height: int, max_capsules: int = 0) -> Rasterizer:
        """Compile the model (sky, sun, ambient) and open a rendering context that can draw up to
        ``max_capsules`` moving capsules per view."""
        mj, spec = self._mj, self.spec
        sky = spec.add_texture(name="sky", type=mj.mjtTexture.mjTEXTURE_SKYBOX, width=64, height=64)
        sky.builtin = mj.mjtBuiltin.mjBUILTIN_GRADIENT
        sky.rgb1, sky.rgb2 = list(lighting.sky_zenith), list(lighting.sky_horizon)
        d = np.asarray(lighting.sun_direction, float)
        centre = (self._lo + self._hi) / 2 if np.isfinite(self._lo).all() else np.zeros(3)
        sun = spec.worldbody.add_light(
            type=mj.mjtLightType.mjLIGHT_DIRECTIONAL,
            pos=(centre - 100.0 * d / np.linalg.norm(d)).tolist(),
            dir=(d / np.linalg.norm(d)).tolist(),
            diffuse=list(lighting.sun_color),
            ambient=[0.0, 0.0, 0.0],
            specular=[0.25, 0.25, 0.25],
            castshadow=lighting.shadows,
        )
        sun.softness = lighting.shadow_softness
        spec.visual.headlight.active = 1
        spec.visual.headlight.ambient = list(lighting.ambient_color)
        spec.visual.headlight.diffuse = [HEADLIGHT] * 3
        spec.visual.headlight.specular = [0.0, 0.0, 0.0]
        spec.visual.quality.shadowsize = lighting.shadow_map
        spec.visual.quality.offsamples = 0  # multisampling costs 2-3x on a software rasterizer
        # Only meshes are drawn: coarse built-in primitives make the context 100x faster to create.
        spec.visual.quality.numslices, spec.visual.quality.numstacks, spec.visual.quality.numquads = 8, 8, 1
        spec.visual.global_.offwidth = max_width
        spec.visual.global_.offheight = max_height
        spec.worldbody.add_camera(name="view", pos=[0, 0, 0])
        model = spec.compile()
        extent = float(np.linalg.norm(self._hi - self._lo)) / 2 if np.isfinite(self._lo).all() else 10.0
        model.stat.extent = max(extent, 1.0)
        model.stat.center = centre
        model.vis.map.znear = 0.05 / model.stat.extent  # 5 cm near plane
        model.vis.map.zfar = 2000.0 / model.stat.extent
        model.vis.map.shadowclip = 1.2
        ids = np.asarray(self.instance_of_geom, np.int32), np.asarray(self.semantic_of_geom, np.int32)
        return Rasterizer(model, ids[0], ids[1], max_width, max_height, max_capsules)


_THREAD = threading.local()


def _load_triton_first() -> None:
    """Import Triton (shipped with CUDA builds of torch) before Mesa starts its LLVM-based rasterizer.

    Both bundle LLVM; Triton imported after a Mesa context exists crashes the process (segmentation
    fault, seen with torch 2.14.1 + Mesa 22.3), while the other order works. transformers imports
    Triton lazily, so without this a render followed by a text embedding would crash.
    """
    if importlib.util.find_spec("triton") is not None:
        importlib.import_module("triton")


def _gl_context():
    """This thread's offscreen OpenGL context: EGL by default, OSMesa when ``MUJOCO_GL=osmesa``.

    One context per thread serves every rasterizer made there (each renders into its own offscreen
    buffer): creating a context costs ~0.25 s, mostly Mesa compiling its shaders again, and a
    context can be current in one thread only (the viewer renders thumbnails from worker threads).
    """
    context = getattr(_THREAD, "context", None)
    if context is not None:
        return context
    backend = os.environ.get("MUJOCO_GL", "egl").lower()
    _load_triton_first()
    try:
        if backend == "osmesa":
            from mujoco.osmesa import GLContext
        else:
            from mujoco.egl import GLContext
        _THREAD.context = GLContext(64, 64)
        return _THREAD.context
    except Exception as exc:  # missing libEGL / libOSMesa raise ImportError, RuntimeError or OSError
        raise MissingDependencyError(
            f"no headless OpenGL ({backend}): {exc}. Install Mesa, e.g. "
            "`apt-get install libegl1 libgl1-mesa-dri` (or libosmesa6 with MUJOCO_GL=osmesa)"
        ) from exc


@dataclasses.dataclass
class RasterOutput:
    """One rendered view. ``rgb`` (H, W, 3) uint8 sRGB; ``depth`` (H, W) float32 z-depth in m (0: sky);
    ``instance`` and ``semantic`` (H, W) int32 (0: sky)."""

    rgb: np.ndarray
    depth: np.ndarray
    instance: np.ndarray
    semantic: np.ndarray


class Rasterizer:
    """Renders a compiled scene from any pinhole camera; holds GPU-side buffers until :meth:`close`.

    Use it from the thread that built it (its buffers live in that thread's OpenGL context).
    """

    def __init__(
        self,
        model,
        instance_of_geom: np.ndarray,
        semantic_of_geom: np.ndarray,
        max_w: int,
        max_h: int,
        max_capsules: int = 0,
    ):
        import mujoco

        self._mj = mujoco
        self.model = model
        self.data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, self.data)  # world poses of the (static) geoms
        mujoco.mj_camlight(model, self.data)  # and of the sun
        self.max_size = (max_w, max_h)
        self._gl = _gl_context()
        self._gl.make_current()
        self._con = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._con)
        self._con.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self.max_capsules = max_capsules
        self._scene = mujoco.MjvScene(model, maxgeom=model.ngeom + 16 + max_capsules)
        self._opt = mujoco.MjvOption()
        self._cam = mujoco.MjvCamera()
        self._cam.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._cam.fixedcamid = 0
        # Lookup from segmentation id (geom index + 1) to our ids; index 0 is the background.
        self._instance_lut = np.concatenate([[0], instance_of_geom]).astype(np.int32)
        self._semantic_lut = np.concatenate([[0], semantic_of_geom]).astype(np.int32)

    def _set_camera(self, camera: PinholeCamera, world_from_camera: np.ndarray) -> None:
        m, d = self.model, self.data
        m.cam_fovy[0] = np.degrees(2.0 * np.arctan(camera.height / (2.0 * camera.fy)))
        # Off-centre principal points and fx != fy go through MuJoCo's sensor model (pixel units).
        m.cam_resolution[0] = (camera.width, camera.height)
        m.cam_sensorsize[0] = (camera.width, camera.height)
        m.cam_intrinsic[0] = (
            camera.fx,
            camera.fy,
            camera.width / 2 - camera.cx,
            camera.height / 2 - camera.cy,
        )
        d.cam_xpos[0] = world_from_camera[:3, 3]
        d.cam_xmat[0] = (world_from_camera[:3, :3] @ _CV_TO_MJ).ravel()

    def _add_capsules(self, capsules: Sequence[Capsule]) -> None:
        """Append capsules to the scene built by ``mjv_updateScene`` (MuJoCo's decor geoms)."""
        mj, scn = self._mj, self._scene
        if len(capsules) > self.max_capsules:
            raise ValueError(f"render: {len(capsules)} capsules, this rasterizer draws {self.max_capsules}")
        eye = np.eye(3).ravel()
        for c in capsules:
            half = max(0.5 * c.height - c.radius, 0.0)
            centre = np.array([c.base[0], c.base[1], c.base[2] + c.radius + half])
            mj.mjv_initGeom(
                scn.geoms[scn.ngeom],
                mj.mjtGeom.mjGEOM_CAPSULE,
                np.array([c.radius, half, 0.0]),
                centre,
                eye,
                np.asarray(c.rgba, np.float32),
            )
            scn.ngeom += 1

    def render(
        self,
        camera: PinholeCamera,
        world_from_camera: np.ndarray,
        *,
        ids: bool = True,
        capsules: Sequence[Capsule] = (),
    ) -> RasterOutput:
        """Render one view, with ``capsules`` drawn over the static scene (instance and semantic id 0).

        With ``ids=False`` only ``rgb`` is filled (depth and ids are empty arrays).
        """
        mj = self._mj
        w, h = camera.width, camera.height
        if w > self.max_size[0] or h > self.max_size[1]:
            raise ValueError(
                f"render: {w}x{h} exceeds this rasterizer's {self.max_size[0]}x{self.max_size[1]}"
            )
        self._gl.make_current()
        mj.mjr_setBuffer(mj.mjtFramebuffer.mjFB_OFFSCREEN, self._con)  # other rasterizers share the context
        self._set_camera(camera, np.asarray(world_from_camera, float))
        rect = mj.MjrRect(0, 0, w, h)
        mj.mjv_updateScene(
            self.model, self.data, self._opt, None, self._cam, mj.mjtCatBit.mjCAT_ALL, self._scene
        )
        self._add_capsules(capsules)
        rgb = np.empty((h, w, 3), np.uint8)
        mj.mjr_render(rect, self._scene, self._con)
        mj.mjr_readPixels(rgb, None, rect, self._con)
        rgb = np.flipud(rgb)
        if not ids:
            empty = np.zeros((0, 0), np.int32)
            return RasterOutput(
                rgb=np.ascontiguousarray(rgb), depth=empty.astype(np.float32), instance=empty, semantic=empty
            )
        flags = self._scene.flags
        saved = flags.copy()
        flags[mj.mjtRndFlag.mjRND_SEGMENT] = True
        flags[mj.mjtRndFlag.mjRND_IDCOLOR] = True
        seg = np.empty((h, w, 3), np.uint8)
        zbuf = np.empty((h, w), np.float32)
        try:
            mj.mjr_render(rect, self._scene, self._con)
            mj.mjr_readPixels(seg, zbuf, rect, self._con)
        finally:
            np.copyto(flags, saved)
        seg, zbuf = np.flipud(seg), np.flipud(zbuf)
        segid = (
            seg[..., 0].astype(np.int32)
            | (seg[..., 1].astype(np.int32) << 8)
            | (seg[..., 2].astype(np.int32) << 16)
        )
        geom_of_seg = np.zeros(self._scene.ngeom + 1, np.int32)
        for g in self._scene.geoms[: self._scene.ngeom]:
            if g.segid >= 0 and g.objtype == mj.mjtObj.mjOBJ_GEOM:
                geom_of_seg[g.segid + 1] = g.objid + 1
        geom = geom_of_seg[np.minimum(segid, len(geom_of_seg) - 1)]
        return RasterOutput(
            rgb=np.ascontiguousarray(rgb),
            depth=self._linear_depth(zbuf, geom > 0),
            instance=self._instance_lut[geom],
            semantic=self._semantic_lut[geom],
        )

    def _linear_depth(self, zbuf: np.ndarray, hit: np.ndarray) -> np.ndarray:
        """Reverse-Z depth buffer values to z-depth in metres (as MuJoCo's own ``Renderer`` does)."""
        extent = self.model.stat.extent
        near, far = self.model.vis.map.znear * extent, self.model.vis.map.zfar * extent
        c = -(far + near) / (far - near)
        d = -(2.0 * far * near) / (far - near)
        c, d = -0.5 * c - 0.5, -0.5 * d
        depth = d / (zbuf.astype(np.float64) + c)
        return np.where(hit, depth, 0.0).astype(np.float32)

    def close(self) -> None:
        """Free the OpenGL resources (also done at garbage collection)."""
        if self._con is not None:
            self._gl.make_current()
            self._con.free()
            self._con = None

    def __enter__(self) -> Rasterizer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
