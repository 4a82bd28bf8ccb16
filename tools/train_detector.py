"""Train a small urban-object detector from the project's own renders and export it for cv2.dnn.

1. ``urbanverse procgen`` streets (seeds ``--first-seed``.., styles in turn) and
   ``urbanverse render-tour`` tours through them with per-frame PNGs and ground truth;
2. a YOLO dataset from the tours' ``*_gt.json`` (visible objects' 2D boxes; buildings and ground
   features left out, tiny boxes dropped), class names = taxonomy L3 classes;
3. ultralytics training from a model yaml (no pretrained weights exist offline), on the CPU;
4. ONNX export plus a ``.json`` sidecar (class names, input size) that
   ``urbanverse.perception.onnx_yolo`` reads: ``--detector <out>.onnx`` then runs without
   ultralytics.

Runs in an environment with ultralytics (``pip install 'urbanverse[yolo]' onnx``); the streets and
tours are made by the ``urbanverse`` command given with ``--urbanverse`` (so a separate ultralytics
environment can drive the main one). Example:

    python tools/train_detector.py --out assets/models/urban_det --scenes 4 --epochs 30 \
        --urbanverse .venv/bin/urbanverse --work /tmp/train_det
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

STYLES = ("residential", "commercial", "intersection", "plaza")
SKIP_L1 = ("buildings_and_structures", "ground_features")


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def make_tours(args) -> list[Path]:
    """Procedural streets and rendered tours; returns the ground-truth files."""
    gts = []
    for i in range(args.scenes):
        seed = args.first_seed + i
        scene = args.work / f"scene_{seed}"
        tour = args.work / f"tour_{seed}"
        gt = tour / "tour_gt.json"
        if not (scene / "scene.json").is_file():
            shutil.rmtree(scene, ignore_errors=True)
            _run(
                [args.urbanverse, "procgen", "-o", str(scene), "--seed", str(seed), "--style", STYLES[i % 4]]
            )
        if not gt.is_file():
            w, h = args.size
            _run([
                args.urbanverse, "render-tour", str(scene), "-o", str(tour / "tour.mp4"),
                "--seconds", str(args.tour_seconds), "--fps", str(args.fps), "--seed", str(seed),
                "--width", str(w), "--height", str(h), "--frames-dir", str(tour / "frames"),
                "--augment" if i % 2 else "--no-augment",
            ])  # fmt: skip
        gts.append(gt)
    return gts


def make_dataset(gts: list[Path], args) -> tuple[Path, list[str]]:
    """A YOLO detection dataset (images symlinked, labels written); returns data.yaml and class names."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from urbanverse.assets.taxonomy import TAXONOMY

    items = []  # (image path, [(category, box)], w, h)
    for gt_path in gts:
        gt = json.loads(gt_path.read_text())
        w, h = gt["intrinsics"]["width"], gt["intrinsics"]["height"]
        for f in gt["frames"]:
            boxes = []
            for v in f["visible"]:
                c = TAXONOMY.get(v["category"])
                x1, y1, x2, y2 = v["box_xyxy"]
                if c is None or c.l1 in SKIP_L1 or v["pixels"] < args.min_pixels or y2 - y1 < 8:
                    continue
                boxes.append((v["category"], (x1, y1, x2, y2)))
            items.append((gt_path.parent / "frames" / "rgb" / f"{f['index']:06d}.png", boxes, w, h))
    names = sorted({c for _, boxes, _, _ in items for c, _ in boxes})
    index = {n: i for i, n in enumerate(names)}
    random.Random(0).shuffle(items)
    n_val = max(1, len(items) // 10)
    root = args.work / "dataset"
    shutil.rmtree(root, ignore_errors=True)
    for k, (img, boxes, w, h) in enumerate(items):
        split = "val" if k < n_val else "train"
        (root / "images" / split).mkdir(parents=True, exist_ok=True)
        (root / "labels" / split).mkdir(parents=True, exist_ok=True)
        stem = f"{img.parent.parent.parent.name}_{img.stem}"
        os.symlink(img, root / "images" / split / f"{stem}.png")
        rows = [
            f"{index[c]} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} "
            f"{(y2 - y1) / h:.6f}"
            for c, (x1, y1, x2, y2) in boxes
        ]
        (root / "labels" / split / f"{stem}.txt").write_text("\n".join(rows) + ("\n" if rows else ""))
    data = root / "data.yaml"
    lines = [f"path: {root}", "train: images/train", "val: images/val", "names:"]
    lines += [f"  {i}: {n}" for i, n in enumerate(names)]
    data.write_text("\n".join(lines) + "\n")
    print(f"dataset: {len(items)} images ({n_val} val), {len(names)} classes: {', '.join(names)}")
    return data, names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="output stem: writes <out>.onnx and <out>.json")
    ap.add_argument("--work", type=Path, default=Path("/tmp/urbanverse_train_det"))
    ap.add_argument("--urbanverse", default="urbanverse", help="the urbanverse command making the data")
    ap.add_argument("--scenes", type=int, default=4)
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--tour-seconds", type=float, default=30.0)
    ap.add_argument("--fps", type=float, default=2.0)
    ap.add_argument("--size", type=lambda s: tuple(int(v) for v in s.split("x")), default=(640, 360))
    ap.add_argument("--min-pixels", type=int, default=40)
    ap.add_argument("--model", default="yolo11n.yaml", help="ultralytics model yaml (trained from scratch)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument(
        "--hours", type=float, default=None, help="train for this long instead (ultralytics time=)"
    )
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("YOLO_OFFLINE", "1")

    t0 = time.time()
    data, names = make_dataset(make_tours(args), args)
    t_data = time.time() - t0
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(args.threads)
    model = YOLO(args.model)
    t1 = time.time()
    extra = {"time": args.hours} if args.hours else {}
    model.train(
        **extra,
        data=str(data),
        epochs=args.epochs,
        imgsz=args.imgsz,
        batch=args.batch,
        device="cpu",
        workers=0,
        plots=False,
        project=str(args.work / "runs"),
        name="det",
        exist_ok=True,
        amp=False,
        verbose=False,
    )
    t_train = time.time() - t1
    best = args.work / "runs" / "det" / "weights" / "best.pt"
    w, h = args.size
    ih = -(-round(h * args.imgsz / max(w, h)) // 32) * 32  # letterboxed height, multiple of 32
    iw = -(-round(w * args.imgsz / max(w, h)) // 32) * 32
    onnx = Path(
        YOLO(str(best)).export(format="onnx", imgsz=(ih, iw), opset=17, dynamic=False, simplify=False)
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(onnx, args.out.with_suffix(".onnx"))
    meta = {
        "names": names,
        "imgsz": [ih, iw],
        "task": "detect",
        "trained_from": args.model,
        "epochs": args.epochs if not args.hours else f"{args.hours} h",
        "data": f"{args.scenes} procedural streets (seeds {args.first_seed}..), tours {args.tour_seconds}s "
        f"at {args.fps} fps, {w}x{h}",
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    size_mb = args.out.with_suffix(".onnx").stat().st_size / 1e6
    print(f"wrote {args.out.with_suffix('.onnx')} ({size_mb:.1f} MB) and {args.out.with_suffix('.json')}")
    print(f"data {t_data:.0f} s, training {t_train:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
