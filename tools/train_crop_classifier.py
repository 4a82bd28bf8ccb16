"""Train the crop classifiers that name detector boxes and object proposals: linear probes on
MobileNetV2 embeddings.

1. Procedural streets (``--first-seed`` on, the styles in turn; the round-trip benchmark uses seeds
   1-20, so the default 1000 keeps them apart) and a tour through each, rendered to MP4 at 2 frames a
   second (every other tour with image augmentation);
2. every visible object's true 2D box in each decoded frame (at gen's 960 px working width), cut as
   gen cuts proposals (:func:`urbanverse.perception.crop_classifier.crop`), plus a jittered copy
   (each side moved by up to ``--jitter`` of the box's size: a proposal's box, projected from its
   dense points, is often twice the object's size and off its centre, and a probe that saw only
   near-exact boxes named 0.69 of such crops right against 0.91 of the true boxes', BENCHMARKS.md);
3. the crops gen itself names: ``--proposal-tours`` more streets (``--proposal-first-seed`` on),
   each walked as the round-trip benchmark walks (30 s at 10 frames a second, 1280x720), ``gen`` run
   blind on the MP4, and the boxes of its object proposals in their nearest keyframes
   (:func:`urbanverse.layout.proposals.proposal_views`) cut and labelled with the class of the true
   object nearest the proposal (within ``--proposal-match-m``, gen's frame aligned to the truth's
   by the camera paths), or left out. Jitter imitates loose boxes; these are them: a bollard's
   cluster smeared along the line of sight, a bench's box reaching over the tree behind it. They
   count ``--proposal-weight`` times a true box's crop in the fit;
4. 1280-d embeddings (:func:`urbanverse.perception.appearance.embed_crops`), and a multinomial
   logistic regression (scikit-learn) over the taxonomy classes with at least ``--min-crops`` box
   crops.

The last ``--held-out`` tours of each kind are scored first (accuracy per crop, printed per class for
the box crops), then the probe is fitted on all tours and saved with its record (seeds, counts,
held-out accuracy). The defaults rebuild the shipped ``assets/models/proposal_classifier.npz``, which
names gen's proposals (about an hour on 2 cores, 43 minutes of it the proposal tours); without
proposal tours, the box crops alone rebuild ``assets/models/crop_classifier.npz``, which names
detector boxes (about 16 minutes):

    python tools/train_crop_classifier.py
    python tools/train_crop_classifier.py --proposal-tours 0
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

from urbanverse.bench.evaluate import planar_alignment
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import run_gen
from urbanverse.gen.stages import StageRunner
from urbanverse.gen.table import STAGES
from urbanverse.layout.proposals import located_proposals, proposal_views
from urbanverse.layout.walked_ground import levelled
from urbanverse.perception.appearance import embed_crops
from urbanverse.perception.crop_classifier import (
    DEFAULT_CLASSIFIER,
    PROPOSAL_CLASSIFIER,
    CropClassifier,
    crop,
)
from urbanverse.procgen.street import STYLES, StreetCfg, generate_street
from urbanverse.render.augment import AugmentCfg
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.scene.record import load_scene

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


def proposal_crops(index: int, seed: int, root: Path, args) -> tuple[list, list]:
    """RGB crops of gen's proposal boxes in one tour, and the classes of the true objects they fell on."""
    scene_dir, video, out = root / f"pstreet_{seed}", root / f"ptour_{seed}.mp4", root / f"pgen_{seed}"
    truth = generate_street(StreetCfg(style=STYLES[index % len(STYLES)], seed=seed), scene_dir)
    gt = run_render_tour(scene_dir, video, TourCfg(seconds=args.seconds, width=1280, height=720, seed=seed))
    cfg = GenCfg()
    run_gen(video, out, cfg, resume=False)
    runner = StageRunner(out / "work")
    images = runner.load(STAGES, "video").images
    recon = runner.load(STAGES, "calibrate")
    cloud = levelled(runner.load(STAGES, "dense"), recon, cfg.proposals.walk_window_m)
    proposals = located_proposals(recon, cloud, images, cfg.proposals)
    to_truth = planar_alignment(load_scene(out), gt)
    true_xy = np.array([o.position[:2] for o in truth.objects]).reshape(-1, 2)
    crops, labels = [], []
    for p, views in zip(proposals, proposal_views(recon, proposals, cfg.proposals), strict=True):
        distance = np.linalg.norm(true_xy - (to_truth[:2, :2] @ p.xy + to_truth[:2, 2]), axis=1)
        if not len(distance) or distance.min() > args.proposal_match_m:
            continue
        category = truth.objects[int(np.argmin(distance))].category
        for keyframe, box in views:
            c = crop(images[keyframe], box, args.pad)
            if c is not None:
                crops.append(c)
                labels.append(category)
    return crops, labels


