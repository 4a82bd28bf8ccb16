"""Is every scene gen makes from real footage and edited video a whole street a robot can use?

Runs ``gen`` on the real media we have, offline: the bundled city walk, the same walk rolled 8 degrees
with a handheld wobble (+-2 deg, +-6 px), OpenCV's ``vtest.avi``, ``leuvenA.jpg`` and the Leuven pair
(package ``opencv-doc``), ``bus.jpg`` (from the ultralytics wheel, when ``--media`` holds it), and,
one scene per shot, two edited videos of five shots (``urbanverse.bench.edited_video``: seed 7 with the
walk and ``vtest.avi`` as its first shots, seed 8 of tours, one under a burnt-in caption). For each
scene it prints the ground model fitted and its agreement with the ground seen, the ground's pieces
and hole share (``urbanverse.bench.ground_metrics``, counted as ``scene_sanity.py`` counts them), its
area and inferred share, the objects, those off the ground, those dropped, and, for the one-scene
runs, whether the physics check passes. Look at each folder's ``compare_*.png`` and ``preview.png``
too: the figures say whether the ground is whole, the pictures whether it is the street.

    python tools/bench_real_footage.py --out /tmp/real [--media DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import cv2
import numpy as np
import shapely

from urbanverse.bench.edited_video import EditCfg, build_edited_video
from urbanverse.bench.ground_metrics import scene_checks
from urbanverse.errors import InputError
from urbanverse.gen.config import GenCfg
from urbanverse.gen.pipeline import run_gen
from urbanverse.gen.shots import run_gen_per_shot
from urbanverse.scene.checks import check_scene_folder
from urbanverse.scene.physics_check import PhysicsCheckCfg
from urbanverse.scene.record import load_scene

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "assets" / "samples" / "city_walk.mp4"
OPENCV_DATA = Path("/usr/share/doc/opencv-doc/examples/data")


def rolled_and_shaken(source: Path, out: Path, seed: int = 0) -> Path:
    """``source`` rolled 8 deg with a slow random wobble of +-2 deg and +-6 px of jitter (a handheld
    phone), zoomed 1.2x so no border shows; the same file for the same seed."""
    cap = cv2.VideoCapture(str(source))
    fps, w, h = cap.get(cv2.CAP_PROP_FPS), int(cap.get(3)), int(cap.get(4))
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    rng, roll = np.random.default_rng(seed), 0.0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        roll = 0.9 * roll + rng.normal(0, 0.5)
        m = cv2.getRotationMatrix2D((w / 2, h / 2), 8.0 + roll, 1.2)
        m[:, 2] += rng.normal(0, 3, 2)
        writer.write(cv2.warpAffine(frame, m, (w, h), borderMode=cv2.BORDER_REFLECT))
    cap.release()
    writer.release()
    return out


def inputs(work: Path, media: Path | None) -> list[tuple[str, Path, bool]]:
    """``(name, input, one scene per shot)`` of every input found."""

    def find(name: str) -> Path | None:
        for folder in (media, OPENCV_DATA):
            if folder is not None and (folder / name).is_file():
                return folder / name
        return None

    out = [
        ("sample", SAMPLE, False),
        ("sample_rolled", rolled_and_shaken(SAMPLE, work / "rolled.mp4"), False),
    ]
    vtest, leuven_a, leuven_b, bus = (find(n) for n in ("vtest.avi", "leuvenA.jpg", "leuvenB.jpg", "bus.jpg"))
    out += [
        (name, path, False) for name, path in (("vtest", vtest), ("leuvenA", leuven_a), ("bus", bus)) if path
    ]
    if leuven_a and leuven_b:
        pair = work / "leuven_pair"
        pair.mkdir(exist_ok=True)
        for image in (leuven_a, leuven_b):
            shutil.copy(image, pair / image.name)
        out.append(("leuven_pair", pair, False))
    cfg = EditCfg(shots=5, shot_s=(3.0, 5.0), width=640, height=360)
    real = [SAMPLE, *([vtest] if vtest else [])]
    out.append(("edited_7", build_edited_video(work / "edited_7.mp4", 7, cfg, real_clips=real).path, True))
    out.append(("edited_8", build_edited_video(work / "edited_8.mp4", 8, cfg).path, True))
    return out


def row(name: str, scene_dir: Path, physics: bool) -> str:
    """One table row for the scene in ``scene_dir``."""
    scene = load_scene(scene_dir)
    report = json.loads((scene_dir / "report.json").read_text())
    fit = report["ground_model"]
    checks = scene_checks(scene)
    dropped = sum("dropped" in w for w in report["warnings"])
    stable = check_scene_folder(scene_dir, PhysicsCheckCfg()).report.ok if physics else None
    area = shapely.union_all([shapely.Polygon(r.polygon) for r in scene.ground]).area
    return (
        f"| {name} | {fit['kind']} ({fit['agreement'][fit['kind']]:.2f}) | {checks['ground_pieces']:.0f} | "
        f"{checks['hole_share']:.3f} | {area:.0f} | {fit['inferred_share']:.2f} | {len(scene.objects)} | "
        f"{checks['off_ground']:.0f} | {dropped} | {'' if stable is None else ('yes' if stable else 'NO')} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the inputs built and the scenes")
    parser.add_argument("--media", type=Path, help="folder holding vtest.avi, leuvenA/B.jpg, bus.jpg")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = [
        "| scene | ground model (agreement) | pieces | hole share | ground m2 | inferred share | objects "
        "| off the ground | dropped | physics check |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, source, per_shot in inputs(args.out, args.media):
        out, t0 = args.out / name, time.perf_counter()
        try:
            if per_shot:
                report = run_gen_per_shot(source, out, GenCfg())
                rows += [
                    row(f"{name}/{s.folder}", out / s.folder, False) for s in report.shots if s.status == "ok"
                ]
                rows += [
                    f"| {name}/{s.folder} | no scene: {s.error} | | | | | | | | |"
                    for s in report.shots
                    if s.status != "ok"
                ]
            else:
                run_gen(source, out, GenCfg())
                rows.append(row(name, out, True))
        except InputError as exc:
            rows.append(f"| {name} | no scene: {exc} | | | | | | | | |")
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
