"""Write scenes and assets as USD that Isaac Sim opens without edits (usd-core / pxr).

Stage layout (metres, Z-up, kilograms)::

    /World                       default prim
      PhysicsScene               UsdPhysics.Scene, gravity -Z 9.81 m/s^2
      Looks/<material>           UsdPreviewSurface materials of the ground
      Ground/<region>            Mesh (top + curb walls), static triangle-mesh collider
      Underlay                   invisible collider at z = 0 under the ground (unseen gaps)
      Objects/<object>           Xform, RigidBodyAPI; variant set "cousin": one variant per digital
                                 cousin referencing ./assets/<uid>/asset.usda (the placed one selected)
      Agents/<agent>             Xform animated along the person's trajectory (only with agents):
                                 time-sampled translate, rotateZ (walking heading) and visibility,
                                 kinematic RigidBodyAPI; child Body (Capsule collider) and Face (Cube)
      Lights/Sky, Lights/Sun     DomeLight and DistantLight

Each asset is written once to ``assets/<uid>/asset.usda`` (default prim ``/Asset``: visual
meshes, invisible convex collision parts, MassAPI, a physics material). Swapping a cousin is a
variant selection (``prim.GetVariantSet("cousin").SetVariantSelection(...)``, or Isaac Sim's
variant menu): each cousin brings its own meshes, colliders and mass, at the object's pose; the
scene's own mass (``scene.json``) is the placed asset's variant's. Files are written to a
temporary name and renamed.

A scene with agents (people seen walking) gets an animated stage: time code = seconds from the
video's start x :data:`TIME_CODES_PER_S`, the stage's start and end time codes cover every
trajectory, and each person walks, turns and appears and disappears on those time codes.
"""

from __future__ import annotations

import functools
import hashlib
import math
import shutil
import sys
from pathlib import Path
from typing import Literal

import numpy as np
import shapely
import trimesh
from pxr import Gf, Kind, Sdf, Usd, UsdGeom, UsdLux, UsdPhysics, UsdShade, Vt

from urbanverse.assets.record import ASSET_FILE, Asset, load_asset, load_collision_parts, load_visual_parts
from urbanverse.assets.textures import srgb_to_linear
from urbanverse.paths import cache_dir
from urbanverse.records import atomic_path
from urbanverse.scene.agents import agent_colour, agent_headings
from urbanverse.scene.ground import ground_mesh, planar_uv, top_height_at
from urbanverse.scene.record import Agent, GroundRegion, Material, Scene, resolve_inside

UsdFormat = Literal["usda", "usdc"]
ASSET_USD = "asset.usda"
#: The variant set on each object prim that switches between its digital cousins.
COUSIN_VARIANT_SET = "cousin"
GRAVITY = 9.81
UNDERLAY_MARGIN_M = 2.0
#: Time codes per second of a stage with agents: Isaac Sim's default stage rate, so one time code is
#: one step of its default 60 Hz physics.
TIME_CODES_PER_S = 60.0
#: How far (m) below the ground an agent waits, hidden, before its first point and after its last:
#: its collider then stands nowhere a robot drives (a hidden prim still collides in PhysX).
AGENT_PARKED_DEPTH_M = 10.0
#: Edge (m) of the small box at the front of an agent's head that shows which way it faces.
AGENT_FACE_M = 0.12


def safe_name(text: str) -> str:
    """A valid USD prim name from any id (``lamp-post.1`` -> ``lamp_post_1``)."""
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in text)
    name = name if name and not name[0].isdigit() else f"_{name}"
    if not Sdf.Path.IsValidIdentifier(name):  # Unicode letters USD's rules refuse (``¼``, ``²``, ``٣``)
        name = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    return name


def _new_stage(path: Path, default_prim: str, kind: str) -> tuple[Usd.Stage, Usd.Prim]:
    """A new stage saved at ``path`` (created on disk so relative references resolve while authoring)."""
    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    UsdGeom.SetStageMetersPerUnit(stage, 1.0)
    UsdPhysics.SetStageKilogramsPerUnit(stage, 1.0)
    root = UsdGeom.Xform.Define(stage, f"/{default_prim}").GetPrim()
    stage.SetDefaultPrim(root)
    Usd.ModelAPI(root).SetKind(kind)
    return stage, root


