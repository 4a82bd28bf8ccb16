"""People scoring: lifted trajectories against the tour's true ones, per point and per person."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.bench.scenes import rotation_about_z, scene, walk_along_x
from urbanverse.bench.people_metrics import people_scores
from urbanverse.render.tour import TourGroundTruth, VisiblePerson
from urbanverse.scene.agents import make_agent
from urbanverse.scene.record import Agent, CameraPose


def walker(agent_id: str, y: float, speed: float, times: np.ndarray, x0: float = 0.0) -> Agent:
    """A person walking along +x (``speed`` m/s, from ``x0`` at t = 0) on the line ``y`` (m) at ``times``."""
    traj = np.column_stack([times, x0 + speed * times, np.full(len(times), y)])
    return make_agent(agent_id, traj, np.ones(len(times)))


def tour_with(people: tuple[Agent, ...], visible_frames: int = 21, pixels: int = 5000) -> TourGroundTruth:
    """A 2 s tour (21 frames at 10 fps) whose first ``visible_frames`` frames see every one of ``people``."""
    tour = walk_along_x(0.0, 2.5, frames=21)
    frames = tuple(
        dataclasses.replace(
            f,
            people=tuple(
                VisiblePerson(
                    agent_id=p.id, instance_id=10 + k, box_xyxy=(0, 0, 50, 100), pixels=pixels,
                    feet=(0.0, 0.0, 0.0), distance_m=5.0,
                )
                for k, p in enumerate(people)
            ) if f.index < visible_frames else (),
        )
        for f in tour.frames
    )  # fmt: skip
    return dataclasses.replace(tour, frames=frames, agents=people)


TRUE_TIMES = np.arange(0.0, 2.01, 0.2)
TRUTH = (walker("a", 3.0, 1.2, TRUE_TIMES), walker("b", -3.0, -1.0, TRUE_TIMES, x0=8.0))


def generated(agents: tuple[Agent, ...]):
    return dataclasses.replace(scene(), agents=agents)


def test_perfect_agents_score_zero_and_full_recall():
    scores = people_scores(generated(TRUTH), tour_with(TRUTH), aligned=True)
    assert scores["people_err_m"] == pytest.approx(0.0, abs=1e-6)
    assert scores["people_recall_1m"] == 1.0
    assert scores["people_seen"] == scores["people_found"] == 2
    assert scores["people_points"] == 2 * len(TRUE_TIMES)


def test_shifted_agents_score_the_shift():
    shifted = (walker("g0", 3.3, 1.2, TRUE_TIMES), walker("g1", -3.3, -1.0, TRUE_TIMES, x0=8.0))
    scores = people_scores(generated(shifted), tour_with(TRUTH), aligned=True)
    assert scores["people_err_m"] == pytest.approx(0.3, abs=1e-3)
    assert scores["people_recall_1m"] == 1.0
    far = (walker("g0", 4.5, 1.2, TRUE_TIMES),)  # 1.5 m off: near nobody within 1 m
    scores = people_scores(generated(far), tour_with(TRUTH), aligned=True)
    assert scores["people_err_m"] == pytest.approx(1.5, abs=1e-3) and scores["people_recall_1m"] == 0.0


def test_a_missing_person_lowers_recall_and_unseen_people_do_not_count():
    scores = people_scores(generated(TRUTH[:1]), tour_with(TRUTH), aligned=True)
    assert scores["people_recall_1m"] == 0.5 and scores["people_err_m"] == pytest.approx(0.0, abs=1e-6)
    # Seen in too few frames, or too small: not among the people to recover.
    assert math.isnan(
        people_scores(generated(TRUTH[:1]), tour_with(TRUTH, visible_frames=3), True)["people_recall_1m"]
    )
    assert people_scores(generated(()), tour_with(TRUTH, pixels=500), True)["people_seen"] == 0
    empty = people_scores(generated(()), tour_with(TRUTH), aligned=True)
    assert empty["people_recall_1m"] == 0.0 and math.isnan(empty["people_err_m"])


def test_times_off_the_true_samples_and_partial_spans():
    # Lifted at other times (every 0.3 s from 0.05 s, within 0.5-1.7 s): interpolated truth, no error.
    times = np.arange(0.05, 1.7, 0.3)
    times = times[times >= 0.5]
    lifted = (walker("g0", 3.0, 1.2, times), walker("g1", -3.0, -1.0, times, x0=8.0))
    scores = people_scores(generated(lifted), tour_with(TRUTH), aligned=True)
    assert scores["people_err_m"] == pytest.approx(0.0, abs=1e-6) and scores["people_recall_1m"] == 1.0
    # Points after every true trajectory ends are not scored; the rest are.
    late = (walker("g0", 3.0, 1.2, np.arange(1.0, 4.01, 0.5)),)
    scores = people_scores(generated(late), tour_with(TRUTH), aligned=True)
    assert scores["people_points"] == 3 and scores["people_err_m"] == pytest.approx(0.0, abs=1e-6)
    # A lifted track a second late on the timeline is behind the person: 1.2 m at 1.2 m/s.
    lagged = (
        make_agent(
            "g0", np.column_stack([TRUE_TIMES, 1.2 * (TRUE_TIMES - 1.0), np.full(11, 3.0)]), np.ones(11)
        ),
    )
    assert people_scores(generated(lagged), tour_with(TRUTH), aligned=True)["people_err_m"] == pytest.approx(
        1.2, abs=1e-3
    )


def test_a_blind_scene_is_aligned_by_its_camera_path():
    tour = tour_with(TRUTH)
    to_truth = rotation_about_z(0.7, (4.0, -2.0))
    from_truth = np.linalg.inv(to_truth)

    def moved(agent: Agent) -> Agent:
        traj = np.asarray(agent.trajectory)
        xy = traj[:, 1:] @ from_truth[:2, :2].T + from_truth[:2, 2]
        return make_agent(agent.id, np.column_stack([traj[:, 0], xy]), np.ones(len(traj)))

    cameras = []
    for f in tour.frames:
        p = np.reshape(f.world_from_camera, (4, 4))[:2, 3] @ from_truth[:2, :2].T + from_truth[:2, 2]
        cameras.append(
            CameraPose(frame=f.index, time_s=f.time_s, position=(*p, 1.6), quat_wxyz=(1.0, 0.0, 0.0, 0.0))
        )
    blind = dataclasses.replace(generated(tuple(moved(a) for a in TRUTH)), camera_trajectory=tuple(cameras))
    scores = people_scores(blind, tour)
    assert scores["people_err_m"] == pytest.approx(0.0, abs=1e-3) and scores["people_recall_1m"] == 1.0
    assert people_scores(blind, tour, aligned=True)["people_err_m"] > 1.0
