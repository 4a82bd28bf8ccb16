"""The Isaac Lab task without Isaac: what each scene copy costs, and how its LiDAR compares.

Cost, for each scene: files on disk (the scene layer, its assets' layers and textures), the geometry
one environment's copy instantiates (meshes, points and triangles, split into what is drawn and
what collides), its rigid bodies, and the LiDAR scan walls' triangles. "Geometry MB" is the
float32 points and int32 triangle indices alone: a lower bound of what the renderer and PhysX
hold per copy (normals, UVs, PhysX's cooked BVH come on top; PhysX may share cooked meshes
between identical copies).

LiDAR (``--lidar``): the batched environment steps random actions over the scenes; at the last
step, the RayCaster's beams (the task's beam pattern, at each robot's pose in its environment) are
cast on the scan-wall mesh the task loads (``scenes.cast_rays``, on the CPU) and compared beam by
beam with the batched LiDAR's ranges, for its table method (what policies train with) and its
sphere-tracing reference. Prints the error quantiles in metres. Nothing here ran in Isaac Sim.

    python tools/isaac_task_check.py scenes/example out/rl_scenes/residential_s0 --num-envs 64 [--lidar]
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


def lidar_errors(scene_dirs: list[Path], num_envs: int, method: str, steps: int = 10) -> np.ndarray:
    """|RayCaster-on-scan-walls range - batched LiDAR range| (m) of every beam, ``num_envs`` robots."""
    import torch

    from urbanverse.sim import terms
    from urbanverse.sim.env import NavVecEnv
    from urbanverse.sim.isaaclab.nav_state import NavState
    from urbanverse.sim.isaaclab.scenes import cast_rays, read_scan_walls
    from urbanverse.sim.isaaclab.spec import PointNavSpec
    from urbanverse.sim.sensors.lidar_cfg import LidarCfg

    spec = PointNavSpec(scene_dirs=tuple(scene_dirs), num_envs=num_envs, lidar=LidarCfg(method=method))
    env = NavVecEnv(spec.nav_env_cfg(seed=1))
    gen = torch.Generator().manual_seed(0)
    for _ in range(steps):
        env.step(torch.rand(num_envs, 2, generator=gen) * 2 - 1)
    with tempfile.TemporaryDirectory() as tmp:
        envs = spec.env_scenes(Path(tmp))
        state = NavState(env.world, envs.centres, torch.as_tensor(envs.origins, dtype=torch.float32))
        d = env.robot.data
        sensor = state.to_world(d.pos_w, d.height_w).double()
        angles = d.yaw_w.double()[:, None] + torch.tensor(spec.lidar.beam_angles(), dtype=torch.float64)
        dirs = torch.stack([angles.cos(), angles.sin(), torch.zeros_like(angles)], dim=-1)
        hits = cast_rays(
            read_scan_walls(envs.scan_walls),
            sensor[:, None].expand_as(dirs).reshape(-1, 3),
            dirs.reshape(-1, 3),
        )
    ranges = terms.ranges_from_hits(hits.view(num_envs, -1, 3), sensor).clamp(max=spec.lidar.max_range)
    return (ranges.float() - env.lidar.data.ranges).abs().numpy().ravel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenes", nargs="+", type=Path, help="Scene folders.")
    parser.add_argument("--num-envs", type=int, default=64, help="Environments of the run (scan walls).")
    parser.add_argument(
        "--lidar", action="store_true", help="Also compare the LiDARs (minutes: range tables)."
    )
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

    if args.lidar:
        for method in ("lut", "sphere"):
            err = lidar_errors(args.scenes, args.num_envs, method)
            q = np.quantile(err, [0.5, 0.95, 0.99])
            print(
                f"lidar {method:6s} vs RayCaster on the scan walls: median {q[0]:.3f} m, p95 {q[1]:.3f} m, "
                f"p99 {q[2]:.3f} m, max {err.max():.2f} m over {len(err)} beams"
            )


if __name__ == "__main__":
    main()
