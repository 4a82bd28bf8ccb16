"""The USD the Isaac Lab task spawns, per environment, written with usd-core (no Isaac imports).

Each environment gets its own copy of a scene (environment ``i`` holds scene ``i % M``), so an
object one robot pushes moves in that environment only. The copy is an *environment layer*,
``env_<m>.usda``, that references the scene's ``scene.usda`` under ``/Scene/Content``:

- translated so the centre of the scene's navigation grid sits at the environment's origin;
- with the scene's own ``PhysicsScene`` and ``Lights`` deactivated: the task's simulation context
  owns the one physics scene and the stage's lights, so M scenes never bring M of each.

The LiDAR of the task is Isaac Lab's ``RayCaster``, which casts against one static triangle mesh.
``scan_walls`` makes that mesh from the same cells the batched environment's LiDAR sees
(``sensors.lidar.scan_occupancy``: obstacles in the robot's height band and ground steps it
cannot climb), as vertical wall quads along their boundaries, so both LiDARs read the same
ranges up to the grid's resolution. ``write_scan_walls`` places one copy per environment at its
origin in a single invisible, non-colliding mesh (``/ScanWalls``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from urbanverse.records import atomic_path
from urbanverse.sim.world import CompiledWorld

#: The scan walls span this height range (m, scene frame): every beam height meets them.
SCAN_WALL_Z = (-5.0, 10.0)
#: Free space (m) between neighbouring environments' scene copies.
ENV_GAP_M = 5.0


def grid_env_origins(num_envs: int, spacing: float) -> np.ndarray:
    """Environment origins (N, 3) m as Isaac Lab lays them out without a terrain
    (``isaaclab.scene.InteractiveScene`` through ``GridCloner``): a grid of ``ceil(sqrt(N))``
    columns, rows running along -x and columns along +y, centred on the world origin."""
    num_rows = math.ceil(num_envs / int(math.sqrt(num_envs)))
    num_cols = math.ceil(num_envs / num_rows)
    i = np.arange(num_envs)
    row, col = i // num_cols, i % num_cols
    x = 0.5 * spacing * (num_rows - 1) - row * spacing
    y = col * spacing - 0.5 * spacing * (num_cols - 1)
    return np.column_stack([x, y, np.zeros(num_envs)]).astype(np.float64)


def grid_centre(world: CompiledWorld) -> np.ndarray:
    """Centre (2,) m, scene frame, of the world's navigation grid: the point placed at the origin."""
    h, w = world.shape
    return np.asarray(world.origin, dtype=np.float64) + 0.5 * world.resolution * np.array([w, h])


@contextlib.contextmanager
def _new_stage(path: Path) -> Iterator:
    """A Z-up, metre stage authored at a temporary path beside ``path``, saved and renamed onto it."""
    from pxr import Usd, UsdGeom

    with atomic_path(Path(path)) as tmp:
        stage = Usd.Stage.CreateNew(str(tmp))
        UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
        UsdGeom.SetStageMetersPerUnit(stage, 1.0)
        yield stage
        stage.GetRootLayer().Save()


def write_env_layer(scene_usd: Path, centre: np.ndarray, path: Path) -> Path:
    """Write the environment layer of one scene to ``path`` (see the module docstring); returns it."""
    from pxr import Gf, Sdf, UsdGeom

    with _new_stage(path) as stage:
        root = UsdGeom.Xform.Define(stage, "/Scene")
        stage.SetDefaultPrim(root.GetPrim())
        content = UsdGeom.Xform.Define(stage, "/Scene/Content")
        content.AddTranslateOp().Set(Gf.Vec3d(-float(centre[0]), -float(centre[1]), 0.0))
        content.GetPrim().GetReferences().AddReference(str(Path(scene_usd).resolve()))
        for name in ("PhysicsScene", "Lights"):
            stage.OverridePrim(Sdf.Path(f"/Scene/Content/{name}")).SetActive(False)
    return Path(path)


