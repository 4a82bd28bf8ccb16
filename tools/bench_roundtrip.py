"""Round-trip fidelity of ``urbanverse gen``: render tours through known procedural streets, regenerate
scenes from the MP4s, and compare them with the truth.

Modes: ``blind`` (gen sees only the video), ``true_height`` (blind, but told the camera's true height
above the ground with ``--camera-height``, as a user who measured their rig would: the walk draws
1.5-1.7 m per tour against the default prior of 1.6 m, so blind scenes are scaled up to 6 % off),
``true_poses`` (camera stage replaced by the tour's true poses), ``true_poses_boxes`` (and detection +
tracking replaced by the true 2D boxes and identities): the drop from the last to the first shows
where the error comes from. Prints a line per tour and mode, three tables (objects; ground; people) with a row
per set and mode (the median over its tours), the totals over each set's tours per mode (recall split
between the objects the walk went past and those ahead of its end, seen only from afar; position and
yaw errors as medians over all the tours' pairs, steadier than the medians of each tour's few; ground
in one piece, holes and objects off the ground over its scenes), how the blind camera paths fit the
true ones (RMS after a rigid fit, after a fit that may scale, and that scale), and, last, the blind
line:

    split=.. cat_acc=.. recall_1m=.. pos_err_m=.. yaw_err_deg=.. front_err_m=.. ground_iou=..
    extent_iou=.. ground_pieces=.. hole_share=.. off_ground=.. map25=.. people_err_m=..
    people_recall_1m=.. gen_s_per_video_min=..

(one line; the held-out set's blind medians where it ran, the people's pooled over its tours: the
median error over every lifted point, the people recovered over the people seen).

``--plots DIR`` writes a top-down map per tour and mode (``match_<tour>_<mode>.png``,
:mod:`urbanverse.bench.match_plot`): the true objects found, paired farther out or missed, the
generated ones joined to their pairs, the two camera paths.

Tour sets (``--split``): tour ``i`` walks procedural street seed ``i + 1`` (style ``i`` mod 4) with
walk seed ``i``. The tuning set is tours 0.. (``TUNING_FIRST_TOUR``), on which gen's defaults were
developed; the held-out set is tours 5000.. (``HELDOUT_FIRST_TOUR``), far from every seed used to
tune gen or train its models, and never to be tuned on. The headline rows are the held-out ones, the
tuning rows stand beside them. ``--fresh`` draws new held-out tours (printed; ``--heldout-tours``
names them again). ``--first-tour N`` starts each set N tours in, so ``--first-tour 10 --tours 10``
adds ten more streets to a set. ``--set stage.field=value`` (repeatable) runs gen with a setting
changed, as ``urbanverse gen --set`` does.

Figures beside the object scores (:mod:`urbanverse.bench.evaluate`): buildings by their street front
(``front_recall_1m``, ``front_err_m``, ``front_dir_err_deg``: :mod:`urbanverse.bench.fronts`), and
the ground (:mod:`urbanverse.bench.ground_metrics`): ``extent_iou`` over the generated scene's extent,
split into the part the ground stage saw and the part the street model inferred, ``ground_pieces``,
``hole_share`` and ``off_ground`` objects; the people walking the streets
(:mod:`urbanverse.bench.people_metrics`): ``people_err_m`` (median distance of the lifted trajectory
points to the nearest true person at the same time) and ``people_recall_1m`` (the people seen that a
lifted trajectory follows within 1 m). Each table starts with a row of targets; a bold figure
meets its target. ``--json PATH`` writes every tour's scores, the medians, the pooled counts, the
tours' seeds and the targets.

``--keep DIR --rerun-from STAGE`` reuses what an earlier run kept in DIR (the streets, the tours and
gen's work folders) and reruns gen from STAGE on (``objects``: 2-3 s a tour instead of 40): the way to
measure a change to a late stage on many tours. Stages before STAGE rerun too where their settings or
input changed (a moved or copied video has another key). gen's seconds are then not a whole run's,
so the last line's ``gen_s_per_video_min`` is NaN.

Last, per set, a table per L2 class of the true objects seen, over its tours: how many were seen, and
per mode how many were paired within 2 m, found within 1 m, and named with the right L3 class.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from urbanverse.bench.evaluate import camera_path_errors, class_counts, compare_scenes, match_objects
from urbanverse.bench.ground_metrics import load_seen_grid
from urbanverse.bench.match_plot import plot_match
from urbanverse.bench.oracle import oracle_stages, true_camera_height
from urbanverse.bench.people_metrics import people_scores
from urbanverse.bench.retrieval_metrics import retrieval_scores
from urbanverse.config import apply_overrides
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import run_gen
from urbanverse.gen.stages import downstream
from urbanverse.gen.table import STAGES
from urbanverse.procgen.street import STYLES, StreetCfg, generate_street
from urbanverse.records import load_record
from urbanverse.render.tour import TourCfg, TourGroundTruth, gt_path_for, run_render_tour
from urbanverse.scene.record import load_scene

MODES = ("blind", "true_height", "true_poses", "true_poses_boxes")
#: The two tour sets, headline first.
SPLITS = ("heldout", "tuning")
#: First tour of the tuning set: gen's defaults were developed on tours 0-19 (street seeds 1-20).
TUNING_FIRST_TOUR = 0
#: First tour of the held-out set (street seeds 5001..), never tuned on. Seeds used elsewhere, all
#: far below: the tuning tours 0-19, the crop classifier's streets 1000-1031 and the proposal probe's
#: 2000-2039 (``tools/train_crop_classifier.py``), the detector's 100.. (``tools/train_detector.py``),
#: the training benchmark's 0-15 and 100-107.
HELDOUT_FIRST_TOUR = 5000
#: ``--fresh`` draws held-out tours from this range of tour indices (beyond the fixed held-out set).
FRESH_TOURS = (100_000, 1_000_000)
#: Columns of the objects table (module docstring; :mod:`urbanverse.bench.evaluate`).
OBJECT_METRICS = (
    "cat_acc",
    "recall_1m",
    "precision_1m",
    "pos_err_m",
    "yaw_err_deg",
    "volume_err",
    "front_recall_1m",
    "front_err_m",
    "front_dir_err_deg",
    "map25",
)
#: Columns of the ground table (:mod:`urbanverse.bench.ground_metrics`).
GROUND_METRICS = (
    "ground_iou",
    "extent_iou",
    "extent_iou_seen",
    "extent_iou_inferred",
    "seen_share",
    "ground_pieces",
    "hole_share",
    "off_ground",
)
#: Columns of the people table (:mod:`urbanverse.bench.people_metrics`).
PEOPLE_METRICS = ("people_err_m", "people_recall_1m")
METRICS = OBJECT_METRICS + GROUND_METRICS + PEOPLE_METRICS
#: Targets on the held-out tours: (comparison, value); a figure meeting its target prints in bold.
TARGETS: dict[str, tuple[str, float]] = {
    "cat_acc": (">=", 0.8),
    "recall_1m": (">=", 0.6),
    "pos_err_m": ("<=", 0.5),
    "yaw_err_deg": ("<=", 15.0),
    "ground_iou": (">=", 0.8),
    "extent_iou": (">=", 0.85),
    "extent_iou_seen": (">=", 0.85),
    "extent_iou_inferred": (">=", 0.85),
    "ground_pieces": ("==", 1.0),
    "hole_share": ("==", 0.0),
    "off_ground": ("==", 0.0),
    "people_err_m": ("<=", 0.5),
}


def meets(metric: str, value: float) -> bool:
    """Whether ``value`` of ``metric`` meets its target (False without one, or for NaN)."""
    if metric not in TARGETS or not math.isfinite(value):
        return False
    op, target = TARGETS[metric]
    return {">=": value >= target, "<=": value <= target, "==": abs(value - target) < 1e-9}[op]


def _cell(metric: str, value: float) -> str:
    text = f"{value:.3f}"
    return f"**{text}**" if meets(metric, value) else text


def _print_table(
    title: str, metrics: tuple[str, ...], medians: dict[str, dict[str, dict[str, float]]]
) -> None:
    """A markdown table of ``medians[split][mode][metric]``, a row of targets first."""
    print(f"\n{title}\n\n| set | mode | " + " | ".join(metrics) + " |")
    print("|---|---" + "|---:" * len(metrics) + "|")
    print("| target | | " + " | ".join(" ".join(map(_fmt_target, TARGETS.get(k, ("", ""))))
                                     for k in metrics) + " |")  # fmt: skip
    for split, by_mode in medians.items():
        for mode, m in by_mode.items():
            print(f"| {split} | {mode} | " + " | ".join(_cell(k, m[k]) for k in metrics) + " |")


def _fmt_target(part) -> str:
    return f"{part:g}" if isinstance(part, float) else str(part)


def tour_sets(args: argparse.Namespace) -> dict[str, list[int]]:
    """The tour indices of each set ``args.split`` names, held-out first (module docstring)."""
    sets: dict[str, list[int]] = {}
    if args.split in ("heldout", "both"):
        if args.heldout_tours:
            sets["heldout"] = [int(t) for t in args.heldout_tours.split(",")]
        elif args.fresh:
            drawn = np.random.default_rng().choice(np.arange(*FRESH_TOURS), args.tours, replace=False)
            sets["heldout"] = sorted(int(t) for t in drawn)
        else:
            first = HELDOUT_FIRST_TOUR + args.first_tour
            sets["heldout"] = list(range(first, first + args.tours))
    if args.split in ("tuning", "both"):
        first = TUNING_FIRST_TOUR + args.first_tour
        sets["tuning"] = list(range(first, first + args.tours))
    return sets


def _finite(value):
    """``value`` with NaN and infinities as None, for JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _stages(mode: str, gt):
    """gen's stage table for ``mode``: true poses and boxes swapped in where the mode names them."""
    return oracle_stages(gt, poses="poses" in mode, boxes="boxes" in mode)