def _define_mesh(stage: Usd.Stage, path: str, mesh: trimesh.Trimesh) -> UsdGeom.Mesh:
    usd_mesh = UsdGeom.Mesh.Define(stage, path)
    vertices = np.asarray(mesh.vertices, dtype=np.float32)
    usd_mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(vertices))
    usd_mesh.CreateFaceVertexCountsAttr(Vt.IntArray([3] * len(mesh.faces)))
    usd_mesh.CreateFaceVertexIndicesAttr(
        Vt.IntArray.FromNumpy(np.asarray(mesh.faces, dtype=np.int32).ravel())
    )
    usd_mesh.CreateExtentAttr(Vt.Vec3fArray.FromNumpy(np.stack([vertices.min(0), vertices.max(0)])))
    usd_mesh.CreateSubdivisionSchemeAttr(UsdGeom.Tokens.none)
    return usd_mesh


def _preview_material(
    stage: Usd.Stage, path: str, rgb: tuple[float, float, float], roughness: float, texture: str | None = None
) -> UsdShade.Material:
    """A UsdPreviewSurface material; ``texture`` (asset path) is read through the ``st`` primvar."""
    material = UsdShade.Material.Define(stage, path)
    shader = UsdShade.Shader.Define(stage, f"{path}/Surface")
    shader.CreateIdAttr("UsdPreviewSurface")
    shader.CreateInput("roughness", Sdf.ValueTypeNames.Float).Set(float(roughness))
    shader.CreateInput("metallic", Sdf.ValueTypeNames.Float).Set(0.0)
    diffuse = shader.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f)
    if texture is None:
        diffuse.Set(Gf.Vec3f(*rgb))
    else:
        reader = UsdShade.Shader.Define(stage, f"{path}/StReader")
        reader.CreateIdAttr("UsdPrimvarReader_float2")
        reader.CreateInput("varname", Sdf.ValueTypeNames.String).Set("st")
        tex = UsdShade.Shader.Define(stage, f"{path}/Texture")
        tex.CreateIdAttr("UsdUVTexture")
        tex.CreateInput("file", Sdf.ValueTypeNames.Asset).Set(Sdf.AssetPath(texture))
        tex.CreateInput("wrapS", Sdf.ValueTypeNames.Token).Set("repeat")
        tex.CreateInput("wrapT", Sdf.ValueTypeNames.Token).Set("repeat")
        tex.CreateInput("fallback", Sdf.ValueTypeNames.Float4).Set(Gf.Vec4f(*rgb, 1.0))
        tex.CreateInput("st", Sdf.ValueTypeNames.Float2).ConnectToSource(
            reader.ConnectableAPI(), "result", UsdShade.AttributeType.Output, Sdf.ValueTypeNames.Float2
        )
        diffuse.ConnectToSource(
            tex.ConnectableAPI(), "rgb", UsdShade.AttributeType.Output, Sdf.ValueTypeNames.Float3
        )
    material.CreateSurfaceOutput().ConnectToSource(shader.ConnectableAPI(), "surface")
    return material


def _physics_material(stage: Usd.Stage, path: str, friction: float, restitution: float) -> UsdShade.Material:
    material = UsdShade.Material.Define(stage, path)
    api = UsdPhysics.MaterialAPI.Apply(material.GetPrim())
    api.CreateStaticFrictionAttr(float(friction))
    api.CreateDynamicFrictionAttr(float(friction))
    api.CreateRestitutionAttr(float(restitution))
    return material


def _bind(prim: Usd.Prim, material: UsdShade.Material, purpose: str = UsdShade.Tokens.allPurpose) -> None:
    UsdShade.MaterialBindingAPI.Apply(prim).Bind(material, UsdShade.Tokens.weakerThanDescendants, purpose)


