"""Pedestrian behaviours: replay of recorded people, the social-force flow crowd, the random fallback."""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.errors import InputError
from urbanverse.scene.agents import flow_field, make_agent, position_at
from urbanverse.scene.record import load_scene, save_scene
from urbanverse.sim import LidarCfg, NavEnvCfg, NavVecEnv, PedestrianCfg, PointNavCfg, WorldCfg, kernels
from urbanverse.sim.crowd import SocialForceCfg, add_synthetic_people
from urbanverse.sim.pedestrians import Pedestrians
from urbanverse.sim.robots import WHEELED
from urbanverse.sim.world_loading import load_world_batch

from .conftest import EXAMPLE, REPO

POLICY = REPO / "policies" / "wheeled-lidar-mlp" / "policy.pt"
ROBOT_XY = (-5.0, 5.0)  # on the north sidewalk of the example street (y in [3.5, 6.5])


def _people_scene(folder: Path, seed: int, one_way: bool) -> Path:
    """``scenes/example`` with 30 synthetic people (``make_agent`` trajectories) and their flow field."""
    shutil.copytree(EXAMPLE, folder)
    add_synthetic_people(folder, 30, seed=seed, one_way=one_way)
    return folder


@pytest.fixture(scope="module")
def two_way(tmp_path_factory) -> Path:
    return _people_scene(tmp_path_factory.mktemp("people") / "two_way", seed=0, one_way=False)


@pytest.fixture(scope="module")
def one_way(tmp_path_factory) -> Path:
    return _people_scene(tmp_path_factory.mktemp("people") / "one_way", seed=1, one_way=True)


class Crowd:
    """Pedestrians of ``num_envs`` environments of one scene around a robot standing at ``ROBOT_XY``
    (two footprint circles of 0.3 m), stepped at 0.1 s."""

    def __init__(self, scene_dir: Path, cfg: PedestrianCfg, num_envs: int = 4, seed: int = 0):
        self.world = load_world_batch((scene_dir,), WorldCfg(), PointNavCfg(), WHEELED, "cpu")
        self.peds = Pedestrians(cfg, num_envs, self.world, "cpu")
        self.scene = torch.zeros(num_envs, dtype=torch.long)
        self.robot_xy = torch.tensor(ROBOT_XY).expand(num_envs, 2)
        self.circles = (self.robot_xy[:, None, :] + torch.tensor([[-0.2, 0.0], [0.2, 0.0]])).contiguous()
        self.generator = torch.Generator().manual_seed(seed)
        self.peds.reset(torch.arange(num_envs), self.world, self.scene, self.robot_xy, self.generator)

    def step(self) -> torch.Tensor:
        self.peds.step(0.1, self.world, self.scene, self.circles, 0.3, self.generator)
        return self.peds.pos_w.clone()

    def run(self, steps: int) -> torch.Tensor:
        """Positions (T, N, P, 2) over ``steps`` steps."""
        return torch.stack([self.step() for _ in range(steps)])


def _expected_replay(scene_dir: Path, peds: Pedestrians) -> np.ndarray:
    """``position_at`` of each pedestrian's agent at its clock's time: (N, P, 2)."""
    agents = load_scene(scene_dir).agents
    out = np.zeros((*peds.agent.shape, 2))
    for (i, j), a in np.ndenumerate(peds.agent.numpy()):
        agent = agents[a]
        out[i, j] = position_at(agent, agent.trajectory[0][0] + peds.clock[i, j].item())[0]
    return out


def _no_kernels(monkeypatch) -> None:
    monkeypatch.setattr(kernels, "available", lambda device: False)


@pytest.mark.parametrize("fused", [True, False], ids=["numba", "torch"])
def test_replay_positions_are_the_agents_at_their_shifted_times_and_continue_past_the_end(
    two_way, fused, monkeypatch
):
    if not fused:
        _no_kernels(monkeypatch)
    crowd = Crowd(two_way, PedestrianCfg(behaviour="replay", count=4))
    start_agent = crowd.peds.agent.clone()
    switched = torch.zeros_like(start_agent, dtype=torch.bool)
    duration = crowd.world.people.agent_duration[0]
    for step in range(250):  # 25 s: longer than any synthetic trajectory (20 s)
        pos = crowd.step()
        switched |= crowd.peds.agent != start_agent
        assert bool((crowd.peds.clock <= duration[crowd.peds.agent]).all())
        if step % 25 == 0 or step == 249:
            np.testing.assert_allclose(pos.numpy(), _expected_replay(two_way, crowd.peds), atol=2e-5)
    assert bool(switched.all()), "every pedestrian moves on to another agent at its trajectory's end"
    assert len(set(crowd.peds.agent.flatten().tolist())) > 1


