r"""Train a small urban-object detector from the project's own renders and export it for cv2.dnn.

1. ``urbanverse procgen`` streets (seeds ``--first-seed``.., styles in turn) and
   ``urbanverse render-tour`` tours through them with per-frame PNGs and ground truth, ``--jobs`` at
   a time;
2. a YOLO dataset from the tours' ``*_gt.json`` (visible objects' 2D boxes; buildings and ground
   features left out, tiny boxes dropped), class names = taxonomy L3 classes; its images are JPEG
   copies (``--jpeg-quality``), so the dataset folder stands alone and is small enough to carry to
   another machine (about 50 KB a 640x360 frame at quality 90);
3. ultralytics training from a model yaml (no pretrained weights exist offline) on ``--device``
   (``auto``: the first CUDA GPU if torch sees one, else the CPU);
4. ONNX export plus a ``.json`` sidecar (class names, input size, the validation scores) that
   ``urbanverse.perception.onnx_yolo`` reads: ``--detector <out>.onnx`` then runs without
   ultralytics.

``--stage data`` stops after step 2 and ``--stage train --dataset DIR`` starts at step 3 with a
dataset made earlier, so the renders can be made where ``urbanverse`` is installed and the training
run where a GPU is (on the 2-core VM, 54 CPU-minutes of training on 216 frames reached a validation
mAP50 of 0.15: BENCHMARKS.md). Training needs an environment with ultralytics (``pip install
'urbanverse[yolo]' onnx``); the streets and tours are made by the ``urbanverse`` command given with
``--urbanverse`` (so a separate ultralytics environment can drive the main one). Examples:

    python tools/train_detector.py --out assets/models/urban_det --scenes 4 --epochs 30 \
        --urbanverse .venv/bin/urbanverse --work /tmp/train_det
    python tools/train_detector.py --stage data --scenes 48 --jobs 2 --work /tmp/train_det
    python tools/train_detector.py --stage train --dataset /tmp/train_det/dataset --epochs 100 \
        --batch 64 --out /tmp/urban_det
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

STYLES = ("residential", "commercial", "intersection", "plaza")
SKIP_L1 = ("buildings_and_structures", "ground_features")
#: The dataset's record beside ``data.yaml``: class names and how the renders were made.
RECORD = "dataset.json"


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _make_tour(args, i: int) -> Path:
    """Street ``i`` and a tour through it (each skipped when already made); its ground-truth file."""
    seed = args.first_seed + i
    scene = args.work / f"scene_{seed}"
    tour = args.work / f"tour_{seed}"
    gt = tour / "tour_gt.json"
    if not (scene / "scene.json").is_file():
        shutil.rmtree(scene, ignore_errors=True)
        _run([args.urbanverse, "procgen", "-o", str(scene), "--seed", str(seed), "--style", STYLES[i % 4]])
    if not gt.is_file():
        w, h = args.size
        _run([
            args.urbanverse, "render-tour", str(scene), "-o", str(tour / "tour.mp4"),
            "--seconds", str(args.tour_seconds), "--fps", str(args.fps), "--seed", str(seed),
            "--width", str(w), "--height", str(h), "--frames-dir", str(tour / "frames"),
            "--augment" if i % 2 else "--no-augment",
        ])  # fmt: skip
    return gt


def make_tours(args) -> list[Path]:
    """Procedural streets and rendered tours, ``args.jobs`` at a time; returns the ground-truth files."""
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        return list(pool.map(lambda i: _make_tour(args, i), range(args.scenes)))


def make_dataset(gts: list[Path], args) -> Path:
    """A YOLO detection dataset in ``args.work / "dataset"``: JPEG copies of the frames, their labels,
    ``data.yaml`` (paths relative to itself) and :data:`RECORD`; returns the folder."""
    import cv2

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
        frame = cv2.imread(str(img))
        if frame is None:
            raise SystemExit(f"{img}: frame missing or unreadable (rerun the tour)")
        cv2.imwrite(
            str(root / "images" / split / f"{stem}.jpg"), frame, [cv2.IMWRITE_JPEG_QUALITY, args.jpeg_quality]
        )
        rows = [
            f"{index[c]} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} "
            f"{(y2 - y1) / h:.6f}"
            for c, (x1, y1, x2, y2) in boxes
        ]
        (root / "labels" / split / f"{stem}.txt").write_text("\n".join(rows) + ("\n" if rows else ""))
    # No ``path:`` line: ultralytics then reads the splits beside data.yaml, wherever it was moved.
    lines = ["train: images/train", "val: images/val", "names:"] + [
        f"  {i}: {n}" for i, n in enumerate(names)
    ]
    (root / "data.yaml").write_text("\n".join(lines) + "\n")
    # The frames' own size (tours already in --work are reused, whatever --size says now).
    sizes = sorted({(w, h) for _, _, w, h in items})
    if len(sizes) != 1:
        raise SystemExit(f"{args.work}: frames of {len(sizes)} sizes {sizes}: use one size per --work")
    w, h = sizes[0]
    record = {
        "names": names,
        "size": [w, h],
        "data": f"{args.scenes} procedural streets (seeds {args.first_seed}..), tours {args.tour_seconds}s "
        f"at {args.fps} fps, {w}x{h}",
        "images": len(items),
        "val_images": n_val,
    }
    (root / RECORD).write_text(json.dumps(record, indent=2) + "\n")
    size_mb = sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) / 1e6
    print(f"dataset {root}: {len(items)} images ({n_val} val, {size_mb:.0f} MB)")
    print(f"{len(names)} classes: {', '.join(names)}")
    return root


def _device(setting: str) -> str:
    """ultralytics' device string: ``auto`` -> the first CUDA GPU if torch sees one, else ``cpu``."""
    if setting != "auto":
        return setting
    import torch

    return "0" if torch.cuda.is_available() else "cpu"


