"""``urbanverse train``, ``urbanverse eval`` and ``urbanverse export``: headless policy training.

Registered on the main app by ``register_train_commands(app)``. torch and the RL code are
imported inside the commands, so ``urbanverse --help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from urbanverse.cli.common import JsonFlag, cli_command, print_json
from urbanverse.errors import InputError

PEDESTRIANS_HELP = (
    "How pedestrians move: random (straight walks at their own speed with random turns, anywhere "
    "walkable); replay (the people seen in the scene's video, their recorded trajectories looped and "
    "time-shifted; they ignore the robot, whose collisions with them count); flow (spawned where "
    "people were seen and walking where they walked, pavement or not, with the scene's observed flow "
    "in a social-force crowd that keeps clear of each other, walls and the robot). Scenes without "
    "recorded people (replay) or flow field (flow) fall back to random, with a warning."
)

ScenesOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--scenes",
        help="Scene folder, or a folder of scene folders (of 'urbanverse gen' outputs: the failed ones, "
        "holding error.json, are skipped with a warning each); repeat the option for more.",
        show_default=False,
    ),
]


@cli_command
def train_command(
    scenes: ScenesOpt = None,
    robot: Annotated[str, typer.Option(help="wheeled or legged.")] = "wheeled",
    sensor: Annotated[
        str, typer.Option(help="lidar, depth or rgb (rgb needs the renderer camera).")
    ] = "lidar",
    backbone: Annotated[
        str,
        typer.Option(
            help="Policy core: mlp, gru, lstm, gla, sse, sse-h or ultramem (behind --encoder with a camera)."
        ),
    ] = "mlp",
    encoder: Annotated[
        str | None,
        typer.Option(
            help="Image encoder before the core for camera sensors: cnn (the UrbanVerse paper's 3-layer "
            "CNN, 128 features), nature (Nature-DQN CNN, 512), impala (IMPALA ResNet, 256) or none "
            "(pixels flattened into the core's input). Default: cnn for --sensor rgb or depth (with "
            "--algo ppo), none for lidar. Its fields: --set policy.encoder_overrides.out_dim=256.",
            show_default=False,
        ),
    ] = None,
    pedestrians: Annotated[str, typer.Option("--pedestrians", help=PEDESTRIANS_HELP)] = "random",
    pedestrian_count: Annotated[
        int, typer.Option("--pedestrian-count", help="Pedestrians per environment (0: none).")
    ] = 4,
    num_envs: Annotated[
        int, typer.Option("--num-envs", help="Parallel environments per process (--nproc N steps N x this).")
    ] = 64,
    steps: Annotated[
        int, typer.Option(help="Environment steps to train for (summed over environments and processes).")
    ] = 1_000_000,
    nproc: Annotated[
        int,
        typer.Option(
            "--nproc",
            help="Training processes: data-parallel PPO over torch.distributed (gloo on CPU, NCCL on "
            "CUDA, one GPU each); each has --num-envs environments, its own seed and share of the "
            "scenes, and cores / N threads (OMP_NUM_THREADS, NUMBA_NUM_THREADS unless set). "
            "Also with --resume.",
        ),
    ] = 1,
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
    quiet: Annotated[
        bool, typer.Option(help="No progress display (urbanverse -q train ... also hides info messages).")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Train a navigation policy with PPO on many parallel environments (checkpoints, CSV, TensorBoard).

    A run folder <task>__<exp>__<seed>__<time> under --runs-dir holds
    config.json, progress.csv, tb/ and checkpoints; --resume RUN_DIR
    continues a run killed at any point.

    The policy is --encoder (camera images -> features; cnn by default for
    --sensor rgb or depth) then the --backbone core (mlp by default), then
    the action and value heads; the run folder's <exp> is <encoder>-<backbone>
    (or <backbone> without an encoder).

    --nproc N trains on N processes of this machine with identical models
    (gradients averaged every minibatch); under torchrun
    (torchrun --nproc_per_node N -m urbanverse.cli train ...) each process
    is one rank. Rank 0 writes the run folder.

    Late-training schedules (--set):
    schedule.qat_fraction=0.15 trains the last 15 % with int8 fake
    quantisation of the actor and a linear LR cooldown (QAT);
    schedule.batch_large_mult=4 makes PPO minibatches 4x larger from
    schedule.batch_switch_at (default 0.8) on (measured to help with
    ppo.schedule=fixed, to hurt with the adaptive one). QAT fine-tune of a policy:
    --init-from POLICY.pt --set schedule.qat_fraction=1.0.
    """
    from urbanverse.rl.distributed import is_main_process
    from urbanverse.rl.jobs import resume_training, train_policy
    from urbanverse.scene.record import find_scene_dirs

    if nproc < 1:
        raise InputError(f"--nproc: need >= 1, got {nproc}")
    if resume is not None:
        summary = resume_training(resume, quiet=quiet, nproc=nproc)
    else:
        from urbanverse.nn.backbones import BACKBONE_NAMES
        from urbanverse.nn.encoders import ENCODER_NAMES
        from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides
        from urbanverse.rl.policy import PolicyCfg
        from urbanverse.sim.pedestrians import BEHAVIOURS, PedestrianCfg

        if not scenes:
            raise InputError("--scenes: give at least one scene folder (e.g. --scenes scenes/example)")
        if robot not in ("wheeled", "legged"):
            raise InputError(f"--robot: expected wheeled or legged, got {robot!r}")
        if backbone not in BACKBONE_NAMES:
            raise InputError(f"--backbone: expected one of {', '.join(BACKBONE_NAMES)}, got {backbone!r}")
        if encoder is None:
            encoder = "cnn" if sensor in ("rgb", "depth") and algo == "ppo" else "none"
        if encoder not in (*ENCODER_NAMES, "none"):
            raise InputError(
                f"--encoder: expected one of {', '.join(ENCODER_NAMES)} or none, got {encoder!r}"
            )
        if pedestrians not in BEHAVIOURS:
            raise InputError(f"--pedestrians: expected one of {', '.join(BEHAVIOURS)}, got {pedestrians!r}")
        if pedestrian_count < 0:
            raise InputError(f"--pedestrian-count: need >= 0, got {pedestrian_count}")
        peds = PedestrianCfg(behaviour=pedestrians, count=pedestrian_count)  # type: ignore[arg-type]
        cfg = TrainCfg(
            scenes=find_scene_dirs(scenes, "--scenes"),
            env=EnvSpec(robot=robot, sensor=sensor, num_envs=num_envs, pedestrians=peds),
            policy=PolicyCfg(backbone=backbone, encoder=None if encoder == "none" else encoder),
            algo=algo,
            total_steps=steps,
            seed=seed,
            device=device,
            experiment=exp,
            init_from=str(init_from) if init_from else "",
        )
        summary = train_policy(apply_overrides(cfg, overrides or []), runs_dir, quiet=quiet, nproc=nproc)
    if not is_main_process():  # a rank of a torchrun launch: rank 0 reports
        return
    if as_json:
        print_json(summary.to_dict())
        return
    row = summary.last
    if row and summary.algo == "ppo":
        typer.echo(
            f"done: {summary.iterations} iterations, {summary.env_steps:,} env-steps "
            f"in {summary.wall_s / 60:.1f} min "
            f"({row['steps_per_s']:,.0f} steps/s); last iteration success {100 * row['success_rate']:.0f} %"
        )
    typer.echo(f"run folder: {summary.run_dir}")


