"""Train and evaluation jobs: what ``urbanverse train`` and ``urbanverse eval`` run, start to finish.

A job takes a config, does the whole piece of work (run folder, training or evaluation, the
files it writes) and returns a summary the caller prints or serialises. Messages go to the
``logging`` logger of this module; nothing here prints.
"""

from __future__ import annotations

import csv
import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from urbanverse.errors import InputError
from urbanverse.rl.config import TrainCfg

log = logging.getLogger(__name__)

#: Episodes in the evaluation animation when the caller does not say (and matplotlib is installed).
DEFAULT_ANIMATED_EPISODES = 3


# ---------------------------------------------------------------------------------------- training
@dataclass(frozen=True)
class TrainSummary:
    """Where a training run lives and how far it got.

    ``last`` is the last iteration's log row (the ``progress.csv`` columns: ``success_rate`` in
    [0, 1], ``steps_per_s`` env-steps per second, ...); empty when no iteration ran.
    """

    run_dir: Path
    algo: str
    iterations: int
    env_steps: int
    wall_s: float
    last: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "run_dir": str(self.run_dir),
            "algo": self.algo,
            "iterations": self.iterations,
            "env_steps": self.env_steps,
            "wall_s": self.wall_s,
            "last_iteration": dict(self.last),
        }


def schedule_warnings(cfg: TrainCfg) -> list[str]:
    """Settings of ``cfg`` that work against each other, one sentence each."""
    warnings = []
    if cfg.schedule.batch_large_mult > 1 and cfg.ppo.schedule == "adaptive":
        warnings.append(
            "the late batch switch helps with ppo.schedule=fixed and hurts under the KL-adaptive "
            "learning rate (larger minibatches lower the KL and the rate climbs): consider "
            "--set ppo.schedule=fixed (BENCHMARKS.md, 'Late batch switch')"
        )
    return warnings


def train_policy(cfg: TrainCfg, runs_dir: Path, quiet: bool = False) -> TrainSummary:
    """Train ``cfg`` (``algo`` ppo or sb3-ppo) in a new run folder under ``runs_dir``.

    ``quiet`` turns the progress display off. The run folder survives SIGKILL: continue it with
    ``resume_training``.
    """
    for line in schedule_warnings(cfg):
        log.warning(line)
    if cfg.algo == "sb3-ppo":
        from urbanverse.rl.sb3 import train_sb3

        run_dir = train_sb3(cfg, runs_dir, quiet=quiet)
        return _summary_from_csv(run_dir, cfg.algo)
    from urbanverse.rl.runner import Runner

    runner = Runner.create(cfg, runs_dir, quiet=quiet)
    log.info("run folder: %s", runner.run_dir)
    return _learn(runner)


def resume_training(run_dir: Path, quiet: bool = False) -> TrainSummary:
    """Continue the PPO run in ``run_dir`` from its latest checkpoint to the end of its budget."""
    from urbanverse.rl.runner import Runner

    if not (run_dir / "config.json").is_file():
        raise InputError(f"--resume: {run_dir} is not a run folder (no config.json)")
    runner = Runner.resume(run_dir, quiet=quiet)
    log.info("resuming %s at iteration %d/%d", run_dir, runner.iteration, runner.cfg.num_iterations)
    return _learn(runner)


def _learn(runner) -> TrainSummary:
    row = runner.learn()
    return TrainSummary(
        run_dir=runner.run_dir,
        algo=runner.cfg.algo,
        iterations=runner.iteration,
        env_steps=runner.env_steps,
        wall_s=runner.wall_s,
        last=row,
    )


def _summary_from_csv(run_dir: Path, algo: str) -> TrainSummary:
    """The summary of a finished run read back from its ``progress.csv``."""
    path = run_dir / "progress.csv"
    rows = list(csv.DictReader(path.open(newline=""))) if path.is_file() else []
    last = {k: float(v) if v not in ("", None) else math.nan for k, v in rows[-1].items()} if rows else {}
    return TrainSummary(
        run_dir=run_dir,
        algo=algo,
        iterations=int(last.get("iteration", 0)),
        env_steps=int(last.get("env_steps", 0)),
        wall_s=float(last.get("wall_s", 0.0)),
        last=last,
    )


