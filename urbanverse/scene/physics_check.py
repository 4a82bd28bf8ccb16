"""Physics check in MuJoCo (CPU): do objects stand still where the scene puts them?

Every object is loaded as a free body (collision parts as convex meshes, mass split by part
volume), the ground as a plane at z = 0 plus one convex prism per top triangle of each
raised region (so curbs and ramps collide), and 2 s are simulated. An object fails when it
starts interpenetrating something by more than 1 cm, drifts more than 2 cm, falls over
(tilts more than 20 degrees), or ends sunk more than 2 cm into its support. When the simulation
goes unstable (MuJoCo's "Nan, Inf or huge value" warnings: it then resets the state, so the
objects would look still), the object of the offending degree of freedom fails and so does the check.
``fix_penetrations`` moves objects apart, sideways, or up out of the ground until nothing interpenetrates;
``drop_entangled`` removes the less confident of two objects it could not separate.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial import ConvexHull

from urbanverse.assets.mujoco_body import SPIN_ROLL_FRICTION, add_free_body, new_spec, tilt_deg
from urbanverse.assets.record import load_asset, load_collision_parts
from urbanverse.scene.ground import top_height_at, top_triangle_prisms
from urbanverse.scene.record import Scene, resolve_inside

log = logging.getLogger(__name__)

WORLD = "world"
#: Longest simulated time (s): an unstable scene shows within seconds, and 10 minutes of a large
#: scene already takes minutes of CPU.
MAX_DURATION_S = 600.0


@dataclass(frozen=True, kw_only=True)
class PhysicsCheckCfg:
    """Thresholds and simulation settings (metres, seconds, degrees)."""

    duration_s: float = 2.0
    """Simulated time (s): long enough for an unstable object to tip or slide visibly."""
    timestep_s: float = 0.002
    """MuJoCo time step (s)."""
    drift_tol_m: float = 0.02
    """An object whose position moves more than this (m) over the run drifts."""
    sink_tol_m: float = 0.02
    """An object ending deeper than this (m) in the ground sinks into its support."""
    tilt_tol_deg: float = 20.0
    """An object ending tilted more than this (degrees between its +Z and the world's) falls over."""
    penetration_tol_m: float = 0.01
    """An object starting deeper than this (m) inside another object or the ground interpenetrates."""
    fix_max_iterations: int = 50
    """``fix_penetrations`` moves one object per iteration and stops after this many."""
    fix_margin_m: float = 0.001
    """``fix_penetrations`` leaves contacts up to this deep (m) and moves objects this much past
    contact, so numerical contact noise does not count."""
    fix_min_horizontal: float = 0.5
    """Contacts between two objects whose normal has less horizontal part than this (within 60 deg of
    vertical) slide the mover sideways instead of pushing it along the normal (up, onto the other)."""
    fix_slide_step_m: float = 0.05
    """Shortest sideways move (m) of an object slid off another's top face, so sliding ends in few steps."""

    def __post_init__(self) -> None:
        for name in (
            "duration_s",
            "timestep_s",
            "drift_tol_m",
            "sink_tol_m",
            "tilt_tol_deg",
            "penetration_tol_m",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):  # NaN passes a plain `<= 0`
                raise ValueError(f"PhysicsCheckCfg.{name} must be a positive number, got {value}")
        if self.duration_s > MAX_DURATION_S:
            raise ValueError(
                f"PhysicsCheckCfg.duration_s: at most {MAX_DURATION_S:g} s, got {self.duration_s:g}"
            )
        if self.timestep_s > 0.1:
            raise ValueError(f"PhysicsCheckCfg.timestep_s: at most 0.1 s, got {self.timestep_s:g}")


@dataclass
class ObjectCheck:
    """What happened to one object. Lengths in metres, tilt in degrees."""

    id: str
    category: str
    penetration_m: float = 0.0
    penetrating: str | None = None
    drift_m: float = 0.0
    tilt_deg: float = 0.0
    sink_m: float = 0.0
    problems: list[str] = field(default_factory=list)


#: MuJoCo's warnings that mean the simulation blew up (it resets the state when one fires).
UNSTABLE_WARNINGS = {
    mujoco.mjtWarning.mjWARN_BADQPOS: "QPOS",
    mujoco.mjtWarning.mjWARN_BADQVEL: "QVEL",
    mujoco.mjtWarning.mjWARN_BADQACC: "QACC",
}


@dataclass
class PhysicsReport:
    """The check's result; ``ok`` when no object has a problem and the simulation stayed stable.

    ``unstable``: MuJoCo's instability warning (NaN, Inf or a value over 1e10 in the state), if any."""

    scene: str
    duration_s: float
    objects: list[ObjectCheck]
    unstable: str | None = None

    @property
    def ok(self) -> bool:
        return self.unstable is None and not any(o.problems for o in self.objects)

    def to_dict(self) -> dict:
        return {
            "scene": self.scene,
            "ok": self.ok,
            "unstable": self.unstable,
            "duration_s": self.duration_s,
            "failed": [o.id for o in self.objects if o.problems],
            "objects": [dataclasses.asdict(o) for o in self.objects],
        }


@dataclass
class _Model:
    model: mujoco.MjModel
    body_of: dict[str, int]  # object id -> body id
    object_of_body: dict[int, str]  # body id -> object id

    def geom_owner(self, geom: int) -> str:
        return self.object_of_body.get(int(self.model.geom_bodyid[geom]), WORLD)


def build_mujoco(scene: Scene, scene_dir: Path, timestep_s: float = 0.002) -> _Model:
    """Compile the scene into a MuJoCo model (one free body per object, mass split by part volume)."""
    road_friction = next((r.friction for r in scene.ground if r.type == "road"), 0.8)
    spec = new_spec(timestep_s, road_friction)
    for region in scene.ground:
        for k, prism in enumerate(top_triangle_prisms(region)):
            name = f"ground_{region.id}_{k}"
            spec.add_mesh(name=name, uservert=np.unique(prism.round(9), axis=0).ravel().tolist())
            spec.worldbody.add_geom(
                name=name,
                type=mujoco.mjtGeom.mjGEOM_MESH,
                meshname=name,
                friction=[region.friction, *SPIN_ROLL_FRICTION],
            )
    parts_cache: dict[str, list] = {}
    for obj in scene.objects:
        asset_dir = resolve_inside(scene_dir, obj.asset.path, f"object {obj.id} asset")
        if obj.asset.path not in parts_cache:
            parts_cache[obj.asset.path] = load_collision_parts(asset_dir, load_asset(asset_dir))
        parts = [np.asarray(p.vertices) * np.asarray(obj.scale) for p in parts_cache[obj.asset.path]]
        volumes = np.array([max(float(ConvexHull(v).volume), 1e-9) for v in parts])
        add_free_body(
            spec, obj.id, parts, obj.mass * volumes / volumes.sum(), obj.friction, obj.position, obj.yaw
        )
    model = spec.compile()
    body_of = {obj.id: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, obj.id) for obj in scene.objects}
    return _Model(model, body_of, {b: o for o, b in body_of.items()})


