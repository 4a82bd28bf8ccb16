"""Benchmark ``NavVecEnv``: env-steps per second and memory at 1, 64, 1024 and 4096 environments.

Scene: ``urbanverse.bench.tiled_street`` (the example street tiled 4 times, 160 m, plus 60 seeded
props: 104 objects, curbs, ramps), wheeled robot, 4 pedestrians per environment, random
actions. Sensors: (a) 64-beam LiDAR + goal, (b) 32 x 32 depth camera + goal (no LiDAR),
(c) 32 x 32 RGB camera + goal (rendered on the CPU; only at ``--rgb-sizes``, it is ~100x slower).
Each configuration runs in a fresh process so its peak RSS is its own; "KB/env" is the
marginal peak memory per environment ((peak(N) - peak(1)) / (N - 1), 0 when below noise), "peak MB" the whole
process (interpreter, torch, the scene's grids and LiDAR table included). "env-steps/s" is wall
clock; "per CPU-s" divides by the process's CPU time (all threads), which stays meaningful when
other jobs share the cores.
Run: ``python tools/bench_env.py [--threads 2] [--device cpu] [--seconds 2]``.
Last line: ``env_steps_per_s=X num_envs=1024 sensor=lidar64``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = (1, 64, 1024, 4096)


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _run(
    scene: str, sensor: str, num_envs: int, threads: tuple[int, int], device: str, seconds: float
) -> dict:
    from urbanverse.sim import kernels

    if kernels.numba is not None:
        kernels.numba.set_num_threads(threads[0])
    import torch

    torch.set_num_threads(threads[1])
    from urbanverse.sim import DepthCameraCfg, LidarCfg, NavEnvCfg, NavVecEnv, RgbCameraCfg

    lidar = LidarCfg(num_beams=64) if sensor == "lidar64" else None
    depth = DepthCameraCfg(height=32, width=32) if sensor == "depth32" else None
    rgb = RgbCameraCfg(height=32, width=32) if sensor == "rgb32" else None
    env = NavVecEnv(
        NavEnvCfg(scene_dirs=(scene,), num_envs=num_envs, lidar=lidar, depth=depth, rgb=rgb, device=device)
    )
    gen = torch.Generator(device=device).manual_seed(0)
    actions = [torch.rand(num_envs, env.num_actions, generator=gen, device=device) * 2 - 1 for _ in range(8)]
    for i in range(5):
        env.step(actions[i % 8])
    steps, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        env.step(actions[steps % 8])
        steps += 1
        if device != "cpu":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 5:
            break
    cpu = time.process_time() - cpu_start
    return {
        "steps_per_s": steps / elapsed,
        "steps_per_cpu_s": steps / cpu,
        "ms_per_step": 1e3 * elapsed / steps,
        "peak_mb": _peak_rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2, help="numba threads (fused CPU kernels)")
    parser.add_argument(
        "--torch-threads", type=int, default=1, help="torch threads (per-env tensors are small)"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed stepping per configuration")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rgb-sizes", type=int, nargs="*", default=[1, 16, 64], help="sizes for rgb32")
    args = parser.parse_args()
    from urbanverse.bench.tiled_street import make_tiled_street

    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        scene = str(
            make_tiled_street(REPO / "scenes" / "example", Path(tmp) / "street", tiles=4, extra_props=60)
        )
        with ctx.Pool(1) as pool:  # compile the world, goal fields and LiDAR table once (cached on disk)
            pool.apply(_run, (scene, "lidar64", 1, (args.threads, args.torch_threads), args.device, 0.1))
        results: dict[tuple[str, int], dict] = {}
        runs = [(sensor, n) for sensor in ("lidar64", "depth32") for n in args.sizes]
        for sensor, n in runs + [("rgb32", n) for n in args.rgb_sizes]:
            with ctx.Pool(1) as pool:
                results[sensor, n] = pool.apply(
                    _run, (scene, sensor, n, (args.threads, args.torch_threads), args.device, args.seconds)
                )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; device={args.device}, numba threads={args.threads}, "
        f"torch threads={args.torch_threads}"
    )
    print(
        f"{'sensor':<8} {'num_envs':>8} {'env-steps/s':>12} {'per CPU-s':>12} {'ms/step':>9} "
        f"{'peak MB':>8} {'KB/env':>8}"
    )
    for (sensor, n), r in results.items():
        base = results.get((sensor, 1), r)["peak_mb"]
        per_env = max(0.0, 1024 * (r["peak_mb"] - base) / (n - 1)) if n > 1 else float("nan")
        print(
            f"{sensor:<8} {n:>8} {n * r['steps_per_s']:>12,.0f} {n * r['steps_per_cpu_s']:>12,.0f} "
            f"{r['ms_per_step']:>9.2f} "
            f"{r['peak_mb']:>8.0f} {per_env:>8.1f}"
        )
    key = ("lidar64", 1024) if ("lidar64", 1024) in results else next(iter(results))
    print(f"env_steps_per_s={key[1] * results[key]['steps_per_s']:.0f} num_envs={key[1]} sensor={key[0]}")


if __name__ == "__main__":
    main()
