"""Train the UrbanVerse Isaac Lab task with Isaac Lab's rsl_rl PPO runner.

    python -m urbanverse.sim.isaaclab.train --task Isaac-UrbanVerse-PointNav-Wheeled-v0 \\
        --scenes scenes/ --num_envs 64 --headless [agent.max_iterations=500 ...]

Registers the task (``tasks``), checks the scenes and writes what each environment spawns, starts
Isaac Sim, then trains as Isaac Lab's own ``train.py`` does. Logs and checkpoints go to
``logs/rsl_rl/urbanverse_pointnav_wheeled/<date>``; ``--resume --load_run RUN`` goes on from a run.
"""

from __future__ import annotations

from urbanverse.sim.isaaclab import isaaclab_available, launcher


def main(argv: list[str] | None = None) -> int:
    parser = launcher.build_parser(__doc__, with_app_args=isaaclab_available())
    parser.add_argument("--max_iterations", type=int, default=None, help="PPO iterations (default 3000).")
    args, hydra_args = launcher.parse(parser, argv)
    launcher.prepare_task(args)
    from isaaclab.app import AppLauncher

    app = AppLauncher(args).app
    try:
        from urbanverse.sim.isaaclab import rsl_rl_runner

        return rsl_rl_runner.train(args, hydra_args)
    finally:
        app.close()


if __name__ == "__main__":
    raise SystemExit(main())
