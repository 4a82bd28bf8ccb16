"""People drawn into rendered tours: a low-poly walking figure per scene agent.

A figure is ``agent.height`` tall with human proportions: head with hair, neck, torso, hips, two legs
with shoes and two arms with hands, in skin, clothing and hair colours drawn from the agent's id (the
same person looks the same in every tour). It stands on the ground top under its trajectory point,
faces the way it walks, and swings its legs and arms with its gait (one stride per ~0.8 x its height
walked, arms against legs; still when it stands still). The arms hang a little apart from the torso,
so that the silhouette reads as a person to a detector.

Each figure is five MuJoCo mocap bodies (trunk, two legs, two arms; :data:`PARTS`) added to a
:class:`~urbanverse.render.raster.SceneBuilder` by :func:`add_people`; :func:`people_motion` works out
every body's pose at every frame time, and :func:`pose_people` moves a compiled rasterizer's bodies
to one frame's poses. A person before the start or after the end of its trajectory is not drawn.

Figure frame: x forward, y left, z up, metres, origin on the ground between the feet.
"""

from __future__ import annotations

import dataclasses
import math
import zlib
from collections.abc import Sequence

import numpy as np

from urbanverse.render.raster import Rasterizer, SceneBuilder
from urbanverse.scene.agents import position_at
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import Agent, GroundRegion

#: The mocap bodies of one figure, in the order :func:`add_people` adds them.
PARTS = ("trunk", "left_leg", "right_leg", "left_arm", "right_arm")
#: Where a figure goes while it is not in the scene: far below the ground (m).
HIDDEN_Z = -1000.0
#: Walked distance of one gait cycle (two steps), as a share of the body height.
STRIDE_PER_HEIGHT = 0.8
#: Peak swing (rad) of the legs about the hips and of the arms about the shoulders at walking speed.
LEG_SWING, ARM_SWING = 0.42, 0.35
#: Speed (m/s) from which the swing is full; slower walkers swing less.
FULL_SWING_SPEED = 1.0
#: Time window (s) over which a person's walking direction and speed are measured.
MOTION_WINDOW_S = 0.4
#: Outward tilt (rad) of the arms away from the torso.
ARM_SPREAD = 0.3

# Display (sRGB) colours in [0, 1].
SKIN = ((0.96, 0.80, 0.69), (0.89, 0.69, 0.55), (0.78, 0.58, 0.43), (0.58, 0.40, 0.28), (0.38, 0.25, 0.17))
HAIR = ((0.08, 0.06, 0.05), (0.25, 0.16, 0.09), (0.45, 0.30, 0.16), (0.80, 0.66, 0.40), (0.60, 0.60, 0.60))
SHIRTS = (
    (0.80, 0.15, 0.15),
    (0.15, 0.30, 0.70),
    (0.92, 0.92, 0.90),
    (0.12, 0.12, 0.14),
    (0.20, 0.55, 0.30),
    (0.95, 0.75, 0.15),
    (0.50, 0.50, 0.52),
    (0.13, 0.17, 0.35),
    (0.90, 0.45, 0.15),
    (0.45, 0.20, 0.55),
)
TROUSERS = (
    (0.18, 0.27, 0.48),
    (0.10, 0.10, 0.11),
    (0.70, 0.62, 0.45),
    (0.35, 0.35, 0.37),
    (0.30, 0.22, 0.15),
)
SHOES = ((0.08, 0.08, 0.08), (0.90, 0.90, 0.88), (0.35, 0.22, 0.12))


def _prism(sides: int, z0: float, z1: float, r0: Sequence[float], r1: Sequence[float], x=0.0, y=0.0):
    """A closed tapered prism along z from ``z0`` to ``z1`` (m) with an elliptical ``sides``-gon cross
    section of half-axes ``r0`` (x, y) at the bottom and ``r1`` at the top, centred on (``x``, ``y``):
    ``(vertices (2 sides, 3), faces)``, faces counter-clockwise seen from outside."""
    a = 2 * np.pi * (np.arange(sides) + 0.5) / sides
    ring = np.column_stack([np.cos(a), np.sin(a)])
    bottom = np.column_stack([ring * r0 + (x, y), np.full(sides, z0)])
    top = np.column_stack([ring * r1 + (x, y), np.full(sides, z1)])
    i = np.arange(sides)
    j = (i + 1) % sides
    sides_f = np.concatenate([np.column_stack([i, j, j + sides]), np.column_stack([i, j + sides, i + sides])])
    caps = [[0, k + 1, k] for k in range(1, sides - 1)] + [
        [sides, sides + k, sides + k + 1] for k in range(1, sides - 1)
    ]
    return np.vstack([bottom, top]), np.vstack([sides_f, caps])


