"""Tables, plots and ``docs/real2sim.json`` of the real-to-sim experiment (``tools/exp_real2sim.py``)."""

from __future__ import annotations

import json
import math
import platform
from pathlib import Path

import numpy as np

from urbanverse.bench.real2sim import aggregate, fits, outcomes, scene_statistics
from urbanverse.procgen.city import OLD_TOWN, PROCGEN_DEFAULT

ARM_ORDER = ("procedural", "video", "oracle", "oracle-bare")
COLOURS = {"procedural": "tab:blue", "video": "tab:green", "oracle": "tab:gray", "oracle-bare": "tab:orange"}
STAT_LABELS = {
    "walkable_m2": "free walkable ground (m²)",
    "drivable_share": "share of it the robot may drive",
    "clearance_p50_m": "median clearance on it (m)",
    "objects_per_100m2": "objects per 100 m² walkable",
    "goal_reach_m": "median goal-to-spawn geodesic (m)",
}


REPO = Path(__file__).resolve().parent.parent


def _rel(path: str) -> str:
    """``path`` relative to the repository when inside it (the JSON is committed)."""
    p = Path(path).resolve()
    return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else str(p)


def scene_stats(dirs: list[str], cache_file: Path) -> dict[str, dict]:
    """The statistics of each scene of ``dirs`` by folder, measured once and kept in ``cache_file``."""
    cache = json.loads(cache_file.read_text()) if cache_file.is_file() else {}
    missing = [d for d in dict.fromkeys(dirs) if d not in cache]
    for d in missing:
        cache[d] = scene_statistics(d)
    if missing:
        cache_file.write_text(json.dumps(cache, indent=1) + "\n")
    return cache


#: Round-trip scores of a video scene against its true street (:mod:`urbanverse.bench.evaluate`).
ROUNDTRIP_KEYS = ("generated", "true_seen", "recall_1m", "precision_1m", "ground_iou", "extent_iou",
                  "ground_pieces", "hole_share", "off_ground")  # fmt: skip


def roundtrip(video: str, truth: str, tour_gt: Path) -> dict[str, float]:
    """How well gen rebuilt the street its tour walked: objects made and seen, recall and precision
    within 1 m, ground IoU (what the walk saw, and over the generated extent), ground pieces, holes,
    objects off the ground, and the scale of the camera path's best similarity fit to the true one."""
    from urbanverse.bench.evaluate import camera_path_errors, compare_scenes
    from urbanverse.bench.ground_metrics import load_seen_grid
    from urbanverse.records import load_record
    from urbanverse.render.tour import TourGroundTruth
    from urbanverse.scene.record import load_scene

    gen, true = load_scene(Path(video)), load_scene(Path(truth))
    gt = load_record(TourGroundTruth, tour_gt)
    scores = compare_scenes(gen, true, gt, seen_grid=load_seen_grid(Path(video)))
    out = {k: float(scores[k]) for k in ROUNDTRIP_KEYS if k in scores}
    out["path_scale"] = float(camera_path_errors(gen, gt).get("path_scale", float("nan")))
    return out


