"""Success rate of a shipped policy in float and quantised (int8, int4 weights; int8 activations).

Evaluates ``--policy`` deterministically on the benchmark's held-out procedural streets (seeds
100.., as ``tools/bench_train.py``), first in float, then each quantised twin built by
``urbanverse.rl.quantize.quantize_policy`` (calibrated on ``--calibration-steps`` rollout steps
with other seeds), under the same episode seeds. Same as
``urbanverse eval POLICY --scenes ... --quantize int8``, side by side.

With ``--qat-minutes M`` it also fine-tunes the policy with QAT for M minutes of training on the
benchmark's training streets (seeds 0..15, as ``tools/bench_train.py``): ``urbanverse train
--init-from POLICY --set schedule.qat_fraction=1.0``, the whole fine-tune int8 fake-quantised with
a linear learning-rate cooldown from the run's learning rate to 0. Two more rows: ``int8 QAT``
(its int8 export, trained grids, no calibration) and ``QAT weights, float`` (the same weights with
quantisation off, which separates the effect of the fine-tune from that of quantisation).
Run: ``python tools/bench_quantize.py [--policy policies/wheeled-lidar-mlp/policy.pt] [--episodes 25]
[--qat-minutes 3]``.
Last line: ``fp_success=X int8_success=Y int4_success=Z [qat_int8_success=W]``.
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


def qat_fine_tune(args: argparse.Namespace, loaded) -> Path:
    """Fine-tune ``args.policy`` with QAT for ``args.qat_minutes``; returns the run folder."""
    import dataclasses

    from bench_train import procedural_scenes

    from urbanverse.rl.config import apply_overrides
    from urbanverse.rl.runner import Runner

    train = tuple(procedural_scenes(args.scenes_dir, list(range(args.train_scenes))))
    cfg = dataclasses.replace(
        loaded.cfg, scenes=train, total_steps=10**12, max_minutes=args.qat_minutes, experiment="qat-finetune"
    )
    cfg = apply_overrides(cfg, [f"init_from={args.policy}", "schedule.qat_fraction=1.0", "torch_threads=1"])
    runner = Runner.create(cfg, args.runs_dir)
    runner.learn()
    print(f"QAT fine-tune: {runner.env_steps:,} env-steps in {runner.wall_s / 60:.1f} min; {runner.run_dir}")
    return runner.run_dir


def float_twin(loaded):
    """``loaded`` with its fake quantisation switched off (its weights in float)."""
    import copy
    import dataclasses

    from urbanverse.nn.qat import set_qat_enabled
    from urbanverse.rl.loaded_policy import actor_act_fn

    actor = copy.deepcopy(loaded.actor)
    set_qat_enabled(actor, False)
    return dataclasses.replace(loaded, act=actor_act_fn(actor), actor=actor)


def main() -> None:
    from bench_train import procedural_scenes

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, default=REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt")
    parser.add_argument("--eval-scenes", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=25, help="episodes per held-out scene")
    parser.add_argument("--calibration-steps", type=int, default=200)
    parser.add_argument("--scenes-dir", type=Path, default=REPO / "out" / "rl_scenes")
    parser.add_argument("--qat-minutes", type=float, default=0.0, help="QAT fine-tune budget (0: none)")
    parser.add_argument("--train-scenes", type=int, default=16, help="training streets of the fine-tune")
    parser.add_argument("--runs-dir", type=Path, default=REPO / "runs" / "bench_qat")
    args = parser.parse_args()
    import torch

    from urbanverse.rl.evaluate import evaluate, load_policy
    from urbanverse.rl.quantize import quantize_policy

    torch.set_num_threads(1)
    scenes = tuple(procedural_scenes(args.scenes_dir, list(range(100, 100 + args.eval_scenes))))
    loaded = load_policy(args.policy)
    variants = {"fp32": lambda: (loaded, None)}
    for bits in (8, 4):
        variants[f"int{bits}"] = lambda bits=bits: quantize_policy(
            loaded, scenes, bits=bits, calibration_steps=args.calibration_steps, seed=12345
        )
    if args.qat_minutes > 0:
        run_dir = qat_fine_tune(args, loaded)
        tuned = load_policy(run_dir)
        variants["int8 QAT"] = lambda: quantize_policy(tuned, scenes, bits=8)
        variants["QAT weights, float"] = lambda: (float_twin(tuned), None)
    rows = {}
    for name, make in variants.items():
        t0 = time.perf_counter()
        policy, summary = make()
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
    qat = f" qat_int8_success={s['int8 QAT']:.3f}" if "int8 QAT" in s else ""
    print(f"fp_success={s['fp32']:.3f} int8_success={s['int8']:.3f} int4_success={s['int4']:.3f}{qat}")


if __name__ == "__main__":
    main()