def _ellipsoid(centre: Sequence[float], radii: Sequence[float]):
    """A low-poly ellipsoid (an icosahedron split once, 42 vertices): ``(vertices, faces)``."""
    t = (1 + math.sqrt(5)) / 2
    v = [(-1, t, 0), (1, t, 0), (-1, -t, 0), (1, -t, 0), (0, -1, t), (0, 1, t), (0, -1, -t), (0, 1, -t),
         (t, 0, -1), (t, 0, 1), (-t, 0, -1), (-t, 0, 1)]  # fmt: skip
    f = [(0, 11, 5), (0, 5, 1), (0, 1, 7), (0, 7, 10), (0, 10, 11), (1, 5, 9), (5, 11, 4), (11, 10, 2),
         (10, 7, 6), (7, 1, 8), (3, 9, 4), (3, 4, 2), (3, 2, 6), (3, 6, 8), (3, 8, 9), (4, 9, 5),
         (2, 4, 11), (6, 2, 10), (8, 6, 7), (9, 8, 1)]  # fmt: skip
    verts = [np.asarray(p, float) / np.linalg.norm(p) for p in v]
    mid: dict[tuple[int, int], int] = {}

    def middle(a: int, b: int) -> int:
        key = (min(a, b), max(a, b))
        if key not in mid:
            m = verts[a] + verts[b]
            verts.append(m / np.linalg.norm(m))
            mid[key] = len(verts) - 1
        return mid[key]

    faces = []
    for a, b, c in f:
        ab, bc, ca = middle(a, b), middle(b, c), middle(c, a)
        faces += [(a, ab, ca), (b, bc, ab), (c, ca, bc), (ab, bc, ca)]
    return np.asarray(verts) * radii + centre, np.asarray(faces)


@dataclasses.dataclass(frozen=True)
class _Piece:
    """One coloured mesh of a figure part: ``role`` names its colour (skin, hair, shirt, trousers, shoes)."""

    name: str
    role: str
    mesh: tuple[np.ndarray, np.ndarray]


def _joints(height: float) -> dict[str, tuple[float, float, float]]:
    """Where each part's body sits in the figure frame (m): the trunk at the origin, legs at the hips,
    arms at the shoulders."""
    h = height
    return {
        "trunk": (0.0, 0.0, 0.0),
        "left_leg": (0.0, 0.058 * h, 0.50 * h),
        "right_leg": (0.0, -0.058 * h, 0.50 * h),
        "left_arm": (0.0, 0.125 * h, 0.79 * h),
        "right_arm": (0.0, -0.125 * h, 0.79 * h),
    }


def figure_pieces(height: float, short_sleeves: bool) -> dict[str, list[_Piece]]:
    """The meshes of a figure ``height`` m tall, per part (:data:`PARTS` order), each in its part's
    body frame."""
    h = height
    trunk = [
        _Piece(
            "hips", "trousers", _prism(10, 0.46 * h, 0.56 * h, (0.065 * h, 0.095 * h), (0.066 * h, 0.095 * h))
        ),
        _Piece(
            "torso", "shirt", _prism(10, 0.55 * h, 0.78 * h, (0.068 * h, 0.095 * h), (0.075 * h, 0.112 * h))
        ),
        _Piece(
            "shoulders",
            "shirt",
            _prism(10, 0.78 * h, 0.825 * h, (0.075 * h, 0.112 * h), (0.05 * h, 0.06 * h)),
        ),
        _Piece("neck", "skin", _prism(8, 0.81 * h, 0.87 * h, (0.03 * h, 0.03 * h), (0.028 * h, 0.028 * h))),
        _Piece("head", "skin", _ellipsoid((0.005 * h, 0.0, 0.918 * h), (0.07 * h, 0.062 * h, 0.082 * h))),
        _Piece("hair", "hair", _ellipsoid((-0.012 * h, 0.0, 0.93 * h), (0.07 * h, 0.066 * h, 0.07 * h))),
    ]
    pieces = {"trunk": trunk}
    for side in ("left", "right"):
        pieces[f"{side}_leg"] = [
            _Piece(
                "leg", "trousers", _prism(8, -0.475 * h, 0.0, (0.032 * h, 0.032 * h), (0.05 * h, 0.048 * h))
            ),
            _Piece(
                "shoe",
                "shoes",
                _prism(4, -0.50 * h, -0.475 * h, (0.07 * h, 0.04 * h), (0.065 * h, 0.036 * h), x=0.025 * h),
            ),
        ]
    for side in ("left", "right"):
        sleeve = -0.17 * h if short_sleeves else -0.33 * h
        pieces[f"{side}_arm"] = [
            _Piece("sleeve", "shirt", _prism(8, sleeve, 0.0, (0.031 * h, 0.031 * h), (0.038 * h, 0.038 * h))),
            _Piece("hand", "skin", _ellipsoid((0.0, 0.0, -0.365 * h), (0.022 * h, 0.018 * h, 0.04 * h))),
        ]
        if short_sleeves:
            forearm = _prism(6, -0.33 * h, sleeve, (0.026 * h, 0.026 * h), (0.029 * h, 0.029 * h))
            pieces[f"{side}_arm"].append(_Piece("forearm", "skin", forearm))
    return pieces


