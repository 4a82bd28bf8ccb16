"""The Scene record (``scene.json``): ground regions, objects, sky, camera path, timings.

World frame: metres, Z-up, yaw in radians about +Z; ground polygons are counter-clockwise
in the XY plane. A scene folder is self-contained: ``scene.json``, ``scene.usda``, and an
``assets/`` folder with every asset (and cousin) the scene uses, so it can be copied,
served by the viewer and opened in Isaac Sim as it is. Every path in the record is
relative to the scene folder and must stay inside it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from pathlib import Path
from typing import Literal

import shapely

from urbanverse.assets import limits
from urbanverse.assets.record import ASSET_FILE
from urbanverse.errors import InputError
from urbanverse.records import Vec2, Vec3, Vec4, parse_record, record, save_json

SCENE_SCHEMA_VERSION = 3
SCENE_FILE = "scene.json"
#: What ``urbanverse gen`` leaves (alone) in the output folder of an input that failed.
GEN_ERROR_FILE = "error.json"

log = logging.getLogger(__name__)

GroundType = Literal["road", "sidewalk", "crosswalk", "ramp", "terrain", "plaza"]
BodyType = Literal["kinematic", "dynamic"]
AgentKind = Literal["pedestrian"]

#: Default curb height (m): a sidewalk sits this far above the road.
DEFAULT_CURB_HEIGHT = 0.15


@record
class Material:
    """A surface look. ``base_color``: linear RGB in [0, 1]; ``texture``: image path in the scene folder,
    tiled every ``texture_scale`` metres."""

    name: str
    base_color: Vec3
    roughness: float = 0.8
    texture: str | None = None
    texture_scale: float = 1.0


@record
class GroundRegion:
    """A flat (or ramped) patch of ground, extruded from z = 0 up to its top surface.

    ``elevation``: top height in metres (sidewalks ``DEFAULT_CURB_HEIGHT`` above the road, so
    their side walls form the curb face). ``vertex_elevation``: optional top height per
    polygon vertex, for curb ramps where the sidewalk drops to the road. ``inferred_share``: the
    share of the region's area that no video frame saw, completed from the street model fitted to
    what was seen (0 for ground drawn by a generator or by hand; 1: wholly inferred). Loading checks
    the ranges of ``urbanverse.assets.limits``: polygon points within ±1e5 m, elevations 0..10 m,
    friction 0..5, restitution and inferred share 0..1.
    """

    id: str
    type: GroundType
    polygon: tuple[Vec2, ...]
    elevation: float = 0.0
    vertex_elevation: tuple[float, ...] | None = None
    material: Material
    friction: float = 0.8
    restitution: float = 0.0
    inferred_share: float = 0.0

    def top_heights(self) -> list[float]:
        """Top height (m) at each polygon vertex."""
        if self.vertex_elevation is not None:
            return list(self.vertex_elevation)
        return [self.elevation] * len(self.polygon)


@record
class AssetRef:
    """An asset by uid and its folder (relative to the scene folder)."""

    uid: str
    path: str


@record
class SceneObject:
    """A placed asset. ``position``: base centre in the world (m); ``size``: length, width, height
    after scaling (m); ``mass`` in kg; ``source_track``: the detection track it came from, if any.

    Loading checks the ranges of ``urbanverse.assets.limits`` (each with its reason there): positions
    within ±1e5 m, yaw within ±2 pi rad, scale 0.01..100 per axis, size 1 mm..1 km per axis, mass
    1 g..1e10 kg, friction 0..5, restitution and confidence 0..1."""

    id: str
    category: str
    asset: AssetRef
    cousins: tuple[AssetRef, ...] = ()
    position: Vec3
    yaw: float
    scale: Vec3 = (1.0, 1.0, 1.0)
    size: Vec3
    body_type: BodyType
    mass: float
    friction: float
    restitution: float
    confidence: float = 1.0
    source_track: int | None = None


@record
class Sky:
    """Sky colours (linear RGB), optional HDRI image, and the sun (direction it shines *towards*)."""

    zenith_color: Vec3 = (0.35, 0.55, 0.9)
    horizon_color: Vec3 = (0.75, 0.85, 0.95)
    hdri: str | None = None
    intensity: float = 1000.0
    sun_direction: Vec3 = (-0.4, -0.3, -0.87)
    sun_intensity: float = 3000.0


@record
class CameraPose:
    """A camera pose from the video: camera-to-world, OpenCV axes (x right, y down, z forward)."""

    frame: int
    time_s: float
    position: Vec3
    quat_wxyz: Vec4


@record
class Agent:
    """A person seen walking in the video, on the ground, in the scene's frame.

    ``trajectory``: ``(t, x, y)`` points in time order, ``t`` in seconds from the video's start
    (strictly increasing), ``x, y`` in metres, smoothed; the person stands on the ground top under
    ``(x, y)``. ``confidence``: per point, in [0, 1] (detection score, down-weighted where the feet
    were out of the frame or the ground ray grazed). ``speed_mean`` / ``speed_p90``: walking speed
    over the trajectory (m/s). ``height`` / ``radius``: the proxy body (m). ``source_track``: the
    perception track it came from."""

    id: str
    kind: AgentKind = "pedestrian"
    trajectory: tuple[Vec3, ...]
    confidence: tuple[float, ...]
    speed_mean: float
    speed_p90: float
    height: float = 1.7
    radius: float = 0.3
    source_track: int | None = None

    @property
    def duration_s(self) -> float:
        return self.trajectory[-1][0] - self.trajectory[0][0]


@record
class FlowCell:
    """One ground cell where people were seen: ``row`` (along y) and ``col`` (along x) in the grid,
    ``velocity`` the mean walking velocity (x, y m/s; its length is below ``speed`` where people went
    both ways), ``speed`` the mean speed (m/s) and ``density`` the mean number of people per m² while
    the video watched the cell."""

    row: int
    col: int
    velocity: Vec2
    speed: float
    density: float


@record
class FlowField:
    """The observed walking on a grid of ``cell`` m squares: cell ``(row, col)`` spans
    ``x in origin.x + col * cell .. + cell`` and ``y in origin.y + row * cell .. + cell``; the grid has
    ``rows`` x ``cols`` cells and lists only the ``cells`` where people were seen."""

    origin: Vec2
    cell: float
    rows: int
    cols: int
    cells: tuple[FlowCell, ...]


@record
class SceneSource:
    """Where the scene came from: a video (by hash and frames used), a generator, or by hand."""

    kind: Literal["video", "procedural", "hand-made"]
    video_sha256: str | None = None
    frames_used: tuple[int, ...] = ()
    generator: str | None = None
    seed: int | None = None


@record
class Scene:
    """The scene graph written to ``scene.json``."""

    schema_version: int = SCENE_SCHEMA_VERSION
    name: str
    source: SceneSource
    ground: tuple[GroundRegion, ...]
    objects: tuple[SceneObject, ...]
    sky: Sky = dataclasses.field(default_factory=Sky)
    camera_trajectory: tuple[CameraPose, ...] = ()
    walkable_area: tuple[tuple[Vec2, ...], ...] = ()
    agents: tuple[Agent, ...] = ()
    flow: FlowField | None = None
    timings_s: dict[str, float] = dataclasses.field(default_factory=dict)


def resolve_inside(scene_dir: Path, relative: str, where: str, must_exist: bool = True) -> Path:
    """Resolve a path from the record against ``scene_dir``; refuse absolute paths and escapes."""
    root = Path(scene_dir).resolve()
    if "\0" in relative or len(relative) > 1024:
        raise InputError(
            f"{where}: {relative[:80]!r} is not a file path (a NUL byte, or over 1024 characters)"
        )
    if Path(relative).is_absolute():
        raise InputError(f"{where}: path {relative!r} must be relative to the scene folder")
    try:
        full = (root / relative).resolve()
        exists = full.exists()
    except (OSError, RuntimeError) as exc:  # a name too long for the file system, a symlink loop
        raise InputError(f"{where}: path {relative!r} cannot be read ({exc})") from None
    if not full.is_relative_to(root):
        raise InputError(f"{where}: path {relative!r} escapes the scene folder")
    if must_exist and not exists:
        raise InputError(f"{where}: path {relative!r} does not exist in {root}")
    return full


def _check_id(value: str, where: str, seen: set[str]) -> None:
    """Ids name MuJoCo bodies and USD prims: 1-128 printable characters (C strings end at a NUL), unique."""
    if not (0 < len(value) <= 128 and value.isprintable()):
        raise InputError(f"{where}: {value[:80]!r} is not an id (1-128 printable characters)")
    if value in seen:
        raise InputError(f"{where}: duplicate id {value!r}")
    seen.add(value)


def _check_polygon(points: tuple, where: str) -> None:
    if len(points) < 3:
        raise InputError(f"{where}: a polygon needs at least 3 points, got {len(points)}")
    for point in points:
        limits.check_all(point, limits.POSITION, where)
    poly = shapely.Polygon(points)
    if not poly.is_valid or poly.area <= 1e-9:
        raise InputError(f"{where}: polygon is degenerate or self-intersecting")


def _check_material(mat: Material, scene_dir: Path, where: str) -> None:
    limits.check_all(mat.base_color, limits.UNIT_INTERVAL, f"{where}.base_color")
    limits.check(mat.roughness, limits.UNIT_INTERVAL, f"{where}.roughness")
    if mat.texture is not None:
        resolve_inside(scene_dir, mat.texture, f"{where}.texture")
    limits.check(mat.texture_scale, limits.TEXTURE_SCALE, f"{where}.texture_scale")


def _check_object(obj: SceneObject, scene_dir: Path, where: str) -> None:
    for j, ref in enumerate((obj.asset, *obj.cousins)):
        ref_where = f"{where}.asset" if j == 0 else f"{where}.cousins[{j - 1}]"
        folder = resolve_inside(scene_dir, ref.path, f"{ref_where}.path")
        if not (folder / ASSET_FILE).is_file():
            raise InputError(f"{ref_where}.path: {ref.path!r} has no {ASSET_FILE}")
    limits.check_all(obj.position, limits.POSITION, f"{where}.position")
    limits.check(obj.yaw, limits.YAW, f"{where}.yaw")
    limits.check_all(obj.scale, limits.SCALE, f"{where}.scale")
    limits.check_all(obj.size, limits.SIZE, f"{where}.size")
    limits.check(obj.mass, limits.MASS, f"{where}.mass")
    limits.check(obj.friction, limits.FRICTION, f"{where}.friction")
    limits.check(obj.restitution, limits.RESTITUTION, f"{where}.restitution")
    limits.check(obj.confidence, limits.UNIT_INTERVAL, f"{where}.confidence")
    if obj.source_track is not None:
        limits.check(obj.source_track, limits.INDEX, f"{where}.source_track")


def _check_sky(sky: Sky, scene_dir: Path) -> None:
    limits.check_all(sky.zenith_color, limits.UNIT_INTERVAL, "sky.zenith_color")
    limits.check_all(sky.horizon_color, limits.UNIT_INTERVAL, "sky.horizon_color")
    limits.check(sky.intensity, limits.LIGHT_INTENSITY, "sky.intensity")
    limits.check(sky.sun_intensity, limits.LIGHT_INTENSITY, "sky.sun_intensity")
    limits.check_all(sky.sun_direction, limits.Limit(-1.0, 1.0), "sky.sun_direction")
    if math.hypot(*sky.sun_direction) < 1e-3:
        raise InputError(f"sky.sun_direction: {list(sky.sun_direction)} has no direction (length ~0)")
    if sky.hdri is not None:
        resolve_inside(scene_dir, sky.hdri, "sky.hdri")


def _check_ground(region: GroundRegion, scene_dir: Path, where: str) -> None:
    _check_polygon(region.polygon, f"{where}.polygon")
    if region.vertex_elevation is not None and len(region.vertex_elevation) != len(region.polygon):
        raise InputError(
            f"{where}.vertex_elevation: expected {len(region.polygon)} numbers (one per polygon point), "
            f"got {len(region.vertex_elevation)}"
        )
    if region.vertex_elevation is None:
        limits.check(region.elevation, limits.ELEVATION, f"{where}.elevation")
    else:
        for j, h in enumerate(region.vertex_elevation):
            limits.check(h, limits.ELEVATION, f"{where}.vertex_elevation[{j}]")
    _check_material(region.material, scene_dir, f"{where}.material")
    limits.check(region.friction, limits.FRICTION, f"{where}.friction")
    limits.check(region.restitution, limits.RESTITUTION, f"{where}.restitution")
    limits.check(region.inferred_share, limits.UNIT_INTERVAL, f"{where}.inferred_share")


def _check_agent(agent: Agent, where: str) -> None:
    if len(agent.trajectory) < 2:
        raise InputError(
            f"{where}.trajectory: a trajectory needs at least 2 points, got {len(agent.trajectory)}"
        )
    if len(agent.confidence) != len(agent.trajectory):
        raise InputError(
            f"{where}.confidence: expected {len(agent.trajectory)} numbers (one per trajectory point), "
            f"got {len(agent.confidence)}"
        )
    for j, (t, x, y) in enumerate(agent.trajectory):
        limits.check(t, limits.DURATION, f"{where}.trajectory[{j}].t")
        limits.check_all((x, y), limits.POSITION, f"{where}.trajectory[{j}]")
        if j and t <= agent.trajectory[j - 1][0]:
            raise InputError(
                f"{where}.trajectory[{j}].t: times must increase ({t:g} after {agent.trajectory[j - 1][0]:g})"
            )
    limits.check_all(agent.confidence, limits.UNIT_INTERVAL, f"{where}.confidence")
    limits.check(agent.speed_mean, limits.WALK_SPEED, f"{where}.speed_mean")
    limits.check(agent.speed_p90, limits.WALK_SPEED, f"{where}.speed_p90")
    limits.check(agent.height, limits.SIZE, f"{where}.height")
    limits.check(agent.radius, limits.SIZE, f"{where}.radius")
    if agent.source_track is not None:
        limits.check(agent.source_track, limits.INDEX, f"{where}.source_track")


def _check_flow(flow: FlowField) -> None:
    limits.check_all(flow.origin, limits.POSITION, "flow.origin")
    limits.check(flow.cell, limits.SIZE, "flow.cell")
    limits.check(flow.rows, limits.INDEX, "flow.rows")
    limits.check(flow.cols, limits.INDEX, "flow.cols")
    if flow.rows * flow.cols > 10**7:
        raise InputError(f"flow: {flow.rows} x {flow.cols} cells is over the 1e7 a street needs")
    for i, c in enumerate(flow.cells):
        where = f"flow.cells[{i}]"
        if not (0 <= c.row < flow.rows and 0 <= c.col < flow.cols):
            raise InputError(
                f"{where}: cell ({c.row}, {c.col}) is outside the {flow.rows} x {flow.cols} grid"
            )
        limits.check_all(
            c.velocity, limits.Limit(-limits.WALK_SPEED.hi, limits.WALK_SPEED.hi, "m/s"), f"{where}.velocity"
        )
        limits.check(c.speed, limits.WALK_SPEED, f"{where}.speed")
        limits.check(c.density, limits.CROWD_DENSITY, f"{where}.density")


def validate_scene(scene: Scene, scene_dir: Path) -> None:
    """Checks beyond types: versions, unique ids, geometry, physical ranges (``urbanverse.assets.limits``)
    and that every path exists inside ``scene_dir``. Raises ``InputError`` naming the JSON path of the
    first bad value."""
    if scene.schema_version != SCENE_SCHEMA_VERSION:
        version = limits.short_number(scene.schema_version)
        raise InputError(f"schema_version: this urbanverse reads {SCENE_SCHEMA_VERSION}, got {version}")
    for i, frame in enumerate(scene.source.frames_used):
        limits.check(frame, limits.INDEX, f"source.frames_used[{i}]")
    if scene.source.seed is not None:
        limits.check(scene.source.seed, limits.INDEX, "source.seed")
    seen: set[str] = set()
    for i, region in enumerate(scene.ground):
        where = f"ground[{i}]"
        _check_id(region.id, f"{where}.id", seen)
        _check_ground(region, scene_dir, where)
    for i, obj in enumerate(scene.objects):
        where = f"objects[{i}]"
        _check_id(obj.id, f"{where}.id", seen)
        _check_object(obj, scene_dir, where)
    for i, pose in enumerate(scene.camera_trajectory):
        where = f"camera_trajectory[{i}]"
        limits.check(pose.frame, limits.INDEX, f"{where}.frame")
        limits.check(pose.time_s, limits.DURATION, f"{where}.time_s")
        limits.check_all(pose.position, limits.POSITION, f"{where}.position")
        limits.check_all(pose.quat_wxyz, limits.Limit(-1.001, 1.001), f"{where}.quat_wxyz")
        norm = math.sqrt(sum(q * q for q in pose.quat_wxyz))
        if abs(norm - 1.0) > 1e-3:
            raise InputError(f"{where}.quat_wxyz: not a unit quaternion (norm {norm:.4g})")
    for i, poly in enumerate(scene.walkable_area):
        _check_polygon(poly, f"walkable_area[{i}]")
    for i, agent in enumerate(scene.agents):
        _check_id(agent.id, f"agents[{i}].id", seen)
        _check_agent(agent, f"agents[{i}]")
    if scene.flow is not None:
        _check_flow(scene.flow)
    for stage, seconds in scene.timings_s.items():
        limits.check(seconds, limits.DURATION, f"timings_s.{stage}")
    _check_sky(scene.sky, scene_dir)


def migrate_scene_json(text: bytes | str) -> bytes | str:
    """``scene.json`` text of an older schema, brought to :data:`SCENE_SCHEMA_VERSION`; other text as it is.

    Version 1 -> 2: ground regions gained ``inferred_share`` (default 0: every region of a version 1
    file is ground that was seen, generated or drawn). Version 2 -> 3: the scene gained ``agents``
    and ``flow`` (the people seen and how they walked; none in an older file).
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, a 5000-digit number, nested too deep
        return text  # the parser's own error names it
    if not isinstance(data, dict) or data.get("schema_version") not in (1, 2):
        return text
    data["schema_version"] = SCENE_SCHEMA_VERSION  # each step only adds fields with defaults
    return json.dumps(data)


