"""Training and playing the UrbanVerse Isaac Lab task with Isaac Lab's rsl_rl runner (Isaac only).

Import this module only after ``AppLauncher`` has started Isaac Sim (``train`` and ``play`` do).
The sequence follows Isaac Lab's ``scripts/reinforcement_learning/rsl_rl/train.py`` and ``play.py``:
Hydra builds the registered task's configurations (leftover command-line words are its
overrides), ``gym.make`` builds the environment, ``RslRlVecEnvWrapper`` adapts it, and
``OnPolicyRunner`` trains or loads. ``play_onnx`` runs an exported UrbanVerse policy instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path

import gymnasium as gym
import torch
from isaaclab.utils.io import dump_yaml
from isaaclab_rl.rsl_rl import RslRlVecEnvWrapper
from isaaclab_tasks.utils import get_checkpoint_path
from isaaclab_tasks.utils.hydra import hydra_task_config
from rsl_rl.runners import OnPolicyRunner

import urbanverse.sim.isaaclab.tasks  # noqa: F401  (registers the task ids before Hydra looks them up)
from urbanverse.sim.isaaclab.launcher import apply_runner_args


def _with_configs(args: argparse.Namespace, hydra_args: list[str], body) -> None:
    """Call ``body(env_cfg, agent_cfg)`` with the task's configurations, Hydra overrides applied."""
    sys.argv = [sys.argv[0], *hydra_args]

    @hydra_task_config(args.task, "rsl_rl_cfg_entry_point")
    def run(env_cfg, agent_cfg):
        agent_cfg = apply_runner_args(agent_cfg, args)
        env_cfg.seed = agent_cfg.seed
        if getattr(args, "device", None):
            env_cfg.sim.device = args.device
            agent_cfg.device = args.device
        body(env_cfg, agent_cfg)

    run()


def _log_root(agent_cfg) -> str:
    return os.path.abspath(os.path.join("logs", "rsl_rl", agent_cfg.experiment_name))


def train(args: argparse.Namespace, hydra_args: list[str]) -> int:
    """Train with rsl_rl PPO; logs and checkpoints under ``logs/rsl_rl/<experiment>/<date>``."""

    def body(env_cfg, agent_cfg) -> None:
        if args.max_iterations is not None:
            agent_cfg.max_iterations = args.max_iterations
        log_dir = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        if agent_cfg.run_name:
            log_dir += f"_{agent_cfg.run_name}"
        log_dir = os.path.join(_log_root(agent_cfg), log_dir)
        env_cfg.log_dir = log_dir
        env = RslRlVecEnvWrapper(gym.make(args.task, cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
        runner = OnPolicyRunner(env, agent_cfg.to_dict(), log_dir=log_dir, device=agent_cfg.device)
        if agent_cfg.resume:
            runner.load(
                get_checkpoint_path(_log_root(agent_cfg), agent_cfg.load_run, agent_cfg.load_checkpoint)
            )
        dump_yaml(os.path.join(log_dir, "params", "env.yaml"), env_cfg)
        dump_yaml(os.path.join(log_dir, "params", "agent.yaml"), agent_cfg)
        runner.learn(num_learning_iterations=agent_cfg.max_iterations, init_at_random_ep_len=True)
        env.close()

    _with_configs(args, hydra_args, body)
    return 0


class _Outcomes:
    """Episode ends by termination term (success, collision, time_out), counted over a run."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, env) -> None:
        manager = env.unwrapped.termination_manager
        for name in manager.active_terms:
            self.counts[name] = self.counts.get(name, 0) + int(manager.get_term(name).sum())

    def report(self) -> str:
        total = sum(self.counts.values())
        parts = [f"{n} {c} ({100.0 * c / total:.0f} %)" for n, c in self.counts.items()] if total else []
        return f"{total} episodes ended: " + ", ".join(parts) if total else "no episode ended"


def _play_loop(env, policy, steps: int | None, is_running) -> str:
    outcomes = _Outcomes()
    obs = env.get_observations()
    step = 0
    while is_running() and (steps is None or step < steps):
        with torch.inference_mode():
            obs, _, _, _ = env.step(policy(obs))
        outcomes.add(env)
        step += 1
    return outcomes.report()


def play(args: argparse.Namespace, hydra_args: list[str], is_running) -> int:
    """Run a policy: an rsl_rl checkpoint (``--checkpoint`` path, or the last of ``--load_run``) or an
    exported UrbanVerse ``policy.onnx`` (``--policy``); prints how the episodes ended."""

    def body(env_cfg, agent_cfg) -> None:
        env = RslRlVecEnvWrapper(gym.make(args.task, cfg=env_cfg), clip_actions=agent_cfg.clip_actions)
        if args.policy is not None:
            policy = OnnxPolicy(args.policy, env.unwrapped.device)
        else:
            path = args.checkpoint if args.checkpoint and Path(args.checkpoint).is_file() else None
            path = path or get_checkpoint_path(
                _log_root(agent_cfg), agent_cfg.load_run, agent_cfg.load_checkpoint
            )
            runner = OnPolicyRunner(env, agent_cfg.to_dict(), log_dir=None, device=agent_cfg.device)
            runner.load(path)
            policy = runner.get_inference_policy(device=env.unwrapped.device)
        print(_play_loop(env, policy, args.steps, is_running))
        env.close()

    _with_configs(args, hydra_args, body)
    return 0


class OnnxPolicy:
    """An exported UrbanVerse actor (``urbanverse export``): ``obs`` (B, D) in, ``action`` (B, A) out,
    run by onnxruntime on the CPU; feed-forward policies only."""

    def __init__(self, path: Path, device: str):
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in self.session.get_inputs()]
        if names != ["obs"]:
            raise SystemExit(
                f"error: {path}: a recurrent policy (inputs {names}); play runs feed-forward ones"
            )
        self.device = device

    def __call__(self, obs) -> torch.Tensor:
        flat = obs["policy"] if not isinstance(obs, torch.Tensor) else obs
        (action,) = self.session.run(["action"], {"obs": flat.detach().cpu().numpy()})
        return torch.from_numpy(action).to(self.device)