def figure_colours(agent_id: str) -> dict[str, tuple[float, float, float]]:
    """Display colours per role, drawn from the agent's id (stable across runs and tours)."""
    rng = np.random.default_rng(zlib.crc32(agent_id.encode()))
    return {
        "skin": SKIN[rng.integers(len(SKIN))],
        "hair": HAIR[rng.integers(len(HAIR))],
        "shirt": SHIRTS[rng.integers(len(SHIRTS))],
        "trousers": TROUSERS[rng.integers(len(TROUSERS))],
        "shoes": SHOES[rng.integers(len(SHOES))],
    }


def add_people(
    builder: SceneBuilder, agents: Sequence[Agent], first_instance_id: int, semantic_ids: Sequence[int]
) -> None:
    """Add a figure per agent to ``builder`` as mocap bodies (:data:`PARTS` per agent, agents in order);
    agent ``k`` has instance id ``first_instance_id + k`` and semantic id ``semantic_ids[k]``. Call after
    every static geom is added: the figures' geoms must follow them in the compiled model, as their ids
    do in the builder's lists."""
    import mujoco

    spec = builder.spec
    for k, agent in enumerate(agents):
        colours = figure_colours(agent.id)
        materials = {}
        for role, rgb in colours.items():
            name = f"person{k}:{role}"
            spec.add_material(name=name, rgba=[*rgb, 1.0], specular=0.1, shininess=0.2)
            materials[role] = name
        short = bool(zlib.crc32(f"{agent.id}:sleeves".encode()) % 2)
        pieces_of = figure_pieces(agent.height, short)
        for part in PARTS:
            body = spec.worldbody.add_body(name=f"person{k}:{part}", mocap=True, pos=[0.0, 0.0, HIDDEN_Z])
            for piece in pieces_of[part]:
                mesh = spec.add_mesh(name=f"person{k}:{part}:{piece.name}")
                mesh.uservert = piece.mesh[0].ravel().tolist()
                mesh.userface = piece.mesh[1].ravel().tolist()
                mesh.inertia = mujoco.mjtMeshInertia.mjMESH_INERTIA_SHELL
                body.add_geom(
                    type=mujoco.mjtGeom.mjGEOM_MESH,
                    meshname=mesh.name,
                    material=materials[piece.role],
                    contype=0,
                    conaffinity=0,
                    group=0,
                )
                builder.instance_of_geom.append(first_instance_id + k)
                builder.semantic_of_geom.append(semantic_ids[k])


@dataclasses.dataclass(frozen=True)
class PeopleMotion:
    """Every figure's pose at each of ``N`` frame times for ``A`` agents: ``mocap_pos`` ``(N, 5 A, 3)``
    (m) and ``mocap_quat`` ``(N, 5 A, 4)`` (w, x, y, z) of the bodies in :func:`add_people` order;
    ``feet`` ``(N, A, 3)``: the ground point under each person (m); ``present`` ``(N, A)``: whether the
    person is in the scene at that time."""

    mocap_pos: np.ndarray
    mocap_quat: np.ndarray
    feet: np.ndarray
    present: np.ndarray


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of quaternion arrays ``(..., 4)`` (w, x, y, z)."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def _axis_quat(axis: int, angle: np.ndarray) -> np.ndarray:
    """Quaternions ``(..., 4)`` of rotations by ``angle`` (rad) about coordinate axis ``axis``."""
    q = np.zeros((*np.shape(angle), 4))
    q[..., 0] = np.cos(np.asarray(angle) / 2)
    q[..., 1 + axis] = np.sin(np.asarray(angle) / 2)
    return q


