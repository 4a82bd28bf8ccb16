"""Ingest mesh files (GLB/GLTF/OBJ/PLY/STL/USD) and UrbanVerse-100K pairs into the asset store.

Each file is loaded, normalised (Z-up, metric scale, an annotated front turned to +X, base at z = 0,
centred in x and y), split into convex collision parts (:mod:`urbanverse.assets.convex_parts`: one hull per
connected component, clearly non-convex components cut into convex pieces by coacd, the 32 largest
parts kept), and annotated: values in an UrbanVerse-100K ``std_<uid>.json`` are kept and marked
``annotated``, everything else is measured or derived as for generated assets. Bad files are
rejected one by one with a one-line reason; the store is written in one transaction at the end, and
each asset folder appears whole or not at all.

Bounds, checked before or right after loading: a file of at most ``MAX_MESH_BYTES``; at most
``MAX_FACES`` triangles; a glTF/GLB reads its external buffers and images only from regular files
inside its own folder (no ``../``, absolute paths or devices), each at most ``MAX_MESH_BYTES``; a
USD mesh's face counts and indices must agree with its points.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import struct
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from urbanverse.assets.annotate import GRAVITY, annotate
from urbanverse.assets.convex_parts import DecompositionCfg, convex_parts, load_coacd
from urbanverse.assets.generators.base import Part
from urbanverse.assets.material_table import MATERIALS
from urbanverse.assets.record import (
    THUMBNAIL_FILE,
    Asset,
    AssetSource,
    ThumbnailRenderer,
    VisualPart,
    save_asset,
)
from urbanverse.assets.std_record import front_yaw_deg, load_annotation
from urbanverse.assets.store import AssetStore
from urbanverse.assets.taxonomy import TAXONOMY
from urbanverse.errors import InputError
from urbanverse.records import atomic_dir

MESH_SUFFIXES = {".glb", ".gltf", ".obj", ".ply", ".stl", ".usd", ".usda", ".usdc"}
#: Largest mesh file (and external glTF buffer) read, bytes: 512 MiB.
MAX_MESH_BYTES = 512 * 1024**2
#: Most triangles in one ingested file (a detailed street asset has well under a million).
MAX_FACES = 5_000_000
#: Longest reason kept for a rejected file (characters).
_MAX_REASON = 240
#: Sizes outside this range (largest extent, m) are rejected as absurdly scaled.
SCALE_LIMITS_M = (0.02, 150.0)
# UrbanVerse-100K fields copied as they are (marked "annotated") when present and well-typed.
_ANNOTATED_FLOATS = (
    "mass",
    "friction_coefficient",
    "bounciness",
    "youngs_modulus",
    "required_force",
    "recommended_clearance",
)
_ANNOTATED_BOOLS = ("movable", "walkable", "enterable", "receptacle", "support_surface")
_ANNOTATED_TEXT = ("description", "description_long", "synset", "license_info")
# Words in an annotation's material names -> our material-table keys.
_MATERIAL_WORDS = {
    "metal": "steel",
    "iron": "cast_iron",
    "aluminum": "aluminium",
    "timber": "wood",
    "polymer": "plastic",
    "cloth": "fabric",
    "textile": "fabric",
    "leaves": "foliage",
    "plant": "foliage",
    "rock": "stone",
    "clay": "ceramic",
}


class RejectedFile(ValueError):
    """A file that cannot become an asset; the message is the reason."""


@dataclass(frozen=True)
class Rejected:
    """A file that was not ingested, and why."""

    path: Path
    reason: str


@dataclass(frozen=True, kw_only=True)
class IngestCfg:
    """How files are read and their collision parts made."""

    up: str = "z"
    """The files' up axis when they do not say (glTF is always Y-up)."""
    scale: float = 1.0
    """Metres per file unit, when no annotation gives the height."""
    category: str | None = None
    """L3 class for files without an annotation."""
    material: str = "plastic"
    """Material-table key assumed for files without an annotation."""
    decomposition: DecompositionCfg = DecompositionCfg()
    """Convex decomposition of non-convex components (``convex_parts``)."""