# -------------------------------------------------------------------------------------- evaluation
@dataclass(frozen=True, kw_only=True)
class EvalCfg:
    """One evaluation of a trained policy."""

    checkpoint: Path
    """Run folder, checkpoint ``.pt`` or Stable-Baselines3 ``model.zip``."""
    scenes: tuple[str, ...] = ()
    """Scene folders to evaluate in; empty: the scenes the policy was trained in."""
    episodes: int = 20
    """Episodes per scene."""
    seed: int = 1
    """Seed of the evaluation episodes."""
    device: str = "cpu"
    """``cpu`` or ``cuda[:i]``."""
    out: Path | None = None
    """Folder for the results; None: ``<run>/eval`` beside a training run, else
    ``./eval/<policy folder name>`` (:func:`default_eval_dir`)."""
    animate: int | None = None
    """Episodes in the top-down animation (0: none); None: ``DEFAULT_ANIMATED_EPISODES`` where
    matplotlib is installed, else none, so that evaluation never needs a plotting library."""
    video_format: Literal["gif", "mp4"] = "gif"
    """File format of the animation."""
    quantize: Literal["none", "int8", "int4"] = "none"
    """Evaluate the actor with quantised weights and int8 activations (a PPO checkpoint only)."""
    calibration_steps: int = 200
    """Rollout steps that calibrate the input ranges of ``quantize``."""

    def __post_init__(self) -> None:
        if self.video_format not in ("gif", "mp4"):
            raise InputError(f"--video-format: expected gif or mp4, got {self.video_format!r}")
        if self.quantize not in ("none", "int8", "int4"):
            raise InputError(f"--quantize: expected none, int8 or int4, got {self.quantize!r}")
        if self.calibration_steps < 1:
            raise InputError(f"--calibration-steps: need >= 1, got {self.calibration_steps}")
        if self.animate is not None and self.animate < 0:
            raise InputError(f"--animate: need >= 0, got {self.animate}")


@dataclass(frozen=True)
class EvalOutcome:
    """``results`` as written to ``results.json`` (overall figures under ``overall``, per scene
    under ``scenes``) and every file the evaluation wrote."""

    results: dict
    files: list[Path]


def matplotlib_available() -> bool:
    """Whether ``import matplotlib`` works (plots and animations need it)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def run_dir_of(checkpoint: Path) -> Path:
    """The run folder of ``checkpoint``: itself when a folder, else the folder above ``checkpoints/``."""
    run_dir = checkpoint if checkpoint.is_dir() else checkpoint.parent
    return run_dir.parent if run_dir.name == "checkpoints" else run_dir


#: The file that marks a training run folder (the runner writes one row per iteration).
RUN_MARKER = "progress.csv"


def default_eval_dir(checkpoint: Path) -> Path:
    """Where ``eval`` writes without ``--out``: ``<run>/eval`` beside a training run (a folder holding
    ``progress.csv``), else ``./eval/<name of the checkpoint's folder>``, so that evaluating a
    shipped policy (``policies/<name>/policy.pt``) never writes into the policy's own folder."""
    run_dir = run_dir_of(Path(checkpoint))
    if (run_dir / RUN_MARKER).is_file():
        return run_dir / "eval"
    return Path("eval") / run_dir.resolve().name


