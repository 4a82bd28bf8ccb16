"""People seen in the video, lifted to ground trajectories in the scene's frame (``urbanverse gen``'s
``people`` stage).

People are tracked over frames sampled every ``step_s`` (:mod:`urbanverse.perception.people_track`),
each frame's camera interpolated between the registered keyframes around it. Each person's feet (the
box's bottom centre, or the lowest pixels of its mask) are cast onto the fitted ground, as the static
objects' contacts are (:func:`urbanverse.layout.lift.observation_views`). A track is then cut where it
cannot be one person: a step faster than ``max_speed_mps`` (the tracker joined two people: an
identity switch) or a gap longer than ``max_gap_s``; each piece is smoothed by a local linear fit in
time, weighted by each point's confidence, and becomes an :class:`~urbanverse.scene.record.Agent`.
The flow field sums how the agents walked (:func:`urbanverse.scene.agents.flow_field`).

A static camera (``vtest.avi``) sees people for tens of seconds; a walking camera for a few seconds,
so its trajectories are short: both are kept, down to ``min_points`` points.
"""

from __future__ import annotations

import dataclasses
import math
import threading

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from urbanverse.errors import InputError
from urbanverse.layout.ground import GroundLayout
from urbanverse.layout.lift import LiftCfg, TrackView, contact_masks, observation_views
from urbanverse.layout.stage import PERSON_HEIGHT_M, street_support
from urbanverse.perception.detect import DetectionCfg
from urbanverse.perception.people_track import PeopleTracks, track_people
from urbanverse.perception.track import TrackingCfg
from urbanverse.recon.geometry import make_pose
from urbanverse.recon.record import Reconstruction
from urbanverse.records import record
from urbanverse.scene.agents import flow_field, make_agent
from urbanverse.scene.record import Agent, FlowField
from urbanverse.video.record import KeyframeSet


@dataclasses.dataclass(frozen=True, kw_only=True)
class PeopleCfg:
    """How person tracks become trajectories; lengths in metres, times in seconds."""

    enabled: bool = True
    """Lift people at all (off: the scene has no ``agents`` and no ``flow``)."""
    step_s: float = 0.5
    """Time between the frames people are tracked in (s); a walker moves about 0.7 m."""
    max_frames: int = 240
    """At most this many frames are read (a longer shot is sampled more sparsely)."""
    max_speed_mps: float = 3.0
    """A step between two observations faster than this is two people (an identity switch) or a bad
    contact: the trajectory is cut there. Brisk walking is 1.5-2 m/s."""
    max_gap_s: float = 4.0
    """A trajectory is cut where the person was unseen for longer than this."""
    min_points: int = 3
    """Trajectory pieces with fewer points are dropped (two points give a speed but no path)."""
    smooth_s: float = 1.0
    """Width (standard deviation, s) of the local linear fit that smooths each trajectory; 0: none."""
    height_range_m: tuple[float, float] = (1.1, 2.4)
    """A box whose height at its contact's depth falls outside this (top not cut by the frame) has its
    feet hidden or its contact wrong: the observation is dropped."""
    fuse_height: bool = True
    """Fuse each contact's depth with the depth its box's height gives (:func:`fused_position`)."""
    pitch_noise_deg: float = 0.5
    """Error (standard deviation, degrees) of a frame's camera pitch between keyframes, as the fusion
    weighs the contact's depth: a walking camera bobs between the keyframes its pose comes from."""
    box_noise_px: float = 2.0
    """Error (standard deviation, px) of a detector box's edges."""
    height_spread: float = 0.05
    """Relative spread of people's heights around ``PERSON_HEIGHT_M`` (1.7 m +- 0.085 m)."""
    max_distance_m: float = 30.0
    """Contacts farther than this from the camera (m, along the ray) are not used: a pixel's ground
    error grows with the square of the distance."""

    def __post_init__(self) -> None:
        if not (
            self.max_speed_mps > 0 and self.max_gap_s > 0 and self.min_points >= 2 and self.smooth_s >= 0
        ):
            raise InputError("people: need max_speed_mps > 0, max_gap_s > 0, min_points >= 2, smooth_s >= 0")
        lo, hi = self.height_range_m
        if not 0 < lo < hi:
            raise InputError(f"people.height_range_m: expected 0 < low < high, got {self.height_range_m}")
        if not (self.step_s > 0 and self.max_frames >= 2):
            raise InputError(
                f"people: need step_s > 0, max_frames >= 2, got {self.step_s}, {self.max_frames}"
            )


@record
class LiftedPeople:
    """The ``people`` stage's output: the ``agents`` and their ``flow`` (None without agents), and what
    was left out: person tracks with no usable contact (``tracks_unplaced``), cuts at identity switches
    or gaps (``cuts``), pieces too short to keep or too fast after smoothing (``pieces_dropped``) and
    observations whose box height said the feet were hidden (``contacts_dropped``)."""

    schema_version: int = 1
    agents: tuple[Agent, ...]
    flow: FlowField | None = None
    person_tracks: int = 0
    tracks_unplaced: int = 0
    cuts: int = 0
    pieces_dropped: int = 0
    contacts_dropped: int = 0


