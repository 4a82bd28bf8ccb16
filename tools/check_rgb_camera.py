"""Check the batched RGB camera against the MuJoCo renderer from the same poses.

Renders ``--poses`` robot views (random headings at goal spawn points, scenes in turn) with the
column renderer and with MuJoCo, prints the share of pixels on which both see the same semantic
class and, per class, both mean colours and their largest channel difference (8-bit levels), and
writes a strip of the first ``--strip`` pairs side by side (left: columns, right: MuJoCo).
Default scenes: the example street and four procedural streets (``out/rl_scenes``, as
``tools/bench_train.py`` makes them).
Run: ``python tools/check_rgb_camera.py [--scenes DIR ...] [--out docs/rgb_camera_vs_mujoco.png]``.
Last line: ``class_agreement=X ground_max_diff=Y object_max_diff=Z``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
GROUND = ("sky", "road", "sidewalk", "crosswalk", "ramp", "terrain", "plaza")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", nargs="+", type=Path, default=None, help="scene folders")
    parser.add_argument("--poses", type=int, default=60, help="views rendered by both renderers")
    parser.add_argument("--height", type=int, default=64)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--strip", type=int, default=6, help="pairs in the picture")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "rgb_camera_vs_mujoco.png")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "tools"))
    from bench_train import procedural_scenes

    from urbanverse.bench.camera_compare import class_colours, render_pairs, strip
    from urbanverse.sim.robots import ROBOTS
    from urbanverse.sim.sensors.rgb_camera_cfg import RgbCameraCfg
    from urbanverse.sim.task import PointNavCfg
    from urbanverse.sim.world import WorldCfg
    from urbanverse.sim.world_loading import load_world_batch

    scenes = args.scenes or [
        REPO / "scenes" / "example",
        *map(Path, procedural_scenes(REPO / "out" / "rl_scenes", [0, 1, 2, 3])),
    ]
    world = load_world_batch(scenes, WorldCfg(), PointNavCfg(), ROBOTS["wheeled"], "cpu")
    pairs = render_pairs(world, scenes, args.poses, RgbCameraCfg(height=args.height, width=args.width))
    rows = class_colours(pairs)
    header = f"{'px columns':>10} {'px mujoco':>10}  {'columns RGB':<18} {'mujoco RGB':<18}"
    print(f"{'class':<22} {header} max diff")
    for r in rows:
        ours = " ".join(f"{v:5.0f}" for v in r["columns"])
        ref = " ".join(f"{v:5.0f}" for v in r["mujoco"])
        counts = f"{r['pixels_columns']:>10} {r['pixels_mujoco']:>10}"
        print(f"{r['class']:<22} {counts}  {ours:<18} {ref:<18} {r['max_diff']:>8.1f}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(strip(pairs, min(args.strip, args.poses))).save(args.out)
    print(f"wrote {args.out} (left: columns renderer, right: MuJoCo)")
    ground = max(r["max_diff"] for r in rows if r["class"] in GROUND)
    objects = max((r["max_diff"] for r in rows if r["class"] not in GROUND), default=float("nan"))
    figures = f"ground_max_diff={ground:.1f} object_max_diff={objects:.1f}"
    print(f"class_agreement={pairs.class_agreement:.3f} {figures}")


if __name__ == "__main__":
    main()
