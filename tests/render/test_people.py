"""People in renders: walking figures posed per frame, their ids and boxes in the tour's ground truth,
and a look a COCO detector takes for a person."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from urbanverse.cli import app
from urbanverse.records import load_record, save_json
from urbanverse.render.people import people_motion, pose_people
from urbanverse.render.raster import PinholeCamera, look_at
from urbanverse.render.scene_model import build_rasterizer, semantic_id
from urbanverse.render.tour import TourGroundTruth
from urbanverse.render.walk import WalkCfg, plan_route
from urbanverse.scene.agents import make_agent, position_at
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import SCENE_FILE, Agent, Scene, load_scene

CAMERA = PinholeCamera.from_hfov(640, 480, 60.0)


def walking_towards(route: np.ndarray, start: int, stop: int, agent_id: str, seconds: float) -> Agent:
    """A person walking the route's points from index ``start`` back to ``stop`` over ``seconds``."""
    xy = route[start:stop:-1]
    t = np.linspace(0.0, seconds, len(xy))
    return make_agent(agent_id, np.column_stack([t, xy]), np.ones(len(t)), height=1.75)


def with_agents(scene_dir, agents: tuple[Agent, ...]) -> Scene:
    scene = dataclasses.replace(load_scene(scene_dir), agents=agents)
    save_json(scene, scene_dir / SCENE_FILE)
    return scene


def test_figure_stands_on_the_ground_faces_its_way_and_leaves_at_its_end(example_dir):
    scene = load_scene(example_dir)
    route = plan_route(scene, WalkCfg(), np.random.default_rng(0))
    scene = with_agents(example_dir, (walking_towards(route, 30, 10, "person_a", 10.0),))
    person = scene.agents[0]
    motion = people_motion(scene.agents, scene.ground, np.array([5.0, 20.0]))
    feet = motion.feet[0, 0]
    assert feet[2] == pytest.approx(top_height_at(scene.ground, feet[None, :2])[0])
    assert motion.present.tolist() == [[True], [False]]
    heading = np.asarray(person.trajectory[-1][1:]) - np.asarray(person.trajectory[0][1:])
    eye = feet + np.r_[3.5 * heading / np.linalg.norm(heading), 0.0] + (0.0, 0.0, 1.0)
    pose = look_at(eye, feet + (0.0, 0.0, 0.9))
    iid = len(scene.objects) + 1
    with build_rasterizer(scene, example_dir, CAMERA.width, CAMERA.height, people=True) as raster:
        pose_people(raster, motion, 0)
        out = raster.render(CAMERA, pose)
        mask = out.instance == iid
        assert mask.sum() > 5000 and (out.semantic[mask] == semantic_id("pedestrian")).all()
        rows = np.flatnonzero(mask.any(axis=1))
        (top, foot), z = CAMERA.project(np.array([feet + (0, 0, person.height), feet]), pose)
        assert abs(rows[0] - top[1]) < 6 and abs(rows[-1] - foot[1]) < 6  # 1.75 m tall, feet on the ground
        pose_people(raster, motion, 1)
        assert not (raster.render(CAMERA, pose).instance == iid).any()  # past its trajectory: gone


def test_detector_sees_a_rendered_person(example_dir):
    from urbanverse.perception.ssd import detect_ssd

    scene = load_scene(example_dir)
    route = plan_route(scene, WalkCfg(), np.random.default_rng(0))
    scene = with_agents(example_dir, (walking_towards(route, 30, 10, "person_00", 10.0),))
    motion = people_motion(scene.agents, scene.ground, np.array([5.0]))
    feet = motion.feet[0, 0]
    heading = np.asarray(scene.agents[0].trajectory[-1][1:]) - np.asarray(scene.agents[0].trajectory[0][1:])
    eye = feet + np.r_[5.0 * heading / np.linalg.norm(heading), 0.0] + (0.0, 0.0, 1.6)
    with build_rasterizer(scene, example_dir, CAMERA.width, CAMERA.height, people=True) as raster:
        pose_people(raster, motion, 0)
        out = raster.render(CAMERA, look_at(eye, feet + (0.0, 0.0, 1.0)))
    mask = out.instance == len(scene.objects) + 1
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    box = np.array([cols[0], rows[0], cols[-1] + 1, rows[-1] + 1])
    people = [c for c in detect_ssd(out.rgb, 0.5) if c.label == "person"]
    overlap = [np.minimum(c.box[2:], box[2:]) - np.maximum(c.box[:2], box[:2]) for c in people]
    assert any((o > 0.6 * (box[2:] - box[:2])).all() for o in overlap), [(c.score, c.box) for c in people]


def test_tour_ground_truth_has_the_people_and_their_boxes(example_dir, tmp_path):
    scene = load_scene(example_dir)
    seed = 3
    route = plan_route(scene, WalkCfg(), np.random.default_rng(seed))
    agents = (walking_towards(route, 24, 4, "person_a", 6.0), walking_towards(route, 40, 20, "person_b", 2.0))
    scene = with_agents(example_dir, agents)
    args = ["render-tour", str(example_dir), "-o", str(tmp_path / "walk.mp4"), "--seconds", "3", "--fps", "5"]
    args += [
        "--width",
        "320",
        "--height",
        "240",
        "--seed",
        str(seed),
        "--frames-dir",
        str(tmp_path / "frames"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    gt = load_record(TourGroundTruth, tmp_path / "walk_gt.json")
    assert gt.schema_version == 2 and gt.agents == scene.agents
    seen = 0
    for frame in gt.frames:
        ids = cv2.imread(
            str(tmp_path / "frames" / "instance" / f"{frame.index:06d}.png"), cv2.IMREAD_UNCHANGED
        )
        assert not {p.instance_id for p in frame.people} & {o.instance_id for o in frame.visible}
        for p in frame.people:
            k = [a.id for a in agents].index(p.agent_id)
            assert p.instance_id == len(scene.objects) + 1 + k
            rows, cols = np.nonzero(ids == p.instance_id)
            assert p.box_xyxy == (cols.min(), rows.min(), cols.max() + 1, rows.max() + 1) and p.pixels == len(
                rows
            )
            assert np.allclose(p.feet[:2], position_at(agents[k], frame.time_s)[0], atol=2e-3)
            seen += 1
    assert seen >= 5
    # person_b's trajectory ends at 2 s: it is in no later frame.
    assert all(p.agent_id != "person_b" for f in gt.frames if f.time_s > 2.0 for p in f.people)
