"""Policy compute with image encoders on this machine's CPU: PPO minibatch and rollout step times.

For each encoder (``cnn``, ``nature``, ``impala``; and ``flat``: no encoder, pixels into the MLP)
in front of the ``mlp`` core, at ``--size`` RGB images plus the 7 vector entries of the
navigation task, it times

* one PPO minibatch: ``forward_sequence`` of ``B`` observations, a PPO-style loss (Gaussian
  log-probability ratio + value error), backward and an Adam step, for each ``--batch``;
* one rollout step of ``--envs`` environments: ``policy.step`` without gradients.

Median of ``--repeats`` after one warm-up, per torch thread count in ``--threads``. Prints a
Markdown table (ms) and, with ``--json``, writes the figures.

    python tools/bench_encoders.py --threads 1 2 --batch 2048 8192 --envs 1024
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time

import torch

from urbanverse.rl.policy import ActorCritic, PolicyCfg

VECTOR = {"goal_b": 2, "velocity_b": 3, "last_action": 2}


def _policy(encoder: str, size: int, share: bool) -> ActorCritic:
    n_img = size * size * 3
    layout, start = {"rgb": slice(0, n_img)}, n_img
    for name, n in VECTOR.items():
        layout[name] = slice(start, start + n)
        start += n
    cfg = PolicyCfg(encoder=None if encoder == "flat" else encoder, share_encoder=share)
    return ActorCritic(start, 2, cfg, layout, {"rgb": (size, size, 3)})


def _median_s(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _minibatch(policy: ActorCritic, opt, obs, resets, actions, old_logp, returns) -> None:
    """Forward, PPO-style loss, backward and an Adam step on one minibatch."""
    mean, value = policy.forward_sequence(obs, (), resets)
    logp = policy.distribution(mean).log_prob(actions).sum(-1)
    loss = -torch.exp(logp - old_logp).mean() + 0.5 * (value - returns).square().mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()


def bench(encoder: str, size: int, batches: list[int], envs: int, repeats: int, share: bool) -> dict:
    torch.manual_seed(0)
    policy = _policy(encoder, size, share)
    opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
    out = {"params": sum(p.numel() for p in policy.parameters())}
    for b in batches:
        batch = (
            torch.rand(b, 1, policy.num_obs),  # observations
            torch.zeros(b, 1, dtype=torch.bool),  # resets
            torch.randn(b, 1, 2),  # actions
            torch.zeros(b, 1),  # old log-probabilities
            torch.randn(b, 1),  # returns
        )
        out[f"minibatch_{b}_ms"] = 1e3 * _median_s(
            lambda batch=batch: _minibatch(policy, opt, *batch), repeats
        )
        del batch
    obs = torch.rand(envs, policy.num_obs)

    @torch.no_grad()
    def step() -> None:
        policy.step(obs, ())

    out[f"step_{envs}_ms"] = 1e3 * _median_s(step, max(repeats, 5))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoders", nargs="+", default=["flat", "cnn", "nature", "impala"])
    ap.add_argument("--size", type=int, default=64, help="Image side (pixels), RGB.")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--batch", type=int, nargs="+", default=[2048, 8192])
    ap.add_argument("--envs", type=int, default=1024)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--separate", action="store_true", help="The critic gets its own encoder.")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    rows = []
    for threads in args.threads:
        torch.set_num_threads(threads)
        for enc in args.encoders:
            r = bench(enc, args.size, args.batch, args.envs, args.repeats, not args.separate)
            rows.append({"encoder": enc, "threads": threads, **r})
            print(json.dumps(rows[-1]), flush=True)
    keys = [k for k in rows[0] if k.endswith("_ms")]
    cpu = platform.processor() or platform.machine()
    print(f"\n{cpu}, torch {torch.__version__}, {args.size}x{args.size} RGB, mlp core")
    print("| encoder | threads | params | " + " | ".join(keys) + " |")
    print("|---|---|---|" + "---|" * len(keys))
    for r in rows:
        cells = " | ".join(f"{r[k]:.0f}" if r[k] >= 10 else f"{r[k]:.1f}" for k in keys)
        print(f"| {r['encoder']} | {r['threads']} | {r['params']:,} | {cells} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
