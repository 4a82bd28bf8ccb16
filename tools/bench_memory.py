"""Memory benchmark for policy backbones: multi-query associative recall (MQAR) and a
navigation-style goal-recall task, at several sequence lengths, on the CPU.

Protocol (chosen to fit a 2-core CPU budget; see ``--help``):

* Every model is sized to about the same parameter count (``--params``; the width is searched)
  and trained with the same budget: ``--steps`` AdamW steps of ``--batch`` sequences of length
  ``--train-len``, one model per task, fixed seeds.
* It is then evaluated, without further training, on fresh sequences of every length in
  ``--lengths``. In both tasks the information is given at the start and queried at the end,
  so a longer sequence means a longer gap to remember across (length generalisation of the
  memory; training at 2048 for every model does not fit the budget).
* Timing: ``train_us_tok`` is the forward+backward time of the sequence form per token at the
  training length; ``step_ms`` is one ``step()`` call for 64 environments (rollout cost).

Tasks (1 token per step, as a policy sees observations):

* ``mqar``: ``--pairs`` key/value tokens (keys distinct, one-hot key and value), blank filler
  tokens, then one query token per key (in shuffled order) asking for its value. Chance
  ``1 / --vocab``.
* ``nav``: a goal landmark (one of ``--landmarks``) is shown with a goal flag once; other
  landmarks appear without the flag (probability 0.1 per step) amid Gaussian "visual" noise
  (std ``NOISE_STD`` on ``NOISE_DIM`` features); the last 8 steps are flagged queries whose
  answer is the goal landmark. Chance ``1 / --landmarks``. At evaluation the goal is shown
  among the first 16 steps (gap of at least ``L - 24``); in training its step is uniform over
  the whole sequence before the queries, so short gaps give every model a learning signal
  (with only long gaps and unit noise, no model left chance in the budget).

Prints a Markdown table; the last line is ``mqar_len<L> sse=.. gla=.. gru=..`` for the
longest length.
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F
from torch import nn

from urbanverse.nn.backbones import make_backbone

MODELS = ("sse", "sse-h", "gla", "gru", "lstm", "ultramem")
N_QUERY_NAV = 8
NOISE_DIM = 8
NOISE_STD = 0.1
"""Std of the nav "visual" noise. At 1.0 (the first version) or 0.2 no model left chance in the
default budget (GLA, GRU probes, train length 64 and 128); at 0.1 GLA learns the task."""


def make_batch(
    task: str, batch: int, length: int, args: argparse.Namespace, gen: torch.Generator, train: bool = False
):
    """Returns inputs ``(B, L, in_dim)`` float32 and targets ``(B, L)`` long (-100 = no loss).

    ``train`` only affects ``nav``: the goal step is drawn from the whole sequence before the
    queries (gaps from 1 to ``L - 8`` steps) instead of the first 16 steps (gaps of at least
    ``L - 24``), so every model sees short gaps it can learn from; see the module docstring.
    """
    y = torch.full((batch, length), -100, dtype=torch.long)
    rows = torch.arange(batch)
    if task == "mqar":
        v, p = args.vocab, args.pairs
        x = torch.zeros(batch, length, 2 * v + 3)
        x[:, :, -1] = 1.0  # blank flag
        keys = torch.rand(batch, v, generator=gen).argsort(1)[:, :p]  # distinct keys
        vals = torch.randint(0, v, (batch, p), generator=gen)
        order = torch.rand(batch, p, generator=gen).argsort(1)
        for j in range(p):
            x[rows, j, -1] = 0.0
            x[rows, j, keys[:, j]] = 1.0
            x[rows, j, v + vals[:, j]] = 1.0
            x[rows, j, 2 * v] = 1.0  # pair flag
            t = length - p + j
            x[rows, t, -1] = 0.0
            x[rows, t, keys[rows, order[:, j]]] = 1.0
            x[rows, t, 2 * v + 1] = 1.0  # query flag
            y[:, t] = vals[rows, order[:, j]]
        return x, y
    n = args.landmarks
    x = torch.zeros(batch, length, n + 2 + NOISE_DIM)
    x[..., n + 2 :] = NOISE_STD * torch.randn(batch, length, NOISE_DIM, generator=gen)
    seen = torch.rand(batch, length, generator=gen) < 0.1
    ids = torch.randint(0, n, (batch, length), generator=gen)
    x[..., :n] = F.one_hot(ids, n).float() * seen[..., None]
    goal = torch.randint(0, n, (batch,), generator=gen)
    t_goal = torch.randint(0, length - N_QUERY_NAV if train else 16, (batch,), generator=gen)
    x[rows, t_goal, :n] = F.one_hot(goal, n).float()
    x[rows, t_goal, n] = 1.0  # goal flag
    x[:, -N_QUERY_NAV:, : n + 1] = 0.0
    x[:, -N_QUERY_NAV:, n + 1] = 1.0  # query flag
    y[:, -N_QUERY_NAV:] = goal[:, None]
    return x, y


def build(name: str, in_dim: int, width: int):
    """Backbone ``name`` at width ``width`` (2 blocks / layers each)."""
    if name in ("sse", "sse-h"):
        heads = 4
        kw = dict(d_model=width, num_heads=heads, head_k_dim=width // heads, head_v_dim=width // heads)
        kw.update(num_partitions=4, top_k=1, window=32, backend="torch", chunk_size=16)
        return make_backbone(name, in_dim, **kw)
    if name == "gla":
        return make_backbone(
            name, in_dim, d_model=width, num_heads=4, head_k_dim=width // 4, head_v_dim=width // 4
        )
    if name in ("gru", "lstm"):
        return make_backbone(name, in_dim, hidden=width, num_layers=2)
    memory = dict(knum=16, kdim=16, vdim=32, pre_vdim=32, knn=8)  # small tables, to match the budget
    return make_backbone(name, in_dim, hidden=width, num_blocks=2, memory=memory)


def sized(name: str, in_dim: int, target: int):
    """The width (multiple of 8) whose parameter count is closest to ``target``."""
    best = None
    for width in range(16, 513, 8):
        torch.manual_seed(0)
        n = sum(p.numel() for p in build(name, in_dim, width).parameters())
        if best is None or abs(n - target) < abs(best[1] - target):
            best = (width, n)
        if n > 2 * target:
            break
    return best


class Probe(nn.Module):
    """Backbone + linear readout to class logits."""

    def __init__(self, backbone: nn.Module, classes: int) -> None:
        super().__init__()
        self.backbone, self.head = backbone, nn.Linear(backbone.out_dim, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, length, _ = x.shape
        state = self.backbone.initial_state(b)
        resets = torch.zeros(b, length, dtype=torch.bool)
        feats, _ = self.backbone.forward_sequence(x, state, resets)
        return self.head(feats)


def accuracy(model: Probe, task: str, length: int, args: argparse.Namespace) -> float:
    gen = torch.Generator().manual_seed(10_000 + length)
    correct = total = 0
    eval_batch = max(1, min(args.batch, args.eval_tokens // length))
    with torch.no_grad():
        for _ in range(max(1, args.eval_seqs // eval_batch)):
            x, y = make_batch(task, eval_batch, length, args, gen)
            pred = model(x).argmax(-1)
            mask = y >= 0
            correct += (pred[mask] == y[mask]).sum().item()
            total += mask.sum().item()
    return correct / total


def step_ms(backbone: nn.Module, in_dim: int, reps: int) -> float:
    x = torch.randn(64, in_dim)
    with torch.no_grad():
        state = backbone.initial_state(64)
        _, state = backbone.step(x, state)
        t0 = time.perf_counter()
        for _ in range(reps):
            _, state = backbone.step(x, state)
    return 1e3 * (time.perf_counter() - t0) / reps


def run(name: str, task: str, args: argparse.Namespace) -> dict:
    classes = args.vocab if task == "mqar" else args.landmarks
    gen = torch.Generator().manual_seed(args.seed)
    in_dim = make_batch(task, 1, 32, args, gen)[0].shape[-1]
    width, n_params = sized(name, in_dim, args.params)
    torch.manual_seed(args.seed)
    model = Probe(build(name, in_dim, width), classes)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps, pct_start=0.1)
    t0, losses = time.perf_counter(), []
    for _ in range(args.steps):
        x, y = make_batch(task, args.batch, args.train_len, args, gen, train=True)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        (loss + model.backbone.aux_loss()).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    train_s = time.perf_counter() - t0
    model.eval()
    acc = {length: accuracy(model, task, length, args) for length in args.lengths}
    return {
        "model": name,
        "task": task,
        "width": width,
        "params": n_params,
        "final_loss": sum(losses[-10:]) / len(losses[-10:]),
        "acc": acc,
        "train_s": train_s,
        "train_us_tok": 1e6 * train_s / (args.steps * args.batch * args.train_len),
        "step_ms": step_ms(model.backbone, in_dim, args.step_reps),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    p.add_argument("--tasks", nargs="+", default=["mqar", "nav"], choices=["mqar", "nav"])
    p.add_argument("--lengths", nargs="+", type=int, default=[256, 512, 1024, 2048], help="eval lengths")
    p.add_argument("--train-len", type=int, default=128, help="training sequence length (tokens)")
    p.add_argument("--steps", type=int, default=2000, help="optimizer steps per model and task")
    p.add_argument("--batch", type=int, default=32, help="training sequences per step")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (one-cycle)")
    p.add_argument("--params", type=int, default=60_000, help="target backbone parameter count")
    p.add_argument("--vocab", type=int, default=16, help="MQAR key and value vocabulary size")
    p.add_argument("--pairs", type=int, default=4, help="MQAR key/value pairs per sequence")
    p.add_argument("--landmarks", type=int, default=8, help="nav: number of landmark ids")
    p.add_argument("--eval-seqs", type=int, default=64, help="eval sequences per length")
    p.add_argument("--eval-tokens", type=int, default=16_384, help="max tokens per eval batch (memory)")
    p.add_argument("--step-reps", type=int, default=50, help="step() calls timed per model")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--quick", action="store_true", help="tiny smoke run (seconds)")
    args = p.parse_args()
    if args.quick:
        args.lengths, args.train_len, args.steps, args.batch = [32, 64], 32, 3, 4
        args.eval_seqs, args.step_reps, args.params = 4, 2, 20_000
    torch.set_num_threads(args.threads)
    results = []
    for task in args.tasks:
        for name in args.models:
            r = run(name, task, args)
            results.append(r)
            accs = " ".join(f"L{k}={v:.3f}" for k, v in r["acc"].items())
            print(f"# {task} {name}: params={r['params']} loss={r['final_loss']:.3f} {accs} "
                  f"train={r['train_s']:.0f}s", flush=True)  # fmt: skip
    cols = ["task", "model", "width", "params", *(f"acc L={n}" for n in args.lengths)]
    cols += ["train us/token", "step ms (64 envs)"]
    print("\n| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        accs = " | ".join(f"{r['acc'][n]:.3f}" for n in args.lengths)
        print(f"| {r['task']} | {r['model']} | {r['width']} | {r['params']} | {accs} | "
              f"{r['train_us_tok']:.1f} | {r['step_ms']:.2f} |")  # fmt: skip
    longest = max(args.lengths)
    mqar = {r["model"]: r["acc"][longest] for r in results if r["task"] == "mqar"}
    print(f"mqar_len{longest} " + " ".join(f"{m}={mqar[m]:.3f}" for m in ("sse", "gla", "gru") if m in mqar))


if __name__ == "__main__":
    main()
