"""``NavVecEnv``: batched point-goal navigation over many scenes (rsl_rl-style VecEnv).

Shapes: observations (N, D) float32, actions (N, A) in [-1, 1], rewards (N,) float32, dones
(N,) bool. ``step`` resets finished environments itself (same-step auto-reset), so the
observations it returns already belong to the new episodes; the last observations of the
finished ones are in ``extras["final_obs"]`` (K, D) for ``extras["final_env_ids"]`` (K,).
``extras["time_outs"]`` (N,) bool marks truncations (time limit), kept apart from
terminations (success, collision) for value bootstrapping. ``extras["log"]`` (present on steps
where episodes ended) holds ``reward/<term>`` episode sums, ``metrics/<name>`` means over the
episodes that ended, and ``episode/length``; on those steps ``extras["episode_metrics"]`` (K, 4)
float64 holds each finished episode's values in ``metrics.METRIC_NAMES`` order and
``extras["episode_scene"]`` (K,) its scene index (into ``scene_names``), for evaluation.

Fixed episodes (``NavVecEnv(cfg, episodes=...)``, ``urbanverse.sim.episodes``): each environment
works through its share of the ``ok`` ones (``episode_queues``: environment ``i`` runs runnable
episodes ``i, i + N, ...`` in order) with the episode's start pose, goal and time limit instead of
sampling; once its queue is done it samples episodes as usual. ``plan`` holds every episode's status.
On steps where episodes end, ``extras["episode_index"]`` (K,) int64 gives each finished episode's
index in the episode list (-1: a sampled one) and ``extras["episode_steps"]`` (K,) its length in steps.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import torch

from urbanverse.sim.env_cfg import NavEnvCfg
from urbanverse.sim.episodes import Episode, EpisodePlan, load_episode_world
from urbanverse.sim.metrics import METRIC_NAMES, NavMetrics
from urbanverse.sim.pedestrians import Pedestrians
from urbanverse.sim.robots import Robot
from urbanverse.sim.sensors.depth_camera import DepthCamera
from urbanverse.sim.sensors.lidar import Lidar
from urbanverse.sim.task import REWARD_TERMS, TaskState
from urbanverse.sim.terms import lidar_observation, rotate_b2w, target_in_body_frame
from urbanverse.sim.world_loading import load_world_batch, unique_names

log = logging.getLogger(__name__)


class NavVecEnv:
    """Batched point-goal navigation; see the module docstring for the interface contract."""

    render_mode = None

    def __init__(self, cfg: NavEnvCfg, episodes: Sequence[Episode] | None = None):
        self.cfg = cfg
        self.device = cfg.device
        self.num_envs = n = cfg.num_envs
        rc = cfg.robot_cfg
        self.plan: EpisodePlan | None = None
        if episodes is None:
            self.world = load_world_batch(cfg.scene_dirs, cfg.world, cfg.task, rc, cfg.device)
        else:
            self.world, self.plan = load_episode_world(
                cfg.scene_dirs, cfg.world, cfg.task, rc, cfg.device, episodes
            )
        self.scene_names = unique_names(self.world.names)
        self.robot = Robot(rc, n, cfg.device)
        self.lidar = (
            Lidar(cfg.lidar, self.world, n, cfg.device, self.robot.cfg.max_step_height) if cfg.lidar else None
        )
        self.depth = DepthCamera(cfg.depth, self.world, n, cfg.device) if cfg.depth else None
        self.rgb = None
        if cfg.rgb:
            from urbanverse.sim.sensors.rgb_camera import RgbCamera  # loads MuJoCo and the renderer

            self.rgb = RgbCamera(
                cfg.rgb, self.world, cfg.scene_dirs, n, cfg.device, max_pedestrians=cfg.pedestrians.count
            )
        self.peds = Pedestrians(cfg.pedestrians, n, self.world, cfg.device)
        self.metrics = NavMetrics(self.scene_names, cfg.device)
        self.reward_weights = cfg.rewards.weights()
        self.num_actions = rc.action_dim
        self.max_episode_length = cfg.task.max_episode_steps
        self.image_shapes: dict[str, tuple[int, int, int]] = {}
        """Shape (H, W, C) of each image entry of ``obs_layout`` (pixels row-major, channels last)."""
        if cfg.depth:
            self.image_shapes["depth"] = (cfg.depth.height, cfg.depth.width, 1)
        if cfg.rgb and cfg.rgb.observe_depth:
            self.image_shapes["depth"] = (cfg.rgb.height, cfg.rgb.width, 1)
        if cfg.rgb:
            self.image_shapes["rgb"] = (cfg.rgb.height, cfg.rgb.width, 3)
        sizes = {
            "lidar": cfg.lidar.num_beams if cfg.lidar else 0,
            "depth": math.prod(self.image_shapes.get("depth", (0,))),
            "rgb": math.prod(self.image_shapes.get("rgb", (0,))),
            "goal_b": 2,
            "route_b": 2 if cfg.task.route_waypoint_m > 0 else 0,
            "velocity_b": 3,
            "last_action": rc.action_dim,
        }
        self.obs_layout: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            if size:
                self.obs_layout[name] = slice(start, start + size)
                start += size
        self.num_obs = start
        z = torch.zeros(n, device=cfg.device)
        self.scene = torch.arange(n, device=cfg.device) % self.world.num_scenes
        self.goal = torch.zeros(n, dtype=torch.long, device=cfg.device)
        self.goal_xy = torch.zeros(n, 2, device=cfg.device)
        self.start_geodesic, self.prev_geodesic = z.clone(), z.clone()
        self.episode_length = torch.zeros(n, dtype=torch.long, device=cfg.device)
        self.episode_count = torch.zeros(n, dtype=torch.long, device=cfg.device)
        self.episode_sums = torch.zeros(n, len(self.reward_weights), device=cfg.device)  # (N, T) per term
        self.generator = torch.Generator(device=cfg.device)
        self.obs = torch.zeros(n, self.num_obs, device=cfg.device)
        self.episode_limit = torch.full((n,), self.max_episode_length, dtype=torch.long, device=cfg.device)
        if self.plan is not None:
            self._init_plan(self.plan)
        self.reset(seed=cfg.seed)

    # ------------------------------------------------------------------ public interface
    def seed(self, seed: int) -> None:
        """Re-seed every random draw (the next ``reset`` or auto-reset uses it)."""
        self.generator.manual_seed(int(seed))

    def reset(self, seed: int | None = None) -> tuple[torch.Tensor, dict]:
        """Start new episodes everywhere (first scene of each environment's rotation): (obs, extras)."""
        if seed is not None:
            self.seed(seed)
        self.episode_count.zero_()
        self.scene = torch.arange(self.num_envs, device=self.device) % self.world.num_scenes
        if self.plan is not None:
            self._queue_pos = [0] * self.num_envs  # each environment's plan starts over
        self._reset_idx(torch.arange(self.num_envs, device=self.device), advance=False)
        return self.obs, {"observations": {"policy": self.obs}}

    def close(self) -> None:
        """Release the RGB camera's rendering buffers (the other state is plain tensors)."""
        if self.rgb is not None:
            self.rgb.close()

    def get_observations(self) -> torch.Tensor:
        """Current observations (N, D)."""
        return self.obs

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict]:
        """Advance all environments by ``dt``: (obs (N, D), rewards (N,), dones (N,), extras)."""
        cfg, r = self.cfg, self.robot
        actions = torch.as_tensor(actions, dtype=torch.float32, device=self.device).view(self.num_envs, -1)
        peds = self.peds.pos_w if cfg.pedestrians.count else None
        r.step(actions, cfg.dt, self.world, self.scene, peds, cfg.pedestrians.radius)
        circles = r.data.pos_w[:, None, :] + rotate_b2w(
            r.circles_b.expand(self.num_envs, -1, -1), r.data.yaw_w
        )
        self.peds.step(cfg.dt, self.world, self.scene, circles, r.cfg.radius, self.generator)
        self.episode_length += 1

        to_goal = self.goal_xy - r.data.pos_w
        dist = to_goal.norm(dim=-1)
        geo = self.world.geodesic_distance(self.scene, self.goal, r.data.pos_w)
        known = torch.isfinite(geo) & torch.isfinite(self.prev_geodesic)
        delta = torch.where(known, self.prev_geodesic - geo, torch.zeros_like(geo))
        self.prev_geodesic = torch.where(torch.isfinite(geo), geo, self.prev_geodesic)
        success = dist < cfg.task.success_radius
        collision = r.data.contact
        terminated = success | (collision & cfg.task.terminate_on_collision)
        time_outs = (self.episode_length >= self.episode_limit) & ~terminated
        dones = terminated | time_outs
        state = TaskState(
            goal_distance=dist,
            goal_dir_w=to_goal / dist.clamp_min(1e-6)[:, None],
            vel_w=rotate_b2w(r.data.vel_b[:, None, :2], r.data.yaw_w)[:, 0],
            geodesic_delta=delta,
            success=success,
            collision=collision,
            cfg=cfg.rewards,
        )
        terms = torch.stack(
            [w * REWARD_TERMS[name](state) for name, w in self.reward_weights.items()], dim=-1
        )
        self.episode_sums += terms
        rewards = terms.sum(-1)

        self._compute_obs(None)
        extras: dict = {"time_outs": time_outs, "observations": {"policy": self.obs}}
        if r.data.nonfinite_actions:
            log.warning("%d non-finite action entries replaced by 0", r.data.nonfinite_actions)
            extras["nonfinite_actions"] = r.data.nonfinite_actions
        done_ids = dones.nonzero().squeeze(-1)
        if done_ids.numel():
            extras["final_obs"] = self.obs[done_ids].clone()
            extras["final_env_ids"] = done_ids
            extras["episode_scene"] = self.scene[done_ids].clone()
            if self.plan is not None:
                extras["episode_index"] = self.episode_index[done_ids].clone()
                extras["episode_steps"] = self.episode_length[done_ids].clone()
            extras["log"] = self._finish_episodes(done_ids, success, geo)
            extras["episode_metrics"] = self._episode_values
            self._reset_idx(done_ids, advance=True)
        return self.obs, rewards, dones, extras

    # ------------------------------------------------------------------ internals
    def _finish_episodes(
        self, ids: torch.Tensor, success: torch.Tensor, geo: torch.Tensor
    ) -> dict[str, float]:
        r = self.robot.data
        values = NavMetrics.episode_values(
            success[ids], self.start_geodesic[ids], r.path_length[ids], r.contact_count[ids], geo[ids]
        )
        self.metrics.add(self.scene[ids], values)
        self._episode_values = values
        sums = self.episode_sums[ids].mean(0).tolist()
        out = {f"reward/{k}": sums[i] for i, k in enumerate(self.reward_weights)}
        means = values.mean(0).tolist()
        out.update({f"metrics/{name}": means[i] for i, name in enumerate(METRIC_NAMES)})
        out["episode/length"] = float(self.episode_length[ids].float().mean())
        return out

    def _reset_idx(self, ids: torch.Tensor, advance: bool) -> None:
        """New episodes for ``ids`` (K,); with ``advance`` count the episode and rotate scenes."""
        world = self.world
        if advance:
            self.episode_count[ids] += 1
            rotation = self.episode_count[ids] // self.cfg.task.episodes_per_scene
            self.scene[ids] = (ids + rotation) % world.num_scenes
        scene = self.scene[ids]
        goal, goal_xy, spawn = world.sample_goal_and_spawn(scene, self.generator)
        yaw = (torch.rand(ids.numel(), generator=self.generator, device=self.device) * 2 - 1) * torch.pi
        if self.plan is not None:
            scene, goal, goal_xy, spawn, yaw = self._planned(ids, scene, goal, goal_xy, spawn, yaw)
        self.goal[ids], self.goal_xy[ids] = goal, goal_xy
        self.robot.reset(ids, world, scene, spawn, yaw)
        geo = world.geodesic_distance(scene, goal, spawn)
        self.start_geodesic[ids] = geo
        self.prev_geodesic[ids] = geo
        self.episode_length[ids] = 0
        self.episode_sums[ids] = 0.0
        self.peds.reset(ids, world, scene, spawn, self.generator)
        self._compute_obs(ids)

    def _init_plan(self, plan: EpisodePlan) -> None:
        """Queues of the runnable episodes of ``plan`` (environment ``i``: runnable ``i::N``) and their
        tensors: scene, goal index, start pose (E, 3) and time limit per episode."""
        dev, n = self.device, self.num_envs
        runnable = plan.runnable
        self.episode_queues = [runnable[i::n] for i in range(n)]  # episode indices, per environment
        self._queue_pos = [0] * n
        self.episode_index = torch.full((n,), -1, dtype=torch.long, device=dev)
        self._plan_scene = torch.as_tensor(plan.scene, device=dev)
        self._plan_goal = torch.as_tensor(plan.goal, device=dev)
        self._plan_start = torch.tensor([e.start for e in plan.episodes], dtype=torch.float32, device=dev)
        limits = [e.max_steps or self.max_episode_length for e in plan.episodes]
        self._plan_limit = torch.tensor(limits, dtype=torch.long, device=dev)

    def _planned(self, ids, scene, goal, goal_xy, spawn, yaw):
        """The sampled (scene, goal, goal_xy, spawn, yaw) of ``ids`` with the next planned episode of
        every environment whose queue is not done; sets ``episode_index`` and ``episode_limit``."""
        nxt = []
        for i in ids.tolist():
            queue, pos = self.episode_queues[i], self._queue_pos[i]
            nxt.append(queue[pos] if pos < len(queue) else -1)
            self._queue_pos[i] = min(pos + 1, len(queue))
        e = torch.tensor(nxt, dtype=torch.long, device=self.device)
        self.episode_index[ids] = e
        self.episode_limit[ids] = self.max_episode_length
        rows = (e >= 0).nonzero().squeeze(-1)
        if rows.numel():
            ep = e[rows]
            scene, goal, goal_xy, spawn, yaw = (t.clone() for t in (scene, goal, goal_xy, spawn, yaw))
            scene[rows], goal[rows] = self._plan_scene[ep], self._plan_goal[ep]
            goal_xy[rows] = self.world.goal_xy[scene[rows], goal[rows]]
            spawn[rows], yaw[rows] = self._plan_start[ep, :2], self._plan_start[ep, 2]
            self.scene[ids] = scene
            self.episode_limit[ids[rows]] = self._plan_limit[ep]
        return scene, goal, goal_xy, spawn, yaw

    def _compute_obs(self, ids: torch.Tensor | None) -> None:
        """Update sensors and ``self.obs`` for ``ids`` (all environments when None).

        Each entry is written into one new (K, D) tensor at its ``obs_layout`` slice, with camera
        pixels converted and scaled in place there: at 1024 environments a 64 x 64 image batch is
        50 MB of floats, and temporaries of that size cost more than the copy itself.
        """
        d = self.robot.data
        sel = slice(None) if ids is None else ids
        scene, pos, yaw = self.scene[sel], d.pos_w[sel], d.yaw_w[sel]
        peds = self.peds.pos_w[sel] if self.cfg.pedestrians.count else None
        rp = self.cfg.pedestrians.radius
        parts: dict[str, tuple[torch.Tensor, float]] = {}  # entry -> (values (K, size), divisor)
        if self.lidar is not None:
            self.lidar.update(ids, scene, pos, yaw, peds, rp, self.generator)
            parts["lidar"] = (lidar_observation(self.lidar.data.ranges[sel], self.lidar.cfg.max_range), 1.0)
        if self.depth is not None:
            self.depth.update(ids, scene, pos, yaw, d.height_w[sel], peds, rp)
            parts["depth"] = (self.depth.data.depth[sel].flatten(1), self.depth.cfg.max_range)
        if self.rgb is not None:
            self.rgb.update(ids, scene, pos, yaw, d.height_w[sel], peds, rp, self.generator)
            if self.rgb.cfg.observe_depth:
                parts["depth"] = (self.rgb.data.depth[sel].flatten(1), self.rgb.cfg.max_range)
            parts["rgb"] = (self.rgb.data.rgb[sel].flatten(1), 255.0)
        parts["goal_b"] = (target_in_body_frame(self.goal_xy[sel], pos, yaw), 1.0)
        if self.cfg.task.route_waypoint_m > 0:
            waypoint = self.world.route_waypoint(scene, self.goal[sel], pos, self.cfg.task.route_waypoint_m)
            parts["route_b"] = (target_in_body_frame(waypoint, pos, yaw), 1.0)
        parts["velocity_b"] = (d.vel_b[sel], 1.0)
        parts["last_action"] = (d.last_action[sel], 1.0)
        obs = torch.empty(pos.shape[0], self.num_obs, device=self.device)
        for name, (values, divisor) in parts.items():
            view = obs[:, self.obs_layout[name]]
            view.copy_(values)
            if divisor != 1.0:
                view.div_(divisor)
        if ids is None:
            self.obs = obs
        else:
            self.obs[ids] = obs
