"""Throughput of batch ``gen``: videos per hour with 1 and 2 workers, local processes and Ray.

Renders ``--videos`` short tours (``render-tour`` over ``scenes/example``, different seeds) once,
then runs ``urbanverse gen`` on the folder of them with ``--jobs 1``, ``--jobs 2`` and ``--ray``
(a local Ray of ``--jobs`` CPUs), each into a fresh folder, side by side in one run. Prints a table
and, last, ``videos_per_hour_1=.. videos_per_hour_2=.. videos_per_hour_ray=..`` (Ray's own
overheads: ``tools/bench_eval_sweep.py``).

``--profile VIDEO`` instead runs one gen of VIDEO from scratch, measures its wall and CPU time, peak
memory, stage seconds and output size, and projects the hours ``--hours`` of such video (cut into
clips as long as VIDEO) take on ``--nodes`` nodes of ``--node-vcpus`` and ``--node-gib``.

    python tools/bench_gen_batch.py --videos 4 --seconds 10
    URBANVERSE_LIBRARY=LIB100K python tools/bench_gen_batch.py --profile tour_720p_30s.mp4
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import av

from urbanverse.gen.batch import GEN_MEMORY_GB

REPO = Path(__file__).resolve().parents[1]


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


def profile(video: Path) -> dict:
    """One gen of ``video`` from scratch in a child process: wall s, CPU s (user + system), peak RSS
    (GB), the report's seconds per stage, the scene folder's MB (with and without ``work/``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scene"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = timed_gen(video, out, ["--no-resume"])
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        sizes = {p: p.stat().st_size for p in out.rglob("*") if p.is_file()}
        report = json.loads((out / "report.json").read_text())
        work = sum(size for p, size in sizes.items() if (out / "work") in p.parents)
    with av.open(str(video)) as container:
        stream = container.streams.video[0]
        duration = float(stream.duration * stream.time_base) if stream.duration else container.duration / 1e6
        height = stream.height
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "peak_gb": after.ru_maxrss / 2**20,  # KiB on Linux
        "stages": {k: v for k, v in report["seconds"].items() if k != "total"},
        "scene_mb": sum(sizes.values()) / 1e6,
        "work_mb": work / 1e6,
        "video_s": duration,
        "height": height,
    }


def print_projection(p: dict, hours: float, vcpus: int, node_gib: float, nodes: list[int]) -> None:
    """The hours ``nodes`` nodes of ``vcpus`` vCPUs and ``node_gib`` GiB take for ``hours`` of video cut
    into clips as long as the profiled one, at 80 % CPU use."""
    clips = hours * 3600 / p["video_s"]
    cores = p["cpu_s"] / p["wall_s"]
    concurrent = int(min(vcpus / cores, node_gib // GEN_MEMORY_GB))
    rate = min(0.8 * vcpus, concurrent * cores)  # CPU-s per s of one node
    stages = ", ".join(f"{k} {v:.1f}" for k, v in sorted(p["stages"].items(), key=lambda kv: -kv[1])[:5])
    print(
        f"one clip: {p['video_s']:.0f} s of {p['height']}p, gen {p['wall_s']:.1f} s wall, "
        f"{p['cpu_s']:.0f} CPU-s "
        f"({cores:.2f} cores), peak {p['peak_gb']:.2f} GB; scene {p['scene_mb']:.0f} MB "
        f"({p['work_mb']:.0f} MB work/); slowest stages (s): {stages}"
    )
    print(
        f"{hours:g} h = {clips:,.0f} clips: {clips * p['cpu_s'] / 3600:,.0f} CPU-hours, "
        f"{clips * p['scene_mb'] / 1e3:,.0f} GB of scenes; "
        f"{concurrent} gens per {vcpus}-vCPU {node_gib:g}-GiB node"
    )
    for n in nodes:
        print(f"  {n:3d} node(s): {clips * p['cpu_s'] / (n * rate) / 3600:6.1f} h")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=4, help="Inputs of the batch.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Length of each rendered tour (s).")
    parser.add_argument("--jobs", type=int, default=2, help="Workers of the parallel runs.")
    parser.add_argument("--profile", type=Path, help="Instead: profile one gen of this video and project.")
    parser.add_argument("--hours", type=float, default=100.0, help="Hours of video to project for.")
    parser.add_argument("--node-vcpus", type=int, default=32, help="vCPUs of a node of the projection.")
    parser.add_argument(
        "--node-gib", type=float, default=64.0, help="Memory (GiB) of a node of the projection."
    )
    parser.add_argument(
        "--nodes", type=int, nargs="+", default=[1, 4, 10], help="Node counts to project for."
    )
    args = parser.parse_args()
    if args.profile is not None:
        print_projection(profile(args.profile), args.hours, args.node_vcpus, args.node_gib, args.nodes)
        return
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
    print(f"{args.videos} videos of {args.seconds:g} s, 640x360, 10 fps")
    print(f"{'executor':16s} {'wall s':>8s} {'videos/h':>9s} {'speed-up':>9s}")
    base = runs["1 process"]
    for name, wall in runs.items():
        print(f"{name:16s} {wall:8.1f} {3600 * args.videos / wall:9.1f} {base / wall:9.2f}")
    values = list(runs.values())
    print(
        f"videos_per_hour_1={3600 * args.videos / values[0]:.1f} "
        f"videos_per_hour_{args.jobs}={3600 * args.videos / values[1]:.1f} "
        f"videos_per_hour_ray={3600 * args.videos / values[2]:.1f}"
    )


if __name__ == "__main__":
    main()
