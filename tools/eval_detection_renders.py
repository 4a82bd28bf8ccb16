"""Precision / recall of the detection stage on rendered tours, against the tour's 2D ground truth.

Usage (a procedural street, a tour rendered with per-frame PNGs, then the evaluation):

    urbanverse procgen -o /tmp/street --seed 2
    urbanverse render-tour /tmp/street -o /tmp/tour/tour.mp4 --seconds 20 --fps 2 \
        --width 1280 --height 720 --frames-dir /tmp/tour/frames
    python tools/eval_detection_renders.py /tmp/tour/tour_gt.json /tmp/tour/frames/rgb [--track]

Ground truth: ``tour_gt.json`` ``frames[i].visible[]`` (category, ``box_xyxy``, ``pixels``).
Objects smaller than ``--min-height`` px or ``--min-pixels`` visible pixels, and buildings (not a
detector's job), are "ignore" regions: detections on them count neither way. Matching per frame:
Hungarian on IoU >= ``--iou``, class-agnostic; a match is then "correct" at L3 (same class), L2 or
L1 of the taxonomy. Prints per-category recall (located / correct L1) and precision, the overall
figures, seconds per frame per part, and with ``--track`` the tracking figures (identity purity).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

from urbanverse.assets.taxonomy import TAXONOMY
from urbanverse.perception.boxes import iou_matrix
from urbanverse.perception.detect import DetectionCfg, run_detection

IGNORED_L1 = ("buildings_and_structures", "ground_features")


def _path(l3: str) -> tuple[str, str, str]:
    c = TAXONOMY.get(l3)
    return (c.l1, c.l2, c.l3) if c else ("?", "?", l3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gt", type=Path, help="tour_gt.json")
    ap.add_argument("rgb_dir", type=Path, help="folder of the tour's RGB PNGs (frames-dir/rgb)")
    ap.add_argument("--every", type=int, default=1, help="use every n-th frame")
    ap.add_argument("--iou", type=float, default=0.5)
    ap.add_argument("--min-height", type=float, default=24.0, help="smaller GT boxes are ignore regions (px)")
    ap.add_argument(
        "--min-pixels", type=int, default=300, help="GT objects with fewer visible pixels: ignore"
    )
    ap.add_argument("--classifier", default="auto", choices=["auto", "on", "off"])
    ap.add_argument("--min-score", type=float, default=0.4)
    ap.add_argument("--detector", default="ssd")
    ap.add_argument("--track", action="store_true", help="also run tracking and report identity purity")
    args = ap.parse_args()

    gt = json.loads(args.gt.read_text())
    frames_gt = gt["frames"][:: args.every]
    inputs = []
    for f in frames_gt:
        p = args.rgb_dir / f"{f['index']:06d}.png"
        if not p.is_file():
            print(f"missing frame {p}", file=sys.stderr)
            return 2
        inputs.append((int(f["index"]), p))
    cfg = DetectionCfg(classifier=args.classifier, min_score=args.min_score, detector=args.detector)
    run_detection(inputs[:1], cfg)  # load models outside the timing
    t0 = time.perf_counter()
    dets = run_detection(inputs, cfg)
    wall = time.perf_counter() - t0

    gt_n, located, correct = Counter(), Counter(), {lvl: Counter() for lvl in ("l1", "l2", "l3")}
    det_n, det_tp = Counter(), Counter()
    confusion: dict[str, Counter] = defaultdict(Counter)
    for fgt, fd in zip(frames_gt, dets.frames, strict=True):
        vis = fgt["visible"]
        keep = [
            v
            for v in vis
            if v["box_xyxy"][3] - v["box_xyxy"][1] >= args.min_height
            and v["pixels"] >= args.min_pixels
            and _path(v["category"])[0] not in IGNORED_L1
        ]
        ignore = [v for v in vis if v not in keep]
        preds = [d for d in fd.detections if not d.dynamic]
        for v in keep:
            gt_n[v["category"]] += 1
        if not preds:
            continue
        pboxes = np.array([d.box for d in preds])
        matched_p: set[int] = set()
        if keep:
            gboxes = np.array([v["box_xyxy"] for v in keep], dtype=np.float64)
            iou = iou_matrix(gboxes, pboxes)
            rows, cols = linear_sum_assignment(-iou)
            for i, j in zip(rows, cols, strict=True):
                if iou[i, j] < args.iou:
                    continue
                matched_p.add(j)
                g, p = _path(keep[i]["category"]), preds[j].category_path
                located[keep[i]["category"]] += 1
                det_tp[preds[j].category] += 1
                confusion[keep[i]["category"]][preds[j].category] += 1
                for k, lvl in enumerate(("l1", "l2", "l3")):
                    if g[: k + 1] == tuple(p[: k + 1]):
                        correct[lvl][keep[i]["category"]] += 1
        ig = np.array([v["box_xyxy"] for v in ignore], dtype=np.float64).reshape(-1, 4)
        for j, d in enumerate(preds):
            if j in matched_p:
                det_n[d.category] += 1
            elif len(ig) and iou_matrix(pboxes[j : j + 1], ig).max() >= args.iou:
                continue  # on an ignore region
            else:
                det_n[d.category] += 1

    print(f"frames: {len(inputs)}  detectors: {', '.join(dets.detectors)}  IoU >= {args.iou}")
    print(f"{'GT category':24s} {'GT':>5s} {'located':>8s} {'L1 ok':>6s} {'L3 ok':>6s}  predicted as")
    for cat, n in gt_n.most_common():
        conf = ", ".join(f"{k} {v}" for k, v in confusion[cat].most_common(3))
        print(
            f"{cat:24s} {n:5d} {located[cat] / n:8.2f} {correct['l1'][cat] / n:6.2f} "
            f"{correct['l3'][cat] / n:6.2f}  {conf}"
        )
    print(f"\n{'detected category':24s} {'dets':>5s} {'prec':>6s}")
    for cat, n in det_n.most_common():
        print(f"{cat:24s} {n:5d} {det_tp[cat] / n:6.2f}")
    total_gt, total_det = sum(gt_n.values()), sum(det_n.values())
    rec = sum(located.values()) / max(total_gt, 1)
    rec_l1 = sum(correct["l1"].values()) / max(total_gt, 1)
    prec = sum(det_tp.values()) / max(total_det, 1)
    n = len(inputs)
    parts = " ".join(f"{k}={1000 * v / n:.0f}ms" for k, v in sorted(dets.seconds.items()))
    print(f"\noverall: recall(located)={rec:.3f} recall(L1 correct)={rec_l1:.3f} precision={prec:.3f}")
    print(f"detection per frame: {1000 * wall / n:.0f} ms ({parts})")
    if args.track:
        from urbanverse.perception.track import TrackingCfg, run_tracking

        t0 = time.perf_counter()
        res = run_tracking(inputs, dets, TrackingCfg())
        t_track = time.perf_counter() - t0
        # identity purity: the share of a track's observations on its majority GT object
        gt_by_frame = {int(f["index"]): f["visible"] for f in frames_gt}
        pure, obs = 0, 0
        for trk in res.tracks.tracks:
            ids = []
            for o in trk.observations:
                vis = gt_by_frame[o.frame_index]
                if not vis:
                    continue
                iou = iou_matrix(np.array([o.box]), np.array([v["box_xyxy"] for v in vis], dtype=float))[0]
                if iou.max() >= args.iou:
                    ids.append(vis[int(iou.argmax())]["object_id"])
            if ids:
                pure += Counter(ids).most_common(1)[0][1]
                obs += len(ids)
        lens = [len(t.observations) for t in res.tracks.tracks]
        print(
            f"tracking: {len(res.tracks.tracks)} tracks (dropped short {res.tracks.dropped_short}), "
            f"mean length {np.mean(lens) if lens else 0:.1f}, identity purity {pure / max(obs, 1):.3f}, "
            f"{1000 * t_track / n:.0f} ms/frame ({res.tracks.seconds})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