def run_evaluation(cfg: EvalCfg) -> EvalOutcome:
    """Evaluate ``cfg.checkpoint``: success rate, SPL, collisions and route completion per scene
    and overall, written to ``results.json`` and ``results.md`` in ``cfg.out``, with the episode
    animation and the run's learning curve where matplotlib is installed."""
    from urbanverse.rl.evaluate import evaluate, load_policy

    plots = matplotlib_available()
    animate = cfg.animate
    if animate is None:
        animate = DEFAULT_ANIMATED_EPISODES if plots else 0
        if not plots:
            log.info("matplotlib is not installed: no episode animation and no learning curve")
    elif animate and not plots:
        from urbanverse.errors import require

        require("matplotlib", "train")  # asked for an animation: say how to install what draws it
    loaded = load_policy(cfg.checkpoint, cfg.device)
    scene_dirs = cfg.scenes or loaded.cfg.scenes
    if cfg.quantize != "none":
        from urbanverse.rl.quantize import quantize_policy

        if loaded.actor is None:
            raise InputError("--quantize: needs a PPO checkpoint, not a Stable-Baselines3 model")
        bits = int(cfg.quantize[3:])
        loaded, _ = quantize_policy(loaded, scene_dirs, bits, cfg.calibration_steps, cfg.seed, cfg.device)
    run_dir = run_dir_of(cfg.checkpoint)
    out = cfg.out or default_eval_dir(cfg.checkpoint)
    out.mkdir(parents=True, exist_ok=True)
    log.info("evaluating %d scenes x %d episodes", len(scene_dirs), cfg.episodes)
    results, trajs, env = evaluate(loaded, scene_dirs, cfg.episodes, cfg.seed, cfg.device, record=animate)
    results["checkpoint"] = str(cfg.checkpoint)
    results["scene_dirs"] = list(scene_dirs)
    results["trained"] = {k: v for k, v in loaded.meta.items() if k in ("iteration", "env_steps", "wall_s")}
    if "quantization" in loaded.meta:
        results["quantization"] = loaded.meta["quantization"]
    files = write_evaluation(results, trajs, env, out, cfg.video_format)
    if plots and (run_dir / RUN_MARKER).is_file():
        from urbanverse.rl.plots import plot_learning_curve

        files.append(plot_learning_curve(run_dir, out / "learning_curve.png"))
    return EvalOutcome(results=results, files=files)


def write_evaluation(results: dict, trajs: list, env, out: Path, video_format: str = "gif") -> list[Path]:
    """``results.json`` and ``results.md`` of an evaluation in ``out``, and the top-down animation of
    the recorded episodes ``trajs`` (``episodes.<video_format>``, needs matplotlib) when there are any;
    returns the files written."""
    from urbanverse.records import save_json
    from urbanverse.rl.evaluate import markdown_table

    save_json(results, out / "results.json")
    (out / "results.md").write_text(markdown_table(results))
    files = [out / "results.json", out / "results.md"]
    if trajs:
        from urbanverse.rl.plots import animate_episodes

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
    return files


# ------------------------------------------------------------------------------------------ export
@dataclass(frozen=True)
class ExportOutcome:
    """The exported policy file, its card (``<file>.json``) and the check of the export against
    PyTorch (``max_abs_action_diff``, ``ms_per_batch_export``, ``ms_per_batch_torch``, ``bytes``, ...)."""

    path: Path
    card: Path
    check: dict


def export_checked_policy(checkpoint: Path, fmt: str, out: Path | None = None) -> ExportOutcome:
    """Export the actor of ``checkpoint`` (``fmt`` onnx or torchscript) to ``out`` (default:
    ``policy.onnx`` or ``policy.pt`` beside it), run it against PyTorch and write its card."""
    from urbanverse.rl.evaluate import load_policy
    from urbanverse.rl.export import check_export, export_policy, write_card

    loaded = load_policy(checkpoint, "cpu")
    base = checkpoint if checkpoint.is_dir() else checkpoint.parent
    out = out or base / ("policy.onnx" if fmt == "onnx" else "policy.pt")
    path = export_policy(loaded, fmt, out)
    check = check_export(loaded, path, fmt)
    card = write_card(loaded, path, check)
    return ExportOutcome(path=path, card=card, check=check)
