"""Throughput of batch ``gen``: videos per hour with 1 and 2 workers, local processes and Ray.

Renders ``--videos`` short tours (``render-tour`` over ``scenes/example``, different seeds) once,
then runs ``urbanverse gen`` on the folder of them with ``--jobs 1``, ``--jobs 2`` and ``--ray``
(a local Ray of ``--jobs`` CPUs), each into a fresh folder, side by side in one run. Also Ray's own
overhead: start-up (``ray.init`` and one no-op task) and per task (``--tasks`` no-op tasks through
``urbanverse.parallel.run_tasks``, against the same through local processes). Prints a table and,
last, ``videos_per_hour_1=.. videos_per_hour_2=.. videos_per_hour_ray=.. ray_start_s=.. ray_task_ms=..``.

    python tools/bench_gen_batch.py --videos 4 --seconds 10
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def noop(x: int) -> int:
    return x


def render_inputs(folder: Path, count: int, seconds: float) -> None:
    from urbanverse.render.tour import TourCfg, run_render_tour

    scene = folder / "scene"
    shutil.copytree(REPO / "scenes" / "example", scene)
    for i in range(count):
        cfg = TourCfg(seconds=seconds, fps=10.0, width=640, height=360, seed=10 + i)
        run_render_tour(scene, folder / "videos" / f"tour_{i}.mp4", cfg)
        (folder / "videos" / f"tour_{i}_gt.json").unlink(missing_ok=True)


def timed_gen(videos: Path, out: Path, args: list[str]) -> float:
    start = time.perf_counter()
    cmd = [sys.executable, "-m", "urbanverse.cli", "gen", str(videos), "-o", str(out), *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"gen {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def ray_overhead(tasks: int, jobs: int) -> tuple[float, float, float]:
    """(start-up s, ms per no-op task on Ray, ms per no-op task on local processes)."""
    import ray

    from urbanverse.parallel import ExecutorCfg, run_tasks

    items = {str(i): i for i in range(tasks)}
    start = time.perf_counter()
    ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    list(run_tasks(noop, {"0": 0}, ExecutorCfg(ray=True)))
    startup = time.perf_counter() - start
    start = time.perf_counter()
    list(run_tasks(noop, items, ExecutorCfg(ray=True)))
    per_ray = (time.perf_counter() - start) / tasks * 1000
    ray.shutdown()
    start = time.perf_counter()
    list(run_tasks(noop, items, ExecutorCfg(jobs=jobs)))
    per_local = (time.perf_counter() - start) / tasks * 1000
    return startup, per_ray, per_local


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=4, help="Inputs of the batch.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of each rendered tour (s).")
    parser.add_argument("--jobs", type=int, default=2, help="Workers of the parallel runs.")
    parser.add_argument("--tasks", type=int, default=50, help="No-op tasks for the per-task overhead.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        render_inputs(root, args.videos, args.seconds)
        # the library's assets and cached meshes are warmed by one gen before the timed runs
        timed_gen(root / "videos" / "tour_0.mp4", root / "warm", [])
        runs = {
            "1 process": timed_gen(root / "videos", root / "j1", ["--jobs", "1"]),
            f"{args.jobs} processes": timed_gen(root / "videos", root / "jn", ["--jobs", str(args.jobs)]),
            f"Ray, {args.jobs} CPUs": timed_gen(
                root / "videos", root / "ray", ["--ray", "--jobs", str(args.jobs)]
            ),
        }
    startup, per_ray, per_local = ray_overhead(args.tasks, args.jobs)
    print(f"{args.videos} videos of {args.seconds:g} s, 640x360, 10 fps")
    print(f"{'executor':16s} {'wall s':>8s} {'videos/h':>9s} {'speed-up':>9s}")
    base = runs["1 process"]
    for name, wall in runs.items():
        print(f"{name:16s} {wall:8.1f} {3600 * args.videos / wall:9.1f} {base / wall:9.2f}")
    print(f"Ray start-up {startup:.2f} s; per task {per_ray:.1f} ms (local processes {per_local:.1f} ms)")
    values = list(runs.values())
    print(
        f"videos_per_hour_1={3600 * args.videos / values[0]:.1f} "
        f"videos_per_hour_{args.jobs}={3600 * args.videos / values[1]:.1f} "
        f"videos_per_hour_ray={3600 * args.videos / values[2]:.1f} "
        f"ray_start_s={startup:.2f} ray_task_ms={per_ray:.1f}"
    )


if __name__ == "__main__":
    main()