def _median(values: list[float]) -> float:
    """Median of ``values``; NaN when there are none."""
    return float(np.median(values)) if values else math.nan


def _drop_stages_from(out: Path, stage: str) -> None:
    """Delete gen's work folders ``<nn>_<name>`` in ``out`` of the stage ``stage`` and of every stage that
    reads its output, directly or not, so that a resumed gen reruns them; an error when ``out`` holds
    no earlier run."""
    work = out / "work"
    if not work.is_dir():
        raise SystemExit(f"--rerun-from {stage}: {out} holds no earlier gen run")
    drop = downstream(STAGES, stage)
    for d in work.glob("[0-9][0-9]_*"):
        if d.is_dir() and d.name.split("_", 1)[1] in drop:
            shutil.rmtree(d)


def _print_retrieval_table(results: dict[str, dict[str, list[dict]]]) -> None:
    """Retrieval scores pooled over the tours' pairs within 1 m (urbanverse.bench.retrieval_metrics)."""
    print("\nRetrieval (pairs within 1 m, pooled over tours)\n")
    print("| set | mode | pairs | same L3 class | size: median abs(dl)+abs(dw)+abs(dh), m "
          "| colour: median CIEDE2000 | true generator among the cousins |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|")
    for split, by_mode in results.items():
        for mode, rs in by_mode.items():
            pooled = {
                k: [v for r in rs for v in r[f"ret_{k}_list"]] for k in ("class", "size", "colour", "look")
            }
            n = len(pooled["class"])
            cells = [np.mean(pooled["class"]), np.median(pooled["size"]), np.median(pooled["colour"]),
                     np.mean(pooled["look"])] if n else [math.nan] * 4  # fmt: skip
            print(f"| {split} | {mode} | {n} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")