def _penetrations(m: _Model, data: mujoco.MjData) -> list[tuple[str, str, float, np.ndarray]]:
    """Contacts as ``(owner1, owner2, depth_m, normal 1->2)``, deepest first, depth > 0 only."""
    out = []
    for c in data.contact[: data.ncon]:
        if c.dist < 0:
            out.append((m.geom_owner(c.geom1), m.geom_owner(c.geom2), -float(c.dist), np.array(c.frame[:3])))
    return sorted(out, key=lambda t: -t[2])


def _body_of_state_index(model: mujoco.MjModel, kind: int, index: int) -> int:
    """The body that owns entry ``index`` of qpos (``mjWARN_BADQPOS``) or of the dofs (the others)."""
    if kind == mujoco.mjtWarning.mjWARN_BADQPOS:
        joints = np.flatnonzero(model.jnt_qposadr <= index)
        return int(model.jnt_bodyid[joints[-1]]) if len(joints) else -1
    return int(model.dof_bodyid[index]) if 0 <= index < model.nv else -1


def _instability(m: _Model, data: mujoco.MjData) -> tuple[str, str] | None:
    """``(object id, message)`` when MuJoCo flagged a bad state value or the state is not finite."""
    for kind, name in UNSTABLE_WARNINGS.items():
        stat = data.warning[kind]
        if stat.number:
            owner = m.object_of_body.get(_body_of_state_index(m.model, kind, stat.lastinfo), WORLD)
            return owner, f"simulation unstable: NaN, Inf or huge value in {name} ({owner})"
    if not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
        return WORLD, "simulation unstable: the state is not finite"
    return None