def find_mesh_files(paths: list[Path]) -> list[Path]:
    """Files with a mesh suffix, folders searched recursively, in sorted order."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.suffix.lower() in MESH_SUFFIXES)
        else:
            out.append(path)
    return out


def _one_line(text: str) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``_MAX_REASON`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 3] + "..."


def _fan_triangles(counts: np.ndarray, indices: np.ndarray, n_points: int) -> np.ndarray:
    """Fan-triangulate polygons given by USD's ``faceVertexCounts`` / ``faceVertexIndices``; the
    ``(F, 3)`` triangles, or ``RejectedFile`` when the arrays disagree with each other or the points."""
    counts = counts.astype(np.int64).ravel()
    indices = indices.astype(np.int64).ravel()
    if counts.size and (counts.min() < 3 or counts.sum() != indices.size):
        raise RejectedFile(
            f"bad USD mesh: faceVertexCounts (sum {int(counts.sum())}, min {int(counts.min())}) do not "
            f"match {indices.size} faceVertexIndices"
        )
    if indices.size and (indices.min() < 0 or indices.max() >= n_points):
        raise RejectedFile(f"bad USD mesh: faceVertexIndices outside the {n_points} points")
    n_tri = int((counts - 2).sum()) if counts.size else 0
    if n_tri > MAX_FACES:
        raise RejectedFile(f"{n_tri} triangles, over the limit of {MAX_FACES}")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    poly = np.repeat(np.arange(counts.size), counts - 2)  # the polygon of each triangle
    k = np.arange(n_tri) - np.repeat(np.cumsum(counts - 2) - (counts - 2), counts - 2)  # 0.. within it
    first = starts[poly]
    return np.stack([indices[first], indices[first + k + 1], indices[first + k + 2]], axis=1)


#: Address space (bytes) a USD file may take to open, beyond 8 bytes per byte of the file: usd-core's
#: crate reader trusts the array sizes a .usdc declares, so one corrupt kilobyte asked for all of a
#: 24 GiB machine's memory (found by tests/fuzz/test_media_mesh.py).
USD_OPEN_BYTES = 4 * 1024**3
#: Seconds a USD file may take to open and read in the probe (see :func:`_probe_usd`).
USD_OPEN_TIMEOUT_S = 60.0
_USD_PROBE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from pxr import Usd, UsdGeom
stage = Usd.Stage.Open(sys.argv[1])
for prim in stage.Traverse() if stage else ():
    if prim.IsA(UsdGeom.Mesh):
        mesh = UsdGeom.Mesh(prim)
        mesh.GetPointsAttr().Get()
        mesh.GetFaceVertexCountsAttr().Get()
        mesh.GetFaceVertexIndicesAttr().Get()
"""


def _probe_usd(path: Path) -> None:
    """Open and read ``path`` with USD in a child process whose memory is capped (``USD_OPEN_BYTES``
    plus 8 x the file size) before this process does: ``RejectedFile`` when that runs out of memory or
    time. Other failures are left to :func:`_load_usd`, which names them. usd-core has no size limit
    of its own to set, hence the child."""
    limit = USD_OPEN_BYTES + 8 * path.stat().st_size
    try:
        child = subprocess.run(
            [sys.executable, "-c", _USD_PROBE, str(path), str(limit)],
            capture_output=True, text=True, timeout=USD_OPEN_TIMEOUT_S,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise RejectedFile(f"USD did not open it within {USD_OPEN_TIMEOUT_S:.0f} s") from None
    if child.returncode < 0 or "bad_alloc" in child.stderr or "MemoryError" in child.stderr:
        raise RejectedFile(
            f"USD could not open it within {limit / 1024**3:.1f} GiB of memory (a corrupt file declaring "
            "huge arrays)"
        )


def _load_usd(path: Path) -> trimesh.Trimesh:
    from pxr import Tf, Usd, UsdGeom

    _probe_usd(path)
    try:
        stage = Usd.Stage.Open(str(path))
    except Tf.ErrorException:
        stage = None
    if stage is None:
        raise RejectedFile("not a USD file that USD can open (corrupt or another format)")
    z_up = UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    scale = UsdGeom.GetStageMetersPerUnit(stage)
    if not (math.isfinite(scale) and scale > 0):
        raise RejectedFile(f"bad USD metersPerUnit {scale}")
    meshes = []
    cache = UsdGeom.XformCache()
    for prim in stage.Traverse():
        if not prim.IsA(UsdGeom.Mesh):
            continue
        mesh = UsdGeom.Mesh(prim)
        points, counts, indices = (
            mesh.GetPointsAttr().Get(),
            mesh.GetFaceVertexCountsAttr().Get(),
            mesh.GetFaceVertexIndicesAttr().Get(),
        )
        if points is None or counts is None or indices is None:
            continue  # a mesh prim without geometry
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        faces = _fan_triangles(np.asarray(counts), np.asarray(indices), len(points))
        matrix = np.asarray(cache.GetLocalToWorldTransform(prim)).T
        meshes.append(trimesh.Trimesh(points, faces, process=False).apply_transform(matrix))
    if not meshes:
        raise RejectedFile("no UsdGeom.Mesh prims with points and faces")
    merged = trimesh.util.concatenate(meshes).apply_scale(scale)
    if not z_up:
        merged.apply_transform(trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0)))
    return merged