def _embedded_tours(args, start: float, proposals: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(embeddings (N, 1280), classes (N,), tour index (N,))`` of the box crops of ``args.tours``
    tours, or with ``proposals`` of the proposal crops of ``args.proposal_tours`` tours."""
    rng = np.random.default_rng(args.first_seed)
    embeddings, labels, tour_of = [], [], []
    count = args.proposal_tours if proposals else args.tours
    kind = "proposal tour" if proposals else "tour"
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(count):
            if proposals:
                crops, names = proposal_crops(i, args.proposal_first_seed + i, Path(tmp), args)
            else:
                crops, names = tour_crops(i, args.first_seed + i, Path(tmp), args, rng)
            embeddings.append(embed_crops(crops, size=args.size) if crops else np.zeros((0, 1280)))
            labels += names
            tour_of += [i] * len(names)
            elapsed = time.perf_counter() - start
            print(f"{kind} {i + 1}/{count}: {len(names)} crops ({elapsed:.0f} s)", flush=True)
    x = np.concatenate(embeddings) if embeddings else np.zeros((0, 1280))
    return x, np.array(labels, dtype=str), np.array(tour_of, dtype=int)


def _cached(path: Path | None, embed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``embed()``'s ``(embeddings, classes, tour index)``, read from the ``.npz`` at ``path`` where it
    exists, else computed and written there (when ``path`` is given)."""
    if path is not None and path.exists():
        with np.load(path) as saved:
            out = saved["x"].astype(np.float32), saved["y"], saved["tour_of"]
        print(f"{len(out[1])} crop embeddings read from {path}")
        return out
    x, y, tour_of = embed()
    if path is not None:
        np.savez_compressed(path, x=x.astype(np.float16), y=y, tour_of=tour_of)
    return x, y, tour_of


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
    parser.add_argument("--proposal-tours", type=int, default=40, help="tours gen runs on for proposal crops")
    parser.add_argument("--proposal-first-seed", type=int, default=2000)
    parser.add_argument(
        "--proposal-match-m", type=float, default=1.0,
        help="how near a true object a proposal's centre must lie to take its class (m)",
    )  # fmt: skip
    parser.add_argument(
        "--proposal-weight", type=float, default=50.0, help="weight of a proposal crop against a box crop"
    )
    parser.add_argument(
        "--out", type=Path, default=None,
        help=f"where to save the probe (default {PROPOSAL_CLASSIFIER.name} in assets/models, or "
        f"{DEFAULT_CLASSIFIER.name} with --proposal-tours 0)",
    )  # fmt: skip
    parser.add_argument(
        "--embeddings", type=Path, default=None,
        help="an .npz of the box crops' embeddings: read if it exists (no tour is rendered), else "
        "written after rendering, so that other settings (--c, --min-crops) refit in a minute",
    )  # fmt: skip
    parser.add_argument(
        "--proposal-embeddings", type=Path, default=None, help="the same for the proposal crops"
    )
    args = parser.parse_args()
    if args.out is None:
        args.out = PROPOSAL_CLASSIFIER if args.proposal_tours > 0 else DEFAULT_CLASSIFIER
    start = time.perf_counter()
    boxes = _cached(args.embeddings, lambda: _embedded_tours(args, start, proposals=False))
    proposed = _cached(args.proposal_embeddings, lambda: _embedded_tours(args, start, proposals=True))
    counts = collections.Counter(boxes[1].tolist())
    learned = {c for c, n in counts.items() if n >= args.min_crops}
    (x, y, tour_of), (px, py, ptour) = (
        tuple(a[np.isin(part[1], list(learned))] for a in part) for part in (boxes, proposed)
    )
    test = np.r_[tour_of >= args.tours - args.held_out, ptour >= args.proposal_tours - args.held_out]
    from_proposal = np.r_[np.zeros(len(y), bool), np.ones(len(py), bool)]
    x, y = np.concatenate([x, px]), np.concatenate([y, py])
    weight = np.where(from_proposal, args.proposal_weight, 1.0)

    def fit(rows: np.ndarray) -> LogisticRegression:
        return LogisticRegression(C=args.c, max_iter=3000).fit(x[rows], y[rows], sample_weight=weight[rows])

    predicted = fit(~test).predict(x[test])
    right, kind = predicted == y[test], from_proposal[test]
    accuracy = float(right[~kind].mean())
    proposal_accuracy = float(right[kind].mean()) if kind.any() else None
    print(f"held-out accuracy per crop: {accuracy:.3f} over {int((~kind).sum())} box crops", end="")
    print(f", {proposal_accuracy:.3f} over {int(kind.sum())} proposal crops" if kind.any() else "")
    tested = y[test][~kind]
    for name in sorted(set(tested), key=lambda c: -(tested == c).sum()):
        rows = tested == name
        top = collections.Counter(predicted[~kind][rows]).most_common(3)
        print(f"  {name:24s} {rows.sum():5d}  {(predicted[~kind][rows] == name).mean():.2f}  {top}")
    probe = fit(np.ones(len(y), dtype=bool))
    meta = {
        "first_seed": args.first_seed, "tours": args.tours, "seconds": args.seconds, "fps": args.fps,
        "crops": int((~from_proposal).sum()), "held_out_tours": args.held_out,
        "held_out_accuracy": round(accuracy, 4), "jitter": args.jitter, "c": args.c,
        "proposal_first_seed": args.proposal_first_seed, "proposal_tours": args.proposal_tours,
        "proposal_crops": int(from_proposal.sum()), "proposal_weight": args.proposal_weight,
        "proposal_match_m": args.proposal_match_m,
        "held_out_proposal_accuracy": None if proposal_accuracy is None else round(proposal_accuracy, 4),
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