def train_and_export(dataset: Path, args) -> None:
    """Train on ``dataset`` (:func:`make_dataset`'s folder), validate, export ONNX and its sidecar."""
    import torch
    from ultralytics import YOLO

    record = json.loads((dataset / RECORD).read_text())
    device = _device(args.device)
    torch.set_num_threads(args.threads)
    t0 = time.time()
    extra = {"time": args.hours} if args.hours else {}
    YOLO(args.model).train(
        **extra,
        data=str(dataset / "data.yaml"),
        epochs=args.epochs,
        imgsz=args.imgsz,
        batch=args.batch,
        device=device,
        workers=0 if device == "cpu" else min(8, os.cpu_count() or 1),
        plots=False,
        project=str(args.work / "runs"),
        name="det",
        exist_ok=True,
        amp=device != "cpu",
        verbose=False,
    )
    t_train = time.time() - t0
    best = YOLO(str(args.work / "runs" / "det" / "weights" / "best.pt"))
    box = best.val(
        data=str(dataset / "data.yaml"), imgsz=args.imgsz, device=device, plots=False, verbose=False
    ).box
    scores = {
        "map50": float(box.map50),
        "map50_95": float(box.map),
        "precision": float(box.mp),
        "recall": float(box.mr),
    }
    w, h = record["size"]
    ih = -(-round(h * args.imgsz / max(w, h)) // 32) * 32  # letterboxed height, multiple of 32
    iw = -(-round(w * args.imgsz / max(w, h)) // 32) * 32
    onnx = Path(best.export(format="onnx", imgsz=(ih, iw), opset=17, dynamic=False, simplify=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(onnx, args.out.with_suffix(".onnx"))
    meta = {
        "names": record["names"],
        "imgsz": [ih, iw],
        "task": "detect",
        "trained_from": args.model,
        "epochs": args.epochs if not args.hours else f"{args.hours} h",
        "device": device,
        "data": record["data"],
        "validation": {k: round(v, 4) for k, v in scores.items()},
    }
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    size_mb = args.out.with_suffix(".onnx").stat().st_size / 1e6
    print(f"wrote {args.out.with_suffix('.onnx')} ({size_mb:.1f} MB) and {args.out.with_suffix('.json')}")
    print(
        f"training {t_train:.0f} s on {device}; validation "
        + " ".join(f"{k}={v:.3f}" for k, v in scores.items())
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage", choices=("all", "data", "train"), default="all",
                    help="all: data then training; data: streets, tours and the dataset only; train: "
                    "training on --dataset")  # fmt: skip
    ap.add_argument("--out", type=Path, help="output stem: writes <out>.onnx and <out>.json")
    ap.add_argument("--dataset", type=Path, help="with --stage train: a dataset folder made by --stage data")
    ap.add_argument("--work", type=Path, default=Path("/tmp/urbanverse_train_det"))
    ap.add_argument("--urbanverse", default="urbanverse", help="the urbanverse command making the data")
    ap.add_argument("--scenes", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=1, help="streets and tours made at once")
    ap.add_argument("--first-seed", type=int, default=100)
    ap.add_argument("--tour-seconds", type=float, default=30.0)
    ap.add_argument("--fps", type=float, default=2.0)
    ap.add_argument("--size", type=lambda s: tuple(int(v) for v in s.split("x")), default=(640, 360))
    ap.add_argument("--min-pixels", type=int, default=40)
    ap.add_argument("--jpeg-quality", type=int, default=90)
    ap.add_argument("--model", default="yolo11n.yaml", help="ultralytics model yaml (trained from scratch)")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument(
        "--hours", type=float, default=None, help="train for this long instead (ultralytics time=)"
    )
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--device", default="auto", help="ultralytics device: auto, cpu, 0, ...")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    args = ap.parse_args()
    if args.stage != "data" and args.out is None:
        ap.error("--out is required unless --stage data")
    if args.stage == "train" and (args.dataset is None or not (args.dataset / RECORD).is_file()):
        ap.error(
            f"--stage train needs --dataset: a folder with data.yaml and {RECORD} (made by --stage data)"
        )
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("YOLO_OFFLINE", "1")

    t0 = time.time()
    dataset = args.dataset if args.stage == "train" else make_dataset(make_tours(args), args)
    print(f"data {time.time() - t0:.0f} s")
    if args.stage != "data":
        train_and_export(dataset, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