def _gltf_tree(path: Path) -> dict:
    """The JSON of a ``.gltf`` file or of a ``.glb`` file's first chunk (``RejectedFile`` if unreadable)."""
    data = path.read_bytes()
    if path.suffix.lower() == ".glb":
        if len(data) < 20 or data[:4] != b"glTF":
            raise RejectedFile("not a GLB file (no glTF header)")
        length, kind = struct.unpack_from("<I4s", data, 12)
        if kind != b"JSON" or 20 + length > len(data):
            raise RejectedFile("damaged GLB file (its JSON chunk is missing or cut short)")
        data = data[20 : 20 + length]
    try:
        tree = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RejectedFile(f"not valid glTF JSON ({exc})") from None
    if not isinstance(tree, dict):
        raise RejectedFile("not valid glTF JSON (not an object)")
    return tree


def _check_gltf_references(path: Path) -> None:
    """``RejectedFile`` unless every external buffer or image of the glTF/GLB ``path`` is a regular file
    of at most ``MAX_MESH_BYTES`` inside the file's folder (embedded ``data:`` URIs are fine)."""
    tree = _gltf_tree(path)
    folder = path.parent.resolve()
    for key in ("buffers", "images"):
        items = tree.get(key, [])
        if not isinstance(items, list):
            raise RejectedFile(f"glTF '{key}' is not a list")
        for i, item in enumerate(items):
            uri = item.get("uri") if isinstance(item, dict) else None
            if uri is None or (isinstance(uri, str) and uri.startswith("data:")):
                continue
            if not isinstance(uri, str):
                raise RejectedFile(f"glTF {key}[{i}].uri is not a string")
            target = (folder / urllib.parse.unquote(uri)).resolve()
            if not target.is_relative_to(folder):
                raise RejectedFile(f"glTF {key}[{i}].uri {uri!r} points outside the file's folder")
            if not target.is_file():
                raise RejectedFile(f"glTF {key}[{i}].uri {uri!r}: no such file beside it")
            if target.stat().st_size > MAX_MESH_BYTES:
                raise RejectedFile(f"glTF {key}[{i}].uri {uri!r} is over {MAX_MESH_BYTES >> 20} MiB")


