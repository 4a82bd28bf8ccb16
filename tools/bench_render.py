"""Renderer throughput: RGB + metric depth + instance/semantic ids per frame on a procedural street.

Generates a commercial street long enough to hold at least ``--min-objects`` objects, plans the
tour route through it, and renders frames along that route (the views a tour sees), timing the
render calls only (scene compilation is reported separately). Prints one line per setting and,
last, the line for the default setting (shadows on):

    render_fps=X width=640 height=360 objects=N
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from urbanverse.procgen.street import StreetCfg, generate_street
from urbanverse.render.raster import PinholeCamera
from urbanverse.render.scene_model import build_rasterizer
from urbanverse.render.walk import WalkCfg, plan_route, walk_poses


def _street(min_objects: int, seed: int, out: Path):
    for length in (120.0, 180.0, 240.0, 300.0, 400.0):
        scene = generate_street(
            StreetCfg(style="commercial", seed=seed, length=length), out / f"street_{length:.0f}"
        )
        if len(scene.objects) >= min_objects:
            return scene, out / f"street_{length:.0f}"
    raise SystemExit(f"no street up to 400 m holds {min_objects} objects (last: {len(scene.objects)})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--frames", type=int, default=60, help="frames timed per setting")
    parser.add_argument("--min-objects", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        scene, scene_dir = _street(args.min_objects, args.seed, Path(tmp))
        rng = np.random.default_rng(args.seed)
        poses = walk_poses(scene, plan_route(scene, WalkCfg(), rng), args.frames / 10.0, 10.0, WalkCfg(), rng)
        camera = PinholeCamera.from_hfov(args.width, args.height, 70.0)
        results = {}
        for shadows in (False, True):
            start = time.perf_counter()
            raster = build_rasterizer(scene, scene_dir, args.width, args.height, shadows=shadows)
            build_s = time.perf_counter() - start
            raster.render(camera, poses[0])  # warm-up: first upload of textures and meshes
            times = {}
            for ids in (False, True):
                start = time.perf_counter()
                for pose in poses:
                    raster.render(camera, pose, ids=ids)
                times[ids] = (time.perf_counter() - start) / len(poses)
            raster.close()
            results[shadows] = 1.0 / times[True]
            print(
                f"shadows={shadows} build_s={build_s:.2f} rgb_ms={times[False] * 1e3:.1f} "
                f"rgb_depth_ids_ms={times[True] * 1e3:.1f} fps={1.0 / times[True]:.1f}"
            )
    print(
        f"render_fps={results[True]:.1f} width={args.width} height={args.height} objects={len(scene.objects)}"
    )


if __name__ == "__main__":
    main()