def _is_person(track) -> bool:
    return track.dynamic and track.category_path[1] == "people"


def contact_confidence(score: float, eye: np.ndarray, ground: np.ndarray, top_cut: bool) -> float:
    """A contact's confidence in [0, 1]: the detection ``score``, lowered where the ray from the camera
    ``eye`` meets the ``ground`` at a grazing angle (below 15 degrees a pixel spans more than ~4 times
    the ground it spans looking straight down) and, by a quarter, where the box's top is cut (its
    height cannot confirm the contact)."""
    drop = eye[2] - ground[2]
    grazing = math.degrees(math.atan2(max(drop, 0.0), float(np.hypot(*(ground[:2] - eye[:2])))))
    return float(np.clip(score * min(1.0, grazing / 15.0) * (0.75 if top_cut else 1.0), 0.0, 1.0))


def smooth_trajectory(t: np.ndarray, xy: np.ndarray, weight: np.ndarray, sigma_s: float) -> np.ndarray:
    """``xy (T, 2)`` at times ``t (T,)`` smoothed by a weighted local linear fit (Gaussian kernel of
    ``sigma_s`` in time, times each point's ``weight``): unlike a moving average it does not pull the
    ends of a walk towards its middle. ``sigma_s`` 0 or under 3 points: unchanged."""
    if sigma_s <= 0 or len(t) < 3:
        return xy.copy()
    dt = t[None, :] - t[:, None]  # (T, T): row i, the times relative to t_i
    w = np.exp(-0.5 * (dt / sigma_s) ** 2) * np.maximum(weight, 1e-3)[None, :]
    s0, s1, s2 = w.sum(1), (w * dt).sum(1), (w * dt**2).sum(1)
    det = s0 * s2 - s1**2
    out = np.empty_like(xy)
    for k in range(2):
        b0, b1 = w @ xy[:, k], (w * dt) @ xy[:, k]
        linear = (s2 * b0 - s1 * b1) / np.where(det > 1e-12, det, 1.0)
        out[:, k] = np.where(det > 1e-12, linear, b0 / s0)  # all weight at one time: the weighted mean
    return out


def split_pieces(t: np.ndarray, xy: np.ndarray, cfg: PeopleCfg) -> list[np.ndarray]:
    """Index arrays of the pieces of one track, cut where a step is faster than ``cfg.max_speed_mps``
    or the gap is longer than ``cfg.max_gap_s``."""
    if len(t) < 2:
        return [np.arange(len(t))]
    dt = np.diff(t)
    speed = np.hypot(*np.diff(xy, axis=0).T) / np.maximum(dt, 1e-6)
    cut = np.flatnonzero((speed > cfg.max_speed_mps) | (dt > cfg.max_gap_s)) + 1
    return np.split(np.arange(len(t)), cut)


def fused_position(view: TrackView, fy: float, cfg: PeopleCfg) -> np.ndarray:
    """Where along the ray to its feet the person of ``view`` stands (world xy, m): the depth of the
    feet's ground contact fused with the depth the box's height gives a person ``PERSON_HEIGHT_M``
    tall, each weighted by the inverse of its variance.

    The contact's depth ``d = h / tan(angle below the horizon)`` errs by ``d^2 / h`` per radian, so
    a pixel or a camera pitch a fraction of a degree off moves a person 15 m away by metres; the
    height's depth errs in proportion to the depth (people's heights spread by
    ``cfg.height_spread``, a box's by ``cfg.box_noise_px`` pixels), whatever the pitch. Near the
    camera the contact wins, far from it the height. A box whose top is cut keeps the contact."""
    ray = view.ground - view.eye
    if view.top_cut:
        return view.ground[:2].copy()
    d_contact = float(np.hypot(*ray[:2]))
    drop = max(float(view.eye[2] - view.ground[2]), 1e-3)
    angle_sd = cfg.box_noise_px / fy + math.radians(cfg.pitch_noise_deg)
    sd_contact = d_contact**2 / drop * angle_sd
    box_px = view.height * fy / d_contact  # the box's height (px) at the contact's distance
    d_height = d_contact * PERSON_HEIGHT_M / view.height
    sd_height = d_height * math.hypot(cfg.height_spread, cfg.box_noise_px / box_px)
    w_contact, w_height = sd_contact**-2, sd_height**-2
    depth = (w_contact * d_contact + w_height * d_height) / (w_contact + w_height)
    return view.eye[:2] + ray[:2] * (depth / d_contact)