def load_normalised(
    path: Path, cfg: IngestCfg, height_m: float | None, yaw_deg: float = 0.0
) -> tuple[trimesh.Scene, trimesh.Trimesh]:
    """The file as a visual scene and one merged mesh, Z-up, metres, base at z = 0, centred in x, y;
    turned ``yaw_deg`` degrees about +Z (counter-clockwise seen from above) before it is measured."""
    suffix = path.suffix.lower()
    if suffix in (".usd", ".usda", ".usdc"):
        merged = _load_usd(path)
        scene = trimesh.Scene(merged)
        y_up = False
    else:
        if suffix in (".gltf", ".glb"):
            _check_gltf_references(path)
        scene = trimesh.load(path, force="scene")
        y_up = suffix in (".glb", ".gltf") or cfg.up == "y"
    if not scene.geometry:
        raise RejectedFile("no geometry")
    meshes = [g for g in scene.dump() if isinstance(g, trimesh.Trimesh) and len(g.faces)]
    if not meshes:
        raise RejectedFile("no triangles (a point cloud or an empty file)")
    n_faces = sum(len(m.faces) for m in meshes)
    if n_faces > MAX_FACES:
        raise RejectedFile(f"{n_faces} triangles, over the limit of {MAX_FACES}")
    merged = trimesh.util.concatenate(meshes)
    if y_up or yaw_deg:
        up = trimesh.transformations.rotation_matrix(math.pi / 2, (1, 0, 0)) if y_up else np.eye(4)
        turn = trimesh.transformations.rotation_matrix(math.radians(yaw_deg), (0, 0, 1)) @ up
        scene.apply_transform(turn)
        merged.apply_transform(turn)
    extent = merged.extents
    if not np.all(np.isfinite(extent)) or extent.max() <= 0:
        raise RejectedFile("degenerate geometry")
    scale = height_m / extent[2] if height_m and extent[2] > 0 else cfg.scale
    lo, hi = merged.bounds
    shift = -np.array([(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, lo[2]])
    transform = trimesh.transformations.scale_matrix(scale) @ trimesh.transformations.translation_matrix(
        shift
    )
    scene.apply_transform(transform)
    merged.apply_transform(transform)
    size = merged.extents.max()
    if not SCALE_LIMITS_M[0] <= size <= SCALE_LIMITS_M[1]:
        raise RejectedFile(
            f"absurd scale: largest extent {size:.3g} m, outside "
            f"{SCALE_LIMITS_M[0]:g}-{SCALE_LIMITS_M[1]:g} m (pass --scale for other units)"
        )
    return scene, merged


def _material_key(names: list[str], default: str) -> str:
    for name in names:
        key = str(name).lower().replace(" ", "_")
        if key in MATERIALS:
            return key
        for word, mapped in _MATERIAL_WORDS.items():
            if word in key:
                return mapped
    return default


def _category(annotation: dict, cfg: IngestCfg) -> tuple[str, str, str]:
    name = str(annotation.get("category") or cfg.category or "unknown").lower().replace(" ", "_")
    if name in TAXONOMY:
        cls = TAXONOMY[name]
        return cls.l1, cls.l2, cls.l3
    return "uncategorized", "uncategorized", name


def _overlay(asset: Asset, annotation: dict) -> Asset:
    """Copy well-typed UrbanVerse-100K values over derived ones, marking them ``annotated``."""
    changes, origin = {}, dict(asset.value_origin)
    for key in _ANNOTATED_FLOATS:
        value = annotation.get(key)
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and value >= 0
        ):
            changes[key], origin[key] = float(value), "annotated"
    for key in _ANNOTATED_BOOLS:
        if isinstance(annotation.get(key), bool):
            changes[key], origin[key] = annotation[key], "annotated"
    for key in _ANNOTATED_TEXT:
        if isinstance(annotation.get(key), str) and annotation[key]:
            changes[key] = annotation[key]
    if "mass" in changes and changes["mass"] <= 0:
        del changes["mass"]
    if "required_force" not in changes:  # keep the derived sliding force consistent with annotated values
        friction = changes.get("friction_coefficient", asset.friction_coefficient)
        changes["required_force"] = friction * changes.get("mass", asset.mass) * GRAVITY
    return dataclasses.replace(asset, **changes, value_origin=origin)


