"""Social navigation: how policies fare among the people a video showed, against random walkers.

Evaluates each ``--policy`` on each ``--set`` of scenes under four pedestrian arms, the same scenes,
episodes and seeds in each (``urbanverse eval``'s per-scene seeds):

- ``none``: no pedestrians (what the static street alone costs);
- ``random``: straight walkers with random turns that stop short of the robot (the old default);
- ``replay``: the people lifted from the video, their recorded trajectories looped and time-shifted
  (they do not yield to the robot);
- ``flow``: walkers spawned where people were seen, walking with the scene's flow field in a
  social-force crowd that keeps clear of each other and of the robot.

Scenes without people (no ``agents`` / ``flow``) fall back to ``random`` in the last two arms, so the
sets should be scenes made by ``urbanverse gen`` from footage with people (a tour of
``tools/bench_roundtrip.py --keep``, ``vtest.avi``) or procedural streets (which have walkers).
Prints one Markdown table (a row per set, policy and arm: success rate, SPL, collisions per episode;
the difference to the ``none`` arm is what the pedestrians cost) and writes every result to ``--json``.

    python tools/bench_social_nav.py --policy policies/wheeled-lidar-mlp/policy.pt \\
        --set tours=/work/rtp/scenes --set vtest=/tmp/vtest --count 8 --episodes 20 --jobs 2
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

ARMS = ("none", "random", "replay", "flow")


def parse_sets(specs: list[str]) -> dict[str, tuple[str, ...]]:
    """``NAME=FOLDER[,FOLDER...]`` -> {name: scene folders} (a folder may hold scene folders)."""
    from urbanverse.scene.record import find_scene_dirs

    sets = {}
    for spec in specs:
        name, _, folders = spec.partition("=")
        if not name or not folders:
            raise SystemExit(f"--set {spec!r}: expected NAME=FOLDER[,FOLDER...]")
        sets[name] = find_scene_dirs(folders.split(","), f"--set {name}")
    return sets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", action="append", type=Path, required=True, help="checkpoint (repeatable)")
    parser.add_argument("--set", action="append", required=True, help="NAME=FOLDER[,FOLDER...] (repeatable)")
    parser.add_argument("--count", type=int, default=8, help="pedestrians per environment in every arm")
    parser.add_argument("--episodes", type=int, default=20, help="episodes per scene")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--json", type=Path, help="write every result here")
    args = parser.parse_args()

    from urbanverse.rl.jobs import EvalCfg, eval_executor, run_evaluations

    sets = parse_sets(args.set)
    executor = eval_executor(jobs=args.jobs)
    rows, results = [], []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="social_nav_") as tmp:
        cfgs, keys = [], []
        for set_name, scenes in sets.items():
            for policy in args.policy:
                for arm in ARMS:
                    out = Path(tmp) / f"{set_name}_{policy.parent.name}_{arm}"
                    cfgs.append(
                        EvalCfg(
                            checkpoint=policy,
                            scenes=scenes,
                            episodes=args.episodes,
                            seed=args.seed,
                            out=out,
                            animate=0,
                            pedestrians="random" if arm == "none" else arm,  # type: ignore[arg-type]
                            pedestrian_count=0 if arm == "none" else args.count,
                        )
                    )
                    keys.append((set_name, policy, arm))
        outcomes = run_evaluations(cfgs, executor)
    for (set_name, policy, arm), outcome in zip(keys, outcomes, strict=True):
        o = outcome.results["overall"]
        rows.append(
            f"| {set_name} ({len(sets[set_name])}) | {policy.parent.name} | {arm} | {o['episodes']} "
            f"| {100 * o['success_rate']:.1f} % | {o['spl']:.3f} | {o['collisions_per_episode']:.3f} |"
        )
        results.append({"set": set_name, "policy": str(policy), "arm": arm, **outcome.results})
    print(
        f"machine: {platform.machine()}, {len(args.policy)} policies, {args.count} pedestrians, "
        f"{args.episodes} episodes per scene, seed {args.seed}, {time.perf_counter() - start:.0f} s"
    )
    print("| scenes | policy | pedestrians | episodes | success | SPL | collisions/ep |")
    print("|---|---|---|---:|---:|---:|---:|")
    print("\n".join(rows))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