def scene_half_extent(env_layer: Path) -> float:
    """Largest |x| or |y| (m) of the scene's geometry in its environment layer's frame."""
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(env_layer))
    cache = UsdGeom.BBoxCache(Usd.TimeCode.Default(), [UsdGeom.Tokens.default_, UsdGeom.Tokens.render])
    box = cache.ComputeWorldBound(stage.GetDefaultPrim()).ComputeAlignedRange()
    lo, hi = np.array(box.GetMin()), np.array(box.GetMax())
    return float(np.abs(np.concatenate([lo[:2], hi[:2]])).max())


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs of True along the rows of ``mask`` (R, C): (row, first column, end column)."""
    padded = np.zeros((mask.shape[0], mask.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = mask
    step = np.diff(padded, axis=1)
    rows, first = np.nonzero(step == 1)
    _, end = np.nonzero(step == -1)  # row-major order pairs each run's start with its end
    return rows, first, end


def scan_walls(occupancy: np.ndarray, origin: Sequence[float], resolution: float) -> np.ndarray:
    """Wall segments (S, 2, 2) m, scene frame, along the boundary of the ``occupancy`` (H, W) cells
    of a grid with ``origin`` and ``resolution``; cells off the grid count as walls, as in
    ``WorldBatch``. Collinear cell edges are merged into one segment."""
    occ = np.pad(occupancy.astype(bool), 1, constant_values=True)
    ox, oy = float(origin[0]), float(origin[1])
    segments = []
    # edges between rows k and k + 1 of the padded grid lie at y = oy + k * res
    rows, first, end = _runs(occ[1:] != occ[:-1])
    y = oy + rows * resolution
    segments.append(
        np.stack(
            [
                np.stack([ox + (first - 1) * resolution, y], -1),
                np.stack([ox + (end - 1) * resolution, y], -1),
            ],
            axis=1,
        )
    )
    cols, first, end = _runs((occ[:, 1:] != occ[:, :-1]).T)
    x = ox + cols * resolution
    segments.append(
        np.stack(
            [
                np.stack([x, oy + (first - 1) * resolution], -1),
                np.stack([x, oy + (end - 1) * resolution], -1),
            ],
            axis=1,
        )
    )
    return np.concatenate(segments).astype(np.float64)


def wall_quads(segments: np.ndarray, z: tuple[float, float] = SCAN_WALL_Z) -> tuple[np.ndarray, np.ndarray]:
    """Vertical quads over ``segments`` (S, 2, 2) from ``z[0]`` to ``z[1]`` m: vertices (4S, 3) and
    triangles (2S, 3)."""
    s = len(segments)
    a, b = segments[:, 0], segments[:, 1]
    lo, hi = np.full((s, 1), z[0]), np.full((s, 1), z[1])
    verts = np.stack([np.hstack([a, lo]), np.hstack([b, lo]), np.hstack([b, hi]), np.hstack([a, hi])], 1)
    base = 4 * np.arange(s)[:, None]
    faces = np.concatenate([base + [0, 1, 2], base + [0, 2, 3]])
    return verts.reshape(-1, 3), faces


def write_scan_walls(
    walls: Sequence[np.ndarray], centres: np.ndarray, origins: np.ndarray, path: Path
) -> Path:
    """One mesh ``/ScanWalls`` (invisible, no collider) holding, for environment ``i`` at
    ``origins[i]`` (N, 3), the walls ``walls[i % M]`` (S, 2, 2) of its scene moved from the scene
    frame by ``-centres[i % M]`` (M, 2); returns ``path``."""
    from pxr import Gf, UsdGeom, Vt

    verts, faces, offset = [], [], 0
    for i, origin in enumerate(origins):
        m = i % len(walls)
        v, f = wall_quads(walls[m])
        v[:, :2] += np.asarray(origin[:2]) - centres[m]
        v[:, 2] += origin[2]
        verts.append(v)
        faces.append(f + offset)
        offset += len(v)
    points, tris = np.concatenate(verts), np.concatenate(faces)
    with _new_stage(path) as stage:
        mesh = UsdGeom.Mesh.Define(stage, "/ScanWalls")
        stage.SetDefaultPrim(mesh.GetPrim())
        mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(points.astype(np.float32)))
        mesh.CreateFaceVertexCountsAttr(Vt.IntArray.FromNumpy(np.full(len(tris), 3, dtype=np.int32)))
        mesh.CreateFaceVertexIndicesAttr(Vt.IntArray.FromNumpy(tris.astype(np.int32).ravel()))
        lo, hi = points.min(0), points.max(0)
        mesh.CreateExtentAttr([Gf.Vec3f(*map(float, lo)), Gf.Vec3f(*map(float, hi))])
        mesh.CreateVisibilityAttr(UsdGeom.Tokens.invisible)
    return Path(path)


#: The file in a prepared folder that lists what ``prepare_env_scenes`` wrote (written last).
MANIFEST = "env_scenes.json"


@dataclass(frozen=True)
class EnvScenes:
    """What the task spawns for N environments over M scenes."""

    env_layers: tuple[Path, ...]
    """Environment layer of each scene (M,), in scene order: environment ``i`` spawns ``i % M``."""
    centres: np.ndarray
    """Grid centre of each scene (M, 2) m, scene frame: placed at its environment's origin."""
    env_spacing: float
    """Distance (m) between neighbouring environment origins: the widest scene plus a gap."""
    origins: np.ndarray
    """Environment origins (N, 3) m (``grid_env_origins``)."""
    scan_walls: Path
    """The LiDAR's mesh (``write_scan_walls``)."""

    def save(self, path: Path) -> Path:
        """Write the manifest (JSON) to ``path``."""
        values = {
            "env_layers": [str(p) for p in self.env_layers],
            "centres": self.centres.tolist(),
            "env_spacing": self.env_spacing,
            "origins": self.origins.tolist(),
            "scan_walls": str(self.scan_walls),
        }
        with atomic_path(Path(path)) as tmp:
            tmp.write_text(json.dumps(values, indent=1))
        return Path(path)

    @classmethod
    def load(cls, path: Path) -> EnvScenes:
        """Read a manifest ``save`` wrote (no USD library needed)."""
        v = json.loads(Path(path).read_text())
        return cls(
            env_layers=tuple(Path(p) for p in v["env_layers"]),
            centres=np.asarray(v["centres"], dtype=np.float64),
            env_spacing=float(v["env_spacing"]),
            origins=np.asarray(v["origins"], dtype=np.float64),
            scan_walls=Path(v["scan_walls"]),
        )