def write_asset_usd(asset_dir: Path, asset: Asset | None = None) -> Path:
    """Write ``asset_dir/asset.usda`` from the asset folder; returns its path.

    An asset folder with the same files, written by the same code, gives the same file: it is kept in
    the cache (``$URBANVERSE_CACHE/asset_usd``, keyed by the files' bytes and the writer's source)
    and copied, not authored again: a generated scene writes one per cousin, often a hundred, and
    authoring costs tens of milliseconds each."""
    asset_dir = Path(asset_dir)
    asset = asset or load_asset(asset_dir)
    out = asset_dir / ASSET_USD
    key = _asset_key(asset_dir, asset)
    cached = None if key is None else cache_dir("asset_usd") / f"{key}.usda"
    if cached is not None and cached.is_file():
        with atomic_path(out) as tmp:
            shutil.copyfile(cached, tmp)
        return out
    with atomic_path(out) as tmp:
        _author_asset(tmp, asset_dir, asset)
    if cached is not None:
        with atomic_path(cached) as tmp:
            shutil.copyfile(out, tmp)
    return out


def _asset_key(asset_dir: Path, asset: Asset) -> str | None:
    """The cache key of an asset folder's USD: its record and mesh files and the writer's code; None
    when a file is missing (authoring then says which)."""
    digest = hashlib.sha256(_writer_digest())
    try:
        for name in (ASSET_FILE, asset.visual_mesh, asset.collision_parts):
            digest.update(name.encode() + b"\0" + (asset_dir / name).read_bytes())
    except OSError:
        return None
    return digest.hexdigest()[:32]


@functools.cache
def _writer_digest() -> bytes:
    """The code an asset's USD depends on: this module, the asset records' loaders, and usd-core."""
    from urbanverse.assets import record as asset_record

    digest = hashlib.sha256(str(Usd.GetVersion()).encode())
    for module in (sys.modules[__name__], asset_record):
        digest.update(Path(module.__file__).read_bytes())
    return digest.digest()


def _author_asset(path: Path, asset_dir: Path, asset: Asset) -> None:
    stage, root = _new_stage(path, "Asset", Kind.Tokens.component)
    root.SetCustomDataByKey("urbanverse:uid", asset.uid)
    root.SetCustomDataByKey("urbanverse:category", asset.category)
    mass_api = UsdPhysics.MassAPI.Apply(root)
    mass_api.CreateMassAttr(float(asset.mass))

    UsdGeom.Scope.Define(stage, "/Asset/Looks")
    UsdGeom.Xform.Define(stage, "/Asset/Visual")
    for i, part in enumerate(load_visual_parts(asset_dir, asset)):
        mesh = _define_mesh(stage, f"/Asset/Visual/{safe_name(part.name)}", part.mesh)
        mesh.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(Vt.Vec3fArray([Gf.Vec3f(*part.rgb)]))
        _bind(mesh.GetPrim(), _preview_material(stage, f"/Asset/Looks/Visual_{i:03d}", part.rgb, 0.6))

    physics_material = _physics_material(
        stage, "/Asset/PhysicsMaterial", asset.friction_coefficient, asset.bounciness
    )
    collision = UsdGeom.Xform.Define(stage, "/Asset/Collision")
    collision.CreatePurposeAttr(UsdGeom.Tokens.guide)
    for i, part in enumerate(load_collision_parts(asset_dir, asset)):
        mesh = _define_mesh(stage, f"/Asset/Collision/part_{i:03d}", part)
        prim = mesh.GetPrim()
        UsdPhysics.CollisionAPI.Apply(prim)
        UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(asset.collision_approximation)
        _bind(prim, physics_material, "physics")
    stage.Save()


def _ground(stage: Usd.Stage, region: GroundRegion, looks: dict[str, UsdShade.Material]) -> None:
    mesh = ground_mesh(region)
    usd_mesh = _define_mesh(stage, f"/World/Ground/{safe_name(region.id)}", mesh)
    prim = usd_mesh.GetPrim()
    prim.SetCustomDataByKey("urbanverse:ground_type", region.type)
    mat: Material = region.material
    usd_mesh.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(
        Vt.Vec3fArray([Gf.Vec3f(*mat.base_color)])
    )
    st = planar_uv(np.asarray(mesh.vertices), mat.texture_scale).astype(np.float32)
    UsdGeom.PrimvarsAPI(prim).CreatePrimvar(
        "st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex
    ).Set(Vt.Vec2fArray.FromNumpy(st))
    if mat.name not in looks:
        texture = f"./{mat.texture}" if mat.texture else None
        looks[mat.name] = _preview_material(
            stage, f"/World/Looks/{safe_name(mat.name)}", mat.base_color, mat.roughness, texture
        )
    _bind(prim, looks[mat.name])
    UsdPhysics.CollisionAPI.Apply(prim)
    UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(UsdPhysics.Tokens.none)
    physics = _physics_material(
        stage, f"/World/PhysicsMaterials/{safe_name(region.id)}", region.friction, region.restitution
    )
    _bind(prim, physics, "physics")


