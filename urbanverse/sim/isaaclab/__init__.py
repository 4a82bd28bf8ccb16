"""Isaac Sim and Isaac Lab over UrbanVerse scenes: the only package that imports ``isaacsim`` / ``isaaclab``.

- ``launch``: ``urbanverse isaac SCENE_DIR`` runs ``app`` (a standalone Isaac Sim application that
  opens the scene's USD, optionally with a robot) in a child Python process.
- ``tasks``: importing it registers the Isaac Lab task ``Isaac-UrbanVerse-PointNav-Wheeled-v0``
  with gymnasium (string entry points, as Isaac Lab's external-project template does).
- ``train`` / ``play``: thin entry points that register the task, start Isaac Sim and hand over to
  Isaac Lab's rsl_rl runner (``python -m urbanverse.sim.isaaclab.train --task ... --scenes ...``);
  ``play`` also runs an exported UrbanVerse policy (``policy.onnx``) in Isaac.
- ``pointnav_env_cfg`` + ``mdp`` + ``agents``: the manager-based task (Isaac imports) over many
  scenes, one copy per environment; its terms call the batched environment's code.
- ``spec``, ``scenes``, ``nav_state``, ``launcher``: the task's values, the USD it spawns, its
  navigation state and the entry points' arguments in plain Python (tested without Isaac).

Importing this package imports nothing of Isaac and registers nothing.
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
