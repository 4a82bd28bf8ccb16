"""rsl_rl PPO settings for ``Isaac-UrbanVerse-PointNav-Wheeled-v0`` (imports isaaclab_rl: Isaac only).

The PPO values of the shipped ``wheeled-lidar-mlp`` run (``policies/wheeled-lidar-mlp/config.json``):
32 steps per environment per update, gamma 0.995, lambda 0.95, clip 0.2, 5 epochs of 4 minibatches,
adaptive learning rate from 3e-4 (KL 0.01), entropy 0.002, an MLP of two 128-unit layers with
running observation normalisation; actor and critic read the ``policy`` observation group.
"""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlOnPolicyRunnerCfg, RslRlPpoActorCriticCfg, RslRlPpoAlgorithmCfg


@configclass
class UrbanVersePointNavPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    num_steps_per_env = 32
    max_iterations = 3000
    save_interval = 100
    experiment_name = "urbanverse_pointnav_wheeled"
    obs_groups = {"policy": ["policy"], "critic": ["policy"]}
    clip_actions = 1.0
    policy = RslRlPpoActorCriticCfg(
        init_noise_std=1.0,
        actor_obs_normalization=True,
        critic_obs_normalization=True,
        actor_hidden_dims=[128, 128],
        critic_hidden_dims=[128, 128],
        activation="elu",
    )
    algorithm = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.002,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=3.0e-4,
        schedule="adaptive",
        gamma=0.995,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )
