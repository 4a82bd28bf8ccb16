"""rsl_rl PPO settings for ``Isaac-UrbanVerse-PointNav-Wheeled-v0`` (imports isaaclab_rl: Isaac only).

Standard PPO values for Isaac Lab navigation tasks (24 steps per environment per update, gamma
0.99, lambda 0.95, clip 0.2, adaptive learning rate from 3e-4); the first layer is wider than
Isaac Lab's defaults because the observation holds a flattened camera image.
"""

from __future__ import annotations

from isaaclab.utils import configclass
from isaaclab_rl.rsl_rl import RslRlOnPolicyRunnerCfg, RslRlPpoActorCriticCfg, RslRlPpoAlgorithmCfg


@configclass
class UrbanVersePointNavPPORunnerCfg(RslRlOnPolicyRunnerCfg):
    num_steps_per_env = 24
    max_iterations = 3000
    save_interval = 100
    experiment_name = "urbanverse_pointnav_wheeled"
    policy = RslRlPpoActorCriticCfg(
        init_noise_std=0.5,
        actor_hidden_dims=[256, 128],
        critic_hidden_dims=[256, 128],
        activation="elu",
    )
    algorithm = RslRlPpoAlgorithmCfg(
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        entropy_coef=0.005,
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=3.0e-4,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        desired_kl=0.01,
        max_grad_norm=1.0,
    )
