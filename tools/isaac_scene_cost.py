"""What one environment's scene copy costs the Isaac Lab task, from the USD it spawns.

For each scene: files on disk (the scene layer, its assets' layers and textures), the geometry
one environment's copy instantiates (meshes, points and triangles, split into what is drawn and
what collides), its rigid bodies, and the LiDAR scan walls' triangles. "Geometry MB" is the
float32 points and int32 triangle indices alone: a lower bound of what the renderer and PhysX
hold per copy (normals, UVs, PhysX's cooked BVH come on top; PhysX may share cooked meshes
between identical copies). Nothing here ran in Isaac Sim.

    python tools/isaac_scene_cost.py scenes/example out/rl_scenes/residential_s0 --num-envs 64
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np


def usd_files(scene_dir: Path) -> int:
    """Bytes of the scene's USD layers, asset layers and textures."""
    names = ("scene.usda", "scene.usdc")
    total = sum((scene_dir / n).stat().st_size for n in names if (scene_dir / n).is_file())
    for sub in ("assets", "textures"):
        if (scene_dir / sub).is_dir():
            total += sum(p.stat().st_size for p in (scene_dir / sub).rglob("*") if p.is_file())
    return total


def geometry(env_layer: Path) -> dict[str, float]:
    """Meshes, points, triangles and rigid bodies of the composed environment layer."""
    from pxr import Usd, UsdGeom, UsdPhysics

    stage = Usd.Stage.Open(str(env_layer))
    out = {"meshes": 0, "drawn_tris": 0, "collider_tris": 0, "points": 0, "bodies": 0, "bytes": 0}
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            out["bodies"] += 1
        if not prim.IsA(UsdGeom.Mesh):
            continue
        mesh = UsdGeom.Mesh(prim)
        counts = np.asarray(mesh.GetFaceVertexCountsAttr().Get() or [], dtype=np.int64)
        points = len(mesh.GetPointsAttr().Get() or [])
        tris = int((counts - 2).clip(min=0).sum())
        out["meshes"] += 1
        out["points"] += points
        out["bytes"] += 12 * points + 12 * tris
        if prim.HasAPI(UsdPhysics.CollisionAPI):
            out["collider_tris"] += tris
        if UsdGeom.Imageable(prim).ComputeVisibility() != UsdGeom.Tokens.invisible:
            out["drawn_tris"] += tris
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", nargs="+", type=Path, help="Scene folders.")
    parser.add_argument("--num-envs", type=int, default=64, help="Environments of the run (scan walls).")
    args = parser.parse_args()

    from urbanverse.sim.isaaclab.spec import PointNavSpec

    print(
        f"{'scene':28s} {'files MB':>9s} {'meshes':>7s} {'drawn tris':>11s} {'collider tris':>14s} "
        f"{'bodies':>7s} {'geometry MB':>12s} {'scan tris':>10s}"
    )
    for scene_dir in args.scenes:
        spec = PointNavSpec(scene_dirs=(scene_dir,), num_envs=args.num_envs)
        with tempfile.TemporaryDirectory() as tmp:
            envs = spec.env_scenes(Path(tmp))
            g = geometry(envs.env_layers[0])
            from pxr import Usd, UsdGeom

            stage = Usd.Stage.Open(str(envs.scan_walls))
            walls = UsdGeom.Mesh(stage.GetDefaultPrim())
            scan_tris = len(walls.GetFaceVertexCountsAttr().Get()) // args.num_envs
        print(
            f"{scene_dir.name[:28]:28s} {usd_files(scene_dir) / 1e6:9.2f} {g['meshes']:7d} "
            f"{g['drawn_tris']:11d} {g['collider_tris']:14d} {g['bodies']:7d} "
            f"{g['bytes'] / 1e6:12.2f} {scan_tris:10d}"
        )


if __name__ == "__main__":
    main()
