"""Heights above the ground the walk followed, not above the plane z = 0 alone.

A walker carries the camera at one height above the pavement, so where the cameras within a window
of a keyframe (``window_m`` of walk) stand higher above the fitted ground plane than the walk's
median, the ground there lies that much higher (a reconstruction bent by a few tenths of a degree,
or a street on a slope), and so do the points nearest to those keyframes. The cameras' height above
the fitted plane can vary by decimetres along a walk though the true height is constant; measured
from the plane alone, a bollard by a street crossing comes out too short, and a raised sidewalk joins
the furniture on it (:mod:`urbanverse.layout.proposals`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import scipy.spatial

from urbanverse.recon.depth import DenseCloud
from urbanverse.recon.record import Reconstruction


def walked_ground(cameras: np.ndarray, window_m: float) -> Callable[[np.ndarray], np.ndarray]:
    """``f(xy (N, 2)) -> (N,)``: the height (m) above the plane z = 0 of the ground the walk followed,
    at its nearest camera of ``cameras (K, 3)``: how far the cameras within ``window_m`` of that one
    stand above the plane beyond their median over the walk (module docstring); 0 everywhere where
    ``window_m`` is 0 or there are under two cameras."""
    if window_m <= 0 or len(cameras) < 2:
        return lambda xy: np.zeros(len(xy))
    near = np.linalg.norm(cameras[:, None, :2] - cameras[None, :, :2], axis=2) < window_m
    raised = np.array([np.median(cameras[row, 2]) for row in near]) - np.median(cameras[:, 2])
    tree = scipy.spatial.cKDTree(cameras[:, :2])
    return lambda xy: raised[tree.query(np.asarray(xy).reshape(-1, 2))[1]]


def above_ground(cloud: DenseCloud, ground: Callable[[np.ndarray], np.ndarray]) -> DenseCloud:
    """``cloud`` with each point's height measured from ``ground(xy)`` rather than z = 0."""
    lift = np.c_[np.zeros((len(cloud.xyz), 2)), ground(cloud.xyz[:, :2])]
    return dataclasses.replace(cloud, xyz=cloud.xyz - lift)


def levelled(cloud: DenseCloud, recon: Reconstruction, window_m: float) -> DenseCloud:
    """``cloud`` with heights measured from the ground the walk of ``recon``'s registered cameras
    followed (:func:`walked_ground` over ``window_m``)."""
    cameras = np.array([k.position for k in recon.registered]).reshape(-1, 3)
    return above_ground(cloud, walked_ground(cameras, window_m))
