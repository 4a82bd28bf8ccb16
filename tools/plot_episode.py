"""Top-down picture of one navigation episode: robot path, goal, LiDAR rays, pedestrians.

A scripted controller follows the geodesic goal field (it turns towards the lowest geodesic
distance on a ring of probe points around the robot), so the path shows the compiled world,
the goal fields, the collision handling and the sensors together.
With ``--rgb`` the robot also carries the RGB camera, and its views at the snapshot steps go to
``<out>_rgb.png``.
Run: ``python tools/plot_episode.py [--robot wheeled|legged] [--scene DIR] [--rgb] [-o out/episode.png]``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from urbanverse.bench.tiled_street import make_tiled_street  # noqa: E402
from urbanverse.sim import NavEnvCfg, NavVecEnv, PedestrianCfg, PointNavCfg, RgbCameraCfg  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TYPE_COLOURS = np.array(
    [
        [1, 1, 1],
        [0.35, 0.35, 0.38],
        [0.8, 0.78, 0.74],
        [0.6, 0.6, 0.65],
        [0.9, 0.7, 0.5],
        [0.5, 0.7, 0.4],
        [0.85, 0.85, 0.8],
    ]
)


def geodesic_controller(env: NavVecEnv) -> torch.Tensor:
    """Actions (N, A): head for the route waypoint 0.6 m away (least geodesic distance); slow to turn."""
    d = env.robot.data
    waypoint = env.world.route_waypoint(env.scene, env.goal, d.pos_w, radius=0.6)
    target = torch.atan2(*(waypoint - d.pos_w).T.flip(0))
    err = torch.remainder(target - d.yaw_w + math.pi, 2 * math.pi) - math.pi
    turn = (2.0 * err).clamp(-1, 1)
    forward = (0.6 * torch.cos(err).clamp_min(0) ** 4).clamp(0, 1)
    act = torch.zeros(env.num_envs, env.num_actions)
    act[:, 0], act[:, -1] = forward, turn
    return act


def save_rgb_strip(frames: list[tuple[int, np.ndarray]], out: Path) -> None:
    """The RGB camera's views (step, (H, W, 3) uint8) side by side."""
    fig, axes = plt.subplots(1, len(frames), figsize=(2.6 * len(frames), 2.0), dpi=110, squeeze=False)
    for ax, (step, image) in zip(axes[0], frames, strict=True):
        ax.imshow(image, interpolation="nearest")
        ax.set_title(f"step {step}", fontsize=9)
        ax.axis("off")
    fig.savefig(out, bbox_inches="tight")
    plt.close(fig)
    print(f"{out}: {len(frames)} RGB camera views")


def run(robot: str, scene_dir: Path, out: Path, seed: int, rgb: bool = False) -> dict:
    cfg = NavEnvCfg(
        scene_dirs=(scene_dir,),
        num_envs=1,
        robot=robot,
        seed=seed,
        pedestrians=PedestrianCfg(count=8),
        task=PointNavCfg(min_goal_distance=15.0, max_goal_distance=40.0, terminate_on_collision=False),
        rgb=RgbCameraCfg(height=72, width=128) if rgb else None,
    )
    env = NavVecEnv(cfg)
    d = env.robot.data
    path, peds, snapshots, views = [d.pos_w[0].clone()], [env.peds.pos_w[0].clone()], [], []
    goal = env.goal_xy[0].clone()
    for step in range(cfg.task.max_episode_steps):
        if step % 40 == 0:
            snapshots.append((d.pos_w[0].clone(), d.yaw_w[0].item(), env.lidar.data.ranges[0].clone()))
            if env.rgb is not None:
                views.append((step, env.rgb.data.rgb[0].numpy().copy()))
        _, _, dones, extras = env.step(geodesic_controller(env))
        if dones[0]:
            info = extras["log"]
            break
        path.append(d.pos_w[0].clone())
        peds.append(env.peds.pos_w[0].clone())
    path_np, peds_np = torch.stack(path).numpy(), torch.stack(peds).numpy()
    world = env.world.worlds[0]
    h, w = world.shape
    x0, y0 = world.origin
    extent = (x0, x0 + w * world.resolution, y0, y0 + h * world.resolution)
    img = TYPE_COLOURS[world.ground_type]
    img[world.occupancy & (world.ground_type > 0)] = 0.1
    curb = world.ground_height > 0.1
    img[curb & ~world.occupancy] *= 0.9
    fig, ax = plt.subplots(
        figsize=(16, 16 * (extent[3] - extent[2]) / (extent[1] - extent[0]) + 1.5), dpi=110
    )
    ax.imshow(img, origin="lower", extent=extent, interpolation="nearest")
    angles = env.lidar.data.angles_b.numpy()
    for pos, yaw, ranges in snapshots:
        p = pos.numpy()
        for a, r in zip(angles, ranges.numpy(), strict=True):
            ax.plot(
                [p[0], p[0] + r * math.cos(yaw + a)],
                [p[1], p[1] + r * math.sin(yaw + a)],
                color="orange",
                lw=0.4,
            )
        c = env.robot.cfg
        corners = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1], [1, 1]]) * [c.length / 2, c.width / 2]
        rot = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
        ax.plot(*(corners @ rot.T + p).T, color="blue", lw=1)
    for j in range(peds_np.shape[1]):
        ax.plot(peds_np[:, j, 0], peds_np[:, j, 1], color="purple", lw=0.8, alpha=0.6)
        ax.add_patch(plt.Circle(peds_np[-1, j], cfg.pedestrians.radius, color="purple"))
    ax.plot(path_np[:, 0], path_np[:, 1], color="blue", lw=1.5, label="robot path")
    ax.plot(*path_np[0], "bo", label="spawn")
    ax.plot(*goal.numpy(), "r*", ms=16, label="goal")
    ax.add_patch(plt.Circle(goal.numpy(), cfg.task.success_radius, color="red", fill=False))
    title = (
        f"{robot}: success={info['metrics/success_rate']:.0f}  SPL={info['metrics/spl']:.2f}  "
        f"collisions={info['metrics/collisions_per_episode']:.0f}  steps={info['episode/length']:.0f}"
    )
    ax.set_title(title + "  (orange: LiDAR every 40 steps; purple: pedestrian tracks; dark: obstacles)")
    ax.legend(loc="upper right")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, bbox_inches="tight")
    print(f"{out}: {title}")
    if views:
        save_rgb_strip(views, out.with_name(f"{out.stem}_rgb.png"))
    env.close()
    return info


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="wheeled", choices=["wheeled", "legged"])
    parser.add_argument(
        "--scene", type=Path, default=None, help="scene folder (default: a 2-tile example street)"
    )
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--rgb", action="store_true", help="also carry the RGB camera and save its views")
    parser.add_argument("-o", "--out", type=Path, default=REPO / "out" / "episode.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scene = args.scene or make_tiled_street(
            REPO / "scenes" / "example", Path(tmp) / "street", tiles=2, extra_props=20
        )
        run(args.robot, scene, args.out, args.seed, args.rgb)


if __name__ == "__main__":
    main()