@contextmanager
def _mujoco_warnings_logged() -> Iterator[None]:
    """MuJoCo's warnings go to this module's logger (debug: the check reports an unstable simulation
    itself) instead of stdout and a ``MUJOCO_LOG.TXT`` in the working folder; the prior handler is
    restored on leaving. MuJoCo still counts them in ``MjData.warning``, which the check reads."""
    prior = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: log.debug("MuJoCo: %s", message))
    try:
        yield
    finally:
        mujoco.set_mju_user_warning(prior)


def run_physics_check(scene: Scene, scene_dir: Path, cfg: PhysicsCheckCfg | None = None) -> PhysicsReport:
    """Simulate ``cfg.duration_s`` seconds and report each object's penetration, drift, tilt and sinking."""
    with _mujoco_warnings_logged():
        return _run_physics_check(scene, scene_dir, cfg)


def _run_physics_check(scene: Scene, scene_dir: Path, cfg: PhysicsCheckCfg | None) -> PhysicsReport:
    cfg = cfg or PhysicsCheckCfg()
    m = build_mujoco(scene, scene_dir, cfg.timestep_s)
    data = mujoco.MjData(m.model)
    mujoco.mj_forward(m.model, data)
    checks = {obj.id: ObjectCheck(obj.id, obj.category) for obj in scene.objects}
    for a, b, depth, _ in _penetrations(m, data):
        for owner, other in ((a, b), (b, a)):
            if owner != WORLD and depth > checks[owner].penetration_m:
                checks[owner].penetration_m, checks[owner].penetrating = depth, other
    start = {oid: data.xpos[bid].copy() for oid, bid in m.body_of.items()}
    unstable = None
    for _ in range(round(cfg.duration_s / cfg.timestep_s)):
        mujoco.mj_step(m.model, data)
        if (unstable := _instability(m, data)) is not None:
            break
    if unstable is not None:
        owner, message = unstable
        if owner in checks:
            checks[owner].problems.append(message)
        return PhysicsReport(scene.name, cfg.duration_s, list(checks.values()), unstable=message)
    for a, b, depth, _ in _penetrations(m, data):
        for owner, other in ((a, b), (b, a)):
            if owner != WORLD and other == WORLD:
                checks[owner].sink_m = max(checks[owner].sink_m, depth)
    for oid, bid in m.body_of.items():
        check = checks[oid]
        check.drift_m = float(np.linalg.norm(data.xpos[bid] - start[oid]))
        check.tilt_deg = tilt_deg(data.xquat[bid])
        if check.penetration_m > cfg.penetration_tol_m:
            check.problems.append(
                f"interpenetrates {check.penetrating} by {100 * check.penetration_m:.1f} cm"
            )
        if check.tilt_deg > cfg.tilt_tol_deg:
            check.problems.append(f"falls over ({check.tilt_deg:.0f} deg)")
        if check.drift_m > cfg.drift_tol_m:
            check.problems.append(f"drifts {100 * check.drift_m:.1f} cm")
        if check.sink_m > cfg.sink_tol_m:
            check.problems.append(f"sinks {100 * check.sink_m:.1f} cm into the ground")
    return PhysicsReport(scene.name, cfg.duration_s, list(checks.values()))


def fix_penetrations(
    scene: Scene, scene_dir: Path, cfg: PhysicsCheckCfg | None = None
) -> tuple[Scene, list[str]]:
    """Move objects apart (horizontally, along the contact normal, or sideways where that normal is
    near vertical; one that stood on the ground keeps standing on its top, a curb up or down), off a
    curb's side wall it reaches into, or up (out of the ground's top) until no contact is deeper than
    ``cfg.fix_margin_m``.
    Between two objects the less confident one moves (ties: the one listed later). Returns the new
    scene and one line per moved object."""
    with _mujoco_warnings_logged():
        return _fix_penetrations(scene, scene_dir, cfg)


