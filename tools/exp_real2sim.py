"""Real-to-sim transfer: do scenes made from video train better robots than procedural streets?

The target city is ``OLD_TOWN`` (:mod:`urbanverse.procgen.city`): narrower, cluttered one-lane
streets unlike ``procgen``'s default city. Its training streets are seeds 0..; its test streets,
seeds 10000.., are never rendered, reconstructed or trained on. Arms, each trained with the same
budget of environment steps on K scenes (K = 1, 4, 16) and seeds 0, 1, 2:

- ``procedural``: K streets of ``procgen``'s default city (seed i, style i mod 4);
- ``video``: a tour of each of the K target training streets rendered as a city-walk video
  (``render-tour`` with its augmentation: noise, blur, exposure, colour), turned into a scene by
  ``urbanverse gen`` from the MP4 alone (no ground truth), a failed video skipped as ``train
  --scenes`` skips it;
- ``oracle``: the K true target training streets (the upper bound);
- ``oracle-bare`` (diagnostic, ``--arms oracle-bare``): the same streets with no objects, which
  separates what missing objects do to a policy from what wrong ground does.

Policy: the shipped wheeled LiDAR recipe (``tools/bench_train.py`` settings) observing the goal
vector and the LiDAR, without the route waypoint (which would hand every arm the test street's map;
``--waypoint`` runs with it, labelled so). Every policy is evaluated on one fixed episode file over the
test streets (``urbanverse episodes make``; ``eval --episodes-file``): success, SPL, collisions, route
completion; means over seeds with 95 % t intervals, and a power law ``success = a * K^b`` per arm.

Every step keeps its result on disk and is skipped when found, so a killed run goes on where it
stopped when started again (a half-trained policy resumes from its last checkpoint). Writes
``docs/real2sim.json``, ``docs/real2sim.png`` (success, SPL and collisions against K) and
``docs/real2sim_cities.png`` (the two cities and the video scenes side by side, as the robot meets
them: :func:`urbanverse.bench.real2sim.scene_statistics`), and prints the tables.

Run: ``python tools/exp_real2sim.py [--ks 1 4 16] [--seeds 0 1 2] [--steps 2000000] [--jobs 2] [--work DIR]``;
``--report`` redraws from what is on disk.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_train import BENCH_SETTINGS, REPO, procedural_scenes  # noqa: E402

ARMS = ("procedural", "video", "oracle", "oracle-bare")
TEST_SEED0 = 10_000
RESULT = "result.json"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def city_streets(root: Path, seeds: list[int], prefix: str) -> list[str]:
    """Target-city streets ``root/<prefix>_<seed>`` (generated where missing)."""
    from urbanverse.procgen.city import OLD_TOWN
    from urbanverse.procgen.street import generate_street

    out = []
    for seed in seeds:
        d = root / f"{prefix}_{seed}"
        if not (d / "scene.json").is_file():
            generate_street(OLD_TOWN.street(seed), d)
            log(f"generated {d}")
        out.append(str(d))
    return out


def arm_scenes(arm: str, train: list[str], kmax: int, args: argparse.Namespace) -> list[str]:
    """The training scenes of ``arm`` (made where missing), in order; K uses the first K."""
    if arm == "oracle":
        return train
    if arm == "oracle-bare":
        return bare_streets(train, args.work / "city_bare")
    if arm == "procedural":
        return procedural_scenes(args.work / "procedural", list(range(kmax)))
    made = video_scenes(train, args.work / "video", args.tour_seconds)
    if len(made) < kmax:
        log(f"video: gen made {len(made)} of {kmax} scenes; larger K use what there is")
    return made


def bare_streets(truths: list[str], root: Path) -> list[str]:
    """The true streets without their objects (``root/<name>``, made where missing)."""
    from urbanverse.bench.real2sim import without_objects

    out = []
    for truth in truths:
        d = root / Path(truth).name
        if not (d / "scene.json").is_file():
            without_objects(truth, d)
        out.append(str(d))
    return out


def video_scenes(truths: list[str], work: Path, seconds: float) -> list[str]:
    """Render a tour of each true street and run ``urbanverse gen`` on the MP4s (a batch, resumed
    where it stopped): the scene folders that gen made, in street order, failures left out."""
    from urbanverse.render.augment import AugmentCfg
    from urbanverse.render.tour import TourCfg, gt_path_for, run_render_tour

    tours = work / "tours"
    tours.mkdir(parents=True, exist_ok=True)
    videos = []
    for i, truth in enumerate(truths):
        video = tours / f"tour_{i:02d}.mp4"
        if not (video.is_file() and gt_path_for(video).is_file()):
            t0 = time.perf_counter()
            run_render_tour(Path(truth), video, TourCfg(seconds=seconds, seed=i, augment=AugmentCfg()))
            log(f"rendered {video} in {time.perf_counter() - t0:.0f} s")
        videos.append(video)
    out = work / "gen"
    listing = work / "videos.txt"
    listing.write_text("".join(f"{v.resolve()}\n" for v in videos))
    t0 = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "urbanverse.cli", "gen", str(listing), "-o", str(out)], check=False
    )
    if run.returncode not in (0, 1):  # 1: some inputs failed, which the arm skips
        raise SystemExit(f"gen failed on every tour (exit {run.returncode}); see {out}")
    log(f"gen on {len(videos)} tours: {time.perf_counter() - t0:.0f} s (0 s when all were done)")
    return [str(out / v.stem) for v in videos if (out / v.stem / "scene.json").is_file()]


def test_episodes(test: list[str], path: Path, per_street: int, robot: str) -> list:
    from urbanverse.sim import PointNavCfg, WorldCfg
    from urbanverse.sim.episodes import load_episodes, make_episodes, save_episodes
    from urbanverse.sim.robots import ROBOTS

    if not path.is_file():
        episodes = make_episodes(test, per_street, 0, ROBOTS[robot], PointNavCfg(), WorldCfg())
        save_episodes(path, episodes)
        log(f"wrote {len(episodes)} test episodes to {path}")
    return load_episodes(path)


def train_unit(scenes: list[str], unit_dir: Path, settings: list[str], seed: int, tag: str) -> Path:
    """Train (or resume) one policy in ``unit_dir``; its run folder."""
    from urbanverse.rl.config import EnvSpec, TrainCfg, apply_overrides
    from urbanverse.rl.runner import Runner

    runs = [d for d in unit_dir.glob("*") if (d / "config.json").is_file()] if unit_dir.is_dir() else []
    if runs:
        runner = Runner.resume(runs[0], quiet=True)
        log(f"{tag}: resuming {runs[0].name} at iteration {runner.iteration}/{runner.num_iterations}")
    else:
        cfg = TrainCfg(
            scenes=tuple(scenes), env=EnvSpec(robot="wheeled"), seed=seed, experiment=tag, torch_threads=1
        )
        runner = Runner.create(apply_overrides(cfg, settings), unit_dir, quiet=True)
    if runner.iteration < runner.num_iterations:
        runner.learn()
    return runner.run_dir


def run_unit(unit: dict) -> dict:
    """Train and evaluate one (arm, K, seed) in its folder (``unit``: arm, k, seed, scenes, episodes,
    dir, settings, threads), or read its kept result. Module-level: it runs on worker processes."""
    from urbanverse.rl.episode_eval import evaluate_episodes
    from urbanverse.rl.evaluate import load_policy
    from urbanverse.threads import numba_threads

    unit_dir = Path(unit["dir"])
    result_file = unit_dir / RESULT
    if result_file.is_file():
        return json.loads(result_file.read_text())
    arm, k, seed = unit["arm"], unit["k"], unit["seed"]
    t0 = time.perf_counter()
    with numba_threads(unit["threads"]):
        run_dir = train_unit(unit["scenes"], unit_dir, unit["settings"], seed, f"r2s-{arm}-K{k}")
        loaded = load_policy(run_dir)
        t1 = time.perf_counter()
        results = evaluate_episodes(loaded, unit["episodes"], seed=1)
    out = {
        "arm": arm,
        "k": k,
        "seed": seed,
        "scenes": unit["scenes"],
        "run": str(run_dir),
        "train_minutes": loaded.meta["wall_s"] / 60,
        "env_steps": loaded.meta["env_steps"],
        "eval_s": time.perf_counter() - t1,
        "overall": results["overall"],
        "skipped": results.get("skipped", {}),
        "episodes": results["episodes"],
    }
    result_file.write_text(json.dumps(out, indent=2) + "\n")
    o = results["overall"]
    log(
        f"{arm} K={k} seed {seed}: success {100 * o['success_rate']:.1f} %, SPL {o['spl']:.3f}, "
        f"collisions {o['collisions_per_episode']:.2f} ({time.perf_counter() - t0:.0f} s)"
    )
    return out


def run_units(units: list[dict], jobs: int) -> list[dict]:
    """Every unit, ``jobs`` at a time on worker processes (each with cores / jobs simulator threads)."""
    from urbanverse.parallel import ExecutorCfg, run_tasks

    items = {Path(u["dir"]).name: u for u in units}
    results = {}
    for res in run_tasks(run_unit, items, ExecutorCfg(jobs=jobs)):
        if not res.ok:
            raise SystemExit(f"{res.key}: {res.error}; rerun the same command to resume")
        results[res.key] = res.value
    return [results[key] for key in items]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", type=int, nargs="+", default=[1, 4, 16], help="training scenes per arm")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="training seeds")
    parser.add_argument(
        "--arms",
        nargs="+",
        default=list(ARMS[:3]),
        choices=ARMS,
        help="arms to train (oracle-bare: diagnostic)",
    )
    parser.add_argument("--steps", type=int, default=2_000_000, help="env-steps per policy (all arms)")
    parser.add_argument("--test-streets", type=int, default=8, help="old-town test streets (seeds 10000..)")
    parser.add_argument("--episodes-per-street", type=int, default=20, help="fixed test episodes per street")
    parser.add_argument("--tour-seconds", type=float, default=30.0, help="length of each rendered walk (s)")
    parser.add_argument("--waypoint", action="store_true", help="observe the route waypoint (labelled)")
    parser.add_argument("--jobs", type=int, default=2, help="policies trained at once (worker processes)")
    parser.add_argument(
        "--tag", default="", help="suffix of the unit folders and docs files (--tag=-6M for another budget)"
    )
    parser.add_argument(
        "--work", type=Path, default=REPO / "out" / "real2sim", help="streets, tours, gen output, runs"
    )
    parser.add_argument("--docs", type=Path, default=REPO / "docs", help="where the JSON and plots go")
    parser.add_argument("--report", action="store_true", help="only redraw from the kept results")
    parser.add_argument(
        "--prepare", action="store_true", help="only make the streets, tours and video scenes, then stop"
    )
    return parser


def main() -> None:
    from real2sim_report import report

    args = _parser().parse_args()
    if args.waypoint:
        args.work = args.work.with_name(args.work.name + "-waypoint")
    args.work.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    kmax = max(args.ks)
    train = city_streets(args.work / "city", list(range(kmax)), "train")
    test = city_streets(args.work / "city", list(range(TEST_SEED0, TEST_SEED0 + args.test_streets)), "test")
    unit_dir = {
        (arm, k, seed): args.work / "units" / f"{arm}-K{k}-s{seed}{args.tag}"
        for arm in ARMS
        for k in args.ks
        for seed in args.seeds
    }
    kept = {arm for (arm, _, _), d in unit_dir.items() if (d / RESULT).is_file()}
    pools = {arm: arm_scenes(arm, train, kmax, args) for arm in ARMS if arm in {*args.arms, *kept}}
    if args.prepare:
        return
    episodes = test_episodes(test, args.work / "test_episodes.jsonl", args.episodes_per_street, "wheeled")
    settings = [s for s in BENCH_SETTINGS if not s.startswith("save_interval")] + [
        f"total_steps={args.steps}",
        "save_interval=20",
        f"env.task.route_waypoint_m={1.0 if args.waypoint else 0.0}",
    ]
    threads = max(1, (os.cpu_count() or 1) // args.jobs)
    todo = [
        {"arm": arm, "k": k, "seed": seed, "scenes": pools[arm][:k], "episodes": episodes,
         "settings": settings, "threads": threads, "dir": str(unit_dir[arm, k, seed])}
        for seed in args.seeds  # seed-major: an interrupted run has every arm at its first seeds
        for k in args.ks
        for arm in args.arms
    ]  # fmt: skip
    if not args.report:
        run_units(todo, args.jobs)
    # The report covers every arm with results in this grid, those of earlier runs included.
    units = [json.loads((d / RESULT).read_text()) for d in unit_dir.values() if (d / RESULT).is_file()]
    report(units, pools, test, args, time.perf_counter() - t_start)


if __name__ == "__main__":
    main()
