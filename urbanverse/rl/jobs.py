"""Train and evaluation jobs: what ``urbanverse train`` and ``urbanverse eval`` run, start to finish.

A job takes a config, does the whole piece of work (run folder, training or evaluation, the
files it writes) and returns a summary the caller prints or serialises. Messages go to the
``logging`` logger of this module; nothing here prints.
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from urbanverse.errors import InputError
from urbanverse.rl.config import TrainCfg
from urbanverse.sim.pedestrians import BEHAVIOURS, PedestrianCfg

if TYPE_CHECKING:
    from urbanverse.parallel import ExecutorCfg

log = logging.getLogger(__name__)

#: Episodes in the evaluation animation when the caller does not say (and matplotlib is installed).
DEFAULT_ANIMATED_EPISODES = 3

#: CPUs one evaluation unit (a policy in one scene, on one torch thread) declares to Ray.
EVAL_UNIT_CPUS = 1.0


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


def train_policy(cfg: TrainCfg, runs_dir: Path, quiet: bool = False, nproc: int = 1) -> TrainSummary:
    """Train ``cfg`` (``algo`` ppo or sb3-ppo) in a new run folder under ``runs_dir``.

    ``quiet`` turns the progress display off. ``nproc`` > 1 trains PPO data-parallel in that many
    new processes of this machine (``cfg.env.num_envs`` environments each); a process started by a
    launcher (``WORLD_SIZE`` set, e.g. ``torchrun``) is one rank of such a run. The run folder
    survives SIGKILL: continue it with ``resume_training``.
    """
    from urbanverse.rl.distributed import launch, launched_world_size, process_group

    if (nproc > 1 or launched_world_size() > 1) and cfg.algo != "ppo":
        raise InputError(f"--nproc: data-parallel training is for --algo ppo, not {cfg.algo}")
    if nproc > 1:
        return launch(train_policy, nproc, cfg, runs_dir, quiet)
    with process_group(cfg.device) as sync:
        if sync.is_main:
            for line in schedule_warnings(cfg):
                log.warning(line)
        if cfg.algo == "sb3-ppo":
            from urbanverse.rl.sb3 import train_sb3

            return _summary_from_csv(train_sb3(cfg, runs_dir, quiet=quiet), cfg.algo)
        from urbanverse.rl.runner import Runner

        runner = Runner.create(cfg, runs_dir, quiet=quiet, sync=sync)
        if sync.is_main:
            log.info("run folder: %s", runner.run_dir)
        return _learn(runner)


def resume_training(run_dir: Path, quiet: bool = False, nproc: int = 1) -> TrainSummary:
    """Continue the PPO run in ``run_dir`` from its latest checkpoint to the end of its budget, on
    ``nproc`` data-parallel processes (or as one rank of a launcher's run, as ``train_policy``)."""
    from urbanverse.rl.config import load_cfg
    from urbanverse.rl.distributed import launch, process_group
    from urbanverse.rl.runner import Runner

    if not (run_dir / "config.json").is_file():
        raise InputError(f"--resume: {run_dir} is not a run folder (no config.json)")
    if nproc > 1:
        return launch(resume_training, nproc, run_dir, quiet)
    with process_group(load_cfg(run_dir / "config.json").device) as sync:
        runner = Runner.resume(run_dir, quiet=quiet, sync=sync)
        if sync.is_main:
            log.info("resuming %s at iteration %d/%d", run_dir, runner.iteration, runner.num_iterations)
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
    pedestrians: Literal["random", "replay", "flow"] | None = None
    """Pedestrian behaviour to evaluate with (``PedestrianCfg.behaviour``); None: as the policy trained."""
    pedestrian_count: int | None = None
    """Pedestrians per environment; None: as the policy trained."""
    episodes_file: Path | None = None
    """Fixed episodes (JSON lines, ``urbanverse.sim.episodes``) to run instead of ``episodes`` sampled
    ones per scene in ``scenes``: each runnable one once, the others reported; no animation."""

    def __post_init__(self) -> None:
        if self.episodes_file is not None and self.scenes:
            raise InputError("--episodes-file: give it or --scenes, not both (the file names the scenes)")
        if self.pedestrians is not None and self.pedestrians not in BEHAVIOURS:
            raise InputError(
                f"--pedestrians: expected one of {', '.join(BEHAVIOURS)}, got {self.pedestrians!r}"
            )
        if self.pedestrian_count is not None and self.pedestrian_count < 0:
            raise InputError(f"--pedestrian-count: need >= 0, got {self.pedestrian_count}")
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


def eval_out_dirs(checkpoints: Sequence[Path], out: Path | None = None) -> list[Path]:
    """The results folder of each checkpoint of one ``eval`` call.

    One checkpoint: ``out``, else :func:`default_eval_dir`. Several: ``out/<run folder name>`` with
    ``out``, else each one's default folder; checkpoints that would share a folder (two checkpoints of
    one run) get a sub-folder each, named after the checkpoint file (``latest`` for a run folder).
    """
    if len(checkpoints) == 1:
        return [out or default_eval_dir(checkpoints[0])]
    keys = [Path(c).resolve() for c in checkpoints]
    twice = sorted({str(c) for c, k in zip(checkpoints, keys, strict=True) if keys.count(k) > 1})
    if twice:
        raise InputError(f"CHECKPOINT: given more than once: {', '.join(twice)}")
    bases = [out / run_dir_of(k).name if out else default_eval_dir(k) for k in keys]
    return [
        base / ("latest" if k.is_dir() else k.stem) if bases.count(base) > 1 else base
        for base, k in zip(bases, keys, strict=True)
    ]


def eval_executor(
    jobs: int | None = None, ray: bool = False, ray_address: str | None = None
) -> ExecutorCfg | None:
    """Where the units of an evaluation run: None (this process, one unit after another) without
    ``ray``/``ray_address`` and with ``jobs`` None or 1; else an ``ExecutorCfg`` of ``jobs`` local
    processes, or of Ray (a local Ray of ``jobs`` CPUs, default all of this machine's), one CPU per unit."""
    from urbanverse.parallel import ExecutorCfg

    if ray or ray_address:
        # jobs 1 (the default): a local Ray of every core (``ExecutorCfg.jobs``)
        return ExecutorCfg(jobs=jobs or 1, ray=True, ray_address=ray_address, cpus_per_task=EVAL_UNIT_CPUS)
    if jobs is None or jobs == 1:
        return None
    return ExecutorCfg(jobs=jobs, cpus_per_task=EVAL_UNIT_CPUS)


def run_evaluation(cfg: EvalCfg, executor: ExecutorCfg | None = None) -> EvalOutcome:
    """Evaluate ``cfg.checkpoint`` (see :func:`run_evaluations`)."""
    return run_evaluations([cfg], executor)[0]


def run_evaluations(
    cfgs: Sequence[EvalCfg],
    executor: ExecutorCfg | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[EvalOutcome]:
    """Evaluate every ``cfg``: success rate, SPL, collisions and route completion per scene and
    overall, written to ``results.json`` and ``results.md`` in its ``out``, with the episode
    animation and the run's learning curve where matplotlib is installed.

    Every (checkpoint, scene) pair is one unit (``urbanverse.rl.evaluate``), run in this process with
    ``executor`` None, else on the workers of ``executor`` (``urbanverse.parallel.ExecutorCfg``); the
    results are the same either way. ``progress(units done, units)`` follows the units.
    """
    from urbanverse.rl.episode_eval import EpisodesUnit, combine_episodes, group_by_scene, order_rows
    from urbanverse.rl.evaluate import EvalUnit, PolicySource, check_request, combine, run_units
    from urbanverse.sim.episodes import load_episodes

    plans, units = [], {}
    for c, cfg in enumerate(cfgs):
        animate = _animated_episodes(cfg)
        source = PolicySource(
            checkpoint=str(cfg.checkpoint),
            device=cfg.device,
            quantize_bits=0 if cfg.quantize == "none" else int(cfg.quantize[3:]),
            calibration_steps=cfg.calibration_steps,
            calibration_scenes=tuple(cfg.scenes),
            calibration_seed=cfg.seed,
        )
        episodes = load_episodes(cfg.episodes_file) if cfg.episodes_file is not None else None
        loaded = source.load()  # checks the checkpoint (and quantises) before any unit starts
        out = cfg.out or default_eval_dir(cfg.checkpoint)
        peds = _eval_pedestrians(cfg, loaded.cfg)
        if episodes is not None:
            groups = group_by_scene(episodes)
            scenes = tuple(scene for scene, _ in groups)
            for i, (_, eps) in enumerate(groups):
                units[f"{c}/{i}"] = EpisodesUnit(source, scenes, i, eps, cfg.seed, peds)
        else:
            scenes = tuple(cfg.scenes or loaded.cfg.scenes)
            check_request(scenes, cfg.episodes)
            for i in range(len(scenes)):
                units[f"{c}/{i}"] = EvalUnit(source, scenes, i, cfg.episodes, cfg.seed, animate, peds)
        plans.append((cfg, loaded, scenes, out, peds, episodes))
    outs = [plan[3].resolve() for plan in plans]
    if len(set(outs)) < len(outs):
        raise InputError("--out: two evaluations would write to the same folder")
    log.info("evaluating %d (checkpoint, scene) units of %d evaluation(s)", len(units), len(cfgs))
    done = run_units(units, executor, progress)
    outcomes = []
    for c, (cfg, loaded, scenes, out, peds, episodes) in enumerate(plans):
        parts = [done[f"{c}/{i}"] for i in range(len(scenes))]
        if episodes is not None:
            results, trajs, canvas = order_rows(combine_episodes(parts), episodes), [], None
            results["episodes_file"] = str(cfg.episodes_file)
        else:
            results, trajs, canvas = combine(parts, cfg.episodes)
        results["checkpoint"] = str(cfg.checkpoint)
        results["scene_dirs"] = list(scenes)
        results["seed"] = cfg.seed
        results["pedestrians"] = {"behaviour": peds.behaviour, "count": peds.count}
        results["trained"] = {
            k: v for k, v in loaded.meta.items() if k in ("iteration", "env_steps", "wall_s")
        }
        if "quantization" in loaded.meta:
            results["quantization"] = loaded.meta["quantization"]
        out.mkdir(parents=True, exist_ok=True)
        files = write_evaluation(results, trajs, canvas, out, cfg.video_format)
        run_dir = run_dir_of(cfg.checkpoint)
        if matplotlib_available() and (run_dir / RUN_MARKER).is_file():
            from urbanverse.rl.plots import plot_learning_curve

            files.append(plot_learning_curve(run_dir, out / "learning_curve.png"))
        outcomes.append(EvalOutcome(results=results, files=files))
    return outcomes


def _eval_pedestrians(cfg: EvalCfg, trained: TrainCfg) -> PedestrianCfg:
    """The ``PedestrianCfg`` an evaluation runs with: the policy's training one, with the behaviour and
    count ``cfg`` asks for."""
    peds = trained.env.pedestrians
    changes = {"behaviour": cfg.pedestrians, "count": cfg.pedestrian_count}
    return replace(peds, **{k: v for k, v in changes.items() if v is not None})


def _animated_episodes(cfg: EvalCfg) -> int:
    """Episodes ``cfg`` animates: ``cfg.animate``, or by default ``DEFAULT_ANIMATED_EPISODES`` where
    matplotlib is installed; an animation asked for without matplotlib says how to install it."""
    plots = matplotlib_available()
    if cfg.animate is None:
        if not plots:
            log.info("matplotlib is not installed: no episode animation and no learning curve")
        return DEFAULT_ANIMATED_EPISODES if plots else 0
    if cfg.animate and not plots:
        from urbanverse.errors import require

        require("matplotlib", "train")
    return cfg.animate


def write_evaluation(results: dict, trajs: list, canvas, out: Path, video_format: str = "gif") -> list[Path]:
    """``results.json`` and ``results.md`` of an evaluation in ``out``, and the top-down animation of
    the recorded episodes ``trajs`` on ``canvas`` (``evaluate.EpisodeCanvas``) as
    ``episodes.<video_format>`` (needs matplotlib) when there are any; returns the files written."""
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
                canvas.worlds,
                canvas.robot_size,
                canvas.success_radius,
                canvas.ped_radius,
                out / f"episodes.{video_format}",
                canvas.dt,
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
