"""Gymnasium ids ``UrbanVerse-PointNav-Wheeled-v0`` and ``UrbanVerse-PointNav-Legged-v0``.

``gymnasium.make_vec(id, num_envs=N, scene_dirs=[...], **cfg_fields)`` builds a
``GymVectorEnv``; ``gymnasium.make(id, scene_dirs=[...])`` a single ``GymEnv``. Any other
keyword is a ``NavEnvCfg`` field. Without ``scene_dirs`` the repository's example scene is used.
"""

from __future__ import annotations

from pathlib import Path

import urbanverse
from urbanverse.errors import InputError

ENV_IDS = {"UrbanVerse-PointNav-Wheeled-v0": "wheeled", "UrbanVerse-PointNav-Legged-v0": "legged"}


def _cfg(robot: str, num_envs: int, scene_dirs, kwargs: dict):
    from urbanverse.sim.env_cfg import NavEnvCfg

    if scene_dirs is None:
        example = Path(urbanverse.__file__).resolve().parents[1] / "scenes" / "example"
        if not example.is_dir():
            raise InputError(
                "UrbanVerse-PointNav: pass scene_dirs=[...] (no example scene next to the package)"
            )
        scene_dirs = (example,)
    return NavEnvCfg(scene_dirs=tuple(scene_dirs), num_envs=num_envs, robot=robot, **kwargs)


def make_vector_env(num_envs: int = 64, robot: str = "wheeled", scene_dirs=None, **kwargs):
    """A ``GymVectorEnv`` over a new ``NavVecEnv``."""
    from urbanverse.sim.env import NavVecEnv
    from urbanverse.sim.wrappers_gym import GymVectorEnv

    return GymVectorEnv(NavVecEnv(_cfg(robot, num_envs, scene_dirs, kwargs)))


def make_env(robot: str = "wheeled", scene_dirs=None, render_mode=None, **kwargs):
    """A single-environment ``GymEnv``."""
    from urbanverse.sim.env import NavVecEnv
    from urbanverse.sim.wrappers_gym import GymEnv

    return GymEnv(NavVecEnv(_cfg(robot, 1, scene_dirs, kwargs)))


def register_envs() -> None:
    """Register the ids with gymnasium (idempotent)."""
    import gymnasium

    for env_id, robot in ENV_IDS.items():
        if env_id in gymnasium.registry:
            continue
        gymnasium.register(
            id=env_id,
            entry_point="urbanverse.sim.registration:make_env",
            vector_entry_point="urbanverse.sim.registration:make_vector_env",
            kwargs={"robot": robot},
            disable_env_checker=True,
        )
