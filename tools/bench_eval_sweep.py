"""Evaluation sweep benchmark: one process against ``--jobs 2`` and ``--ray`` (2 CPUs), side by side.

Evaluates the shipped wheeled policy on procedural streets (``urbanverse procgen``, generated into a
temporary folder with a fresh cache, compiled by an untimed warm-up) in each mode, checks that the
three give identical results, and measures Ray's own costs: start-up (``ray.init`` and a first
trivial task) and per-task overhead (no-op tasks), with the local process pool's for comparison.
Wall seconds throughout; the figures depend on the machine (2 CPU cores for ``BENCHMARKS.md``).

    python tools/bench_eval_sweep.py [--streets 4] [--episodes 600] [--work DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POLICY = REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt"
#: CPUs of the local process pool and of the local Ray.
CPUS = 2
#: No-op tasks that measure the per-task overhead.
NOOP_TASKS = 50


def make_streets(work: Path, count: int) -> list[str]:
    """``count`` procedural streets (seeds 100, 101, ...) under ``work``, made by ``urbanverse procgen``
    (``CPUS`` at a time)."""
    folders = [work / f"street_s{seed}" for seed in range(100, 100 + count)]
    todo = [f for f in folders if not (f / "scene.json").is_file()]
    for i in range(0, len(todo), CPUS):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "urbanverse.cli",
                    "procgen",
                    "-o",
                    str(f),
                    "--seed",
                    f.name[8:],
                    "--no-usd",
                ],
                stdout=subprocess.DEVNULL,
            )
            for f in todo[i : i + CPUS]
        ]
        if any(p.wait() for p in procs):
            raise SystemExit("urbanverse procgen failed")
    return [str(f) for f in folders]


def timed_sweeps(scenes: list[str], episodes: int, work: Path) -> dict[str, tuple[float, dict]]:
    """Wall seconds and results of one evaluation per mode (Ray started and stopped inside its own)."""
    from urbanverse.rl.jobs import EvalCfg, eval_executor, run_evaluation

    modes = {
        "1 process": None,
        f"--jobs {CPUS}": eval_executor(jobs=CPUS),
        f"--ray ({CPUS} CPUs)": eval_executor(jobs=CPUS, ray=True),
    }
    rows = {}
    for name, executor in modes.items():
        cfg = EvalCfg(
            checkpoint=POLICY, scenes=tuple(scenes), episodes=episodes, animate=0, out=work / "eval" / name
        )
        start = time.perf_counter()
        results = run_evaluation(cfg, executor).results
        rows[name] = (time.perf_counter() - start, results)
    return rows


def import_eval_stack(_: int) -> int:
    """A task that loads what an evaluation unit needs (torch, the simulator, the policy code)."""
    import urbanverse.rl.evaluate  # noqa: F401

    return 0


def task_overheads() -> dict[str, float]:
    """Start-up (s) and per-task overhead (ms) of the local process pool and of a local Ray."""
    import ray

    from urbanverse.parallel import ExecutorCfg, run_tasks

    def drain(cfg: ExecutorCfg, n: int) -> float:
        start = time.perf_counter()
        results = list(run_tasks(abs, {f"t{i}": -i for i in range(n)}, cfg))
        assert all(r.ok for r in results)
        return time.perf_counter() - start

    local = ExecutorCfg(jobs=CPUS)
    figures = {"pool start + 1 task (s)": drain(local, 1)}
    start = time.perf_counter()
    assert all(r.ok for r in run_tasks(import_eval_stack, {"a": 0, "b": 1}, local))
    figures["pool start + eval imports, 2 workers (s)"] = time.perf_counter() - start
    # the slope over tasks: both runs start CPUS workers, so the start-up cancels
    base = drain(local, CPUS)
    figures["pool per task (ms)"] = 1000 * (drain(local, NOOP_TASKS + CPUS) - base) / NOOP_TASKS
    start = time.perf_counter()
    ray.init(num_cpus=CPUS, include_dashboard=False, log_to_driver=False, _node_ip_address="127.0.0.1")
    on_ray = ExecutorCfg(jobs=CPUS, ray=True)
    drain(on_ray, 1)
    figures["ray.init + 1 task (s)"] = time.perf_counter() - start
    figures["ray per task (ms)"] = 1000 * drain(on_ray, NOOP_TASKS) / NOOP_TASKS
    start = time.perf_counter()
    ray.shutdown()
    figures["ray.shutdown (s)"] = time.perf_counter() - start
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streets", type=int, default=4, help="procedural streets to evaluate in")
    parser.add_argument("--episodes", type=int, default=600, help="episodes per street")
    parser.add_argument(
        "--work", type=Path, default=None, help="folder for streets and cache (default: temp)"
    )
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_eval_sweep_"))
    os.environ["URBANVERSE_CACHE"] = str(work / "cache")  # fresh world grids, goal fields, LiDAR tables
    scenes = make_streets(work, args.streets)

    from urbanverse.rl.evaluate import evaluate, load_policy

    evaluate(load_policy(POLICY), tuple(scenes), episodes=1)  # warm-up: compile and cache every street
    rows = timed_sweeps(scenes, args.episodes, work)
    overheads = task_overheads()
    base_s, base = rows["1 process"]
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; policy "
        f"{POLICY.relative_to(REPO)}; {len(scenes)} procedural streets x {args.episodes} episodes"
    )
    print("| mode | wall s | speed-up | results identical to 1 process |")
    print("|---|---:|---:|---|")
    for name, (secs, results) in rows.items():
        print(f"| {name} | {secs:.1f} | {base_s / secs:.2f}x | {'yes' if results == base else 'NO'} |")
    print(f"overall success {base['overall']['success_rate']:.3f}, SPL {base['overall']['spl']:.3f}")
    for name, value in overheads.items():
        print(f"{name}: {value:.3f}")


if __name__ == "__main__":
    main()