def cache_key(scene_usds: Sequence[Path], num_envs: int, step_height: float | None, res: float) -> str:
    """Digest of what the environment layers and scan walls depend on (the USD files' contents)."""
    h = hashlib.sha256(json.dumps([num_envs, step_height, res, SCAN_WALL_Z, ENV_GAP_M]).encode())
    for usd in scene_usds:
        h.update(str(Path(usd).resolve()).encode())
        h.update(hashlib.sha256(Path(usd).read_bytes()).digest())
    return h.hexdigest()[:16]


def prepare_env_scenes(
    scene_usds: Sequence[Path],
    occupancies: Sequence[np.ndarray],
    worlds: Sequence[CompiledWorld],
    num_envs: int,
    out_dir: Path,
) -> EnvScenes:
    """Write the environment layers, the scan walls and then the manifest (``MANIFEST``) for
    ``num_envs`` environments over the scenes ``scene_usds`` (M,) with their compiled ``worlds`` and
    scan ``occupancies`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    centres = np.stack([grid_centre(w) for w in worlds])
    layers = tuple(
        write_env_layer(usd, centres[m], out_dir / f"env_{m}.usda") for m, usd in enumerate(scene_usds)
    )
    spacing = 2.0 * max(scene_half_extent(p) for p in layers) + ENV_GAP_M
    origins = grid_env_origins(num_envs, spacing)
    walls = [scan_walls(occ, w.origin, w.resolution) for occ, w in zip(occupancies, worlds, strict=True)]
    mesh = write_scan_walls(walls, centres, origins, out_dir / "scan_walls.usdc")
    prepared = EnvScenes(layers, centres, spacing, origins, mesh)
    prepared.save(out_dir / MANIFEST)
    return prepared


def compose_stage(env_scenes: EnvScenes, path: Path) -> Path:
    """Write the stage the task builds, for a look without Isaac (usdview, ``urbanverse usd``'s
    validators): ``/World/envs/env_<i>/Scene`` referencing environment ``i``'s layer at its origin,
    as Isaac Lab's ``MultiUsdFileCfg`` spawner and grid cloner place them, and ``/World/ScanWalls``."""
    from pxr import Gf, UsdGeom

    with _new_stage(path) as stage:
        stage.SetDefaultPrim(UsdGeom.Xform.Define(stage, "/World").GetPrim())
        UsdGeom.Scope.Define(stage, "/World/envs")
        for i, origin in enumerate(env_scenes.origins):
            env = UsdGeom.Xform.Define(stage, f"/World/envs/env_{i}")
            env.AddTranslateOp().Set(Gf.Vec3d(*map(float, origin)))
            scene = UsdGeom.Xform.Define(stage, f"/World/envs/env_{i}/Scene")
            layer = env_scenes.env_layers[i % len(env_scenes.env_layers)]
            scene.GetPrim().GetReferences().AddReference(str(Path(layer).resolve()))
        walls = UsdGeom.Xform.Define(stage, "/World/ScanWalls")
        walls.GetPrim().GetReferences().AddReference(str(Path(env_scenes.scan_walls).resolve()))
    return Path(path)


