"""Make ``assets/samples/city_walk.mp4``: the bundled sample for ``urbanverse gen`` in the README.

No package ships a first-person walking video of a street, so the sample is a tour rendered through
a procedural residential street (seeded, so the same command gives the same street and walk).
Only the MP4 is kept (the ground truth is 1 MB of JSON); ``--gt`` keeps ``city_walk_gt.json`` too,
for scoring a run with ``urbanverse.bench.evaluate``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from urbanverse.procgen.street import StreetCfg, generate_street
from urbanverse.render.tour import TourCfg, gt_path_for, run_render_tour

OUT = Path(__file__).resolve().parents[1] / "assets" / "samples" / "city_walk.mp4"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--seconds", type=float, default=16.0)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--gt", action="store_true", help="also keep the ground truth JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scene_dir = Path(tmp) / "street"
        generate_street(StreetCfg(style="residential", seed=args.seed, length=80.0), scene_dir)
        cfg = TourCfg(seconds=args.seconds, fps=10.0, width=960, height=540, seed=args.seed)
        gt = run_render_tour(scene_dir, args.out, cfg)
    if not args.gt:
        gt_path_for(args.out).unlink()
    size_mb = args.out.stat().st_size / 1e6
    print(f"wrote {args.out} ({len(gt.frames)} frames, {size_mb:.1f} MB)")


if __name__ == "__main__":
    main()
