"""The shipped wheeled policy on streets whose crosswalks are raised by a step at its climb limit.

Builds procedural streets (``urbanverse procgen``: residential seed 100 and intersection seed 103
by default) and copies of them whose crosswalks are raised crossings: their top ``--heights``
metres above the road and the foot of the curb ramps, so a robot crossing the street climbs a
step of that height onto the crosswalk and down again. The wheeled robot climbs 5 cm, so a
0.05 m crossing is a step of exactly its climb limit (climbable), and 0.06 m is a wall it sees
and plans around. Each street is evaluated with ``policies/wheeled-lidar-mlp/policy.pt`` as
``urbanverse eval`` does (deterministic actions, an episode ends at success, the first
collision, or 300 steps), with a fresh compile cache.

Run: ``python tools/bench_step_limit.py [--episodes 20] [--heights 0 0.05 0.06]``; with
``PYTHONPATH`` set to another checkout, the same script measures that checkout's simulator.
Prints one table row per height and street and, last, ``success_rate_at_limit=X`` (overall over
the streets at the first height equal to the climb limit).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
POLICY = REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt"
STREETS = (("residential", 100), ("intersection", 103))


def raise_crosswalks(src: Path, dst: Path, height: float) -> int:
    """Copy the scene ``src`` to ``dst`` with every crosswalk's top at ``height`` m; returns how many."""
    from urbanverse.scene.record import load_scene, save_scene

    shutil.copytree(src, dst)
    scene = load_scene(dst)
    ground = tuple(
        dataclasses.replace(r, elevation=height) if r.type == "crosswalk" else r for r in scene.ground
    )
    save_scene(dataclasses.replace(scene, ground=ground, name=f"{scene.name}_x{height * 100:g}cm"), dst)
    return sum(r.type == "crosswalk" for r in scene.ground)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20, help="episodes per street")
    parser.add_argument("--heights", type=float, nargs="+", default=[0.0, 0.05, 0.06])
    parser.add_argument("--seed", type=int, default=1, help="seed of the evaluation episodes")
    parser.add_argument("--work", type=Path, default=None, help="folder for scenes and cache (default: temp)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_step_limit_"))
    os.environ["URBANVERSE_CACHE"] = str(work / "cache")  # fresh grids, goal fields and LiDAR tables

    from urbanverse.procgen.street import StreetCfg, generate_street
    from urbanverse.rl.evaluate import evaluate, load_policy
    from urbanverse.sim.robots import WHEELED

    loaded = load_policy(POLICY)
    base = []
    for style, seed in STREETS:
        folder = work / "streets" / f"{style}_s{seed}"
        if not (folder / "scene.json").is_file():
            generate_street(StreetCfg(style=style, seed=seed), folder)
        base.append(folder)
    print(f"policy {POLICY.relative_to(REPO)}; wheeled climb limit {WHEELED.max_step_height} m")
    print(f"{'crossing (m)':>12} {'street':<22} {'episodes':>8} {'success':>8} {'SPL':>6} {'coll/ep':>8}")
    overall = {}
    for h in args.heights:
        scenes = []
        for folder in base:
            dst = work / f"raised_{h:g}" / folder.name
            if not dst.exists():
                raise_crosswalks(folder, dst, h)
            scenes.append(str(dst))
        results, _, _ = evaluate(loaded, tuple(scenes), args.episodes, args.seed, "cpu")
        for name, r in results["scenes"].items():
            print(
                f"{h:>12.3f} {name:<22} {r['episodes']:>8} {r['success_rate']:>8.1%} {r['spl']:>6.3f}"
                f" {r['collisions_per_episode']:>8.2f}"
            )
        o = results["overall"]
        print(f"{h:>12.3f} {'overall':<22} {o['episodes']:>8} {o['success_rate']:>8.1%} {o['spl']:>6.3f}")
        overall[h] = o
    (work / "results.json").write_text(json.dumps({str(k): v for k, v in overall.items()}, indent=2))
    at_limit = [h for h in args.heights if abs(h - WHEELED.max_step_height) < 1e-9]
    if at_limit:
        print(f"success_rate_at_limit={overall[at_limit[0]]['success_rate']:.3f}")


if __name__ == "__main__":
    main()
