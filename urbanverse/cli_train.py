"""``urbanverse train``, ``urbanverse eval`` and ``urbanverse export``: headless policy training.

Registered on the main app by ``register_train_commands(app)``. torch and the RL code are
imported inside the commands, so ``urbanverse --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli_common import cli_command
from urbanverse.errors import InputError

ScenesOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--scenes",
        help="Scene folder, or a folder of scene folders; repeat the option for more.",
        show_default=False,
    ),
]


def expand_scene_dirs(paths: list[Path]) -> tuple[str, ...]:
    """Scene folders from ``paths``: each is a scene folder (holds scene.json) or a folder of them."""
    out: list[str] = []
    for p in paths:
        if (p / "scene.json").is_file():
            out.append(str(p))
        elif p.is_dir():
            found = sorted(str(d) for d in p.iterdir() if (d / "scene.json").is_file())
            if not found:
                raise InputError(f"--scenes: {p} holds no scene.json and no scene folders")
            out.extend(found)
        else:
            raise InputError(f"--scenes: {p} is not a folder")
    return tuple(out)


@cli_command
def train_command(
    scenes: ScenesOpt = None,
    robot: Annotated[str, typer.Option(help="wheeled or legged.")] = "wheeled",
    sensor: Annotated[
        str, typer.Option(help="lidar, depth or rgb (rgb needs the renderer camera).")
    ] = "lidar",
    backbone: Annotated[str, typer.Option(help="mlp, gru, lstm, gla, sse, sse-h or ultramem.")] = "mlp",
    num_envs: Annotated[int, typer.Option("--num-envs", help="Parallel environments.")] = 64,
    steps: Annotated[
        int, typer.Option(help="Environment steps to train for (summed over environments).")
    ] = 1_000_000,
    algo: Annotated[str, typer.Option(help="ppo (ours) or sb3-ppo (Stable-Baselines3).")] = "ppo",
    device: Annotated[str, typer.Option(help="cpu or cuda[:i].")] = "cpu",
    seed: Annotated[int, typer.Option(help="Seed of the environments and the policy.")] = 0,
    exp: Annotated[str, typer.Option("--exp", help="Experiment name in the run folder name.")] = "",
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Config override a.b=v, e.g. ppo.learning_rate=3e-4 (repeatable)."),
    ] = None,
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Where run folders are created.")] = Path(
        "runs"
    ),
    resume: Annotated[
        Path | None, typer.Option(help="Continue the run in this folder from its latest checkpoint.")
    ] = None,
    init_from: Annotated[
        Path | None,
        typer.Option(
            "--init-from",
            help="Fine-tune: start from this checkpoint's policy weights (same sensor and task settings).",
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="No progress display.")] = False,
) -> None:
    """Train a navigation policy with PPO on many parallel environments (checkpoints, CSV, TensorBoard).

    A run folder <task>__<exp>__<seed>__<time> under --runs-dir holds
    config.json, progress.csv, tb/ and checkpoints; --resume RUN_DIR
    continues a run killed at any point.

    Late-training schedules (--set):
    schedule.qat_fraction=0.15 trains the last 15 % with int8 fake
    quantisation of the actor and a linear LR cooldown (QAT);
    schedule.batch_large_mult=4 makes PPO minibatches 4x larger from
    schedule.batch_switch_at (default 0.8) on (measured to help with
    ppo.schedule=fixed, to hurt with the adaptive one). QAT fine-tune of a policy:
    --init-from POLICY.pt --set schedule.qat_fraction=1.0.
    """
    from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides
    from urbanverse.rl.policy import PolicyCfg
    from urbanverse.rl.runner import Runner

    if resume is not None:
        if not (resume / "config.json").is_file():
            raise InputError(f"--resume: {resume} is not a run folder (no config.json)")
        runner = Runner.resume(resume, quiet=quiet)
        typer.echo(f"resuming {resume} at iteration {runner.iteration}/{runner.cfg.num_iterations}", err=True)
    else:
        if not scenes:
            raise InputError("--scenes: give at least one scene folder (e.g. --scenes scenes/example)")
        if robot not in ("wheeled", "legged"):
            raise InputError(f"--robot: expected wheeled or legged, got {robot!r}")
        from urbanverse.nn.backbones import BACKBONE_NAMES

        if backbone not in BACKBONE_NAMES:
            raise InputError(f"--backbone: expected one of {', '.join(BACKBONE_NAMES)}, got {backbone!r}")
        cfg = TrainCfg(
            scenes=expand_scene_dirs(scenes),
            env=EnvSpec(robot=robot, sensor=sensor, num_envs=num_envs),
            policy=PolicyCfg(backbone=backbone),
            algo=algo,
            total_steps=steps,
            seed=seed,
            device=device,
            experiment=exp,
            init_from=str(init_from) if init_from else "",
        )
        cfg = apply_overrides(cfg, overrides or [])
        if cfg.schedule.batch_large_mult > 1 and cfg.ppo.schedule == "adaptive":
            typer.echo(
                "warning: the late batch switch helped with ppo.schedule=fixed (+4.5 points) and hurt under "
                "the KL-adaptive learning rate (-5 points; larger minibatches lower the KL and the rate "
                "climbs): consider --set ppo.schedule=fixed (BENCHMARKS.md, 'Late batch switch')",
                err=True,
            )
        if cfg.algo == "sb3-ppo":
            from urbanverse.rl.sb3 import train_sb3

            run_dir = train_sb3(cfg, runs_dir, quiet=quiet)
            typer.echo(f"run folder: {run_dir}")
            return
        runner = Runner.create(cfg, runs_dir, quiet=quiet)
        typer.echo(f"run folder: {runner.run_dir}", err=True)
    row = runner.learn()
    if row:
        typer.echo(
            f"done: {runner.iteration} iterations, {runner.env_steps:,} env-steps "
            f"in {runner.wall_s / 60:.1f} min "
            f"({row['steps_per_s']:,.0f} steps/s); last iteration success {100 * row['success_rate']:.0f} %"
        )
    typer.echo(f"run folder: {runner.run_dir}")


@cli_command
def eval_command(
    checkpoint: Annotated[Path, typer.Argument(help="Run folder, checkpoint .pt, or SB3 model.zip.")],
    scenes: ScenesOpt = None,
    episodes: Annotated[int, typer.Option(help="Episodes per scene.")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the evaluation episodes.")] = 1,
    device: Annotated[str, typer.Option(help="cpu or cuda[:i].")] = "cpu",
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the results as JSON on stdout only.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="Folder for results (default: <run>/eval).")
    ] = None,
    animate: Annotated[int, typer.Option(help="Episodes in the top-down animation (0: none).")] = 3,
    video_format: Annotated[str, typer.Option("--video-format", help="gif or mp4.")] = "gif",
    quantize: Annotated[
        str,
        typer.Option(
            help="none, int8 or int4: evaluate the actor with quantised weights and int8 activations "
            "(input ranges calibrated on rollouts in the same scenes with other seeds)."
        ),
    ] = "none",
    calibration_steps: Annotated[int, typer.Option(help="Rollout steps that calibrate --quantize.")] = 200,
) -> None:
    """Evaluate a policy: success rate, SPL, collisions, route completion per scene and overall.

    Writes results.json, results.md, an episode animation and the run's learning curve to --out,
    and prints a table (or, with --json, the JSON with overall figures under "overall").
    """
    from rich.console import Console

    from urbanverse.records import save_json
    from urbanverse.rl.evaluate import evaluate, load_policy, markdown_table, rich_table
    from urbanverse.rl.plots import animate_episodes, plot_learning_curve

    if video_format not in ("gif", "mp4"):
        raise InputError(f"--video-format: expected gif or mp4, got {video_format!r}")
    if quantize not in ("none", "int8", "int4"):
        raise InputError(f"--quantize: expected none, int8 or int4, got {quantize!r}")
    if calibration_steps < 1:
        raise InputError(f"--calibration-steps: need >= 1, got {calibration_steps}")
    loaded = load_policy(checkpoint, device)
    scene_dirs = expand_scene_dirs(scenes) if scenes else loaded.cfg.scenes
    if quantize != "none":
        from urbanverse.rl.quantize import quantize_policy

        if loaded.actor is None:
            raise InputError("--quantize: needs a PPO checkpoint, not a Stable-Baselines3 model")
        loaded, _ = quantize_policy(loaded, scene_dirs, int(quantize[3:]), calibration_steps, seed, device)
    run_dir = checkpoint if checkpoint.is_dir() else checkpoint.parent
    if run_dir.name == "checkpoints":
        run_dir = run_dir.parent
    out = out or run_dir / "eval"
    out.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True, quiet=json_out, highlight=False)
    with console.status(f"evaluating {len(scene_dirs)} scenes x {episodes} episodes"):
        results, trajs, env = evaluate(loaded, scene_dirs, episodes, seed, device, record=animate)
    results["checkpoint"] = str(checkpoint)
    results["scene_dirs"] = list(scene_dirs)
    results["trained"] = {k: v for k, v in loaded.meta.items() if k in ("iteration", "env_steps", "wall_s")}
    if "quantization" in loaded.meta:
        results["quantization"] = loaded.meta["quantization"]
    save_json(results, out / "results.json")
    (out / "results.md").write_text(markdown_table(results))
    files = [out / "results.json", out / "results.md"]
    if trajs:
        files.append(
            animate_episodes(
                trajs,
                env.world.worlds,
                (env.robot.cfg.length, env.robot.cfg.width),
                env.cfg.task.success_radius,
                env.cfg.pedestrians.radius,
                out / f"episodes.{video_format}",
                env.cfg.dt,
            )
        )
    if (run_dir / "progress.csv").is_file():
        files.append(plot_learning_curve(run_dir, out / "learning_curve.png"))
    if json_out:
        typer.echo(json.dumps(results, indent=2))
        return
    console.print(rich_table(results, f"{checkpoint}: {episodes} episodes per scene"))
    for f in files:
        console.print(f"wrote {f}", soft_wrap=True)


@cli_command
def export_command(
    checkpoint: Annotated[Path, typer.Argument(help="Run folder or checkpoint .pt (--algo ppo).")],
    fmt: Annotated[str, typer.Option("--format", help="onnx or torchscript.")] = "onnx",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Output file (default: <run>/policy.onnx or policy.pt)."),
    ] = None,
    tolerance: Annotated[float, typer.Option(help="Largest allowed action difference to PyTorch.")] = 1e-4,
) -> None:
    """Export the actor (observation normalisation included) to ONNX or TorchScript and check it.

    The check runs the exported file and the PyTorch actor on the same observations; exit code 1
    when the largest action difference exceeds --tolerance.
    """
    from urbanverse.rl.evaluate import load_policy
    from urbanverse.rl.export import check_export, export_policy, write_card

    loaded = load_policy(checkpoint, "cpu")
    base = checkpoint if checkpoint.is_dir() else checkpoint.parent
    out = out or base / ("policy.onnx" if fmt == "onnx" else "policy.pt")
    path = export_policy(loaded, fmt, out)
    check = check_export(loaded, path, fmt)
    card = write_card(loaded, path, check)
    typer.echo(
        f"wrote {path} ({check['bytes'] / 1024:.0f} KiB) and {card}\n"
        f"check on {check['observations']}: max |action - pytorch| = {check['max_abs_action_diff']:.2e}; "
        f"{check['ms_per_batch_export']:.3f} ms per batch ({check['ms_per_batch_torch']:.3f} ms in PyTorch)"
    )
    if not check["max_abs_action_diff"] <= tolerance:
        typer.echo(f"error: exported policy differs from PyTorch by more than {tolerance}", err=True)
        raise typer.Exit(1)


def register_train_commands(app: typer.Typer) -> None:
    """Add ``train``, ``eval`` and ``export`` to ``app``."""
    app.command("train")(train_command)
    app.command("eval")(eval_command)
    app.command("export")(export_command)
