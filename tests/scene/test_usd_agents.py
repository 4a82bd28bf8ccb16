"""People in the USD: each agent walks its trajectory on the ground on the stage's time codes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from pxr import Usd, UsdGeom, UsdPhysics

from urbanverse.scene.agents import agent_headings, make_agent
from urbanverse.scene.record import Agent, load_scene, save_scene
from urbanverse.scene.usd_validate import validate_usd
from urbanverse.scene.usd_writer import AGENT_PARKED_DEPTH_M, TIME_CODES_PER_S, safe_name, write_usd

#: Top of the example scene's sidewalks and of its crosswalk (m).
SIDEWALK_TOP, CROSSWALK_TOP = 0.15, 0.0


def example_agents() -> tuple[Agent, ...]:
    """Three people in the example scene (a street along x, sidewalks at |y| > 3.5, a crosswalk at
    |x| < 2): one walks east on the north sidewalk, one west on the south sidewalk starting at a
    fractional time, and one crosses the street northwards, standing still in its middle for 1 s."""
    east = np.array([[1.0 + i, -16.0 + 1.4 * i, 5.0] for i in range(24)])
    west = np.array([[2.25 + 1.5 * i, 15.0 - 2.0 * i, -5.5] for i in range(15)])
    cross = np.array(
        [
            [4.0, 0.0, -6.0],
            [6.0, 0.0, -3.0],
            [8.0, 0.0, 0.0],
            [9.0, 0.0, 0.0],
            [11.0, 0.2, 3.0],
            [13.0, 0.5, 6.0],
        ]
    )
    return (
        make_agent("walker-east", east, np.full(len(east), 0.9), source_track=3),
        make_agent("walker.west", west, np.full(len(west), 0.8), source_track=7, height=1.6, radius=0.25),
        make_agent("crosser", cross, np.full(len(cross), 0.7)),
    )


@pytest.fixture
def agents_stage(example_dir) -> tuple[Usd.Stage, tuple[Agent, ...]]:
    scene = dataclasses.replace(load_scene(example_dir), agents=example_agents())
    save_scene(scene, example_dir)
    return Usd.Stage.Open(str(write_usd(load_scene(example_dir), example_dir))), scene.agents


def _xform(stage: Usd.Stage, agent: Agent) -> UsdGeom.Xform:
    prim = stage.GetPrimAtPath(f"/World/Agents/{safe_name(agent.id)}")
    assert prim.IsValid(), agent.id
    return UsdGeom.Xform(prim)


def _op(xform: UsdGeom.Xform, kind) -> UsdGeom.XformOp:
    return next(op for op in xform.GetOrderedXformOps() if op.GetOpType() == kind)


def test_translate_samples_are_the_trajectory_on_the_ground(agents_stage) -> None:
    stage, agents = agents_stage
    for agent, top in zip(agents, (SIDEWALK_TOP, SIDEWALK_TOP, None), strict=True):
        translate = _op(_xform(stage, agent), UsdGeom.XformOp.TypeTranslate)
        samples = translate.GetAttr().GetTimeSamples()
        codes = [t * TIME_CODES_PER_S for t, _, _ in agent.trajectory]
        assert samples[1:-1] == pytest.approx(codes)
        for code, (_, x, y) in zip(codes, agent.trajectory, strict=True):
            value = translate.Get(code)
            assert (value[0], value[1]) == pytest.approx((x, y), abs=1e-9)
            expected = top if top is not None else (SIDEWALK_TOP if abs(y) > 4.7 else CROSSWALK_TOP)
            assert value[2] == pytest.approx(expected, abs=1e-6), (agent.id, code)
        # before and after: parked under the first and last points
        first, last = translate.Get(samples[0]), translate.Get(samples[-1])
        assert samples[0] < codes[0] and samples[-1] > codes[-1]
        assert tuple(first)[:2] == pytest.approx(agent.trajectory[0][1:])
        assert tuple(last)[:2] == pytest.approx(agent.trajectory[-1][1:])
        assert first[2] < -AGENT_PARKED_DEPTH_M + 0.2 and last[2] < -AGENT_PARKED_DEPTH_M + 0.2


def test_people_are_hidden_outside_their_trajectory_and_the_stage_covers_them(agents_stage) -> None:
    stage, agents = agents_stage
    assert stage.GetTimeCodesPerSecond() == TIME_CODES_PER_S
    start, end = stage.GetStartTimeCode(), stage.GetEndTimeCode()
    for agent in agents:
        first, last = (agent.trajectory[i][0] * TIME_CODES_PER_S for i in (0, -1))
        assert start <= first and end >= last
        imageable = UsdGeom.Imageable(_xform(stage, agent))
        for code in (start, math.ceil(first) - 1, math.floor(last) + 1, end + 100):
            if not first <= code <= last:
                assert imageable.ComputeVisibility(code) == UsdGeom.Tokens.invisible, (agent.id, code)
        for code in np.linspace(first, last, 9):
            assert imageable.ComputeVisibility(code) == UsdGeom.Tokens.inherited, (agent.id, code)
    assert end == math.ceil(max(a.trajectory[-1][0] for a in agents) * TIME_CODES_PER_S)


def test_people_face_their_walking_direction_and_stand_on_the_ground(agents_stage) -> None:
    stage, (east, west, cross) = agents_stage
    for agent, heading in ((east, 0.0), (west, 180.0), (cross, 90.0)):
        rotate = _op(_xform(stage, agent), UsdGeom.XformOp.TypeRotateZ)
        code = agent.trajectory[2][0] * TIME_CODES_PER_S
        assert math.cos(math.radians(rotate.Get(code) - heading)) == pytest.approx(1.0, abs=1e-3)
    # the crosser stands still from 8 s to 9 s: it keeps facing (about) north
    rotate = _op(_xform(stage, cross), UsdGeom.XformOp.TypeRotateZ)
    assert rotate.Get(8.5 * TIME_CODES_PER_S) == pytest.approx(90.0, abs=5.0)
    cache = UsdGeom.BBoxCache(Usd.TimeCode(5.0 * TIME_CODES_PER_S), [UsdGeom.Tokens.default_])
    for agent in (east, west):
        body = stage.GetPrimAtPath(f"/World/Agents/{safe_name(agent.id)}/Body")
        box = cache.ComputeWorldBound(body).ComputeAlignedRange()
        assert box.GetMin()[2] == pytest.approx(SIDEWALK_TOP, abs=1e-6)
        assert box.GetMax()[2] - box.GetMin()[2] == pytest.approx(agent.height, abs=1e-6)
        assert box.GetMax()[0] - box.GetMin()[0] == pytest.approx(2 * agent.radius, abs=1e-6)


def test_people_are_kinematic_colliders_and_the_stage_validates(agents_stage) -> None:
    stage, agents = agents_stage
    for agent in agents:
        prim = _xform(stage, agent).GetPrim()
        assert UsdPhysics.RigidBodyAPI(prim).GetKinematicEnabledAttr().Get() is True
        body = stage.GetPrimAtPath(f"{prim.GetPath()}/Body")
        assert body.IsA(UsdGeom.Capsule) and body.HasAPI(UsdPhysics.CollisionAPI)
        assert prim.GetCustomDataByKey("urbanverse:agent_id") == agent.id
    issues, _ = validate_usd(stage.GetRootLayer().realPath)
    assert [i for i in issues if i.severity == "error"] == []


def test_a_scene_without_agents_has_no_animation(example_dir) -> None:
    stage = Usd.Stage.Open(str(write_usd(load_scene(example_dir), example_dir)))
    assert not stage.GetPrimAtPath("/World/Agents").IsValid()
    assert not stage.HasAuthoredTimeCodeRange()
    assert not stage.GetRootLayer().HasTimeCodesPerSecond()


def test_headings_hold_through_standstills_and_turn_the_short_way() -> None:
    standstill = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 1, 0], [4, 2, 0.0]])
    assert agent_headings(standstill) == pytest.approx([0.0, 0.0, 0.0, 0.0, 0.0])
    # walking west, then turning to south-west: no spin through east
    turn = np.array([[0, 0, 0], [1, -1, 0.01], [2, -2, -0.01], [3, -3, -1], [4, -4, -2.0]])
    headings = np.degrees(agent_headings(turn))
    assert np.all(np.abs(np.diff(headings)) < 90)
    assert math.cos(math.radians(headings[-1] + 135)) == pytest.approx(1.0, abs=1e-6)