def ingest_file(path: Path, out_root: Path, cfg: IngestCfg, *, thumbnail: ThumbnailRenderer) -> Asset:
    """Ingest one file into ``out_root/<uid>/``; raises ``RejectedFile`` with the reason to reject it.

    An UrbanVerse-100K pair whose annotation gives the front (``frontView`` or ``pose_z_rot_angle``,
    see ``urbanverse.assets.std_record``) is turned about +Z so that the front lies along +X before it
    is measured; the turn is recorded in ``source.parameters`` (``front_yaw_deg``: degrees,
    counter-clockwise seen from above; ``front_from``: the annotation field it came from).

    ``thumbnail`` draws the folder's ``thumbnail.png`` from the visual mesh (see ``ThumbnailRenderer``)."""
    if not path.is_file():
        raise RejectedFile("file not found")
    if path.suffix.lower() not in MESH_SUFFIXES:
        raise RejectedFile(f"not a mesh file ({path.suffix or 'no suffix'})")
    size = path.stat().st_size
    if size == 0:
        raise RejectedFile("empty file (0 bytes)")
    if size > MAX_MESH_BYTES:
        raise RejectedFile(f"file of {size >> 20} MiB, over the limit of {MAX_MESH_BYTES >> 20} MiB")
    annotation: dict = {}
    sidecar = path.with_suffix(".json")
    if path.stem.startswith("std_") and sidecar.is_file():
        try:
            annotation = load_annotation(sidecar)
        except InputError as exc:
            raise RejectedFile(f"annotation {exc}") from None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    height = annotation.get("height")
    height = float(height) if isinstance(height, int | float) and 0 < height < math.inf else None
    front = front_yaw_deg(annotation)
    yaw_deg = front[0] if front else 0.0
    try:
        scene, merged = load_normalised(path, cfg, height, yaw_deg)
    except RejectedFile:
        raise
    except Exception as exc:  # loaders raise many types on corrupt input
        raise RejectedFile(f"cannot read mesh ({type(exc).__name__}: {_one_line(exc)})") from None
    material = _material_key(list(annotation.get("materials") or []), cfg.material)
    colour = (
        tuple(float(c) / 255 for c in merged.visual.main_color[:3])
        if hasattr(merged.visual, "main_color")
        else (0.6, 0.6, 0.6)
    )
    hulls = convex_parts(merged, cfg.decomposition)
    if not hulls:
        raise RejectedFile("no solid part to collide with (flat geometry)")
    parts = [Part(f"part_{i:03d}", hull, material, colour) for i, hull in enumerate(hulls)]
    uid = path.stem[4:] if annotation and path.stem.startswith("std_") else f"ing_{digest[:16]}"
    category_path = _category(annotation, cfg)
    synset = TAXONOMY[category_path[2]].synset if category_path[2] in TAXONOMY else ""
    turned = {"front_yaw_deg": yaw_deg, "front_from": front[1]} if front else None
    source = AssetSource(kind="ingested", file=path.name, sha256=digest, parameters=turned)
    asset = annotate(
        parts,
        uid=uid,
        category_path=category_path,
        synset=synset,
        style=f"ingested from {path.name}",
        source=source,
    )
    asset = _overlay(asset, annotation) if annotation else asset
    asset = dataclasses.replace(asset, thumbnail=THUMBNAIL_FILE)
    with atomic_dir(out_root / uid) as folder:  # whole or not at all
        (folder / asset.visual_mesh).write_bytes(scene.export(file_type="glb"))
        visual = [VisualPart("visual", merged, colour)]
        thumbnail(visual).save(folder / THUMBNAIL_FILE)
        save_asset(asset, folder, None, [p.mesh for p in parts])
    return asset


def ingest(
    paths: list[Path],
    store: AssetStore,
    cfg: IngestCfg | None = None,
    progress=None,
    *,
    thumbnail: ThumbnailRenderer,
) -> tuple[list[Asset], list[Rejected]]:
    """Ingest every mesh file under ``paths``; accepted assets enter ``store`` in one transaction.

    ``thumbnail`` draws each asset's thumbnail (see ``ThumbnailRenderer``)."""
    cfg = cfg or IngestCfg()
    load_coacd()  # a broken install stops the batch before the first file, not in the middle
    accepted, rejected = [], []
    for path in find_mesh_files([Path(p) for p in paths]):
        try:
            accepted.append(ingest_file(path, store.root / "ingested", cfg, thumbnail=thumbnail))
        except RejectedFile as exc:
            rejected.append(Rejected(path, _one_line(exc)))
        except (OSError, MemoryError, ValueError, ArithmeticError, IndexError, TypeError) as exc:
            # A file that broke a step after loading: the batch goes on without it.
            reason = f"internal error on this file ({type(exc).__name__}: {_one_line(exc)})"
            rejected.append(Rejected(path, reason))
        if progress:
            progress(1)
    if accepted:
        store.add(accepted)
    return accepted, rejected
