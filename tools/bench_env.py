"""Benchmark ``NavVecEnv``: env-steps per second and memory at 1, 64, 1024 and 4096 environments.

Scene: ``urbanverse.bench.tiled_street`` (the example street tiled 4 times, 160 m, plus 60 seeded
props: 104 objects, curbs, ramps), wheeled robot, 4 pedestrians per environment, random
actions. Sensors: (a) 64-beam LiDAR + goal, (b) 32 x 32 depth camera + goal (no LiDAR),
(c) 32 x 32 RGB camera rendered by MuJoCo + goal (``mujoco32``, only at ``--rgb-sizes``: one
environment at a time); ``--sensor rgb``: the batched column RGB camera + goal at 64 x 64 and
135 x 240 (``rgb64``, ``rgb135x240``).
Each configuration runs in a fresh process so its peak RSS is its own; "KB/env" is the
marginal peak memory per environment ((peak(N) - peak(1)) / (N - 1), 0 when below noise), "peak MB" the whole
process (interpreter, torch, the scene's grids and LiDAR table included). "env-steps/s" is wall
clock; "per CPU-s" divides by the process's CPU time (all threads), which stays meaningful when
other jobs share the cores.

Pedestrians: ``--pedestrians random replay flow`` runs every configuration once per behaviour
(``PedestrianCfg.behaviour``) with ``--pedestrian-count`` people per environment. The tiled street
then carries ``SYNTHETIC_PEOPLE`` synthetic walkers along its sidewalks and their flow field
(``urbanverse.sim.crowd.add_synthetic_people``), so replay and flow have people to follow;
``--scenes DIR ...`` benchmarks scene folders of your own instead (with their recorded people).
"ped ms" is the time of ``Pedestrians.step`` alone per env step and "ped %" its share of the
whole step, both measured in the same timed loop.
Run: ``python tools/bench_env.py [--threads 2] [--device cpu] [--seconds 2]``;
pedestrians: ``python tools/bench_env.py --sizes 1024 --rgb-sizes --sensors lidar64
--pedestrians random replay flow --pedestrian-count 8``.
Last line: ``env_steps_per_s=X num_envs=1024 sensor=lidar64`` (``sensor=rgb64`` with ``--sensor rgb``;
the first pedestrian behaviour);
before it, one ``pedestrians=B ... pedestrian_share=S`` line per behaviour.
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
SENSORS = ("lidar64", "depth32")
#: ``--sensor rgb``: the batched column camera at 64 x 64 and at the paper's 135 x 240.
RGB_SENSORS = ("rgb64", "rgb135x240")
BEHAVIOURS = ("random", "replay", "flow")
#: Synthetic walkers added to the tiled street for replay and flow (about 30 per 40 m of street).
SYNTHETIC_PEOPLE = 120


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _run(
    scenes: tuple[str, ...],
    sensor: str,
    num_envs: int,
    threads: tuple[int, int],
    device: str,
    seconds: float,
    pedestrians: tuple[str, int] = ("random", 4),
) -> dict:
    from urbanverse.sim import kernels

    if kernels.numba is not None:
        kernels.numba.set_num_threads(threads[0])
    import torch

    torch.set_num_threads(threads[1])
    from urbanverse.sim import DepthCameraCfg, LidarCfg, NavEnvCfg, NavVecEnv, PedestrianCfg, RgbCameraCfg

    lidar = LidarCfg(num_beams=64) if sensor == "lidar64" else None
    depth = DepthCameraCfg(height=32, width=32) if sensor == "depth32" else None
    rgb = {
        "rgb64": RgbCameraCfg(height=64, width=64),
        "rgb135x240": RgbCameraCfg(height=135, width=240),
        "mujoco32": RgbCameraCfg(height=32, width=32, renderer="mujoco"),
    }.get(sensor)
    peds = PedestrianCfg(behaviour=pedestrians[0], count=pedestrians[1])
    env = NavVecEnv(
        NavEnvCfg(
            scene_dirs=scenes,
            num_envs=num_envs,
            lidar=lidar,
            depth=depth,
            rgb=rgb,
            pedestrians=peds,
            device=device,
        )
    )
    sync = torch.cuda.synchronize if device != "cpu" else (lambda: None)
    ped_time = [0.0]
    ped_step = env.peds.step

    def timed_ped_step(*args, **kwargs):  # the pedestrians' share, timed inside the same env steps
        sync()
        t0 = time.perf_counter()
        ped_step(*args, **kwargs)
        sync()
        ped_time[0] += time.perf_counter() - t0

    env.peds.step = timed_ped_step
    gen = torch.Generator(device=device).manual_seed(0)
    actions = [torch.rand(num_envs, env.num_actions, generator=gen, device=device) * 2 - 1 for _ in range(8)]
    for i in range(5):
        env.step(actions[i % 8])
    ped_time[0] = 0.0
    steps, start, cpu_start = 0, time.perf_counter(), time.process_time()
    while True:
        env.step(actions[steps % 8])
        steps += 1
        sync()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 5:
            break
    cpu = time.process_time() - cpu_start
    return {
        "steps_per_s": steps / elapsed,
        "steps_per_cpu_s": steps / cpu,
        "ms_per_step": 1e3 * elapsed / steps,
        "ped_ms_per_step": 1e3 * ped_time[0] / steps,
        "ped_share": ped_time[0] / elapsed,
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
    parser.add_argument("--sensors", nargs="+", choices=SENSORS + RGB_SENSORS, default=list(SENSORS))
    parser.add_argument(
        "--sensor",
        choices=["rgb"],
        help="rgb: benchmark the batched RGB camera (64 x 64 and 135 x 240, --sizes, default 64 and "
        "1024 environments) instead of --sensors, with the MuJoCo reference at --rgb-sizes",
    )
    parser.add_argument(
        "--rgb-sizes",
        type=int,
        nargs="*",
        default=[1, 16, 64],
        help="sizes for mujoco32: the MuJoCo renderer at 32 x 32, one environment at a time",
    )
    parser.add_argument(
        "--pedestrians",
        nargs="+",
        choices=BEHAVIOURS,
        default=["random"],
        help="pedestrian behaviours to run every configuration with (random: straight walks with "
        "random turns; replay: the scene's recorded people; flow: social-force crowd on its flow field)",
    )
    parser.add_argument("--pedestrian-count", type=int, default=4, help="pedestrians per environment")
    parser.add_argument(
        "--scenes",
        nargs="+",
        default=None,
        help="scene folders to benchmark instead of the tiled street with synthetic people",
    )
    args = parser.parse_args()
    if args.sensor == "rgb":
        args.sensors = list(RGB_SENSORS)
        if args.sizes == list(SIZES):
            args.sizes = [64, 1024]
    from urbanverse.bench.tiled_street import make_tiled_street

    ctx = mp.get_context("spawn")
    threads = (args.threads, args.torch_threads)
    with tempfile.TemporaryDirectory() as tmp:
        if args.scenes:
            scenes = tuple(args.scenes)
        else:
            street = make_tiled_street(
                REPO / "scenes" / "example", Path(tmp) / "street", tiles=4, extra_props=60
            )
            if set(args.pedestrians) - {"random"}:
                from urbanverse.sim.crowd import add_synthetic_people

                add_synthetic_people(street, SYNTHETIC_PEOPLE, seed=0)
            scenes = (str(street),)
        with ctx.Pool(1) as pool:  # compile the world, goal fields and LiDAR table once (cached on disk)
            pool.apply(_run, (scenes, "lidar64", 1, threads, args.device, 0.1))
        results: dict[tuple[str, str, int], dict] = {}
        runs = [(sensor, n) for sensor in args.sensors for n in args.sizes]
        runs += [("mujoco32", n) for n in args.rgb_sizes]
        for behaviour in args.pedestrians:
            for sensor, n in runs:
                with ctx.Pool(1) as pool:
                    results[behaviour, sensor, n] = pool.apply(
                        _run,
                        (
                            scenes,
                            sensor,
                            n,
                            threads,
                            args.device,
                            args.seconds,
                            (behaviour, args.pedestrian_count),
                        ),
                    )
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}; device={args.device}, numba threads={args.threads}, "
        f"torch threads={args.torch_threads}; {args.pedestrian_count} pedestrians per environment"
    )
    print(
        f"{'peds':<7} {'sensor':<8} {'num_envs':>8} {'env-steps/s':>12} {'per CPU-s':>12} {'ms/step':>9} "
        f"{'ped ms':>7} {'ped %':>6} {'peak MB':>8} {'KB/env':>8}"
    )
    for (behaviour, sensor, n), r in results.items():
        base = results.get((behaviour, sensor, 1), r)["peak_mb"]
        per_env = max(0.0, 1024 * (r["peak_mb"] - base) / (n - 1)) if n > 1 else float("nan")
        print(
            f"{behaviour:<7} {sensor:<8} {n:>8} {n * r['steps_per_s']:>12,.0f} "
            f"{n * r['steps_per_cpu_s']:>12,.0f} {r['ms_per_step']:>9.2f} "
            f"{r['ped_ms_per_step']:>7.3f} {100 * r['ped_share']:>6.1f} "
            f"{r['peak_mb']:>8.0f} {per_env:>8.1f}"
        )
    for behaviour in args.pedestrians:
        keys = [k for k in results if k[0] == behaviour]
        key = (behaviour, "lidar64", 1024) if (behaviour, "lidar64", 1024) in results else keys[0]
        r = results[key]
        print(
            f"pedestrians={behaviour} count={args.pedestrian_count} num_envs={key[2]} sensor={key[1]} "
            f"env_steps_per_s={key[2] * r['steps_per_s']:.0f} "
            f"pedestrian_ms_per_step={r['ped_ms_per_step']:.3f} pedestrian_share={r['ped_share']:.3f}"
        )
    first = args.pedestrians[0]
    headline = "rgb64" if args.sensor == "rgb" else "lidar64"
    key = (first, headline, 1024) if (first, headline, 1024) in results else next(iter(results))
    print(f"env_steps_per_s={key[2] * results[key]['steps_per_s']:.0f} num_envs={key[2]} sensor={key[1]}")


if __name__ == "__main__":
    main()
