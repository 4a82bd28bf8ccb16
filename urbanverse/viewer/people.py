"""The people seen walking in a scene, as the viewer draws and animates them: plain data (numpy,
trimesh), no viser, so it is testable alone.

World frame as in ``scene.json``: metres, Z-up, times in seconds from the video's start. Each person
stands on the ground top under its ``(x, y)``, faces its walking heading
(:func:`urbanverse.scene.agents.agent_headings`) and has its colour everywhere
(:func:`urbanverse.scene.agents.agent_colour`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import trimesh

from urbanverse.scene.agents import agent_colour, agent_headings
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.record import Scene

#: Height and radius (m) of the body mesh every person's instance scales (the Agent record's defaults).
BODY_HEIGHT_M, BODY_RADIUS_M = 1.7, 0.3
#: Edge (m) of the box at the front of the head that shows which way a person faces.
FACE_M = 0.14


@dataclass(frozen=True)
class PeopleTracks:
    """A scene's agents, in ``scene.agents`` order: ``ids``, ``colours`` ``(N, 3)`` uint8 sRGB,
    ``heights`` and ``radii`` ``(N,)`` m, and ``tracks``: per person ``(T, 5)`` rows of ``t`` (s),
    ``x, y, z`` (m; z the ground top) and heading (rad about +Z, unwrapped). ``start_s`` / ``end_s``:
    the span from the first person's first point to the last one's last."""

    ids: tuple[str, ...]
    colours: np.ndarray
    heights: np.ndarray
    radii: np.ndarray
    tracks: tuple[np.ndarray, ...]
    start_s: float
    end_s: float

    @property
    def count(self) -> int:
        return len(self.ids)

    def loop_time(self, t: float) -> float:
        """``t`` (s) wrapped into ``[start_s, end_s]`` (the animation loops over the span)."""
        span = self.end_s - self.start_s
        return self.start_s if span <= 0 else self.start_s + (t - self.start_s) % span

    def poses_at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where everyone is at time ``t`` (s): positions ``(N, 3)`` (m, feet on the ground), orientations
        ``(N, 4)`` quaternions (w, x, y, z) of the heading, and ``present`` ``(N,)`` bool: whether ``t``
        lies within the person's trajectory (outside it, the position is held at the nearest end)."""
        positions = np.empty((self.count, 3))
        wxyz = np.zeros((self.count, 4))
        present = np.empty(self.count, bool)
        for i, track in enumerate(self.tracks):
            times = track[:, 0]
            positions[i] = [np.interp(t, times, track[:, k]) for k in (1, 2, 3)]
            heading = float(np.interp(t, times, track[:, 4]))
            wxyz[i, 0], wxyz[i, 3] = math.cos(heading / 2), math.sin(heading / 2)
            present[i] = times[0] <= t <= times[-1]
        return positions, wxyz, present

    def path_segments(self, lift: float) -> tuple[np.ndarray, np.ndarray]:
        """Everyone's path as line segments ``(S, 2, 3)`` float32, ``lift`` m above the ground under
        them, and each segment end's colour ``(S, 2, 3)`` uint8 (the person's)."""
        segments, colours = [], []
        for track, colour in zip(self.tracks, self.colours, strict=True):
            points = track[:, 1:4] + np.array([0.0, 0.0, lift])
            segments.append(np.stack([points[:-1], points[1:]], axis=1))
            colours.append(np.broadcast_to(colour, (len(points) - 1, 2, 3)))
        if not segments:
            return np.zeros((0, 2, 3), np.float32), np.zeros((0, 2, 3), np.uint8)
        return np.concatenate(segments).astype(np.float32), np.concatenate(colours).astype(np.uint8)

    def body_scales(self, present: np.ndarray) -> np.ndarray:
        """Per-axis scales ``(N, 3)`` of :func:`body_mesh` for each person's radius and height; zero for
        those not ``present`` (hidden)."""
        scales = np.stack(
            [self.radii / BODY_RADIUS_M, self.radii / BODY_RADIUS_M, self.heights / BODY_HEIGHT_M], axis=1
        )
        return scales * present[:, None]


def people_tracks(scene: Scene) -> PeopleTracks | None:
    """The scene's agents as :class:`PeopleTracks` (None when the scene has none)."""
    if not scene.agents:
        return None
    tracks = []
    for agent in scene.agents:
        traj = np.asarray(agent.trajectory, dtype=float)
        ground = top_height_at(scene.ground, traj[:, 1:3])
        tracks.append(np.column_stack([traj, ground, agent_headings(traj)]))
    return PeopleTracks(
        ids=tuple(a.id for a in scene.agents),
        colours=np.array([agent_colour(i) for i in range(len(scene.agents))], np.uint8),
        heights=np.array([a.height for a in scene.agents], float),
        radii=np.array([a.radius for a in scene.agents], float),
        tracks=tuple(tracks),
        start_s=min(float(t[0, 0]) for t in tracks),
        end_s=max(float(t[-1, 0]) for t in tracks),
    )


def body_mesh() -> trimesh.Trimesh:
    """A person's proxy body facing +X: a capsule ``BODY_HEIGHT_M`` tall of radius ``BODY_RADIUS_M``,
    standing on z = 0, with a small box at the front of its head."""
    capsule = trimesh.creation.capsule(
        height=BODY_HEIGHT_M - 2 * BODY_RADIUS_M, radius=BODY_RADIUS_M, count=[8, 8]
    )
    capsule.apply_translation([0.0, 0.0, BODY_HEIGHT_M / 2])
    face = trimesh.creation.box([FACE_M, FACE_M, FACE_M])
    face.apply_translation([BODY_RADIUS_M, 0.0, BODY_HEIGHT_M - BODY_RADIUS_M])
    return trimesh.util.concatenate([capsule, face])
