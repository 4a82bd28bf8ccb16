"""Join a model of the keyframes a walk's model left out to that model, by the keyframes both hold.

A walk's model can break where the camera turns from a facade back to the street or crosses at a
corner: the global mapper's positions (or the incremental mapper's registrations) then put the rest of
the walk wrongly, and the plausibility check cuts it. That rest alone, with some of the good part's
keyframes before it, often maps well where the whole walk did not; ``urbanverse.recon.sfm`` maps such
pieces, this module joins them.

The join is a similarity transform from the piece's frame to the model's, taken from the keyframes both
hold: the rotation from their orientations (a walk's camera centres lie near a line, which leaves a
turn about that line free in a fit of centres alone), the scale from the spread of their centres and
the translation from their centroids. It holds when the shared centres then agree to a small share of
their spread; the piece's other keyframes then join the model.

Why by hand: COLMAP merges models only through images that both registered, with its own thresholds
and no say in which keyframes count; the transform is a few lines of numpy.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.spatial.transform import Rotation


@dataclasses.dataclass(frozen=True)
class Similarity:
    """``x -> scale * rotation @ x + translation`` (3D); ``error``: RMS distance of the shared camera
    centres after the transform over the RMS spread of the model's (a fraction)."""

    scale: float
    rotation: np.ndarray
    translation: np.ndarray
    error: float

    def apply_pose(self, wfc: np.ndarray) -> np.ndarray:
        """A camera-to-world pose ``(4, 4)`` of the piece in the model's frame (rotation kept orthonormal)."""
        out = np.eye(4)
        out[:3, :3] = self.rotation @ wfc[:3, :3]
        out[:3, 3] = self.scale * self.rotation @ wfc[:3, 3] + self.translation
        return out

    def apply_points(self, xyz: np.ndarray) -> np.ndarray:
        return self.scale * xyz @ self.rotation.T + self.translation


def unposed_runs(kept: set[int], count: int, min_length: int) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of at least ``min_length`` consecutive keyframes of ``0..count-1`` that
    are not in ``kept``."""
    runs, start = [], None
    for i in range(count + 1):
        missing = i < count and i not in kept
        if missing and start is None:
            start = i
        elif not missing and start is not None:
            if i - start >= min_length:
                runs.append((start, i - 1))
            start = None
    return runs


def shared_similarity(model: dict[int, np.ndarray], piece: dict[int, np.ndarray]) -> Similarity | None:
    """The transform taking the piece's poses onto the model's at the keyframes both hold (camera-to-
    world ``(4, 4)`` by keyframe index); None with fewer than three, or where the piece's shared centres
    do not spread (scale undefined)."""
    shared = sorted(set(model) & set(piece))
    if len(shared) < 3:
        return None
    # Rotation: the mean of the per-keyframe rotations model @ piece^T (chordal L2 mean).
    per = Rotation.from_matrix([model[k][:3, :3] @ piece[k][:3, :3].T for k in shared])
    rotation = per.mean().as_matrix()
    a = np.array([piece[k][:3, 3] for k in shared])
    b = np.array([model[k][:3, 3] for k in shared])
    a0, b0 = a - a.mean(axis=0), b - b.mean(axis=0)
    spread_a, spread_b = np.sqrt((a0**2).sum(axis=1).mean()), np.sqrt((b0**2).sum(axis=1).mean())
    if spread_a < 1e-9 or spread_b < 1e-9:
        return None
    # Least-squares scale given the rotation: argmin_s |s R a0 - b0|^2.
    rotated = a0 @ rotation.T
    scale = float((rotated * b0).sum() / (rotated**2).sum())
    if scale <= 0:
        return None
    translation = b.mean(axis=0) - scale * rotation @ a.mean(axis=0)
    residual = scale * a @ rotation.T + translation - b
    error = float(np.sqrt((residual**2).sum(axis=1).mean()) / spread_b)
    return Similarity(scale, rotation, translation, error)