def _fix_penetrations(scene: Scene, scene_dir: Path, cfg: PhysicsCheckCfg | None) -> tuple[Scene, list[str]]:
    cfg = cfg or PhysicsCheckCfg()
    m = build_mujoco(scene, scene_dir, cfg.timestep_s)
    data = mujoco.MjData(m.model)
    order = {obj.id: (obj.confidence, -i) for i, obj in enumerate(scene.objects)}
    moved: dict[str, np.ndarray] = {}
    for _ in range(cfg.fix_max_iterations):
        mujoco.mj_forward(m.model, data)
        contacts = [c for c in _penetrations(m, data) if c[2] > cfg.fix_margin_m]
        if not contacts:
            break
        a, b, depth, normal = contacts[0]
        world_side = (normal if a == WORLD else -normal) if WORLD in (a, b) else None
        if world_side is not None and np.linalg.norm(world_side[:2]) >= cfg.fix_min_horizontal:
            # Into a curb's side wall: slide off it (onto the ground's top there), not up into the air.
            mover = b if a == WORLD else a
            horizontal = np.array([world_side[0], world_side[1], 0.0])
            step = horizontal / np.linalg.norm(horizontal) * (depth + cfg.fix_margin_m)
        elif world_side is not None:
            mover, step = (b if a == WORLD else a), np.array([0.0, 0.0, depth + cfg.fix_margin_m])
        else:
            mover = a if order[a] < order[b] else b
            direction = normal if mover == b else -normal
            horizontal = np.array([direction[0], direction[1], 0.0])
            if np.linalg.norm(horizontal) < cfg.fix_min_horizontal:
                # A contact across a top face (a crown over a planter): moving up would stack one object
                # on the other; slide the mover off, away from the other's centre, a step at a time.
                other = b if mover == a else a
                away = data.xpos[m.body_of[mover]] - data.xpos[m.body_of[other]]
                away[2] = 0.0
                away = (
                    away / np.linalg.norm(away) if np.linalg.norm(away) > 1e-6 else np.array([1.0, 0.0, 0.0])
                )
                step = away * max(depth + cfg.fix_margin_m, cfg.fix_slide_step_m)
            else:
                step = horizontal / np.linalg.norm(horizontal) * (depth + cfg.fix_margin_m)
        qpos_adr = m.model.jnt_qposadr[m.model.body_jntadr[m.body_of[mover]]]
        if step[2] == 0.0:  # slid sideways: an object standing on the ground stays on the ground's top
            xyz = data.qpos[qpos_adr : qpos_adr + 3]
            before, after = top_height_at(scene.ground, np.array([xyz[:2], xyz[:2] + step[:2]]))
            if abs(xyz[2] - before) < 0.01:
                step[2] = after - xyz[2]
        data.qpos[qpos_adr : qpos_adr + 3] += step
        moved[mover] = moved.get(mover, np.zeros(3)) + step
    objects, notes = [], []
    for obj in scene.objects:
        if obj.id in moved:
            qpos_adr = m.model.jnt_qposadr[m.model.body_jntadr[m.body_of[obj.id]]]
            obj = dataclasses.replace(
                obj, position=tuple(float(v) for v in data.qpos[qpos_adr : qpos_adr + 3])
            )
            dx, dy, dz = moved[obj.id]
            notes.append(f"{obj.id}: moved ({100 * dx:+.1f}, {100 * dy:+.1f}, {100 * dz:+.1f}) cm")
        objects.append(obj)
    return dataclasses.replace(scene, objects=tuple(objects)), notes


def drop_entangled(
    scene: Scene, scene_dir: Path, cfg: PhysicsCheckCfg | None = None
) -> tuple[Scene, list[str]]:
    """Remove, one at a time, the less confident object of the deepest pair of objects still inside
    each other by more than ``cfg.penetration_tol_m`` (ties: the one listed later), until none is.
    For what :func:`fix_penetrations` could not separate: two trees lifted a few centimetres apart,
    one pushed into a parked car and back. Returns the scene and one line per
    removed object."""
    cfg = cfg or PhysicsCheckCfg()
    notes = []
    with _mujoco_warnings_logged():
        while True:
            m = build_mujoco(scene, scene_dir, cfg.timestep_s)
            data = mujoco.MjData(m.model)
            mujoco.mj_forward(m.model, data)
            pairs = [c for c in _penetrations(m, data) if WORLD not in c[:2] and c[2] > cfg.penetration_tol_m]
            if not pairs:
                return scene, notes
            a, b, depth, _ = pairs[0]
            rank = {obj.id: (obj.confidence, -i) for i, obj in enumerate(scene.objects)}
            gone, kept = (a, b) if rank[a] < rank[b] else (b, a)
            notes.append(f"{gone}: removed, still {100 * depth:.1f} cm inside {kept} after moving them apart")
            scene = dataclasses.replace(scene, objects=tuple(o for o in scene.objects if o.id != gone))