def load_scene(scene_dir: Path) -> Scene:
    """Load ``scene_dir/scene.json`` (an older schema migrated on the way: :func:`migrate_scene_json`),
    validate types and contents; ``InputError`` on the first bad value."""
    scene_dir = Path(scene_dir)
    if not scene_dir.is_dir():
        raise InputError(f"{scene_dir}: not a scene folder (no such directory)")
    path = scene_dir / SCENE_FILE
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    scene = parse_record(Scene, migrate_scene_json(path.read_bytes()), str(path))
    try:
        validate_scene(scene, scene_dir)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    return scene


def save_scene(scene: Scene, scene_dir: Path) -> Path:
    """Validate and write ``scene_dir/scene.json`` atomically; returns its path."""
    validate_scene(scene, scene_dir)
    path = Path(scene_dir) / SCENE_FILE
    save_json(scene, path)
    return path


def _gen_error(folder: Path) -> str | None:
    """The first line of the message in ``folder``'s gen ``error.json`` ('' without one), or None
    when there is no such file."""
    path = folder / GEN_ERROR_FILE
    if not path.is_file():
        return None
    try:
        message = json.loads(path.read_text()).get("error")
    except (OSError, ValueError, AttributeError):
        return ""
    return str(message).strip().splitlines()[0] if message else ""


