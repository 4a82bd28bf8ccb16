"""Stable-Baselines3 ``VecEnv`` view of a ``NavVecEnv`` (numpy on the host, SB3 info conventions).

A finished environment's info holds ``terminal_observation`` and ``TimeLimit.truncated``
(True for time-outs), which SB3 uses to bootstrap truncated episodes.
"""

from __future__ import annotations

import numpy as np
import torch

from urbanverse.errors import require
from urbanverse.sim.env import NavVecEnv
from urbanverse.sim.wrappers_gym import _np, _spaces

_vec_env = require("stable_baselines3.common.vec_env", "sim")


class SB3VecEnv(_vec_env.VecEnv):
    """All environments of a ``NavVecEnv`` as one SB3 ``VecEnv``."""

    def __init__(self, env: NavVecEnv):
        self.env = env
        obs_space, act_space = _spaces(env)
        super().__init__(env.num_envs, obs_space, act_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if any(s is not None for s in self._seeds) else None
        obs, _ = self.env.reset(seed=seed)
        self._reset_seeds()
        return _np(obs).copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, dtype=np.float32).reshape(self.num_envs, -1)

    def step_wait(self):
        obs, rewards, dones, extras = self.env.step(torch.from_numpy(self._actions))
        time_outs = _np(extras["time_outs"])
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        if "final_env_ids" in extras:
            for row, i in enumerate(_np(extras["final_env_ids"]).tolist()):
                infos[i]["terminal_observation"] = _np(extras["final_obs"][row]).copy()
                infos[i]["TimeLimit.truncated"] = bool(time_outs[i])
        return _np(obs).copy(), _np(rewards).copy(), _np(dones).copy(), infos

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self.env, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        setattr(self.env, attr_name, value)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list:
        result = getattr(self.env, method_name)(*args, **kwargs)
        return [result] * len(self._get_indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False] * len(self._get_indices(indices))