def _print_class_table(counts: dict[str, dict[str, list[int]]]) -> None:
    """Per L2 class, summed over tours: seen, then per mode paired / within 1 m / right class."""
    modes = list(counts)
    classes = sorted({k for c in counts.values() for k in c}, key=lambda k: -counts[modes[0]].get(k, [0])[0])
    print("\n| class | seen | " + " | ".join(f"{m}: paired / 1 m / right" for m in modes) + " |")
    print("|---" * (len(modes) + 2) + "|")
    for k in classes + ["all"]:
        rows = [
            [sum(v[j] for v in c.values()) for j in range(4)] if k == "all" else c.get(k, [0, 0, 0, 0])
            for c in counts.values()
        ]
        print(f"| {k} | {rows[0][0]} | " + " | ".join(f"{r[1]} / {r[2]} / {r[3]}" for r in rows) + " |")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tours", type=int, default=5, help="tours per set")
    parser.add_argument(
        "--split", choices=("both", "heldout", "tuning"), default="both",
        help="the tour sets to run: held-out (the headline), tuning (beside it), or both",
    )  # fmt: skip
    parser.add_argument(
        "--fresh", action="store_true",
        help=f"draw new held-out tours from {FRESH_TOURS[0]}-{FRESH_TOURS[1] - 1} (printed) instead of "
        f"the fixed set {HELDOUT_FIRST_TOUR}..",
    )  # fmt: skip
    parser.add_argument(
        "--heldout-tours", default=None, metavar="I,J,..",
        help=f"held-out tours by index (each >= {HELDOUT_FIRST_TOUR}): a --fresh draw again",
    )  # fmt: skip
    parser.add_argument(
        "--first-tour", type=int, default=0,
        help="start each set this many tours in: --first-tour 10 --tours 10 runs tuning tours 10-19 "
        f"and held-out tours {HELDOUT_FIRST_TOUR + 10}-{HELDOUT_FIRST_TOUR + 19}",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument(
        "--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)} (module docstring)"
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep scenes, tours and generated scenes here"
    )
    parser.add_argument(
        "--rerun-from", default=None, metavar="STAGE",
        help="with --keep: reuse its tours and gen work, rerun gen's stage STAGE and the stages after it "
        f"({', '.join(s.name for s in STAGES)})",
    )  # fmt: skip
    parser.add_argument(
        "--rescore", action="store_true",
        help="with --keep: score the generated scenes kept there as they are, running nothing",
    )  # fmt: skip
    parser.add_argument(
        "--plots", type=Path, default=None, help="write a top-down map of each tour's matches here"
    )
    parser.add_argument("--json", type=Path, default=None, help="write all scores and seeds here")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="STAGE.FIELD=VALUE",
        help="a gen setting to change (repeatable), as with urbanverse gen --set",
    )  # fmt: skip
    return parser