def find_scene_dirs(paths, where: str) -> tuple[str, ...]:
    """Scene folders from ``paths``: each is a scene folder (holds scene.json) or a folder of them;
    ``where`` names the option or variable in the error when a path holds neither. Sub-folders where
    ``urbanverse gen`` failed (an ``error.json``, no scene.json) are skipped with a warning each."""
    out: list[str] = []
    for p in map(Path, paths):
        if (p / SCENE_FILE).is_file():
            out.append(str(p))
        elif p.is_dir():
            error = _gen_error(p)
            if error is not None:
                raise InputError(f"{where}: {p} is a failed gen output ({GEN_ERROR_FILE}: {error or '?'})")
            subdirs = sorted(d for d in p.iterdir() if d.is_dir())
            found = [str(d) for d in subdirs if (d / SCENE_FILE).is_file()]
            for d in subdirs:
                error = None if (d / SCENE_FILE).is_file() else _gen_error(d)
                if error is not None:
                    log.warning("%s: skipping %s: gen failed there (%s)", where, d, error or GEN_ERROR_FILE)
            if not found:
                raise InputError(f"{where}: {p} holds no {SCENE_FILE} and no scene folders")
            out.extend(found)
        else:
            raise InputError(f"{where}: {p} is not a folder")
    return tuple(out)
