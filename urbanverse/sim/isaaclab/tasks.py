"""Importing this module registers the UrbanVerse Isaac Lab tasks with gymnasium.

As in Isaac Lab's external-project template, the task ids must be in gymnasium's registry before
Isaac Lab's ``hydra_task_config`` looks them up, so the ``train`` and ``play`` entry points import
this module first. Entry points are strings: registering imports nothing of Isaac, and the
configuration modules load only when Isaac Lab builds the environment.
"""

from __future__ import annotations

import gymnasium as gym

from urbanverse.sim.isaaclab import TASK_ID

_PACKAGE = __name__.rsplit(".", 1)[0]

#: Task id -> gymnasium ``register`` arguments.
TASKS: dict[str, dict] = {
    TASK_ID: {
        "entry_point": "isaaclab.envs:ManagerBasedRLEnv",
        "disable_env_checker": True,
        "kwargs": {
            "env_cfg_entry_point": f"{_PACKAGE}.pointnav_env_cfg:UrbanVersePointNavWheeledEnvCfg",
            "rsl_rl_cfg_entry_point": f"{_PACKAGE}.agents:UrbanVersePointNavPPORunnerCfg",
        },
    }
}


def register() -> None:
    """Register every task id in ``TASKS`` (idempotent)."""
    for task_id, spec in TASKS.items():
        if task_id not in gym.registry:
            gym.register(id=task_id, **spec)


register()