@cli_command
def eval_command(
    checkpoints: Annotated[
        list[Path], typer.Argument(help="Run folder, checkpoint .pt, or SB3 model.zip; several for a sweep.")
    ],
    scenes: ScenesOpt = None,
    episodes: Annotated[
        int | None, typer.Option(help="Episodes per scene [default: 20].", show_default=False)
    ] = None,
    episodes_file: Annotated[
        Path | None,
        typer.Option(
            "--episodes-file",
            help="Fixed episodes (JSON lines, from 'urbanverse episodes make') instead of --scenes and "
            "--episodes: each one whose start and goal are free and connected runs exactly once, the "
            "others are reported (warning, 'skipped' and 'episodes' in the JSON). No animation.",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="Seed of the evaluation episodes (with --episodes-file: of the pedestrians).")
    ] = 1,
    device: Annotated[str, typer.Option(help="cpu or cuda[:i].")] = "cpu",
    json_out: JsonFlag = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Folder for results (default: <run>/eval beside a training run, else "
            "./eval/<policy folder name>: never inside a shipped policy's folder). Several "
            "checkpoints: one sub-folder each, named after its run folder.",
        ),
    ] = None,
    animate: Annotated[
        int | None,
        typer.Option(
            help="Episodes in the top-down animation (0: none; default 3 where matplotlib is installed, "
            "else none).",
            show_default=False,
        ),
    ] = None,
    video_format: Annotated[str, typer.Option("--video-format", help="gif or mp4.")] = "gif",
    quantize: Annotated[
        str,
        typer.Option(
            help="none, int8 or int4: evaluate the actor with quantised weights and int8 activations "
            "(input ranges calibrated on rollouts in the same scenes with other seeds)."
        ),
    ] = "none",
    calibration_steps: Annotated[int, typer.Option(help="Rollout steps that calibrate --quantize.")] = 200,
    pedestrians: Annotated[
        str | None,
        typer.Option(
            "--pedestrians",
            help=PEDESTRIANS_HELP + " Default: as the policy trained (only the behaviour changes; "
            "count, size and speeds stay the policy's).",
            show_default=False,
        ),
    ] = None,
    pedestrian_count: Annotated[
        int | None,
        typer.Option(
            "--pedestrian-count",
            help="Pedestrians per environment (default: as the policy trained).",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            help="Worker processes, one (checkpoint, scene) unit each at a time (default 1: this "
            "process); with --ray, the CPUs of the local Ray (default: all).",
            show_default=False,
        ),
    ] = None,
    ray: Annotated[
        bool, typer.Option("--ray", help="Run the units on Ray (a local one, 1 CPU per unit).")
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="Run the units on this Ray cluster (host:6379 or ray://host:10001)."
        ),
    ] = None,
) -> None:
    """Evaluate policies: success rate, SPL, collisions, route completion per scene and overall.

    Each (checkpoint, scene) pair is evaluated on its own with a seed drawn from --seed and the
    scene's place in --scenes, so --jobs and --ray give the same figures as one process.
    --episodes-file F runs the fixed episodes of F instead (Habitat PointNav style), one unit per
    scene of F; the JSON then also lists every episode's status and figures under "episodes".
    Writes results.json, results.md and, where matplotlib is installed, an episode animation and
    the run's learning curve to each checkpoint's --out folder; prints a table per checkpoint (or,
    with --json, the JSON with overall figures under "overall"; several checkpoints: a list under
    "evaluations").
    """
    from rich.console import Console

    from urbanverse.rl.evaluate import comparison_table, rich_table
    from urbanverse.rl.jobs import EvalCfg, eval_executor, eval_out_dirs, run_evaluations
    from urbanverse.scene.record import find_scene_dirs

    if episodes_file is not None and episodes is not None:  # --scenes too: EvalCfg refuses it
        raise InputError("--episodes-file: the file fixes the episodes; drop --episodes")
    executor = eval_executor(jobs, ray, ray_address)
    scene_dirs = find_scene_dirs(scenes, "--scenes") if scenes else ()
    cfgs = [
        EvalCfg(
            checkpoint=checkpoint,
            scenes=scene_dirs,
            episodes=20 if episodes is None else episodes,
            episodes_file=episodes_file,
            seed=seed,
            device=device,
            out=folder,
            animate=animate,
            video_format=video_format,  # type: ignore[arg-type]
            quantize=quantize,  # type: ignore[arg-type]
            calibration_steps=calibration_steps,
            pedestrians=pedestrians,  # type: ignore[arg-type]
            pedestrian_count=pedestrian_count,
        )
        for checkpoint, folder in zip(checkpoints, eval_out_dirs(checkpoints, out), strict=True)
    ]
    console = Console(stderr=True, quiet=json_out, highlight=False)
    where = (
        "this process" if executor is None else ("Ray" if executor.uses_ray else f"{executor.jobs} processes")
    )
    with console.status(f"evaluating on {where}") as status:

        def progress(done: int, total: int) -> None:
            status.update(f"evaluating on {where}: {done}/{total} (checkpoint, scene) units done")

        outcomes = run_evaluations(cfgs, executor, progress)
    if json_out:
        results = [o.results for o in outcomes]
        print_json(results[0] if len(results) == 1 else {"evaluations": results})
        return
    for cfg, outcome in zip(cfgs, outcomes, strict=True):
        console.print(f"checkpoint {cfg.checkpoint}", soft_wrap=True)  # a long path stays on one line
        peds = outcome.results["pedestrians"]
        if episodes_file is not None:
            ran = outcome.results["overall"]["episodes"]
            skipped = sum(outcome.results["skipped"].values())
            title = f"{ran} episodes of {episodes_file} ({skipped} not run)"
        else:
            title = f"{cfg.episodes} episodes per scene"
        title += f", {peds['count']} {peds['behaviour']} pedestrians"
        console.print(rich_table(outcome.results, title))
        for f in outcome.files:
            console.print(f"wrote {f}", soft_wrap=True)
    if len(outcomes) > 1:
        console.print(comparison_table([o.results for o in outcomes]))