def _track_points(views: list[TrackView], track, recon: Reconstruction, cfg: PeopleCfg):
    """``(t, x, y, confidence)`` rows of a track's usable contacts in time order, and how many of its
    contacts the box height ruled out."""
    score = {o.frame_index: o.score for o in track.observations}
    rows, dropped = [], 0
    lo, hi = cfg.height_range_m
    for v in views:
        if not v.top_cut and not lo <= v.height <= hi:
            dropped += 1
            continue
        conf = contact_confidence(score[v.frame_index], v.eye, v.ground, v.top_cut)
        x, y = fused_position(v, recon.intrinsics.fy, cfg) if cfg.fuse_height else v.ground[:2]
        rows.append((recon.keyframes[v.frame_index].time_s, x, y, conf))
    rows.sort()
    return np.asarray(rows, dtype=float).reshape(-1, 4), dropped


def poses_at(recon: Reconstruction, times_s: tuple[float, ...]) -> Reconstruction:
    """``recon`` with one registered keyframe per time of ``times_s`` (index ``j`` at ``times_s[j]``):
    its camera interpolated between the registered keyframes around it (positions linearly, rotations
    by spherical interpolation); times outside the registered span get unregistered keyframes."""
    known = sorted(recon.registered, key=lambda k: k.time_s)
    t_known = np.array([k.time_s for k in known])
    poses = np.array([k.world_from_camera for k in known], dtype=float)
    if len(known) > 1:
        slerp = Slerp(t_known, Rotation.from_matrix(poses[:, :3, :3]))
    frames = []
    for j, t in enumerate(times_s):
        inside = len(known) > 0 and t_known[0] - 1e-6 <= t <= t_known[-1] + 1e-6
        if not inside:
            frames.append(make_pose(j, -1, t, "", None))
            continue
        m = poses[0].copy()
        if len(known) > 1:
            tc = float(np.clip(t, t_known[0], t_known[-1]))
            m[:3, :3] = slerp([tc]).as_matrix()[0]
            m[:3, 3] = [np.interp(tc, t_known, poses[:, a, 3]) for a in range(3)]
        frames.append(make_pose(j, -1, t, "", m))
    return dataclasses.replace(recon, keyframes=tuple(frames))


def lift_tracks(
    people: PeopleTracks, recon: Reconstruction, layout: GroundLayout, lift: LiftCfg, cfg: PeopleCfg
) -> LiftedPeople:
    """The person tracks of ``people`` as agents walking on the fitted ground, and their flow field;
    ``recon``'s cameras are interpolated to the tracked frames' times."""
    tracked = [t for t in people.tracks.tracks if _is_person(t)]
    if not tracked:
        return LiftedPeople(agents=())
    recon = poses_at(recon, people.times_s)
    support = street_support(layout, lift)
    masks = contact_masks(people.detections, lift)
    width, height = recon.intrinsics.width, recon.intrinsics.height
    view_cfg = dataclasses.replace(lift, max_distance_m=cfg.max_distance_m)
    agents: list[Agent] = []
    unplaced = cuts = short = hidden = 0
    for track in tracked:
        views = observation_views(track, recon, width, height, view_cfg, support.surface, masks)
        points, dropped = _track_points(views, track, recon, cfg)
        hidden += dropped
        if not len(points):
            unplaced += 1
            continue
        pieces = split_pieces(points[:, 0], points[:, 1:3], cfg)
        cuts += len(pieces) - 1
        for piece in pieces:
            if len(piece) < cfg.min_points:
                short += 1
                continue
            p = points[piece]
            xy = smooth_trajectory(p[:, 0], p[:, 1:3], p[:, 3], cfg.smooth_s)
            trajectory = np.column_stack([p[:, 0], xy])
            agent = make_agent(
                f"person_{len(agents):03d}",
                trajectory,
                p[:, 3],
                source_track=track.track_id,
                height=PERSON_HEIGHT_M,
            )
            if agent.speed_p90 <= cfg.max_speed_mps:
                agents.append(agent)
            else:  # smoothing could not make it one person's walk
                short += 1
    times = [k.time_s for k in recon.registered]
    return LiftedPeople(
        agents=tuple(agents),
        flow=flow_field(agents, watched_s=max(times) - min(times)) if agents else None,
        person_tracks=len(tracked),
        tracks_unplaced=unplaced,
        cuts=cuts,
        pieces_dropped=short,
        contacts_dropped=hidden,
    )


def lift_people(
    kfs: KeyframeSet,
    recon: Reconstruction,
    layout: GroundLayout,
    lift: LiftCfg,
    detection: DetectionCfg,
    tracking: TrackingCfg,
    cfg: PeopleCfg,
    stop: threading.Event | None = None,
) -> LiftedPeople:
    """The people of a video walking on its fitted ground: tracked every ``cfg.step_s`` over the span of
    the registered keyframes (:func:`track_people`), then lifted (:func:`lift_tracks`). Photos (no
    time) and a video whose camera was found in fewer than two keyframes give no agents."""
    times = [k.time_s for k in recon.registered]
    if not cfg.enabled or kfs.mode != "video" or len(times) < 2:
        return LiftedPeople(agents=())
    people = track_people(
        kfs, (min(times), max(times)), cfg.step_s, cfg.max_frames, detection, tracking, stop
    )
    return lift_tracks(people, recon, layout, lift, cfg)