def _walk_state(agent: Agent, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Position ``(N, 2)``, heading ``(N,)`` (rad), gait phase ``(N,)`` (rad) and swing share ``(N,)``
    (0 standing .. 1 walking) of ``agent`` at ``times``."""
    traj = np.asarray(agent.trajectory, float)
    xy = position_at(agent, times)
    ahead = position_at(agent, times + MOTION_WINDOW_S / 2)
    behind = position_at(agent, times - MOTION_WINDOW_S / 2)
    step = ahead - behind
    moving = np.hypot(step[:, 0], step[:, 1]) > 0.02
    heading = np.arctan2(step[:, 1], step[:, 0])
    if not moving.any():
        first = traj[1, 1:] - traj[0, 1:] if len(traj) > 1 else np.array([1.0, 0.0])
        heading[:] = math.atan2(first[1], first[0])
    else:  # standing still: keep the heading of the nearest time it moved
        idx = np.flatnonzero(moving)
        nearest = idx[np.clip(np.searchsorted(idx, np.arange(len(times))), 0, len(idx) - 1)]
        heading = heading[nearest]
    walked = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(traj[:, 1:], axis=0).T))])
    phase = 2 * np.pi * np.interp(times, traj[:, 0], walked) / (STRIDE_PER_HEIGHT * agent.height)
    speed = np.hypot(step[:, 0], step[:, 1]) / MOTION_WINDOW_S
    return xy, heading, phase, np.clip(speed / FULL_SWING_SPEED, 0.0, 1.0)


def people_motion(agents: Sequence[Agent], ground: Sequence[GroundRegion], times: np.ndarray) -> PeopleMotion:
    """The figures' poses at ``times`` (s) over the scene's ``ground`` (see :class:`PeopleMotion`)."""
    times = np.asarray(times, float)
    n, a = len(times), len(agents)
    pos = np.zeros((n, a, len(PARTS), 3))
    quat = np.zeros((n, a, len(PARTS), 4))
    feet = np.zeros((n, a, 3))
    present = np.zeros((n, a), bool)
    for k, agent in enumerate(agents):
        xy, heading, phase, share = _walk_state(agent, times)
        z = top_height_at(ground, xy)
        present[:, k] = (times >= agent.trajectory[0][0]) & (times <= agent.trajectory[-1][0])
        feet[:, k] = np.column_stack([xy, z])
        yaw = _axis_quat(2, heading)
        c, s = np.cos(heading), np.sin(heading)
        legs = LEG_SWING * share * np.sin(phase)
        arms = ARM_SWING * share * np.sin(phase)
        swing = {
            "trunk": np.zeros(n),
            "left_leg": legs,
            "right_leg": -legs,
            "left_arm": -arms,
            "right_arm": arms,
        }
        spread = {"left_arm": ARM_SPREAD, "right_arm": -ARM_SPREAD}
        joints = _joints(agent.height)
        for j, part in enumerate(PARTS):
            jx, jy, jz = joints[part]
            pos[:, k, j] = np.column_stack([xy[:, 0] + c * jx - s * jy, xy[:, 1] + s * jx + c * jy, z + jz])
            local = _quat_mul(_axis_quat(1, swing[part]), _axis_quat(0, np.full(n, spread.get(part, 0.0))))
            quat[:, k, j] = _quat_mul(yaw, local)
        pos[~present[:, k], k, :, 2] = HIDDEN_Z
    return PeopleMotion(pos.reshape(n, -1, 3), quat.reshape(n, -1, 4), feet, present)


def pose_people(raster: Rasterizer, motion: PeopleMotion, frame: int) -> None:
    """Move ``raster``'s figures (added by :func:`add_people`) to their poses at frame ``frame``."""
    import mujoco

    model, data = raster.model, raster.data
    if model.nmocap != motion.mocap_pos.shape[1]:
        raise ValueError(
            f"pose_people: the model has {model.nmocap} mocap bodies, the motion {motion.mocap_pos.shape[1]}"
        )
    data.mocap_pos[:] = motion.mocap_pos[frame]
    data.mocap_quat[:] = motion.mocap_quat[frame]
    mujoco.mj_kinematics(model, data)