def _check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The modes asked for; a parser error for arguments that do not go together."""
    modes = args.modes.split(",")
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"--modes: unknown {', '.join(sorted(unknown))}")
    if args.rescore and (not args.keep or args.rerun_from or args.fresh):
        parser.error("--rescore scores what --keep DIR holds: no --rerun-from or --fresh with it")
    if args.rerun_from and not args.keep:
        parser.error("--rerun-from needs --keep: the folder of an earlier run")
    if args.rerun_from and args.rerun_from not in {s.name for s in STAGES}:
        parser.error(
            f"--rerun-from: no stage {args.rerun_from!r} (stages: {', '.join(s.name for s in STAGES)})"
        )
    if args.fresh and (args.rerun_from or args.heldout_tours):
        parser.error("--fresh draws new tours: rerun a draw with --heldout-tours, not --rerun-from")
    if args.split == "tuning" and (args.fresh or args.heldout_tours):
        parser.error("--fresh and --heldout-tours choose held-out tours; --split tuning runs none")
    if args.heldout_tours:
        tours = [t.strip() for t in args.heldout_tours.split(",")]
        if not all(t.isdigit() and int(t) >= HELDOUT_FIRST_TOUR for t in tours):
            parser.error(f"--heldout-tours: tour indices of at least {HELDOUT_FIRST_TOUR}, comma-separated")
    if TUNING_FIRST_TOUR + args.first_tour + args.tours > HELDOUT_FIRST_TOUR:
        parser.error(f"--first-tour + --tours: the tuning set ends below tour {HELDOUT_FIRST_TOUR}")
    return modes


def _pooled(r: list[dict]) -> dict[str, float]:
    """Counts over the tours ``r`` of one set and mode: objects seen, generated, paired, within 1 m
    (``hits``, ``near``), named right, ahead of the walk's end; errors as medians over all the pairs;
    fronts seen and found; scenes in one ground piece, the most pieces, the largest hole share and the
    objects off the ground."""
    seen, generated, matched = (sum(x[k] for x in r) for k in ("true_seen", "generated", "matched"))
    pos, yaw, front, turn = (
        [e for x in r for e in x[k]]
        for k in ("pos_errors_m", "yaw_errors_deg", "front_errors_m", "front_dir_errors_deg")
    )
    return {
        "true_seen": seen,
        "generated": generated,
        "matched": matched,
        "hits": sum(x["recall_1m"] * x["true_seen"] for x in r),
        "near": sum(x["precision_1m"] * x["generated"] for x in r),
        "right": sum(x["cat_acc"] * x["matched"] for x in r),
        "true_ahead": sum(x["true_ahead"] for x in r),
        "hits_ahead": sum(x["hits_ahead"] for x in r),
        "pos_err_m": _median(pos),
        "pos_pairs": float(len(pos)),
        "yaw_err_deg": _median(yaw),
        "yaw_pairs": float(len(yaw)),
        "fronts_seen": sum(x["fronts_seen"] for x in r),
        "fronts_found": sum(x["front_recall_1m"] * x["fronts_seen"] for x in r if x["fronts_seen"]),
        "front_err_m": _median(front),
        "front_dir_err_deg": _median(turn),
        "front_pairs": float(len(front)),
        "scenes": float(len(r)),
        "one_piece": float(sum(x["ground_pieces"] == 1 for x in r)),
        "max_pieces": max((x["ground_pieces"] for x in r), default=math.nan),
        "max_hole_share": max((x["hole_share"] for x in r), default=math.nan),
        "objects_off_ground": sum(x["off_ground"] for x in r),
        "people_seen": sum(x["people_seen"] for x in r),
        "people_found": sum(x["people_found"] for x in r),
        "people_err_m": _median([e for x in r for e in x["people_errors_m"]]),
        "people_points": float(sum(x["people_points"] for x in r)),
    }


def _print_pooled(split: str, mode: str, p: dict[str, float]) -> None:
    seen, hits, ahead, hits_ahead = p["true_seen"], p["hits"], p["true_ahead"], p["hits_ahead"]
    print(
        f"pooled {split} {mode}: recall_1m {hits:.0f}/{seen:.0f} = {hits / max(seen, 1):.3f} "
        f"(passed {hits - hits_ahead:.0f}/{seen - ahead:.0f}, ahead of the walk's end "
        f"{hits_ahead:.0f}/{ahead:.0f}), precision_1m {p['near']:.0f}/{p['generated']:.0f} = "
        f"{p['near'] / max(p['generated'], 1):.3f}, "
        f"cat_acc {p['right']:.0f}/{p['matched']:.0f} = {p['right'] / max(p['matched'], 1):.3f}, "
        f"pos_err_m {p['pos_err_m']:.2f} ({p['pos_pairs']:.0f} pairs), "
        f"yaw_err_deg {p['yaw_err_deg']:.1f} ({p['yaw_pairs']:.0f}), "
        f"fronts within 1 m {p['fronts_found']:.0f}/{p['fronts_seen']:.0f}, front_err_m "
        f"{p['front_err_m']:.2f} and front_dir_err_deg {p['front_dir_err_deg']:.1f} "
        f"({p['front_pairs']:.0f} pairs); ground in one piece in {p['one_piece']:.0f}/{p['scenes']:.0f} "
        f"scenes (most pieces {p['max_pieces']:.0f}), largest hole share {p['max_hole_share']:.3f}, "
        f"objects off the ground {p['objects_off_ground']:.0f}/{p['generated']:.0f}; "
        f"people within 1 m {p['people_found']:.0f}/{p['people_seen']:.0f}, people_err_m "
        f"{p['people_err_m']:.2f} ({p['people_points']:.0f} points)"
    )


def _run_tour(
    split: str, i: int, root: Path, args: argparse.Namespace, gen_cfg: GenCfg, modes: list[str]
) -> list[tuple[str, dict, dict, dict[str, tuple[int, ...]], float]]:
    """Render (or, resumed, reuse) tour ``i`` of set ``split`` and run and score gen on it in each of
    ``modes``: per mode, ``(mode, scores, record row, class counts, gen seconds)``; prints a line per mode."""
    resumed = bool(args.rerun_from)
    style = STYLES[i % len(STYLES)]
    truth_dir = root / f"truth_{i}"
    truth = (
        load_scene(truth_dir)
        if truth_dir.exists()
        else generate_street(StreetCfg(style=style, seed=i + 1), truth_dir)
    )
    video = root / f"tour_{i}.mp4"
    cfg = TourCfg(seconds=args.seconds, width=args.width, height=args.height, seed=i)
    kept = resumed and video.exists() and gt_path_for(video).exists()
    gt = load_record(TourGroundTruth, gt_path_for(video)) if kept else run_render_tour(truth_dir, video, cfg)
    out_rows = []
    for mode in modes:
        out = root / f"gen_{i}_{mode}"
        start = time.perf_counter()
        mode_cfg = gen_cfg
        if mode == "true_height":
            recon_cfg = dataclasses.replace(gen_cfg.recon, camera_height_m=true_camera_height(gt))
            mode_cfg = dataclasses.replace(gen_cfg, recon=recon_cfg)
        if args.rescore:
            recon_mode = json.loads((out / "report.json").read_text())["recon_mode"]
        else:
            if resumed:
                _drop_stages_from(out, args.rerun_from)
            recon_mode = run_gen(video, out, mode_cfg, resume=resumed, stages=_stages(mode, gt)).recon_mode
        elapsed = time.perf_counter() - start
        scene = load_scene(out)
        aligned = mode.startswith("true_poses")
        match = match_objects(scene, truth, gt, aligned)
        scores = compare_scenes(scene, truth, gt, aligned=aligned, match=match, seen_grid=load_seen_grid(out))
        scores |= retrieval_scores(scene, out, truth, truth_dir, match)
        scores |= people_scores(scene, gt, aligned)
        path_fit = camera_path_errors(scene, gt) if mode == "blind" else {}
        shown = " ".join(f"{k}={scores.get(k, math.nan):.3f}" for k in METRICS)
        shown += "".join(f" {k}={v:.3f}" for k, v in path_fit.items())
        if args.plots:
            title = f"tour {i} ({style}), {mode}"
            plot_match(scene, truth, gt, args.plots / f"match_{i}_{mode}.png", title, aligned)
        counts = f"objects={scores['generated']:.0f}/{scores['true_seen']:.0f}"
        counts += f" people={scores['people_generated']}/{scores['people_seen']}"
        print(f"{split} tour {i} ({style}) {mode}: {shown} {counts} "
              f"recon={recon_mode} gen_s={elapsed:.1f}", flush=True)  # fmt: skip
        row = {
            "split": split, "tour": i, "style": style, "street_seed": i + 1, "walk_seed": i, "mode": mode,
            "gen_s": elapsed, "recon": recon_mode, **path_fit, **scores,
        }  # fmt: skip
        out_rows.append((mode, scores, row, class_counts(match, scene, truth), elapsed))
    return out_rows


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    modes = _check_args(parser, args)
    gen_cfg = apply_overrides(GenCfg(), args.overrides)
    sets = tour_sets(args)
    for split, tours in sets.items():
        again = f" (a fresh draw: --heldout-tours {','.join(map(str, tours))} runs it again)"
        again = again if split == "heldout" and args.fresh else ""
        print(f"{split} tours: {', '.join(map(str, tours))}{again}", flush=True)
    results: dict[str, dict[str, list[dict]]] = {s: {m: [] for m in modes} for s in sets}
    by_class: dict[str, dict[str, dict[str, list[int]]]] = {s: {m: {} for m in modes} for s in sets}
    rows: list[dict] = []
    paths: list[dict] = []
    gen_s_per_min: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        for split, tours in sets.items():
            for i in tours:
                for mode, scores, row, counts, elapsed in _run_tour(split, i, root, args, gen_cfg, modes):
                    results[split][mode].append(scores)
                    rows.append(row)
                    for k, c in counts.items():
                        total = by_class[split][mode].setdefault(k, [0, 0, 0, 0])
                        total[:] = [a + b for a, b in zip(total, c, strict=True)]
                    if mode == "blind":
                        paths.append({k: row[k] for k in ("path_rms_m", "path_rms_scaled_m", "path_scale")})
                        if not args.rerun_from:
                            gen_s_per_min.append(elapsed / args.seconds * 60.0)
    medians = {
        split: {
            mode: {k: _median([r[k] for r in rs if math.isfinite(r[k])]) for k in METRICS}
            for mode, rs in by_mode.items()
        }
        for split, by_mode in results.items()
    }
    _print_table("Objects (median over tours)", OBJECT_METRICS, medians)
    _print_table("Ground (median over tours)", GROUND_METRICS, medians)
    _print_table("People (median over tours)", PEOPLE_METRICS, medians)
    pooled = {s: {mode: _pooled(rs) for mode, rs in by_mode.items()} for s, by_mode in results.items()}
    print()
    for split, by_mode in pooled.items():
        for mode, p in by_mode.items():
            _print_pooled(split, mode, p)
    if paths:
        print(
            "camera path (blind), per tour: "
            + ", ".join(f"{k} " + " / ".join(f"{p[k]:.3f}" for p in paths) for k in paths[0])
        )
    for split in sets:
        print(f"\n{split}:")
        _print_class_table(by_class[split])
    _print_retrieval_table(results)
    headline = "heldout" if "heldout" in medians else next(iter(medians))
    m = medians[headline].get("blind") or next(iter(medians[headline].values()))
    speed = float(np.median(gen_s_per_min)) if gen_s_per_min else math.nan
    crowd = pooled[headline].get("blind") or next(iter(pooled[headline].values()))
    people_recall = crowd["people_found"] / crowd["people_seen"] if crowd["people_seen"] else math.nan
    print(
        f"split={headline} cat_acc={m['cat_acc']:.3f} recall_1m={m['recall_1m']:.3f} "
        f"pos_err_m={m['pos_err_m']:.2f} yaw_err_deg={m['yaw_err_deg']:.1f} "
        f"front_err_m={m['front_err_m']:.2f} "
        f"ground_iou={m['ground_iou']:.3f} extent_iou={m['extent_iou']:.3f} "
        f"ground_pieces={m['ground_pieces']:.0f} hole_share={m['hole_share']:.3f} "
        f"off_ground={m['off_ground']:.0f} map25={m['map25']:.3f} people_err_m={crowd['people_err_m']:.2f} "
        f"people_recall_1m={people_recall:.3f} gen_s_per_video_min={speed:.1f}"
    )
    if args.json:
        record = {
            "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sets": {
                s: {"tours": t, "street_seeds": [i + 1 for i in t], "walk_seeds": t} for s, t in sets.items()
            },
            "targets": {k: {"op": op, "value": v} for k, (op, v) in TARGETS.items()},
            "medians": medians,
            "pooled": pooled,
            "camera_paths_blind": paths,
            "gen_s_per_video_min": speed,
            "tours": rows,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(_finite(record), indent=1))


if __name__ == "__main__":
    main()
