"""Round-trip scoring of people: a generated scene's ``agents`` against the true trajectories of a tour.

Frames: a blind run's agents are moved into the true scene's frame by the same rigid planar motion that
aligns its objects (:func:`urbanverse.bench.evaluate.planar_alignment`: its camera path onto the true
one); runs on the true camera poses are already in it. Times: both sides count seconds from the
video's first frame; a true person's position at any time is interpolated along its trajectory, so the
generated points need not fall on the true samples.

Scores:

- ``people_err_m``: per generated trajectory point (t, x, y), the planar distance (m) to the nearest
  true person at time t (among the people whose trajectories span t; points at times no true person
  spans are not scored); the median over the points.
- ``people_recall_1m``: the share of the true people seen (visible with ``min_pixels`` in at least
  ``min_frames`` frames) that a generated trajectory recovers: within ``radius_m`` of the person for at
  least ``min_share`` of its points at times the person's trajectory spans (with at least
  ``min_points`` such points).

Counts beside them: ``people_seen``, ``people_found``, ``people_generated`` (generated agents),
``people_points`` (scored points) and ``people_errors_m`` (every point's error, for pooling over tours).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from urbanverse.bench.evaluate import planar_alignment
from urbanverse.render.tour import TourGroundTruth
from urbanverse.scene.agents import position_at
from urbanverse.scene.record import Agent, Scene


def _moved(agent: Agent, transform: np.ndarray) -> np.ndarray:
    """The agent's ``(T, 3)`` ``(t, x, y)`` points with x, y moved by the 3x3 planar ``transform``."""
    traj = np.asarray(agent.trajectory, float)
    xy = traj[:, 1:] @ transform[:2, :2].T + transform[:2, 2]
    return np.column_stack([traj[:, 0], xy])


def _distances(points: np.ndarray, truth: tuple[Agent, ...]) -> np.ndarray:
    """``(T, P)`` planar distances (m) from points ``(T, 3)`` ``(t, x, y)`` to each true person at the
    points' times; infinite where a person's trajectory does not span the time."""
    out = np.full((len(points), len(truth)), np.inf)
    for j, person in enumerate(truth):
        span = (points[:, 0] >= person.trajectory[0][0]) & (points[:, 0] <= person.trajectory[-1][0])
        where = position_at(person, points[span, 0])
        out[span, j] = np.hypot(*(points[span, 1:] - where).T)
    return out


def seen_people(tour: TourGroundTruth, min_pixels: int, min_frames: int) -> set[str]:
    """Ids of the true people visible with ``min_pixels`` pixels or more in ``min_frames`` frames or more."""
    frames = Counter(p.agent_id for f in tour.frames for p in f.people if p.pixels >= min_pixels)
    return {agent_id for agent_id, n in frames.items() if n >= min_frames}


def people_scores(
    generated: Scene,
    tour: TourGroundTruth,
    aligned: bool = False,
    *,
    min_pixels: int = 2000,
    min_frames: int = 5,
    radius_m: float = 1.0,
    min_share: float = 0.5,
    min_points: int = 2,
) -> dict:
    """Scores of ``generated.agents`` against ``tour.agents`` (module docstring); ``aligned``: the
    generated scene is already in the true frame. NaN where a score has nothing to count."""
    transform = np.eye(3) if aligned else planar_alignment(generated, tour)
    truth = tour.agents
    seen = seen_people(tour, min_pixels, min_frames)
    errors: list[float] = []
    found: set[str] = set()
    for agent in generated.agents if truth else ():
        distance = _distances(_moved(agent, transform), truth)
        nearest = distance.min(axis=1)
        errors += nearest[np.isfinite(nearest)].tolist()
        for j, person in enumerate(truth):
            spanned = np.isfinite(distance[:, j])
            if spanned.sum() >= min_points and (distance[spanned, j] <= radius_m).mean() >= min_share:
                found.add(person.id)
    recovered = found & seen
    return {
        "people_err_m": float(np.median(errors)) if errors else math.nan,
        "people_recall_1m": len(recovered) / len(seen) if seen else math.nan,
        "people_seen": len(seen),
        "people_found": len(recovered),
        "people_generated": len(generated.agents),
        "people_points": len(errors),
        "people_errors_m": errors,
    }
