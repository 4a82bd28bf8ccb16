"""Benchmark data-parallel PPO: env-steps/s of ``urbanverse train`` on 1 rank and on N ranks, side by side.

Wheeled robot, 64-beam LiDAR, MLP policy, default PPO settings, ``--envs`` environments per rank
(so N ranks step N times as many), on ``--scenes`` (default ``scenes/example``). Each
configuration trains ``--iterations`` PPO iterations in a fresh run folder (in a temporary
folder); the figure is the env-steps (all ranks) over the wall-clock seconds of the iterations
after the first ``--warmup`` ones, read from ``progress.csv`` (environment construction, process
start and rendezvous excluded). A configuration is ``RANKSxTHREADS``: ranks, torch threads per
rank (0: the default, which for several ranks splits the cores, cores / ranks, for torch's and
numba's thread pools, and for one rank is torch's own). The default compares 1 rank with torch's
threads (``1x0``), 1 rank with one thread (``1x1``) and 2 ranks of one thread each on a 2-core
machine (``2x0``).

Run: ``python tools/bench_train_ranks.py [--configs 1x0 1x1 2x0] [--envs 64] [--iterations 12]``.
Prints one row per configuration, then a line ``ranks=R threads=T steps_per_s=S ...`` for each.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def bench(
    ranks: int, threads: int, envs: int, iterations: int, warmup: int, scenes: list[str], runs_dir: Path
) -> dict:
    """Train ``iterations`` iterations on ``ranks`` ranks of ``envs`` environments and ``threads``
    torch threads each (0: default); the timed figures."""
    import torch

    from urbanverse.rl.config import EnvSpec, TrainCfg
    from urbanverse.rl.jobs import train_policy
    from urbanverse.rl.logger import read_csv
    from urbanverse.threads import torch_threads

    steps_per_it = ranks * envs * 32
    cfg = TrainCfg(
        scenes=tuple(scenes),
        env=EnvSpec(robot="wheeled", sensor="lidar", num_envs=envs),
        total_steps=iterations * steps_per_it,
        num_steps_per_env=32,
        save_interval=10_000,  # one checkpoint, at the end
        torch_threads=threads,
    )
    with torch_threads(torch.get_num_threads()):  # a one-rank run sets this process's count
        summary = train_policy(cfg, runs_dir / f"{ranks}x{threads}", quiet=True, nproc=ranks)
    log = read_csv(summary.run_dir / "progress.csv")
    timed = range(warmup, len(log["iteration"]))
    seconds = log["wall_s"][-1] - log["wall_s"][warmup - 1] if warmup else log["wall_s"][-1]
    return {
        "ranks": ranks,
        "threads": threads
        or (torch.get_num_threads() if ranks == 1 else max(1, len(os.sched_getaffinity(0)) // ranks)),
        "envs_per_rank": envs,
        "iterations": len(timed),
        "steps_per_s": len(timed) * steps_per_it / seconds,
        "collect_s": sum(log["collect_s"][i] for i in timed) / len(timed),
        "update_s": sum(log["update_s"][i] for i in timed) / len(timed),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--configs", nargs="+", default=["1x0", "1x1", "2x0"], help="RANKSxTHREADS (threads 0: default)."
    )
    ap.add_argument("--envs", type=int, default=64, help="Environments per rank.")
    ap.add_argument("--iterations", type=int, default=12, help="PPO iterations per configuration.")
    ap.add_argument("--warmup", type=int, default=2, help="First iterations left out of the timing.")
    ap.add_argument("--scenes", nargs="+", default=[str(REPO / "scenes" / "example")])
    args = ap.parse_args()
    if not 0 <= args.warmup < args.iterations:
        ap.error("--warmup must be >= 0 and below --iterations")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; {args.envs} envs per rank")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_ranks_") as tmp:
        for config in args.configs:
            ranks, threads = (int(v) for v in config.split("x"))
            rows.append(
                bench(ranks, threads, args.envs, args.iterations, args.warmup, args.scenes, Path(tmp))
            )
    base = rows[0]["steps_per_s"]
    print(
        f"{'ranks':>5} {'threads':>7} {'envs':>5} {'env-steps/s':>12} {'x':>5} "
        f"{'collect s/it':>13} {'update s/it':>12}"
    )
    for r in rows:
        print(
            f"{r['ranks']:>5} {r['threads']:>7} {r['ranks'] * r['envs_per_rank']:>5} "
            f"{r['steps_per_s']:>12,.0f} "
            f"{r['steps_per_s'] / base:>5.2f} {r['collect_s']:>13.3f} {r['update_s']:>12.3f}"
        )
    for r in rows:
        print(
            f"ranks={r['ranks']} threads={r['threads']} envs_per_rank={r['envs_per_rank']} "
            f"steps_per_s={r['steps_per_s']:.0f} timed_iterations={r['iterations']}"
        )


if __name__ == "__main__":
    main()
