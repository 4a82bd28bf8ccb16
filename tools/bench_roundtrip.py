"""Round-trip fidelity of ``urbanverse gen``: render tours through known procedural streets, regenerate
scenes from the MP4s, and compare them with the truth.

Modes: ``blind`` (gen sees only the video), ``true_height`` (blind, but told the camera's true height
above the ground with ``--camera-height``, as a user who measured their rig would: the walk draws
1.5-1.7 m per tour against the default prior of 1.6 m, so blind scenes are scaled up to 6 % off),
``true_poses`` (camera stage replaced by the tour's true poses), ``true_poses_boxes`` (and detection +
tracking replaced by the true 2D boxes and identities): the drop from the last to the first shows
where the error comes from. Prints a table per mode (the median over tours), the totals over all
tours per mode (recall split between the objects the walk went past and those ahead of its end,
seen only from afar; position and yaw errors as medians over all the tours' pairs, steadier than the
medians of each tour's few), how the blind camera paths fit the true ones (RMS after a rigid fit,
after a fit that may scale, and that scale), and, last, the blind line:

    cat_acc=.. recall_1m=.. pos_err_m=.. yaw_err_deg=.. ground_iou=.. map25=.. gen_s_per_video_min=..

``--plots DIR`` writes a top-down map per tour and mode (``match_<tour>_<mode>.png``,
:mod:`urbanverse.bench.match_plot`): the true objects found, paired farther out or missed, the
generated ones joined to their pairs, the two camera paths.

``--first-tour N`` starts at tour N (street seed N + 1, walk seed N), so ``--first-tour 10 --tours 10``
adds ten more streets to a set. ``--set stage.field=value`` (repeatable) runs gen with a setting
changed, as ``urbanverse gen --set`` does.

``--keep DIR --rerun-from STAGE`` reuses what an earlier run kept in DIR (the streets, the tours and
gen's work folders) and reruns gen from STAGE on (``objects``: 2-3 s a tour instead of 40): the way to
measure a change to a late stage on many tours. Stages before STAGE rerun too where their settings or
input changed (a moved or copied video has another key). gen's seconds are then not a whole run's,
so the last line's ``gen_s_per_video_min`` is NaN.

Last, a table per L2 class of the true objects seen, over all tours: how many were seen, and per mode
how many were paired within 2 m, found within 1 m, and named with the right L3 class.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from urbanverse.bench.evaluate import camera_path_errors, class_counts, compare_scenes, match_objects
from urbanverse.bench.match_plot import plot_match
from urbanverse.bench.oracle import oracle_stages, true_camera_height
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
METRICS = (
    "cat_acc",
    "recall_1m",
    "precision_1m",
    "pos_err_m",
    "yaw_err_deg",
    "volume_err",
    "ground_iou",
    "map25",
)


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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tours", type=int, default=5)
    parser.add_argument(
        "--first-tour", type=int, default=0,
        help="index of the first tour (its street's seed less 1, its walk's seed): "
        "--first-tour 10 --tours 10 runs tours 10-19",
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
        "--plots", type=Path, default=None, help="write a top-down map of each tour's matches here"
    )
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="STAGE.FIELD=VALUE",
        help="a gen setting to change (repeatable), as with urbanverse gen --set",
    )  # fmt: skip
    args = parser.parse_args()
    gen_cfg = apply_overrides(GenCfg(), args.overrides)
    modes = args.modes.split(",")
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"--modes: unknown {', '.join(sorted(unknown))}")
    if args.rerun_from and not args.keep:
        parser.error("--rerun-from needs --keep: the folder of an earlier run")
    if args.rerun_from and args.rerun_from not in {s.name for s in STAGES}:
        parser.error(
            f"--rerun-from: no stage {args.rerun_from!r} (stages: {', '.join(s.name for s in STAGES)})"
        )
    results: dict[str, list[dict]] = {m: [] for m in modes}
    by_class: dict[str, dict[str, list[int]]] = {m: {} for m in modes}
    resumed = bool(args.rerun_from)
    paths: list[dict] = []
    gen_s_per_min: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        for i in range(args.first_tour, args.first_tour + args.tours):
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
            gt = (
                load_record(TourGroundTruth, gt_path_for(video))
                if kept
                else run_render_tour(truth_dir, video, cfg)
            )
            for mode in modes:
                out = root / f"gen_{i}_{mode}"
                start = time.perf_counter()
                mode_cfg = gen_cfg
                if mode == "true_height":
                    recon_cfg = dataclasses.replace(gen_cfg.recon, camera_height_m=true_camera_height(gt))
                    mode_cfg = dataclasses.replace(gen_cfg, recon=recon_cfg)
                if resumed:
                    _drop_stages_from(out, args.rerun_from)
                report = run_gen(video, out, mode_cfg, resume=resumed, stages=_stages(mode, gt))
                elapsed = time.perf_counter() - start
                scene = load_scene(out)
                aligned = mode.startswith("true_poses")
                match = match_objects(scene, truth, gt, aligned)
                scores = compare_scenes(scene, truth, gt, aligned=aligned, match=match)
                results[mode].append(scores)
                for k, row in class_counts(match, scene, truth).items():
                    total = by_class[mode].setdefault(k, [0, 0, 0, 0])
                    total[:] = [a + b for a, b in zip(total, row, strict=True)]
                shown = " ".join(f"{k}={scores.get(k, math.nan):.3f}" for k in METRICS)
                if mode == "blind" and not resumed:
                    gen_s_per_min.append(elapsed / args.seconds * 60.0)
                if mode == "blind":
                    paths.append(camera_path_errors(scene, gt))
                    shown += " " + " ".join(f"{k}={v:.3f}" for k, v in paths[-1].items())
                if args.plots:
                    title = f"tour {i} ({style}), {mode}"
                    plot_match(scene, truth, gt, args.plots / f"match_{i}_{mode}.png", title, aligned)
                counts = f"objects={scores['generated']:.0f}/{scores['true_seen']:.0f}"
                print(f"tour {i} ({style}) {mode}: {shown} {counts} "
                      f"recon={report.recon_mode} gen_s={elapsed:.1f}", flush=True)  # fmt: skip
    print("\n| mode | " + " | ".join(METRICS) + " |")
    print("|---" * (len(METRICS) + 1) + "|")
    for mode in modes:
        means = [np.nanmedian([r[k] for r in results[mode]]) for k in METRICS]
        print(f"| {mode} | " + " | ".join(f"{v:.3f}" for v in means) + " |")
    for mode in modes:  # the medians above weigh a tour with 3 matched objects like one with 30
        r = results[mode]
        seen, generated, matched = (sum(x[k] for x in r) for k in ("true_seen", "generated", "matched"))
        hits = sum(x["recall_1m"] * x["true_seen"] for x in r)
        near = sum(x["precision_1m"] * x["generated"] for x in r)
        right = sum(x["cat_acc"] * x["matched"] for x in r)
        ahead, hits_ahead = (sum(x[k] for x in r) for k in ("true_ahead", "hits_ahead"))
        pos, yaw = ([e for x in r for e in x[k]] for k in ("pos_errors_m", "yaw_errors_deg"))
        print(
            f"pooled {mode}: recall_1m {hits:.0f}/{seen:.0f} = {hits / max(seen, 1):.3f} "
            f"(passed {hits - hits_ahead:.0f}/{seen - ahead:.0f}, ahead of the walk's end "
            f"{hits_ahead:.0f}/{ahead:.0f}), precision_1m {near:.0f}/{generated:.0f} = "
            f"{near / max(generated, 1):.3f}, "
            f"cat_acc {right:.0f}/{matched:.0f} = {right / max(matched, 1):.3f}, "
            f"pos_err_m {_median(pos):.2f} ({len(pos)} pairs), yaw_err_deg {_median(yaw):.1f} ({len(yaw)})"
        )
    if paths:
        print(
            "camera path (blind), per tour: "
            + ", ".join(f"{k} " + " / ".join(f"{p[k]:.3f}" for p in paths) for k in paths[0])
        )
    _print_class_table(by_class)
    blind = results.get("blind") or results[modes[0]]
    m = {k: float(np.nanmedian([r[k] for r in blind])) for k in METRICS}
    print(
        f"cat_acc={m['cat_acc']:.3f} recall_1m={m['recall_1m']:.3f} pos_err_m={m['pos_err_m']:.2f} "
        f"yaw_err_deg={m['yaw_err_deg']:.1f} ground_iou={m['ground_iou']:.3f} map25={m['map25']:.3f} "
        f"gen_s_per_video_min={np.median(gen_s_per_min) if gen_s_per_min else math.nan:.1f}"
    )


if __name__ == "__main__":
    main()