@cli_command
def export_command(
    checkpoint: Annotated[Path, typer.Argument(help="Run folder or checkpoint .pt (--algo ppo).")],
    fmt: Annotated[str, typer.Option("--format", help="onnx or torchscript.")] = "onnx",
    out: Annotated[
        Path | None,
        typer.Option("-o", "--out", help="Output file (default: <run>/policy.onnx or policy.pt)."),
    ] = None,
    tolerance: Annotated[float, typer.Option(help="Largest allowed action difference to PyTorch.")] = 1e-4,
    as_json: JsonFlag = False,
) -> None:
    """Export the actor (observation normalisation included) to ONNX or TorchScript and check it.

    The check runs the exported file and the PyTorch actor on the same observations; exit code 1
    when the largest action difference exceeds --tolerance.
    """
    from urbanverse.rl.jobs import export_checked_policy

    exported = export_checked_policy(checkpoint, fmt, out)
    path, card, check = exported.path, exported.card, exported.check
    passed = check["max_abs_action_diff"] <= tolerance
    if as_json:
        print_json(
            {"policy": str(path), "card": str(card), "tolerance": tolerance, "passed": passed, **check}
        )
        if not passed:
            raise typer.Exit(1)
        return
    typer.echo(
        f"wrote {path} ({check['bytes'] / 1024:.0f} KiB) and {card}\n"
        f"check on {check['observations']}: max |action - pytorch| = {check['max_abs_action_diff']:.2e}; "
        f"{check['ms_per_batch_export']:.3f} ms per batch ({check['ms_per_batch_torch']:.3f} ms in PyTorch)"
    )
    if not passed:
        typer.echo(f"error: exported policy differs from PyTorch by more than {tolerance}", err=True)
        raise typer.Exit(1)


def register_train_commands(app: typer.Typer) -> None:
    """Add ``train``, ``eval`` and ``export`` to ``app``."""
    app.command("train")(train_command)
    app.command("eval")(eval_command)
    app.command("export")(export_command)