def plot_arms(arms: dict, fitted: dict, title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = (("success_rate", "success rate (%)", 100), ("spl", "SPL (x100)", 100),
              ("collisions_per_episode", "collisions per episode", 1))  # fmt: skip
    for ax, (key, label, scale) in zip(axes, panels, strict=True):
        for arm, points in arms.items():
            c = COLOURS.get(arm, "tab:red")
            ks = np.array([p["k"] for p in points], dtype=float)
            mean = np.array([p[key]["mean"] for p in points]) * scale
            half = np.nan_to_num(np.array([p[key]["ci95"] for p in points]) * scale)
            ax.errorbar(ks, mean, yerr=half, fmt="o-", color=c, capsize=4, label=f"{arm} (mean, 95 % CI)")
            for p in points:
                ax.scatter([p["k"]] * len(p[key]["values"]), np.array(p[key]["values"]) * scale,
                           color=c, alpha=0.35, s=12)  # fmt: skip
            fit = fitted.get(arm) if key == "success_rate" else None
            if fit:
                grid = np.geomspace(ks.min(), ks.max(), 50)
                ax.plot(grid, 100 * fit["a"] * grid ** fit["b"], "--", color=c, alpha=0.6,
                        label=f"{arm} fit {100 * fit['a']:.1f}% K^{fit['b']:.2f}")  # fmt: skip
        ax.set_xscale("log")
        ax.set_xticks([p["k"] for p in next(iter(arms.values()))])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("training scenes K (log scale)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def plot_cities(groups: dict[str, list[dict]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(STAT_LABELS), figsize=(18, 4))
    names = list(groups)
    for ax, (key, label) in zip(axes, STAT_LABELS.items(), strict=True):
        data = [[s[key] for s in groups[n]] for n in names]
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(names) + 1), [n.replace(" ", "\n") for n in names], fontsize=8)
        ax.set_title(label, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle("What a wheeled robot meets in each set of scenes (measured on its training grids)")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _fmt(m: dict, scale: float = 100, digits: int = 1, unit: str = " %") -> str:
    if math.isnan(m["ci95"]):
        return f"{scale * m['mean']:.{digits}f}{unit}"
    return f"{scale * m['mean']:.{digits}f} ± {scale * m['ci95']:.{digits}f}{unit}"


def _median_stats(stats: list[dict]) -> dict[str, float]:
    return {k: float(np.median([s[k] for s in stats])) for k in STAT_LABELS} if stats else {}


def report(units: list[dict], pools: dict[str, list[str]], test: list[str], args, seconds: float) -> None:
    """Write the JSON and plots to ``args.docs`` and print the tables."""
    arms = aggregate(units)
    arms = {a: arms[a] for a in ARM_ORDER if a in arms}
    fitted = fits(arms)
    ended = outcomes(units)
    stats = scene_stats(
        [d for scenes in (*pools.values(), test) for d in scenes], args.work / "scene_stats.json"
    )
    groups = {f"{arm} train": [stats[d] for d in pools[arm]] for arm in ARM_ORDER if arm in pools}
    groups["target test"] = [stats[d] for d in test]
    label = "with route waypoint" if args.waypoint else "goal + LiDAR, no route waypoint"
    suffix = ("_waypoint" if args.waypoint else "") + args.tag
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    episodes = units[0]["overall"]["episodes"] if units else 0
    title = (
        f"real-to-sim transfer: wheeled LiDAR MLP ({label}), {args.steps / 1e6:g} M env-steps per "
        f"policy, {len(args.seeds)} seeds;\ntest: {len(test)} old-town streets, {episodes} fixed episodes"
    )
    if arms:
        plot_arms(arms, fitted, title, docs / f"real2sim{suffix}.png")
    plot_cities(groups, docs / f"real2sim_cities{suffix}.png")
    per_scene = []
    for video in pools.get("video", []):  # gen folders are named after their tours: tour_<street>
        i = int(Path(video).name.split("_")[-1])
        truth = pools["oracle"][i]
        t, v = stats[truth], stats[video]
        gt = args.work / "video" / "tours" / f"{Path(video).name}_gt.json"
        per_scene.append(
            {"street": i, "truth": _rel(truth), "video": _rel(video), "truth_stats": t, "video_stats": v,
             "roundtrip": roundtrip(video, truth, gt)}
        )  # fmt: skip
    doc = {
        "observations": label,
        "steps_per_policy": args.steps,
        "seeds": args.seeds,
        "ks": args.ks,
        "test_streets": [_rel(d) for d in test],
        "test_episodes": episodes,
        "machine": f"{platform.machine()}, CPU only",
        "wall_minutes": seconds / 60,
        "unit_minutes": sum(u["train_minutes"] + u.get("eval_s", 0.0) / 60 for u in units),
        "cities": {"target": dict(OLD_TOWN.rows()), "procedural": dict(PROCGEN_DEFAULT.rows())},
        "arms": arms,
        "power_law_fit": fitted,
        "outcomes": ended,
        "scene_statistics_median": {n: _median_stats(s) for n, s in groups.items()},
        "video_vs_truth": per_scene,
        # Per-episode rows stay in each unit's result.json under --work; the outcomes above sum them.
        "units": [
            {
                **{k: v for k, v in u.items() if k != "episodes"},
                "run": _rel(u["run"]),
                "scenes": [_rel(d) for d in u["scenes"]],
            }
            for u in units
        ],  # fmt: skip
    }
    (docs / f"real2sim{suffix}.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"\n## {title}\n")
    print("| arm | K | success | SPL | collisions / episode | route completion | train min |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for arm, points in arms.items():
        for p in points:
            print(f"| {arm} | {p['k']} | {_fmt(p['success_rate'])} | {_fmt(p['spl'], 1, 3, '')} | "
                  f"{_fmt(p['collisions_per_episode'], 1, 2, '')} | {_fmt(p['route_completion'])} | "
                  f"{p['train_minutes']:.1f} |")  # fmt: skip
    print(f"\npower laws (success = a K^b): {json.dumps(fitted)}")
    print("\nhow the test episodes ended (pooled over seeds): success / collision / time-out")
    for arm, by_k in ended.items():
        cells = [f"K={k}: " + " / ".join(f"{100 * v:.0f} %" for v in o.values()) for k, o in by_k.items()]
        print(f"- {arm}: " + "; ".join(cells))
    print("\n| scenes | " + " | ".join(STAT_LABELS.values()) + " |")
    print("|---|" + "---:|" * len(STAT_LABELS))
    for name, stats in groups.items():
        med = _median_stats(stats)
        print(
            f"| {name} (median of {len(stats)}) | " + " | ".join(f"{med[k]:.2f}" for k in STAT_LABELS) + " |"
        )
    if per_scene:
        columns = ("walkable m²", "objects per 100 m²", "drivable share")
        gen_columns = ("objects made / seen", "recall 1 m", "ground IoU", "extent IoU", "holes", "path scale")
        print(
            "\n| street | " + " | ".join([f"{c} truth / video" for c in columns] + list(gen_columns)) + " |"
        )
        print("|---:|" + "---:|" * 9)
        for r in per_scene:
            t, v, q = r["truth_stats"], r["video_stats"], r["roundtrip"]
            print(f"| {r['street']} | {t['walkable_m2']:.0f} / {v['walkable_m2']:.0f} | "
                  f"{t['objects_per_100m2']:.2f} / {v['objects_per_100m2']:.2f} | "
                  f"{t['drivable_share']:.2f} / {v['drivable_share']:.2f} | "
                  f"{q['generated']:.0f} / {q['true_seen']:.0f} | {q['recall_1m']:.2f} | "
                  f"{q['ground_iou']:.2f} | {q['extent_iou']:.2f} | {q['hole_share']:.2f} | "
                  f"{q['path_scale']:.2f} |")  # fmt: skip
    spent = sum(u["train_minutes"] + u.get("eval_s", 0.0) / 60 for u in units)
    print(f"\ntraining + evaluation {spent:.0f} min summed over the units; this run {seconds / 60:.1f} min")
    print(f"wrote real2sim{suffix}.json, .png and _cities.png in {docs}")
