"""Stable-Baselines3 path (``urbanverse train --algo sb3-ppo``): SB3's PPO over ``SB3VecEnv``.

Our backbones plug in as a ``BaseFeaturesExtractor`` (separate extractors for actor and
critic, linear heads on top, like ``ActorCritic``); observations and rewards are normalised
by SB3's ``VecNormalize``. SB3's PPO is feed-forward, so only stateless backbones fit (use
``--algo ppo`` for recurrent ones). The run folder holds ``config.json``, ``model.zip``,
``vecnormalize.pkl`` and the same ``progress.csv`` columns as ``--algo ppo``, so ``urbanverse
eval`` and the learning-curve plot work on it.
"""

from __future__ import annotations

import math
import pickle
import time
from pathlib import Path

import numpy as np
import torch

from urbanverse.errors import InputError, require
from urbanverse.rl.config import TrainCfg, load_cfg, save_cfg
from urbanverse.rl.loaded_policy import LoadedPolicy
from urbanverse.rl.logger import RunLogger
from urbanverse.rl.runner import run_name
from urbanverse.sim.metrics import METRIC_NAMES

_sb3 = require("stable_baselines3", "train")
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor  # noqa: E402
from stable_baselines3.common.vec_env import VecNormalize  # noqa: E402

from urbanverse.nn.backbones import make_backbone  # noqa: E402


class BackboneExtractor(BaseFeaturesExtractor):
    """``(B, D) -> (B, out_dim)`` through a stateless ``urbanverse.nn`` backbone."""

    def __init__(self, observation_space, backbone: str = "mlp", overrides: dict | None = None):
        in_dim = int(observation_space.shape[0])
        net = make_backbone(backbone, in_dim, **(overrides or {}))
        if net.initial_state(1, "cpu"):
            raise InputError(
                f"--algo sb3-ppo: backbone {backbone!r} is recurrent; SB3's PPO needs a stateless one"
            )
        super().__init__(observation_space, net.out_dim)
        self.net = net

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net.step(observations, ())[0]


class _ProgressCallback(BaseCallback):
    """Writes one ``progress.csv`` row per SB3 rollout from the environment's metric sums."""

    def __init__(self, nav_env, logger: RunLogger, steps_per_rollout: int):
        super().__init__()
        self.nav_env, self.run_logger, self.per_rollout = nav_env, logger, steps_per_rollout
        self.iteration, self.t0, self.wall = 0, time.perf_counter(), 0.0
        self.prev = nav_env.metrics.sums.sum(0).clone()
        self.returns: list[float] = []

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", []):
            if "episode_return" in info:
                self.returns.append(info["episode_return"])
        return True

    def _on_rollout_start(self) -> None:
        if self.iteration == 0:
            return
        now = time.perf_counter()
        elapsed, self.t0 = now - self.t0, now
        self.wall += elapsed
        total = self.nav_env.metrics.sums.sum(0)
        d, self.prev = total - self.prev, total.clone()
        n = float(d[0])
        row = {
            "iteration": self.iteration,
            "env_steps": self.iteration * self.per_rollout,
            "wall_s": self.wall,
            "steps_per_s": self.per_rollout / elapsed,
            "episodes": n,
            "mean_return": sum(self.returns) / len(self.returns) if self.returns else math.nan,
            "episode_length": math.nan,
        }
        row.update({name: float(d[i + 1] / n) if n else math.nan for i, name in enumerate(METRIC_NAMES)})
        self.returns = []
        self.run_logger.log(row)

    def _on_rollout_end(self) -> None:
        self.iteration += 1


