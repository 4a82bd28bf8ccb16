"""Learning-curve plot from a run's ``progress.csv`` and a top-down animation of recorded episodes.

Both use matplotlib (Agg backend, no display). The animation draws the compiled world of each
episode's scene (ground types coloured, obstacles dark, raised ground lighter), the robot's
footprint and path, pedestrians and the goal with its success radius, and writes a GIF
(Pillow) or, for ``.mp4``, an MP4 through imageio-ffmpeg where installed.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from urbanverse.errors import require
from urbanverse.rl.logger import read_csv

#: Colours (RGB in [0, 1]) of the ground type codes of ``sim.world.GROUND_TYPES``.
GROUND_COLOURS = np.array(
    [
        [1.0, 1.0, 1.0],  # void
        [0.35, 0.35, 0.38],  # road
        [0.80, 0.78, 0.74],  # sidewalk
        [0.92, 0.92, 0.88],  # crosswalk
        [0.90, 0.70, 0.50],  # ramp
        [0.50, 0.70, 0.40],  # terrain
        [0.85, 0.85, 0.80],  # plaza
    ]
)
OUTCOME_COLOURS = {
    "success": "tab:green",
    "collision": "tab:red",
    "time-out": "tab:orange",
    "running": "tab:blue",
}


def _plt():
    matplotlib = require("matplotlib", "train")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _smooth(y: np.ndarray, k: int) -> np.ndarray:
    """Moving average over ``k`` points ignoring NaN (same length)."""
    if k <= 1:
        return y
    ok = np.isfinite(y)
    kernel = np.ones(k)
    num = np.convolve(np.where(ok, y, 0.0), kernel, mode="same")
    den = np.convolve(ok.astype(float), kernel, mode="same")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def plot_learning_curve(run_dir: Path, out: Path, title: str | None = None) -> Path:
    """Success rate, SPL, mean return and env-steps/s against env steps (4 panels) from ``progress.csv``."""
    plt = _plt()
    data = read_csv(Path(run_dir) / "progress.csv")
    if not data:
        raise ValueError(f"{run_dir}/progress.csv has no rows")
    x = np.asarray(data["env_steps"]) / 1e6
    k = max(1, len(x) // 40)
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    panels = [
        ("success_rate", "success rate (training episodes)", 100.0, "%"),
        ("spl", "SPL", 1.0, ""),
        ("mean_return", "mean episode return (env reward)", 1.0, ""),
        ("steps_per_s", "env-steps/s (incl. update)", 1.0, ""),
    ]
    for ax, (key, label, scale, unit) in zip(axes.flat, panels, strict=True):
        y = np.asarray(data.get(key, [math.nan] * len(x))) * scale
        ax.plot(x, y, color="0.75", lw=0.8, label="per iteration")
        ax.plot(x, _smooth(y, k), color="tab:blue", lw=1.8, label=f"moving mean ({k})")
        ax.set_ylabel(f"{label}{' (' + unit + ')' if unit else ''}")
        ax.grid(alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("environment steps (millions)")
    axes[0, 0].legend(loc="lower right")
    minutes = data["wall_s"][-1] / 60 if data.get("wall_s") else math.nan
    fig.suptitle(title or f"{Path(run_dir).name}  ({minutes:.1f} min of training)")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _world_image(world) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    img = GROUND_COLOURS[np.clip(world.ground_type, 0, len(GROUND_COLOURS) - 1)].copy()
    raised = world.ground_height > 0.1
    img[raised & ~world.occupancy] *= 0.92
    img[world.occupancy & (world.ground_type > 0)] = 0.12
    h, w = world.shape
    x0, y0 = world.origin
    return img, (x0, x0 + w * world.resolution, y0, y0 + h * world.resolution)


def animate_episodes(
    trajectories: list,
    worlds: list,
    robot_size: tuple[float, float],
    success_radius: float,
    ped_radius: float,
    out: Path,
    dt: float,
    every: int = 3,
    fps: int = 12,
) -> Path:
    """Write a top-down animation of ``trajectories`` (``evaluate.Trajectory``) one after another.

    ``worlds[t.scene_index]`` is the compiled world drawn under episode ``t``; every
    ``every``-th step becomes a frame; the view is cropped to the episode's surroundings.
    """
    plt = _plt()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    frames: list[np.ndarray] = []
    length, width = robot_size
    corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1], [1, 1]]) * [length / 2, width / 2]
    for n, t in enumerate(trajectories):
        poses = np.asarray(t.poses)
        img, extent = _world_image(worlds[t.scene_index])
        pts = np.vstack([poses[:, :2], np.asarray(t.goal)[None]])
        lo, hi = pts.min(0) - 6.0, pts.max(0) + 6.0
        span = max(hi[0] - lo[0], (hi[1] - lo[1]) * 1.3)
        cx, cy = (lo + hi) / 2
        fig = plt.figure(figsize=(6.4, 5.0), dpi=80)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_subplot(111)
        ax.imshow(img, origin="lower", extent=extent, interpolation="nearest")
        ax.set_xlim(cx - span / 2, cx + span / 2)
        ax.set_ylim(cy - span / 2.6, cy + span / 2.6)
        ax.set_aspect("equal")
        ax.plot(*t.goal, "r*", ms=14)
        ax.add_patch(plt.Circle(t.goal, success_radius, color="red", fill=False, lw=1.2))
        (path_line,) = ax.plot([], [], color="tab:blue", lw=1.5)
        (body,) = ax.plot([], [], color="navy", lw=2)
        peds = ax.scatter([], [], s=(ped_radius * 20) ** 2, color="purple", alpha=0.7)
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        steps = list(range(0, len(poses), every))
        if steps[-1] != len(poses) - 1:
            steps.append(len(poses) - 1)
        for s in steps:
            x, y, yaw = poses[s]
            rot = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
            body.set_data(*(corners @ rot.T + [x, y]).T)
            path_line.set_data(poses[: s + 1, 0], poses[: s + 1, 1])
            p = np.asarray(t.peds[s]).reshape(-1, 2)
            peds.set_offsets(p if len(p) else np.empty((0, 2)))
            last = s == len(poses) - 1
            status = t.outcome if last else "running"
            ax.set_title(
                f"episode {n + 1}/{len(trajectories)}: {t.scene_name}  t={s * dt:.1f} s  {status}",
                color=OUTCOME_COLOURS.get(status, "black"),
                fontsize=10,
            )
            canvas.draw()
            frame = np.asarray(canvas.buffer_rgba())[..., :3].copy()
            frames.extend([frame] * (fps if last else 1))
        plt.close(fig)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".mp4":
        _write_mp4(frames, out, fps)
    else:
        from PIL import Image

        images = [Image.fromarray(f).quantize(colors=128, method=Image.Quantize.MEDIANCUT) for f in frames]
        images[0].save(out, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    return out


def _write_mp4(frames: list[np.ndarray], out: Path, fps: int) -> None:
    """H.264 (MPEG-4 part 2 where the codec is missing) through PyAV; frames (H, W, 3) uint8."""
    av = require("av", "train")
    h, w = (d - d % 2 for d in frames[0].shape[:2])
    with av.open(str(out), "w") as container:
        try:
            stream = container.add_stream("libx264", rate=fps)
        except Exception:
            stream = container.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        for f in frames:
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(f[:h, :w]), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