def _underlay(stage: Usd.Stage, scene: Scene, margin_m: float = UNDERLAY_MARGIN_M) -> None:
    """An invisible collision plane at z = 0 under the ground regions' extent plus ``margin_m``.

    A generated scene's ground has holes where no keyframe saw it (under a parked car, between
    regions); a simulator that imports the USD as its terrain (Isaac Lab) would let a robot fall
    through them. The road level (z = 0) under everything matches the physics check's ground plane.
    Purpose ``guide``: it collides but is not rendered. Friction and restitution: the largest region's.
    """
    xy = np.array([v for region in scene.ground for v in region.polygon], float)
    (x0, y0), (x1, y1) = xy.min(axis=0) - margin_m, xy.max(axis=0) + margin_m
    quad = trimesh.Trimesh(
        [[x0, y0, 0.0], [x1, y0, 0.0], [x1, y1, 0.0], [x0, y1, 0.0]], [[0, 1, 2], [0, 2, 3]], process=False
    )
    mesh = _define_mesh(stage, "/World/Underlay", quad)
    mesh.CreatePurposeAttr(UsdGeom.Tokens.guide)
    prim = mesh.GetPrim()
    UsdPhysics.CollisionAPI.Apply(prim)
    UsdPhysics.MeshCollisionAPI.Apply(prim).CreateApproximationAttr(UsdPhysics.Tokens.none)
    largest = max(scene.ground, key=lambda r: shapely.Polygon(r.polygon).area)
    _bind(prim, _physics_material(stage, "/World/PhysicsMaterials/Underlay", largest.friction,
                                  largest.restitution), "physics")  # fmt: skip


def _lights(stage: Usd.Stage, scene: Scene) -> None:
    sky = scene.sky
    dome = UsdLux.DomeLight.Define(stage, "/World/Lights/Sky")
    dome.CreateIntensityAttr(float(sky.intensity))
    dome.CreateColorAttr(Gf.Vec3f(*sky.horizon_color))
    if sky.hdri:
        dome.CreateTextureFileAttr(Sdf.AssetPath(f"./{sky.hdri}"))
        dome.CreateTextureFormatAttr(UsdLux.Tokens.latlong)
    sun = UsdLux.DistantLight.Define(stage, "/World/Lights/Sun")
    sun.CreateIntensityAttr(float(sky.sun_intensity))
    sun.CreateAngleAttr(0.53)
    # A DistantLight shines along its local -Z: rotate -Z onto the sun direction.
    rotation = Gf.Rotation(Gf.Vec3d(0, 0, -1), Gf.Vec3d(*sky.sun_direction).GetNormalized())
    UsdGeom.Xformable(sun).AddOrientOp().Set(Gf.Quatf(rotation.GetQuat()))


