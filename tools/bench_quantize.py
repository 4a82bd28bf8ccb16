"""Success rate of a shipped policy in float and quantised (int8, int4 weights; int8 activations).

Evaluates ``--policy`` deterministically on the benchmark's held-out procedural streets (seeds
100.., as ``tools/bench_train.py``), first in float, then each quantised twin built by
``urbanverse.rl.quantize.quantize_policy`` (calibrated on ``--calibration-steps`` rollout steps
with other seeds), under the same episode seeds. Same as
``urbanverse eval POLICY --scenes ... --quantize int8``, side by side.
Run: ``python tools/bench_quantize.py [--policy policies/wheeled-lidar-mlp/policy.pt] [--episodes 25]``.
Last line: ``fp_success=X int8_success=Y int4_success=Z``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    from bench_train import procedural_scenes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, default=REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt")
    parser.add_argument("--eval-scenes", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=25, help="episodes per held-out scene")
    parser.add_argument("--calibration-steps", type=int, default=200)
    parser.add_argument("--scenes-dir", type=Path, default=REPO / "out" / "rl_scenes")
    args = parser.parse_args()
    import torch

    from urbanverse.rl.evaluate import evaluate, load_policy
    from urbanverse.rl.quantize import quantize_policy

    torch.set_num_threads(1)
    scenes = tuple(procedural_scenes(args.scenes_dir, list(range(100, 100 + args.eval_scenes))))
    loaded = load_policy(args.policy)
    rows = {}
    for name in ("fp32", "int8", "int4"):
        t0 = time.perf_counter()
        policy, summary = (
            (loaded, None)
            if name == "fp32"
            else quantize_policy(
                loaded, scenes, bits=int(name[3:]), calibration_steps=args.calibration_steps, seed=12345
            )
        )
        results, _, _ = evaluate(policy, scenes, args.episodes, seed=12345)
        rows[name] = (results["overall"], summary, time.perf_counter() - t0)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"policy {args.policy}; {len(scenes)} held-out scenes x {args.episodes} episodes"
    )
    # int4 weights are kept one per int8 (not packed two to a byte), so int8 and int4 sizes match.
    float_bytes = rows["int8"][1]["state_bytes_float"]
    print("| actor | success rate | SPL | collisions / episode | actor state dict bytes | eval s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (o, summary, secs) in rows.items():
        size = summary["state_bytes_int8"] if summary else float_bytes
        print(
            f"| {name} | {o['success_rate']:.3f} | {o['spl']:.3f} | {o['collisions_per_episode']:.2f} "
            f"| {size:,} | {secs:.0f} |"
        )
    s = {k: v[0]["success_rate"] for k, v in rows.items()}
    print(f"fp_success={s['fp32']:.3f} int8_success={s['int8']:.3f} int4_success={s['int4']:.3f}")


if __name__ == "__main__":
    main()