def test_replay_starts_at_random_times_along_the_agents(two_way):
    crowd = Crowd(two_way, PedestrianCfg(behaviour="replay", count=8), num_envs=8)
    clocks = crowd.peds.clock.flatten()
    assert len(set(clocks.tolist())) == clocks.numel() and float(clocks.min()) >= 0
    np.testing.assert_allclose(crowd.peds.pos_w.numpy(), _expected_replay(two_way, crowd.peds), atol=2e-5)


def _on_walkable(crowd: Crowd, track: torch.Tensor) -> torch.Tensor:
    """Whether each point of ``track`` (T, N, P, 2) is walkable, or where the people seen walked, with
    the pedestrians' clearance."""
    pos = track.transpose(0, 1).flatten(1, 2)  # (N, T * P, 2)
    walkable = crowd.world.lookup(crowd.world.walkable | crowd.world.walked(), crowd.scene, pos)
    return walkable & (crowd.world.lookup(crowd.world.sdf, crowd.scene, pos) > crowd.peds.cfg.radius)


def _parked(pos: torch.Tensor) -> torch.Tensor:
    """Pedestrians that found no spawn spot and wait 1 km away."""
    return pos.abs().amax(-1) > 500


def test_flow_pedestrians_stay_on_walkable_ground_and_keep_clear_of_the_robot(two_way):
    crowd = Crowd(two_way, PedestrianCfg(behaviour="flow", count=8), num_envs=6)
    track = crowd.run(200)
    parked = _parked(track)
    assert not bool(parked.any())
    assert bool(_on_walkable(crowd, track).all())
    gap = (track[..., None, :] - crowd.circles[None, :, None, :, :]).norm(dim=-1).amin(-1)
    assert float(gap.min()) > 0.3 + 0.3, "no pedestrian touches the robot's footprint"
    moved = (track[-1] - track[0]).norm(dim=-1)
    assert float(moved.median()) > 3.0, "they walk (20 s at about 1.2 m/s), not stand"


def test_flow_pedestrians_walk_where_the_people_seen_walked_even_off_the_pavement(tmp_path):
    """People seen walking along the road (a campus path, as on vtest.avi): the flow pedestrians spawn
    and walk there too, though the road is not walkable ground for goals and the random walkers."""
    folder = tmp_path / "road_walkers"
    shutil.copytree(EXAMPLE, folder)
    t = np.arange(0.0, 20.0, 0.5)
    agents = tuple(
        make_agent(f"p{k}", np.column_stack([t, -15 + 1.2 * t, np.full_like(t, y)]), np.ones(len(t)))
        for k, y in enumerate((-1.0, 0.0, 1.0))
    )
    save_scene(dataclasses.replace(load_scene(folder), agents=agents, flow=flow_field(agents)), folder)
    crowd = Crowd(folder, PedestrianCfg(behaviour="flow", count=4), num_envs=4)
    track = crowd.run(100)
    assert not bool(_parked(track).any())
    on_road = track[..., 1].abs() < 1.6  # the walked band, in the middle of the road
    assert float(on_road.float().mean()) > 0.9
    pos = track.transpose(0, 1).flatten(1, 2)
    pavement = crowd.world.lookup(crowd.world.walkable, crowd.scene, pos)
    assert float(pavement.float().mean()) < 0.3  # on the road, but where it crosses the zebra crossing
    assert float((track[-1, ..., 0] - track[0, ..., 0]).median()) > 3.0, "along +x, as the people seen"


def test_flow_pedestrians_walk_with_a_one_way_flow(one_way):
    crowd = Crowd(one_way, PedestrianCfg(behaviour="flow", count=6), num_envs=6)
    crowd.run(20)
    velocity = []
    for _ in range(100):
        crowd.step()
        velocity.append(crowd.peds.vel_w.clone())
    v = torch.stack(velocity)
    assert float(v[..., 0].mean()) > 0.6, "along +x, the way every recorded person walked"
    assert float(v[..., 1].abs().mean()) < 0.3 * float(v[..., 0].mean())