def _object(stage: Usd.Stage, scene_dir: Path, obj, written: set[str]) -> None:
    path = f"/World/Objects/{safe_name(obj.id)}"
    xform = UsdGeom.Xform.Define(stage, path)
    prim = xform.GetPrim()
    cousins = prim.GetVariantSets().AddVariantSet(COUSIN_VARIANT_SET)
    for ref in (obj.asset, *obj.cousins):
        if ref.path not in written:
            what = "asset" if ref is obj.asset else "cousin"
            write_asset_usd(resolve_inside(scene_dir, ref.path, f"object {obj.id} {what}"))
            written.add(ref.path)
        cousins.AddVariant(safe_name(ref.uid))
        cousins.SetVariantSelection(safe_name(ref.uid))
        with cousins.GetVariantEditContext():
            prim.GetReferences().AddReference(f"./{Path(ref.path).as_posix()}/{ASSET_USD}")
            if ref is obj.asset:  # the scene's mass is the placed asset's; a cousin keeps its own
                UsdPhysics.MassAPI.Apply(prim).CreateMassAttr(float(obj.mass))
    cousins.SetVariantSelection(safe_name(obj.asset.uid))
    xform.AddTranslateOp().Set(Gf.Vec3d(*obj.position))
    xform.AddRotateZOp().Set(math.degrees(obj.yaw))
    xform.AddScaleOp().Set(Gf.Vec3f(*obj.scale))
    prim.SetCustomDataByKey("urbanverse:category", obj.category)
    prim.SetCustomDataByKey("urbanverse:asset_uid", obj.asset.uid)
    prim.SetCustomDataByKey("urbanverse:cousins", Vt.StringArray([c.uid for c in obj.cousins]))
    prim.SetCustomDataByKey("urbanverse:confidence", float(obj.confidence))
    body = UsdPhysics.RigidBodyAPI.Apply(prim)
    body.CreateKinematicEnabledAttr(obj.body_type == "kinematic")
    # Per-object friction and restitution override the referenced asset's physics material.
    api = UsdPhysics.MaterialAPI(stage.OverridePrim(f"{path}/PhysicsMaterial"))
    api.CreateStaticFrictionAttr(float(obj.friction))
    api.CreateDynamicFrictionAttr(float(obj.friction))
    api.CreateRestitutionAttr(float(obj.restitution))


def _time_range(stage: Usd.Stage, agents: tuple[Agent, ...]) -> None:
    """Set the stage's rate and a start and end time code covering the video's start and every
    agent's trajectory."""
    first = min(a.trajectory[0][0] for a in agents)
    last = max(a.trajectory[-1][0] for a in agents)
    stage.SetTimeCodesPerSecond(TIME_CODES_PER_S)
    stage.SetFramesPerSecond(TIME_CODES_PER_S)
    stage.SetStartTimeCode(min(0.0, math.floor(first * TIME_CODES_PER_S)))
    stage.SetEndTimeCode(math.ceil(last * TIME_CODES_PER_S))


def _agent(stage: Usd.Stage, scene: Scene, agent: Agent, colour: tuple[int, int, int]) -> None:
    """One person: an Xform walking the trajectory on the ground top, facing its heading, visible from
    its first point to its last (whole time codes outside are hidden and parked underground), with a
    capsule body standing on the ground.

    Collider: the body is a kinematic rigid body with a capsule collider. Isaac Sim (omni.physx) reads
    a kinematic body's transform from USD on every physics step while the timeline plays, time-sampled
    xformOps included, and moves the body there as a kinematic target: it pushes dynamic bodies (a
    robot) out of its way and is never pushed back, as a pedestrian who does not yield."""
    traj = np.asarray(agent.trajectory, dtype=float)
    codes = traj[:, 0] * TIME_CODES_PER_S
    ground = top_height_at(scene.ground, traj[:, 1:3])
    hidden_before, hidden_after = math.ceil(codes[0]) - 1.0, math.floor(codes[-1]) + 1.0

    xform = UsdGeom.Xform.Define(stage, f"/World/Agents/{safe_name(agent.id)}")
    translate, rotate = xform.AddTranslateOp(), xform.AddRotateZOp()
    translate.Set(Gf.Vec3d(traj[0, 1], traj[0, 2], ground[0] - AGENT_PARKED_DEPTH_M), hidden_before)
    for code, (_, x, y), z in zip(codes, traj, ground, strict=True):
        translate.Set(Gf.Vec3d(x, y, z), float(code))
    translate.Set(Gf.Vec3d(traj[-1, 1], traj[-1, 2], ground[-1] - AGENT_PARKED_DEPTH_M), hidden_after)
    for code, heading in zip(codes, agent_headings(traj), strict=True):
        rotate.Set(math.degrees(heading), float(code))
    visibility = xform.CreateVisibilityAttr()
    visibility.Set(UsdGeom.Tokens.invisible, hidden_before)
    visibility.Set(UsdGeom.Tokens.inherited, float(codes[0]))
    visibility.Set(UsdGeom.Tokens.invisible, hidden_after)

    prim = xform.GetPrim()
    prim.SetCustomDataByKey("urbanverse:agent_id", agent.id)
    prim.SetCustomDataByKey("urbanverse:kind", agent.kind)
    prim.SetCustomDataByKey("urbanverse:speed_mean", float(agent.speed_mean))
    if agent.source_track is not None:
        prim.SetCustomDataByKey("urbanverse:source_track", int(agent.source_track))
    UsdPhysics.RigidBodyAPI.Apply(prim).CreateKinematicEnabledAttr(True)

    linear = Vt.Vec3fArray([Gf.Vec3f(*srgb_to_linear(np.asarray(colour) / 255.0).tolist())])
    height, radius = float(agent.height), float(agent.radius)
    body = UsdGeom.Capsule.Define(stage, f"{prim.GetPath()}/Body")
    body.CreateAxisAttr(UsdGeom.Tokens.z)
    body.CreateRadiusAttr(radius)
    body.CreateHeightAttr(max(height - 2 * radius, 0.0))  # the cylinder between the two half-spheres
    body.CreateExtentAttr(
        Vt.Vec3fArray([Gf.Vec3f(-radius, -radius, -height / 2), Gf.Vec3f(radius, radius, height / 2)])
    )
    body.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(linear)
    body.AddTranslateOp().Set(Gf.Vec3d(0.0, 0.0, height / 2))
    UsdPhysics.CollisionAPI.Apply(body.GetPrim())
    face = UsdGeom.Cube.Define(stage, f"{prim.GetPath()}/Face")
    face.CreateSizeAttr(AGENT_FACE_M)
    face.CreateExtentAttr(Vt.Vec3fArray([Gf.Vec3f(-AGENT_FACE_M / 2), Gf.Vec3f(AGENT_FACE_M / 2)]))
    face.CreateDisplayColorPrimvar(UsdGeom.Tokens.constant).Set(linear)
    face.AddTranslateOp().Set(Gf.Vec3d(radius, 0.0, height - radius))


