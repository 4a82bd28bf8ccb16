"""``check_env``: an executable specification of the ``NavVecEnv`` interface.

It resets and steps the environment it is given (its state afterwards is a fresh episode).
"""

from __future__ import annotations

import torch


class EnvCheckError(AssertionError):
    """The environment broke its interface contract; the message says which rule."""


def _expect(ok: bool, message: str) -> None:
    if not ok:
        raise EnvCheckError(message)


def _rollout(env, seed: int, steps: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    obs, _ = env.reset(seed=seed)
    trace = [obs.clone()]
    for _ in range(steps):
        act = torch.rand(env.num_envs, env.num_actions, generator=gen) * 2 - 1
        obs, rew, dones, _ = env.step(act.to(env.device))
        trace += [obs.clone(), rew.clone(), dones.clone()]
    return trace


def check_env(env, steps: int = 30, seed: int = 0) -> None:
    """Check shapes, dtypes, finiteness, terminated/truncated separation, NaN-action handling and
    seeding determinism of a batched environment; raises ``EnvCheckError`` on the first failure."""
    for attr in ("num_envs", "num_obs", "num_actions", "max_episode_length", "device"):
        _expect(hasattr(env, attr), f"missing attribute {attr!r}")
    n, d, a = env.num_envs, env.num_obs, env.num_actions
    obs, extras = env.reset(seed=seed)
    _expect(isinstance(extras, dict), "reset must return (obs, extras dict)")
    _expect(tuple(obs.shape) == (n, d), f"reset obs shape {tuple(obs.shape)} != {(n, d)}")
    _expect(obs.dtype == torch.float32, f"obs dtype {obs.dtype} != float32")
    _expect(bool(torch.isfinite(obs).all()), "reset obs has NaN or inf")
    _expect(torch.equal(env.get_observations(), obs), "get_observations() differs from the reset obs")
    gen = torch.Generator().manual_seed(seed)
    for i in range(steps):
        act = torch.rand(n, a, generator=gen) * 2 - 1
        if i == steps // 2:
            act[0, 0] = float("nan")
            act[-1, -1] = float("inf")
        obs, rew, dones, extras = env.step(act.to(env.device))
        _expect(tuple(obs.shape) == (n, d) and obs.dtype == torch.float32, "step obs shape/dtype")
        _expect(tuple(rew.shape) == (n,) and rew.dtype == torch.float32, "rewards must be (N,) float32")
        _expect(tuple(dones.shape) == (n,) and dones.dtype == torch.bool, "dones must be (N,) bool")
        _expect(bool(torch.isfinite(obs).all()), f"step {i}: obs has NaN or inf")
        _expect(bool(torch.isfinite(rew).all()), f"step {i}: rewards have NaN or inf")
        time_outs = extras.get("time_outs")
        _expect(time_outs is not None, "extras['time_outs'] missing")
        _expect(
            tuple(time_outs.shape) == (n,) and time_outs.dtype == torch.bool, "time_outs must be (N,) bool"
        )
        _expect(not bool((time_outs & ~dones).any()), "a time-out must also be done")
        if bool(dones.any()):
            _expect(
                isinstance(extras.get("log"), dict), "extras['log'] missing on a step where episodes ended"
            )
            _expect(tuple(extras["final_obs"].shape) == (int(dones.sum()), d), "final_obs shape")
    first = _rollout(env, seed + 1, 10)
    second = _rollout(env, seed + 1, 10)
    for x, y in zip(first, second, strict=True):
        _expect(torch.equal(x, y), "two rollouts with the same seed and actions differ")
    other = _rollout(env, seed + 2, 1)
    _expect(not torch.equal(first[0], other[0]), "different seeds gave identical initial observations")
    env.reset(seed=seed)
