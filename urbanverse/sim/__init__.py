"""Batched navigation environments: worlds, robots, sensors, pedestrians (random walkers, replayed
people, a social-force crowd), tasks, metrics.

``NavVecEnv(NavEnvCfg(...))`` is the core (torch tensors, CPU or CUDA); ``GymVectorEnv``,
``GymEnv`` (``wrappers_gym``) and ``SB3VecEnv`` (``wrappers_sb3``) adapt it. Importing this
package registers the gymnasium ids when gymnasium is installed.
"""

import importlib.util

from urbanverse.sim.check import EnvCheckError, check_env
from urbanverse.sim.crowd import SocialForceCfg
from urbanverse.sim.env import NavVecEnv
from urbanverse.sim.env_cfg import NavEnvCfg
from urbanverse.sim.pedestrians import PedestrianCfg
from urbanverse.sim.robots import LEGGED, WHEELED, RobotCfg
from urbanverse.sim.sensors import DepthCameraCfg, LidarCfg, RgbCameraCfg
from urbanverse.sim.task import PointNavCfg, RewardsCfg
from urbanverse.sim.world import WorldCfg, compile_world

if importlib.util.find_spec("gymnasium") is not None:
    from urbanverse.sim.registration import register_envs

    register_envs()

__all__ = [
    "LEGGED",
    "WHEELED",
    "DepthCameraCfg",
    "EnvCheckError",
    "LidarCfg",
    "NavEnvCfg",
    "NavVecEnv",
    "PedestrianCfg",
    "PointNavCfg",
    "RewardsCfg",
    "RgbCameraCfg",
    "RobotCfg",
    "SocialForceCfg",
    "WorldCfg",
    "check_env",
    "compile_world",
]