def _agents(stage: Usd.Stage, scene: Scene) -> None:
    """The scene's people under ``/World/Agents``, each in its colour (:func:`agent_colour`)."""
    _time_range(stage, scene.agents)
    UsdGeom.Xform.Define(stage, "/World/Agents")
    for i, agent in enumerate(scene.agents):
        _agent(stage, scene, agent, agent_colour(i))


def _author_scene(path: Path, scene: Scene, scene_dir: Path) -> None:
    """Author the scene stage at ``path`` (asset USDs are written to their folders on the way)."""
    stage, world = _new_stage(path, "World", Kind.Tokens.assembly)
    world.SetCustomDataByKey("urbanverse:scene", scene.name)
    physics_scene = UsdPhysics.Scene.Define(stage, "/World/PhysicsScene")
    physics_scene.CreateGravityDirectionAttr(Gf.Vec3f(0, 0, -1))
    physics_scene.CreateGravityMagnitudeAttr(GRAVITY)
    UsdGeom.Scope.Define(stage, "/World/Looks")
    UsdGeom.Scope.Define(stage, "/World/PhysicsMaterials")
    UsdGeom.Xform.Define(stage, "/World/Ground")
    looks: dict[str, UsdShade.Material] = {}
    for region in scene.ground:
        _ground(stage, region, looks)
    if scene.ground:
        _underlay(stage, scene)
    UsdGeom.Xform.Define(stage, "/World/Objects")
    written: set[str] = set()
    for obj in scene.objects:
        _object(stage, scene_dir, obj, written)
    if scene.agents:
        _agents(stage, scene)
    _lights(stage, scene)
    stage.Save()


def write_usd(scene: Scene, scene_dir: Path, fmt: UsdFormat = "usda") -> Path:
    """Write ``scene_dir/scene.<fmt>`` (and each asset's ``asset.usda``) atomically; returns the path."""
    if fmt not in ("usda", "usdc"):
        raise ValueError(f"fmt must be 'usda' or 'usdc', got {fmt!r}")
    scene_dir = Path(scene_dir)
    out = scene_dir / f"scene.{fmt}"
    with atomic_path(out) as tmp:
        _author_scene(tmp, scene, scene_dir)
    return out
