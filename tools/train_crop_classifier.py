"""Train the crop classifier that names object proposals: a linear probe on MobileNetV2 embeddings.

1. Procedural streets (``--first-seed`` on, the styles in turn; the round-trip benchmark uses seeds
   1-5, so the default 1000 keeps them apart) and a tour through each, rendered to MP4 at 2 frames a
   second (every other tour with image augmentation);
2. every visible object's true 2D box in each decoded frame (at gen's 960 px working width), cut as
   gen cuts proposals (:func:`urbanverse.perception.crop_classifier.crop`), plus a jittered copy
   (each side moved by up to ``--jitter`` of the box's size: a proposal's box, projected from its
   dense points, is often twice the object's size and off its centre, and a probe that saw only
   near-exact boxes named 0.69 of such crops right against 0.91 of the true boxes', BENCHMARKS.md);
3. 1280-d embeddings (:func:`urbanverse.perception.appearance.embed_crops`), and a multinomial
   logistic regression (scikit-learn) over the taxonomy classes with at least ``--min-crops`` crops.

The last ``--held-out`` tours are scored first (accuracy per crop, printed per class), then the
probe is fitted on all tours and saved with its record (seeds, counts, held-out accuracy). The
defaults rebuild the shipped ``assets/models/crop_classifier.npz`` (about 16 minutes on 2 cores):

    python tools/train_crop_classifier.py
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from sklearn.linear_model import LogisticRegression

from urbanverse.perception.appearance import embed_crops
from urbanverse.perception.crop_classifier import DEFAULT_CLASSIFIER, CropClassifier, crop
from urbanverse.procgen.street import STYLES, StreetCfg, generate_street
from urbanverse.render.augment import AugmentCfg
from urbanverse.render.tour import TourCfg, run_render_tour

WORKING_WIDTH = 960  # gen's default working width (video stage)


def tour_crops(index: int, seed: int, root: Path, args, rng: np.random.Generator) -> tuple[list, list]:
    """RGB crops and their classes from one rendered tour."""
    scene_dir, video = root / f"street_{seed}", root / f"tour_{seed}.mp4"
    generate_street(StreetCfg(style=STYLES[index % len(STYLES)], seed=seed), scene_dir)
    cfg = TourCfg(
        seconds=args.seconds, fps=args.fps, width=1280, height=720, seed=seed,
        augment=AugmentCfg() if index % 2 else None,
    )  # fmt: skip
    gt = run_render_tour(scene_dir, video, cfg)
    scale = WORKING_WIDTH / cfg.width
    cap = cv2.VideoCapture(str(video))
    crops, labels = [], []
    for frame in gt.frames:
        ok, bgr = cap.read()
        if not ok:
            break
        size = (WORKING_WIDTH, round(cfg.height * scale))
        rgb = cv2.cvtColor(cv2.resize(bgr, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2RGB)
        for v in frame.visible:
            if v.pixels < args.min_pixels:
                continue
            box = np.array(v.box_xyxy, dtype=float) * scale
            w, h = box[2] - box[0], box[3] - box[1]
            shift = rng.uniform(-args.jitter, args.jitter, 4) * np.array([w, h, w, h])
            for b in (box, box + shift):
                c = crop(rgb, tuple(b), args.pad)
                if c is not None:
                    crops.append(c)
                    labels.append(v.category)
    cap.release()
    return crops, labels


def _embedded_tours(args, start: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(embeddings (N, 1280), classes (N,), tour index (N,))`` of the crops of ``args.tours`` tours."""
    rng = np.random.default_rng(args.first_seed)
    embeddings, labels, tour_of = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.tours):
            crops, names = tour_crops(i, args.first_seed + i, Path(tmp), args, rng)
            embeddings.append(embed_crops(crops, size=args.size))
            labels += names
            tour_of += [i] * len(names)
            print(
                f"tour {i + 1}/{args.tours}: {len(names)} crops ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    return np.concatenate(embeddings), np.array(labels), np.array(tour_of)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tours", type=int, default=32)
    parser.add_argument("--held-out", type=int, default=4, help="tours scored before the final fit")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--fps", type=float, default=2.0)
    parser.add_argument("--min-pixels", type=int, default=150, help="visible pixels at 1280x720")
    parser.add_argument("--min-crops", type=int, default=20, help="crops a class needs to be learned")
    parser.add_argument("--pad", type=float, default=0.1)
    parser.add_argument(
        "--jitter", type=float, default=0.8, help="how far a jittered copy's sides move (share of its size)"
    )
    parser.add_argument("--size", type=int, default=128, help="embedding input size (px)")
    parser.add_argument("--c", type=float, default=2.0, help="inverse L2 regularisation strength")
    parser.add_argument("--out", type=Path, default=DEFAULT_CLASSIFIER)
    parser.add_argument(
        "--embeddings", type=Path, default=None,
        help="an .npz of the crops' embeddings: read if it exists (no tour is rendered), else written "
        "after rendering, so that other settings (--c, --min-crops) refit in a minute",
    )  # fmt: skip
    args = parser.parse_args()
    start = time.perf_counter()
    if args.embeddings is not None and args.embeddings.exists():
        saved = np.load(args.embeddings)
        x, y, tour_of = saved["x"].astype(np.float32), saved["y"], saved["tour_of"]
        print(f"{len(y)} crop embeddings read from {args.embeddings}")
    else:
        x, y, tour_of = _embedded_tours(args, start)
        if args.embeddings is not None:
            np.savez_compressed(args.embeddings, x=x.astype(np.float16), y=y, tour_of=tour_of)
    counts = collections.Counter(y.tolist())
    keep = np.array([counts[c] >= args.min_crops for c in y])
    x, y, tour_of = x[keep], y[keep], tour_of[keep]
    test = tour_of >= args.tours - args.held_out

    def fit(rows: np.ndarray) -> LogisticRegression:
        return LogisticRegression(C=args.c, max_iter=3000).fit(x[rows], y[rows])

    predicted = fit(~test).predict(x[test])
    accuracy = float((predicted == y[test]).mean())
    print(f"held-out accuracy per crop: {accuracy:.3f} over {int(test.sum())} crops")
    for name in sorted(set(y[test]), key=lambda c: -(y[test] == c).sum()):
        rows = y[test] == name
        top = collections.Counter(predicted[rows]).most_common(3)
        print(f"  {name:24s} {rows.sum():5d}  {(predicted[rows] == name).mean():.2f}  {top}")
    probe = fit(np.ones(len(y), dtype=bool))
    meta = {
        "first_seed": args.first_seed, "tours": args.tours, "seconds": args.seconds, "fps": args.fps,
        "crops": int(len(y)), "held_out_tours": args.held_out, "held_out_accuracy": round(accuracy, 4),
        "jitter": args.jitter, "c": args.c,
    }  # fmt: skip
    CropClassifier(
        classes=tuple(str(c) for c in probe.classes_),
        weight=probe.coef_.astype(np.float32),
        bias=probe.intercept_.astype(np.float32),
        size=args.size,
        pad=args.pad,
        meta=meta,
    ).save(args.out)
    print(f"saved {args.out} ({args.out.stat().st_size / 1e3:.0f} kB): {len(probe.classes_)} classes, "
          f"{len(y)} crops, {time.perf_counter() - start:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
