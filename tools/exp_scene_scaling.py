"""Scene-scaling experiment: success on held-out scenes against the number of training layouts.

The paper (UrbanVerse, arXiv 2510.15018) reports that success grows as a power law in the
number of training layouts. Each arm trains the benchmark policy (``tools/bench_train.py``
settings: wheeled robot, 64-beam LiDAR + goal, MLP) on 1, 4, 16 ... layouts with the *same*
budget of environment steps, then evaluates deterministically on the same held-out
procedural streets (seeds 100..). Arms:

- ``procedural``: ``urbanverse procgen`` streets (seeds 0.., styles in turn);
- ``video``: scene folders given with ``--video DIR`` (``urbanverse gen`` output: a batch's folder;
  inputs that failed, with ``error.json``, are skipped with a warning), the first N of them (sorted)
  per point; skipped when not given.

``tools/exp_real2sim.py`` is the full transfer experiment (a target city, its videos, seeds,
intervals and fixed test episodes); this tool is the quick look on procedural held-out streets.

Writes ``docs/scene_scaling.png`` (success and SPL against layouts, log x axis, with a fitted
power law ``success = a * N^b``) and ``docs/scene_scaling.json``, and prints a Markdown table.
Run: ``python tools/exp_scene_scaling.py [--layouts 1 4 16] [--steps 3000000] [--video DIR]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import BENCH_SETTINGS, REPO, procedural_scenes, train_and_eval  # noqa: E402

from urbanverse.bench.real2sim import power_law  # noqa: E402


def plot(results: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for arm, colour in (("procedural", "tab:blue"), ("video", "tab:green")):
        pts = results["arms"].get(arm)
        if not pts:
            continue
        ns = [p["layouts"] for p in pts]
        for ax, key in zip(axes, ("success_rate", "spl"), strict=True):
            ys = [p["overall"][key] for p in pts]
            ax.plot(ns, [100 * y for y in ys], "o-", color=colour, label=arm)
            fit = power_law(ns, ys)
            if fit:
                a, b = fit
                grid = [min(ns) * (max(ns) / min(ns)) ** (i / 50) for i in range(51)]
                ax.plot(
                    grid,
                    [100 * a * g**b for g in grid],
                    "--",
                    color=colour,
                    alpha=0.6,
                    label=f"{arm} fit: {100 * a:.1f}% x N^{b:.2f}",
                )
    for ax, label in zip(axes, ("success rate (%)", "SPL (x100)"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("training layouts N (log scale)")
        ax.set_ylabel(f"{label} on held-out scenes")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(
        f"scene scaling: {results['steps_per_point'] / 1e6:.1f} M env-steps per point, "
        f"{results['held_out']} held-out procedural scenes x {results['episodes']} episodes"
    )
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layouts", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--steps", type=int, default=3_000_000, help="env-steps per point (equal budgets)")
    parser.add_argument("--eval-scenes", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--video", type=Path, default=None, help="folder of urbanverse gen scene folders")
    parser.add_argument("--scenes-dir", type=Path, default=REPO / "out" / "rl_scenes")
    parser.add_argument("--runs-dir", type=Path, default=REPO / "runs" / "scene_scaling")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "scene_scaling.png")
    args = parser.parse_args()
    held_out = procedural_scenes(args.scenes_dir, list(range(100, 100 + args.eval_scenes)))
    arms: dict[str, list[str]] = {
        "procedural": procedural_scenes(args.scenes_dir, list(range(max(args.layouts))))
    }
    if args.video is not None:
        from urbanverse.scene.record import find_scene_dirs

        made = list(find_scene_dirs([args.video], "--video"))
        if len(made) < max(args.layouts):
            print(f"note: {args.video} has {len(made)} scenes; video points above that are skipped")
        arms["video"] = made
    settings = [s for s in BENCH_SETTINGS if not s.startswith("save_interval")] + [
        f"total_steps={args.steps}",
        "save_interval=1000",
    ]
    results: dict = {
        "steps_per_point": args.steps,
        "held_out": len(held_out),
        "episodes": args.episodes,
        "arms": {},
    }
    for arm, pool in arms.items():
        for n in args.layouts:
            if n > len(pool):
                continue
            t0 = time.perf_counter()
            res, row, run_dir = train_and_eval(
                pool[:n],
                held_out,
                0.0,
                settings,
                args.runs_dir,
                args.episodes,
                f"scaling-{arm}-{n}",
                animate=0,
            )
            o = res["overall"]
            print(
                f"{arm} N={n}: success {100 * o['success_rate']:.1f} %, SPL {o['spl']:.3f} "
                f"({time.perf_counter() - t0:.0f} s, {run_dir})",
                flush=True,
            )
            results["arms"].setdefault(arm, []).append(
                {"layouts": n, "overall": o, "train_minutes": row["wall_s"] / 60, "run": str(run_dir)}
            )
    for arm, pts in results["arms"].items():
        fit = power_law([p["layouts"] for p in pts], [p["overall"]["success_rate"] for p in pts])
        results.setdefault("power_law_fit", {})[arm] = {"a": fit[0], "b": fit[1]} if fit else None
    plot(results, args.out)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    print("| arm | layouts | success rate | SPL | collisions / episode | route completion | train min |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for arm, pts in results["arms"].items():
        for p in pts:
            o = p["overall"]
            print(
                f"| {arm} | {p['layouts']} | {100 * o['success_rate']:.1f} % | {o['spl']:.3f} | "
                f"{o['collisions_per_episode']:.2f} | {100 * o['route_completion']:.1f} % | "
                f"{p['train_minutes']:.1f} |"
            )
    print(f"power-law fits (success = a * N^b): {results.get('power_law_fit')}; wrote {args.out}")


if __name__ == "__main__":
    main()