def read_scan_walls(path: Path) -> torch.Tensor:
    """Triangles (T, 3, 3) m, float64, of the scan-wall mesh at ``path``."""
    from pxr import Usd, UsdGeom

    stage = Usd.Stage.Open(str(path))
    mesh = UsdGeom.Mesh(stage.GetDefaultPrim())
    points = torch.tensor(np.array(mesh.GetPointsAttr().Get()), dtype=torch.float64)
    idx = torch.tensor(np.array(mesh.GetFaceVertexIndicesAttr().Get()), dtype=torch.long).view(-1, 3)
    return points[idx]


def cast_rays(
    triangles: torch.Tensor, origins: torch.Tensor, dirs: torch.Tensor, chunk: int = 4096
) -> torch.Tensor:
    """Nearest hit points (R, 3) of rays ``origins + t dirs`` (R, 3 each, t > 0) on ``triangles``
    (T, 3, 3), inf where a ray misses: what Isaac Lab's RayCaster reports on a static mesh, on the
    CPU (Moller-Trumbore, brute force over ``chunk`` triangles at a time), for checks without Isaac."""
    a, e1, e2 = triangles[:, 0], triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0]
    best = torch.full((origins.shape[0],), torch.inf, dtype=origins.dtype)
    for k in range(0, len(triangles), chunk):
        s1, s2, s0 = e1[k : k + chunk], e2[k : k + chunk], a[k : k + chunk]
        p = torch.cross(dirs[:, None], s2[None].expand(len(dirs), -1, -1), dim=-1)
        det = (p * s1[None]).sum(-1)
        inv = 1.0 / torch.where(det.abs() < 1e-12, torch.full_like(det, torch.nan), det)
        tvec = origins[:, None] - s0[None]
        u = (tvec * p).sum(-1) * inv
        q = torch.cross(tvec, s1[None].expand_as(tvec), dim=-1)
        v = (dirs[:, None] * q).sum(-1) * inv
        t = (s2[None] * q).sum(-1) * inv
        hit = (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0)
        best = torch.minimum(best, torch.where(hit, t, torch.inf).amin(dim=1))
    return origins + best[:, None] * dirs