def train_sb3(cfg: TrainCfg, root: Path, quiet: bool = False) -> Path:
    """Train ``cfg`` with SB3's PPO in a new run folder under ``root``; returns the folder."""
    from stable_baselines3 import PPO as SB3PPO

    from urbanverse.sim import NavVecEnv
    from urbanverse.sim.wrappers_sb3 import SB3VecEnv

    if not cfg.scenes:
        raise InputError("--scenes: give at least one training scene folder")
    if cfg.torch_threads:
        torch.set_num_threads(cfg.torch_threads)
    run_dir = Path(root) / run_name(cfg)
    run_dir.mkdir(parents=True)
    save_cfg(cfg, run_dir / "config.json")
    nav = NavVecEnv(cfg.env.env_cfg(cfg.scenes, cfg.seed, "cpu"))
    venv = VecNormalize(_ReturnInfo(SB3VecEnv(nav)), gamma=cfg.ppo.gamma, clip_obs=cfg.policy.obs_clip)
    n, t = nav.num_envs, cfg.num_steps_per_env
    policy_kwargs = {
        "features_extractor_class": BackboneExtractor,
        "features_extractor_kwargs": {
            "backbone": cfg.policy.backbone,
            "overrides": dict(cfg.policy.backbone_overrides),
        },
        "share_features_extractor": False,
        "net_arch": [],
        "log_std_init": math.log(cfg.policy.init_noise_std),
    }
    model = SB3PPO(
        "MlpPolicy",
        venv,
        learning_rate=cfg.ppo.learning_rate,
        n_steps=t,
        batch_size=max(1, n * t // cfg.ppo.num_mini_batches),
        n_epochs=cfg.ppo.num_learning_epochs,
        gamma=cfg.ppo.gamma,
        gae_lambda=cfg.ppo.lam,
        clip_range=cfg.ppo.clip_param,
        ent_coef=cfg.ppo.entropy_coef,
        vf_coef=cfg.ppo.value_loss_coef,
        max_grad_norm=cfg.ppo.max_grad_norm,
        policy_kwargs=policy_kwargs,
        seed=cfg.seed,
        device=cfg.device,
        verbose=0,
    )
    total_it = cfg.num_iterations
    with RunLogger(run_dir, 0, total_it, quiet=quiet) as logger:
        callback = _ProgressCallback(nav, logger, n * t)
        model.learn(total_timesteps=total_it * n * t, callback=callback)
        callback._on_rollout_start()  # log the last iteration
    model.save(run_dir / "model.zip")
    venv.save(str(run_dir / "vecnormalize.pkl"))
    return run_dir


class _ReturnInfo(_sb3.common.vec_env.VecEnvWrapper):
    """Adds ``episode_return`` (undiscounted, raw reward) to the info of each finished episode."""

    def __init__(self, venv):
        super().__init__(venv)
        self.ret = None

    def reset(self):
        obs = self.venv.reset()
        self.ret = np.zeros(self.num_envs, dtype=np.float64)
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.ret += rewards
        for i in dones.nonzero()[0]:
            infos[i]["episode_return"] = float(self.ret[i])
            self.ret[i] = 0.0
        return obs, rewards, dones, infos


def load_sb3_policy(zip_path: Path, device: str = "cpu") -> LoadedPolicy:
    """A ``LoadedPolicy`` acting with an SB3 run's deterministic policy (observations normalised)."""
    from stable_baselines3 import PPO as SB3PPO

    run_dir = Path(zip_path).parent
    cfg = load_cfg(run_dir / "config.json")
    model = SB3PPO.load(zip_path, device=device)
    norm_path = run_dir / "vecnormalize.pkl"
    if not norm_path.is_file():
        raise InputError(f"{norm_path}: missing (written by --algo sb3-ppo next to model.zip)")
    with norm_path.open("rb") as f:
        vecnorm = pickle.load(f)

    def act(obs: torch.Tensor, state: tuple) -> tuple[torch.Tensor, tuple]:
        x = vecnorm.normalize_obs(obs.cpu().numpy())
        actions, _ = model.predict(x, deterministic=True)
        return torch.as_tensor(actions, dtype=torch.float32), ()

    space = model.observation_space.shape[0]
    meta = {"num_obs": space, "num_actions": model.action_space.shape[0], "algo": "sb3-ppo"}
    return LoadedPolicy(cfg, act, lambda n: (), None, meta)
