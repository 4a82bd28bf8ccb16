"""Play a policy in the UrbanVerse Isaac Lab task and report how its episodes ended.

    python -m urbanverse.sim.isaaclab.play --policy policies/wheeled-lidar-mlp/policy.onnx \\
        --scenes scenes/example --num_envs 16 --steps 3000 --headless
    python -m urbanverse.sim.isaaclab.play --load_run 2026-12-07_10-00-00 --num_envs 16

``--policy`` runs an exported UrbanVerse policy (``urbanverse export``; its observation layout must
be the task's, checked before Isaac starts); otherwise an rsl_rl checkpoint from ``train``.
"""

from __future__ import annotations

from pathlib import Path

from urbanverse.sim.isaaclab import isaaclab_available, launcher


def main(argv: list[str] | None = None) -> int:
    parser = launcher.build_parser(__doc__, with_app_args=isaaclab_available())
    parser.add_argument(
        "--policy", type=Path, default=None, help="An exported policy.onnx (with its .json card)."
    )
    parser.add_argument(
        "--steps", type=int, default=None, help="Control steps to run (default: until closed)."
    )
    args, hydra_args = launcher.parse(parser, argv)
    spec = launcher.prepare_task(args)
    if args.policy is not None:
        launcher.check_policy_layout(args.policy.with_suffix(".onnx.json"), spec)
    from isaaclab.app import AppLauncher

    app = AppLauncher(args).app
    try:
        from urbanverse.sim.isaaclab import rsl_rl_runner

        return rsl_rl_runner.play(args, hydra_args, app.is_running)
    finally:
        app.close()


if __name__ == "__main__":
    raise SystemExit(main())
