"""Isaac Sim and Isaac Lab over UrbanVerse scenes: the only package that imports ``isaacsim`` / ``isaaclab``.

- ``launch``: ``urbanverse isaac SCENE_DIR`` runs ``app`` (a standalone Isaac Sim application that
  opens the scene's USD, optionally with a robot) in a child Python process.
- ``pointnav_env_cfg`` + ``mdp`` + ``agents``: the Isaac Lab manager-based task
  ``Isaac-UrbanVerse-PointNav-Wheeled-v0`` over the same USD scenes, with the batched
  environment's point-goal rewards and terminations (values from ``spec``), trainable with
  Isaac Lab's rsl_rl scripts.
- ``spec``: the task's values, scene USD and spawn points in plain Python (tested without Isaac).

Importing this package never imports Isaac; it registers the gymnasium id (string entry
points only) when ``isaaclab`` is installed. Train with Isaac Lab's script, naming this module
so gymnasium imports it first::

    python scripts/reinforcement_learning/rsl_rl/train.py \\
        --task urbanverse.sim.isaaclab:Isaac-UrbanVerse-PointNav-Wheeled-v0 --headless

The scene comes from ``$URBANVERSE_ISAAC_SCENE`` (default: the repository's example scene).
"""

from __future__ import annotations

import importlib.util

TASK_ID = "Isaac-UrbanVerse-PointNav-Wheeled-v0"

INSTALL_HINT = (
    "Isaac Sim is not installed in this Python environment. Install Isaac Sim 5.x and Isaac Lab 2.3+ "
    "(Linux or Windows, NVIDIA RTX GPU, Python 3.11): "
    "pip install 'isaacsim[all,extscache]' --extra-index-url https://pypi.nvidia.com && "
    "pip install 'urbanverse[isaac]' --extra-index-url https://pypi.nvidia.com "
    "(see https://isaac-sim.github.io/IsaacLab/main/source/setup/installation/pip_installation.html)"
)


def isaacsim_available() -> bool:
    """Whether the ``isaacsim`` package can be imported (without importing it)."""
    return importlib.util.find_spec("isaacsim") is not None


def isaaclab_available() -> bool:
    """Whether the ``isaaclab`` package can be imported (without importing it)."""
    return importlib.util.find_spec("isaaclab") is not None


def register_tasks() -> bool:
    """Register ``TASK_ID`` with gymnasium when Isaac Lab is installed (idempotent); returns whether it is
    registered. Entry points are strings, so nothing from Isaac is imported here."""
    if not isaaclab_available():
        return False
    import gymnasium as gym

    if TASK_ID not in gym.registry:
        gym.register(
            id=TASK_ID,
            entry_point="isaaclab.envs:ManagerBasedRLEnv",
            disable_env_checker=True,
            kwargs={
                "env_cfg_entry_point": f"{__name__}.pointnav_env_cfg:UrbanVersePointNavWheeledEnvCfg",
                "rsl_rl_cfg_entry_point": f"{__name__}.agents:UrbanVersePointNavPPORunnerCfg",
            },
        )
    return True


register_tasks()
