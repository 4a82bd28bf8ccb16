"""Arguments and start-up shared by the ``train`` and ``play`` entry points (no Isaac imports at load).

The order matters to Isaac: parse the arguments, check the scenes (a mistake is reported before
Isaac Sim spends a minute starting), hand the task its scenes, config and environment count
through ``spec``'s environment variables (the task's configuration reads them when Hydra builds
it), then start Isaac Sim with ``AppLauncher``; only then may Isaac Lab modules be imported.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.sim.isaaclab import INSTALL_HINT, isaaclab_available
from urbanverse.sim.isaaclab.spec import CONFIG_ENV_VAR, NUM_ENVS_ENV_VAR, SCENES_ENV_VAR, PointNavSpec
from urbanverse.sim.isaaclab.tasks import TASKS


def build_parser(description: str, with_app_args: bool) -> argparse.ArgumentParser:
    """The arguments both entry points take; Isaac Sim's own (``--headless``, ``--device``, ...) are
    added by ``AppLauncher`` when Isaac Lab is installed (``with_app_args``)."""
    parser = argparse.ArgumentParser(
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="With Isaac Lab installed, Isaac Sim's own options (--headless, --device, "
        "--enable_cameras, ...) are listed too. Other words are Hydra overrides of the task, "
        "e.g. env.episode_length_s=20 agent.max_iterations=500.",
    )
    parser.add_argument("--task", default=next(iter(TASKS)), choices=sorted(TASKS), help="Task id.")
    parser.add_argument(
        "--scenes",
        nargs="+",
        type=Path,
        default=None,
        help="Scene folders, or folders of scene folders (default: $URBANVERSE_ISAAC_SCENES, else "
        "scenes/example). Environment i gets its own copy of scene i %% M.",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="A training run's config.json (urbanverse train): its LiDAR, rewards and episode rules "
        "(default: the shipped wheeled-lidar-mlp's).",
    )
    parser.add_argument("--num_envs", type=int, default=None, help="Number of environments (default 64).")
    parser.add_argument("--seed", type=int, default=None, help="Seed of the runner and the environments.")
    rsl = parser.add_argument_group("rsl_rl runner")
    rsl.add_argument("--experiment_name", default=None, help="Log folder under logs/rsl_rl/.")
    rsl.add_argument("--run_name", default=None, help="Suffix of the run's log folder.")
    rsl.add_argument("--resume", action="store_true", help="Resume from --load_run / --checkpoint.")
    rsl.add_argument("--load_run", default=None, help="Run folder (regex) to resume or play.")
    rsl.add_argument(
        "--checkpoint", default=None, help="Checkpoint file (regex in the run, or a path for play)."
    )
    rsl.add_argument("--logger", choices=("tensorboard", "wandb", "neptune"), default=None)
    if with_app_args:
        from isaaclab.app import AppLauncher

        AppLauncher.add_app_launcher_args(parser)
    return parser


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """(known arguments, Hydra overrides). Without Isaac Lab, explains how to install it and exits 2."""
    args, hydra_args = parser.parse_known_args(argv)
    if not isaaclab_available():
        print(f"error: {INSTALL_HINT}", file=sys.stderr)
        raise SystemExit(2)
    return args, hydra_args


def task_environment(args: argparse.Namespace) -> dict[str, str]:
    """The environment variables that hand ``args``' scenes, config and environment count to the task."""
    env = {}
    if args.scenes:
        env[SCENES_ENV_VAR] = os.pathsep.join(str(p) for p in args.scenes)
    if args.config is not None:
        env[CONFIG_ENV_VAR] = str(args.config)
    if args.num_envs is not None:
        env[NUM_ENVS_ENV_VAR] = str(args.num_envs)
    return env


def prepare_task(args: argparse.Namespace) -> PointNavSpec:
    """Set the task's environment variables and write what it spawns (scene USD, environment layers,
    scan walls) in a child process, which loads usd-core's ``pxr`` away from Isaac Sim's own: bad
    scenes or configs fail here, with exit code 2, before Isaac Sim starts."""
    os.environ.update(task_environment(args))
    done = subprocess.run([sys.executable, "-m", __name__], env=os.environ.copy(), check=False)
    if done.returncode != 0:
        raise SystemExit(2)
    return PointNavSpec.from_environment()


def apply_runner_args(agent_cfg, args: argparse.Namespace):
    """Copy the rsl_rl runner arguments that were given onto ``agent_cfg`` (what Isaac Lab's
    ``cli_args.update_rsl_rl_cfg`` does for its own scripts); returns it."""
    if args.seed is not None:
        agent_cfg.seed = args.seed
    if args.resume:
        agent_cfg.resume = True
    for name, field in (
        ("load_run", "load_run"),
        ("checkpoint", "load_checkpoint"),
        ("experiment_name", "experiment_name"),
        ("run_name", "run_name"),
        ("logger", "logger"),
    ):
        if getattr(args, name) is not None:
            setattr(agent_cfg, field, getattr(args, name))
    return agent_cfg


def check_policy_layout(policy_json: Path, spec: PointNavSpec) -> None:
    """Raise ``InputError`` unless the exported policy (``policy.onnx.json``) reads the task's
    observation vector: same terms, same slices."""
    meta = json.loads(Path(policy_json).read_text())
    theirs = {k: tuple(v) for k, v in (meta.get("obs_layout") or {}).items()}
    ours = spec.observation_layout()
    if theirs != ours:
        raise InputError(
            f"{policy_json}: the policy reads {theirs}, the task gives {ours}; play it with --config "
            "set to its training run's config.json"
        )
    if meta.get("robot") != "wheeled":
        raise InputError(
            f"{policy_json}: a {meta.get('robot')} policy; the Isaac Lab task drives a wheeled robot"
        )


def _prepare_here() -> int:
    """Child process of ``prepare_task``: write the task's USD, print a summary; 2 on a bad input."""
    try:
        spec = PointNavSpec.from_environment()
        envs = spec.env_scenes()
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{spec.num_envs} environments over {len(spec.scene_dirs)} scene(s), {envs.env_spacing:.1f} m apart; "
        f"environment layers and LiDAR scan walls in {envs.scan_walls.parent}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(_prepare_here())
