"""People in a scene: building :class:`~urbanverse.scene.record.Agent` records from timed ground points,
reading a trajectory at any time, and the flow field of how people walked.

Everything here works on trajectories already in the scene's frame (metres, seconds); where they come
from (a video's tracks, a generator) is the caller's business. Pure numpy.
"""

from __future__ import annotations

import numpy as np

from urbanverse.scene.record import Agent, FlowCell, FlowField

#: Side of a flow-field cell (m): about two people abreast, so a sidewalk is two to three cells wide.
FLOW_CELL_M = 1.0


def point_speeds(trajectory: np.ndarray) -> np.ndarray:
    """Speed (m/s) of each segment of a ``(T, 3)`` ``(t, x, y)`` trajectory, ``(T - 1,)``."""
    d = np.diff(trajectory, axis=0)
    return np.hypot(d[:, 1], d[:, 2]) / d[:, 0]


def make_agent(
    agent_id: str,
    trajectory: np.ndarray,
    confidence: np.ndarray,
    *,
    source_track: int | None = None,
    height: float = 1.7,
    radius: float = 0.3,
) -> Agent:
    """An ``Agent`` from ``(T, 3)`` ``(t, x, y)`` points (times strictly increasing) and ``(T,)``
    confidences, with its speed statistics (time-weighted mean and 90th percentile of the segments)."""
    traj = np.asarray(trajectory, dtype=float)
    speeds = point_speeds(traj)
    dt = np.diff(traj[:, 0])
    return Agent(
        id=agent_id,
        trajectory=tuple((round(t, 3), round(x, 3), round(y, 3)) for t, x, y in traj.tolist()),
        confidence=tuple(round(float(c), 3) for c in np.clip(confidence, 0.0, 1.0)),
        speed_mean=round(float(np.sum(speeds * dt) / np.sum(dt)), 3),
        speed_p90=round(float(np.percentile(speeds, 90)), 3),
        height=height,
        radius=radius,
        source_track=source_track,
    )


def position_at(agent: Agent, t: np.ndarray) -> np.ndarray:
    """The agent's ``(x, y)`` (m) at times ``t`` (s), linearly interpolated and held at the ends:
    ``(len(t), 2)``."""
    traj = np.asarray(agent.trajectory, dtype=float)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    return np.stack([np.interp(t, traj[:, 0], traj[:, 1]), np.interp(t, traj[:, 0], traj[:, 2])], axis=1)


def flow_field(
    agents: tuple[Agent, ...] | list[Agent], cell: float = FLOW_CELL_M, watched_s: float | None = None
) -> FlowField | None:
    """Where and how the ``agents`` walked, on a grid of ``cell`` m squares (None without agents).

    Each trajectory is resampled every 0.1 s; every sample adds its velocity to its cell and 0.1 s of
    presence. ``velocity`` is the mean velocity of a cell's samples, ``speed`` their mean speed, and
    ``density`` the person-seconds spent in the cell over ``watched_s`` (default: the span from the
    first agent's start to the last one's end) and over the cell's area: the mean number of people per
    m² while the video watched.
    """
    if not agents:
        return None
    step = 0.1
    samples = []
    for agent in agents:
        traj = np.asarray(agent.trajectory, dtype=float)
        t = np.arange(traj[0, 0], traj[-1, 0], step)
        if len(t) < 2:
            continue
        xy = position_at(agent, t)
        v = np.gradient(xy, step, axis=0)
        samples.append(np.concatenate([xy, v], axis=1))
    if not samples:
        return None
    s = np.concatenate(samples)
    starts = [a.trajectory[0][0] for a in agents]
    ends = [a.trajectory[-1][0] for a in agents]
    span = watched_s if watched_s is not None else max(ends) - min(starts)
    span = max(span, step)
    lo = np.floor(s[:, :2].min(axis=0) / cell) * cell - cell
    hi = s[:, :2].max(axis=0) + cell
    cols, rows = (int(n) for n in np.ceil((hi - lo) / cell))
    col = ((s[:, 0] - lo[0]) // cell).astype(int)
    row = ((s[:, 1] - lo[1]) // cell).astype(int)
    key = row * cols + col
    order = np.argsort(key, kind="stable")
    key, s = key[order], s[order]
    uniq, start, count = np.unique(key, return_index=True, return_counts=True)
    cells = []
    for k, i0, n in zip(uniq.tolist(), start.tolist(), count.tolist(), strict=True):
        chunk = s[i0 : i0 + n]
        v = chunk[:, 2:].mean(axis=0)
        speed = float(np.hypot(chunk[:, 2], chunk[:, 3]).mean())
        density = n * step / span / cell**2
        cells.append(
            FlowCell(
                row=k // cols,
                col=k % cols,
                velocity=(round(float(v[0]), 3), round(float(v[1]), 3)),
                speed=round(min(speed, 12.0), 3),
                density=round(min(density, 10.0), 4),
            )
        )
    return FlowField(
        origin=(round(float(lo[0]), 3), round(float(lo[1]), 3)),
        cell=cell,
        rows=int(rows),
        cols=int(cols),
        cells=tuple(cells),
    )


def flow_arrays(flow: FlowField) -> dict[str, np.ndarray]:
    """The flow field as dense grids: ``velocity`` ``(rows, cols, 2)`` m/s, ``speed`` and ``density``
    ``(rows, cols)`` (0 where nobody was seen), ``seen`` ``(rows, cols)`` bool."""
    velocity = np.zeros((flow.rows, flow.cols, 2), np.float32)
    speed = np.zeros((flow.rows, flow.cols), np.float32)
    density = np.zeros((flow.rows, flow.cols), np.float32)
    seen = np.zeros((flow.rows, flow.cols), bool)
    for c in flow.cells:
        velocity[c.row, c.col] = c.velocity
        speed[c.row, c.col] = c.speed
        density[c.row, c.col] = c.density
        seen[c.row, c.col] = True
    return {"velocity": velocity, "speed": speed, "density": density, "seen": seen}


#: One colour per agent (8-bit sRGB), cycled: distinct hues that stand out on grey roads and pavements.
AGENT_COLOURS = (
    (230, 25, 75),
    (60, 180, 75),
    (0, 130, 200),
    (245, 130, 48),
    (145, 30, 180),
    (70, 200, 220),
    (240, 50, 230),
    (170, 110, 40),
    (128, 0, 0),
    (0, 0, 128),
)


def agent_colour(index: int) -> tuple[int, int, int]:
    """The colour (8-bit sRGB) of the scene's ``index``-th agent, shared by the preview, the viewer
    and the USD proxies so that one person has one colour everywhere."""
    return AGENT_COLOURS[index % len(AGENT_COLOURS)]


def agent_headings(trajectory: np.ndarray) -> np.ndarray:
    """Walking heading (rad about +Z) at each point of a ``(T, 3)`` ``(t, x, y)`` trajectory: the
    direction between the neighbouring points, held through standstills (the first moving point's
    before it), unwrapped so that consecutive headings differ by less than pi (a turn interpolates
    the short way round). ``(T,)``."""
    xy = np.asarray(trajectory, dtype=float)[:, 1:3]
    if len(xy) < 2:
        return np.zeros(len(xy))
    step = np.gradient(xy, axis=0)
    moving = np.hypot(step[:, 0], step[:, 1]) > 1e-9
    if not moving.any():
        return np.zeros(len(xy))
    last_moving = np.maximum.accumulate(np.where(moving, np.arange(len(xy)), -1))
    last_moving[last_moving < 0] = int(np.argmax(moving))
    return np.unwrap(np.arctan2(step[:, 1], step[:, 0])[last_moving])
