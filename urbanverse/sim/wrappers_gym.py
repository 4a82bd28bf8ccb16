"""Gymnasium interfaces over ``NavVecEnv``: a ``VectorEnv`` and a single-environment ``Env``.

Arrays are numpy float32 on the host. The vector env auto-resets in the same step
(``AutoresetMode.SAME_STEP``): a finished environment's last observation is in
``infos["final_obs"]`` (object array, ``None`` elsewhere) with mask ``infos["_final_obs"]``.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from urbanverse.sim.env import NavVecEnv


def _spaces(env: NavVecEnv) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    obs = gym.spaces.Box(-np.inf, np.inf, shape=(env.num_obs,), dtype=np.float32)
    act = gym.spaces.Box(-1.0, 1.0, shape=(env.num_actions,), dtype=np.float32)
    return obs, act


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


class GymVectorEnv(VectorEnv):
    """``gymnasium.vector.VectorEnv`` view of a ``NavVecEnv`` (terminated and truncated kept apart)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, env: NavVecEnv):
        self.env = env
        self.num_envs = env.num_envs
        self.single_observation_space, self.single_action_space = _spaces(env)
        self.observation_space = batch_space(self.single_observation_space, env.num_envs)
        self.action_space = batch_space(self.single_action_space, env.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Reset every environment; returns (obs (N, D), infos)."""
        obs, _ = self.env.reset(seed=seed)
        return _np(obs).copy(), {}

    def step(self, actions):
        """(obs, rewards, terminated, truncated, infos), each batched over N."""
        obs, rewards, dones, extras = self.env.step(torch.as_tensor(np.asarray(actions), dtype=torch.float32))
        truncated = _np(extras["time_outs"]).copy()
        terminated = _np(dones) & ~truncated
        infos: dict = {}
        if "final_env_ids" in extras:
            final = np.full(self.num_envs, None, dtype=object)
            mask = np.zeros(self.num_envs, dtype=bool)
            for row, i in enumerate(_np(extras["final_env_ids"]).tolist()):
                final[i] = _np(extras["final_obs"][row]).copy()
                mask[i] = True
            infos = {"final_obs": final, "_final_obs": mask, "log": extras["log"]}
        return _np(obs).copy(), _np(rewards).copy(), terminated, truncated, infos

    def close_extras(self, **kwargs) -> None:
        self.env.close()


class GymEnv(gym.Env):
    """One environment as a ``gymnasium.Env`` (a ``NavVecEnv`` with ``num_envs == 1``).

    When an episode ends, ``step`` returns its final observation; the next episode is already
    running, and ``reset`` starts another one.
    """

    metadata = {"render_modes": []}

    def __init__(self, env: NavVecEnv):
        if env.num_envs != 1:
            raise ValueError(f"GymEnv wraps a single environment, got num_envs={env.num_envs}")
        self.env = env
        self.observation_space, self.action_space = _spaces(env)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        obs, _ = self.env.reset(seed=seed)
        return _np(obs[0]).copy(), {}

    def step(self, action):
        act = torch.as_tensor(np.asarray(action, dtype=np.float32)).view(1, -1)
        obs, rewards, dones, extras = self.env.step(act)
        truncated = bool(extras["time_outs"][0])
        terminated = bool(dones[0]) and not truncated
        out = extras["final_obs"][0] if "final_obs" in extras else obs[0]
        info = {"log": extras["log"]} if "log" in extras else {}
        return _np(out).copy(), float(rewards[0]), terminated, truncated, info

    def close(self) -> None:
        self.env.close()