def _min_pairwise(track: torch.Tensor) -> float:
    diff = track[..., :, None, :] - track[..., None, :, :]
    dist = diff.norm(dim=-1)
    p = track.shape[-2]
    dist = dist + torch.eye(p) * 1e9
    return float(dist.min())


def test_flow_pedestrians_keep_apart(two_way):
    def closest(repulsion: float) -> float:
        """Closest approach of two of 16 pedestrians per environment once the spawns (which may
        overlap) have spread."""
        cfg = PedestrianCfg(behaviour="flow", count=16, social=SocialForceCfg(repulsion=repulsion))
        return _min_pairwise(Crowd(two_way, cfg, num_envs=4, seed=5).run(150)[10:])

    apart, free = closest(5.0), closest(0.0)
    assert apart > free
    assert apart > 0.4, "bodies (0.3 m radius each) overlap by 0.2 m at most"


@pytest.mark.parametrize("behaviour", ["replay", "flow"])
def test_fused_kernels_match_the_torch_reference(two_way, behaviour, monkeypatch):
    fused = Crowd(two_way, PedestrianCfg(behaviour=behaviour, count=8), seed=3)
    fused.run(30)
    state = {k: getattr(fused.peds, k).clone() for k in ("pos_w", "vel_w", "direction_w", "agent", "clock")}
    gen_state = fused.generator.get_state()
    after_fused = fused.run(5)
    for k, v in state.items():
        setattr(fused.peds, k, v.clone())
    fused.generator.set_state(gen_state)
    _no_kernels(monkeypatch)
    after_torch = fused.run(5)
    np.testing.assert_allclose(after_torch.numpy(), after_fused.numpy(), atol=1e-4)


def test_scenes_without_people_fall_back_to_random_with_a_warning(two_way, caplog):
    with caplog.at_level(logging.WARNING, logger="urbanverse.sim.pedestrians"):
        fallback = Crowd(EXAMPLE, PedestrianCfg(behaviour="replay", count=4), seed=2)
    assert any("'example'" in r.getMessage() and "random" in r.getMessage() for r in caplog.records)
    plain = Crowd(EXAMPLE, PedestrianCfg(count=4), seed=2)
    assert torch.equal(fallback.run(20), plain.run(20))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="urbanverse.sim.pedestrians"):
        env = NavVecEnv(
            NavEnvCfg(
                scene_dirs=(two_way, EXAMPLE),
                num_envs=4,
                lidar=LidarCfg(num_beams=16),
                pedestrians=PedestrianCfg(behaviour="flow", count=3),
            )
        )
    assert [r.getMessage().split("'")[1] for r in caplog.records] == ["example"]
    for _ in range(10):
        env.step(torch.zeros(4, 2))
    assert torch.isfinite(env.peds.pos_w).all()


@pytest.mark.parametrize("behaviour", ["replay", "flow"])
def test_behaviours_are_deterministic_under_the_env_seed(two_way, behaviour):
    env = NavVecEnv(
        NavEnvCfg(
            scene_dirs=(two_way,),
            num_envs=4,
            lidar=LidarCfg(num_beams=16),
            pedestrians=PedestrianCfg(behaviour=behaviour, count=4),
        )
    )

    def run(seed: int) -> torch.Tensor:
        env.reset(seed=seed)
        gen = torch.Generator().manual_seed(1)
        out = []
        for _ in range(30):
            obs, *_ = env.step(torch.rand(4, 2, generator=gen) * 2 - 1)
            out.append(torch.cat([obs.flatten(), env.peds.pos_w.flatten()]))
        return torch.cat(out)

    assert torch.equal(run(3), run(3))
    assert not torch.equal(run(3), run(4))


def test_bad_behaviour_is_refused():
    with pytest.raises(InputError, match="behaviour"):
        PedestrianCfg(behaviour="swarm")  # type: ignore[arg-type]


def test_eval_with_replay_pedestrians_end_to_end(two_way, tmp_path):
    out = tmp_path / "eval"
    args = ["eval", str(POLICY), "--scenes", str(two_way), "--episodes", "2", "--animate", "0"]
    args += ["--pedestrians", "replay", "--pedestrian-count", "6", "-o", str(out), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert results["pedestrians"] == {"behaviour": "replay", "count": 6}
    assert results["overall"]["episodes"] == 2
