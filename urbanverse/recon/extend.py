"""Register the keyframes a model left out by chaining along the ground plane.

Incremental SfM loses the camera where a walk turns on the spot or crosses a low-texture plaza, and
keeps the largest of its models: a walk's tail or head then has no poses. But once a model is
metric and ground-aligned, the ground itself is a known 3D structure: a pixel of a registered
keyframe below the horizon sees the point where its ray meets ``z = 0``. Corners tracked from a
registered keyframe into its unregistered neighbour (OpenCV pyramidal Lucas-Kanade, checked
forward and backward) then give 3D-2D matches, and ``cv2.solvePnPRansac`` the neighbour's pose.
Pixels that are not ground (a facade's foot, a bollard) are RANSAC outliers; the tracks that,
triangulated between the two poses, stand off the plane (the road below a kerb) are left out of a
final PnP. The new pose is kept when enough matches agree, the camera stays near the walking
height, it moved a walking step, and the ground of the two keyframes, warped onto each other by the
two poses, lines up (tracks on a smooth or repeating pavement can agree on a wrong step); then its
own neighbour is tried, outward from each registered run, until a check fails.

From a video, the corners are followed frame by frame through the video frames between the two
keyframes (about ``track_fps``): where the walk turns, keyframes crowd but still lie up to two
metres and tens of degrees apart, and a single jump that long loses the tracks, locks them onto the
wrong repeat of a paving, or slides them along zebra stripes that run with the walk. Between
keyframes alone (a folder of photos), tracks start where the walk's pace puts them, and where the
camera stood still while that pace says it walked on, the rest of the view must stand still too
(ground seen in a narrow band ahead cannot tell a step from a nod).

Why by hand: OpenCV gives the tracking, the triangulation and the PnP; casting pixels to a fitted
ground plane and the chaining are this project's (COLMAP registers new images only against its own
triangulated points, which these keyframes lack).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import cv2
import numpy as np

from urbanverse.recon.geometry import (
    cast_to_ground,
    make_pose,
    opencv_from_pose,
    plane_homography,
    pose_from_opencv,
    project_with,
    triangulate,
)
from urbanverse.recon.record import Reconstruction


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtendCfg:
    """Settings of chaining left-out keyframes along the ground plane (:func:`extend_by_ground`).
    Pixels at the working resolution, lengths in metres."""

    enabled: bool = True
    """Chain the keyframes a model left out (a walk's turning stretches, its head or tail) from their
    registered neighbours; ``--set recon.extend.enabled=false`` turns it off."""
    max_corners: int = 1500
    """Corners tracked from a registered keyframe's ground (the strongest, OpenCV
    ``goodFeaturesToTrack``): enough 3D-2D matches for PnP after RANSAC and the checks."""
    max_ground_m: float = 8.0
    """Only ground within this distance (m) of the camera gives matches: farther, a small plane error
    moves a pixel's ground point by much."""
    max_track_error_px: float = 1.0
    """Forward-backward check of the corner tracks: back-tracked, a corner must land within this (px)
    of where it started."""
    reprojection_px: float = 4.0
    """RANSAC inlier threshold (px) of the PnP: ground is only nearly flat, so a few pixels are allowed."""
    min_inliers: int = 60
    """Fewest tracked ground corners and PnP inliers (and flat tracks for the final pose) to pose a
    keyframe: fewer cannot tell a right pose from one that fits by chance."""
    min_inlier_share: float = 0.4
    """PnP inliers must also be at least this share of the tracked corners: a pose most tracks disagree
    with is wrong."""
    height_tolerance: float = 0.25
    """The new camera's height above the ground may differ from the registered one's by this fraction:
    a walking camera keeps its height."""
    max_step_m: float = 3.0
    """Largest distance (m) between the two keyframes' cameras: longer is no walking step."""
    min_ground_ncc: float = 0.5
    """Least normalised cross-correlation of the two keyframes' ground, warped onto each other by the
    two poses (and of the view off the ground for a stop): tracks on a smooth or repeating pavement can
    agree on a wrong step, the images then do not line up."""
    min_paced_m: float = 0.2
    """The stop check runs only where the walk's pace predicts a step of at least this (m)."""
    stop_share: float = 0.5
    """A step shorter than this share of the paced one is a stop, kept only where the view off the
    ground, turned by the rotation alone, correlates as well: ground seen in a narrow band ahead
    cannot tell a step from a nod."""
    plane_tolerance_m: float = 0.07
    """Tracks triangulated farther than this off the plane are left out of b's final pose; 0: off."""
    track_fps: float = 10.0
    """Video frames between two keyframes are tracked through at about this rate (0: keyframes only)."""
    segment_frames: int = 5
    """A gap of more video frames is crossed in about equal segments of at most this many, each
    posed and checked in turn (its last frame's pose starts the next)."""
    max_video_frames: int = 1500
    """At most this many video frames (about 0.5 MB each at 960 x 540) are held; more gaps to cross
    thin the rate."""


def video_frames_wanted(recon: Reconstruction, fps: float, p: ExtendCfg) -> list[int]:
    """Indices of the video frames (at about ``track_fps``) between each unregistered keyframe and its
    neighbours: what :func:`extend_by_ground` tracks through. Empty when chaining is off."""
    kfs = recon.keyframes
    if not p.enabled or p.track_fps <= 0 or all(kf.registered for kf in kfs):
        return []
    gaps = [
        (kfs[i].frame, kfs[i + 1].frame)
        for i in range(len(kfs) - 1)
        if not (kfs[i].registered and kfs[i + 1].registered)
    ]
    stride = max(1, round(fps / p.track_fps))
    while True:
        wanted = sorted({f for lo, hi in gaps for f in range(lo, hi + 1, stride)} | {hi for _, hi in gaps})
        if len(wanted) <= p.max_video_frames:
            return wanted
        stride *= 2


def _ground_points(m: np.ndarray, k: np.ndarray, uv: np.ndarray, max_ground_m: float) -> np.ndarray:
    """Where the rays through pixels ``uv (N, 2)`` of the camera ``m`` meet the ground ``z = 0``; NaN
    rows above the horizon or farther than ``max_ground_m`` from the camera along the ground."""
    points = cast_to_ground(m, k, uv)
    points[np.linalg.norm(points[:, :2] - m[:3, 3][:2], axis=1) > max_ground_m] = np.nan
    return points


def _track(
    grays: list[np.ndarray], uv_a: np.ndarray, guess: np.ndarray, p: ExtendCfg
) -> tuple[np.ndarray, np.ndarray]:
    """Corners ``uv_a (N, 2)`` of ``grays[0]`` followed into ``grays[-1]``: ``(uv_b (N, 2), good (N,))``,
    ``good`` where every hop tracked forward and back within ``max_track_error_px``.

    Between two keyframes alone, tracks start at ``guess (N, 2)`` (where the walk's pace puts them:
    paving and zebra stripes repeat, and tracks started at a's pixels lock onto the nearest repeat
    when the camera walked a metre or more), with a wide window and a deep pyramid for turns.
    Through video frames, each hop is small and starts where the last one ended."""
    if len(grays) == 2:
        lk = {"winSize": (31, 31), "maxLevel": 5}
        starts = [guess]
    else:
        lk = {"winSize": (21, 21), "maxLevel": 3}
        starts = [None] * (len(grays) - 1)
    hops = zip(grays[:-1], grays[1:], starts, strict=True)
    uv = uv_a.astype(np.float32).reshape(-1, 1, 2)
    good = np.ones(len(uv_a), bool)
    for a, b, start in hops:
        flags = cv2.OPTFLOW_USE_INITIAL_FLOW if start is not None else 0
        nxt, ok, _ = cv2.calcOpticalFlowPyrLK(a, b, uv, start, flags=flags, **lk)
        back, ok_back, _ = cv2.calcOpticalFlowPyrLK(b, a, nxt, None, **lk)
        good &= ok.ravel().astype(bool) & ok_back.ravel().astype(bool)
        good &= np.linalg.norm(back - uv, axis=2).ravel() < p.max_track_error_px
        uv = nxt
    return uv.reshape(-1, 2), good


@dataclasses.dataclass(frozen=True)
class _Walk:
    """What every chaining step shares: the intrinsics ``k (3, 3)``, the camera's height above the
    ground plane (m) and the thresholds."""

    k: np.ndarray
    height_m: float
    p: ExtendCfg


def _step(m_a: np.ndarray, predicted: np.ndarray, grays: list[np.ndarray], walk: _Walk) -> np.ndarray | None:
    """The 4x4 world_from_camera of keyframe b from the registered keyframe a (``m_a``), or None.
    ``grays``: a's image, the video frames between (if any) and b's; ``predicted``: b's pose if the
    walk kept its pace."""
    k, height_m, p = walk.k, walk.height_m, walk.p
    gray_a, gray_b = grays[0], grays[-1]
    h, w = gray_a.shape
    rows, cols = np.mgrid[0:h:4, 0:w:4]
    seen = np.isfinite(_ground_points(m_a, k, np.c_[cols.ravel(), rows.ravel()] + 0.5, p.max_ground_m)[:, 0])
    mask = cv2.resize(seen.reshape(rows.shape).astype(np.uint8), (w, h), interpolation=cv2.INTER_NEAREST)
    corners = cv2.goodFeaturesToTrack(gray_a, p.max_corners, 0.001, 5, mask=mask)
    if corners is None:
        return None
    uv_a = corners.reshape(-1, 2)
    ground = _ground_points(m_a, k, uv_a.astype(float), p.max_ground_m)
    on_ground = np.isfinite(ground[:, 0])
    uv_a, ground = uv_a[on_ground], ground[on_ground]
    if len(uv_a) < p.min_inliers:
        return None
    guess = project_with(predicted, k, ground)[0].astype(np.float32).reshape(-1, 1, 2)
    uv_b, good = _track(grays, uv_a, guess, p)
    if good.sum() < p.min_inliers:
        return None
    rvec, tvec = opencv_from_pose(predicted)
    found, rvec, tvec, inliers = cv2.solvePnPRansac(
        ground[good], uv_b[good].astype(float), k, None, rvec, tvec,
        useExtrinsicGuess=True, iterationsCount=200, reprojectionError=p.reprojection_px,
        confidence=0.999, flags=cv2.SOLVEPNP_ITERATIVE,
    )  # fmt: skip
    if not found or inliers is None or len(inliers) < max(p.min_inliers, p.min_inlier_share * good.sum()):
        return None
    m_b = pose_from_opencv(rvec, tvec)
    if p.plane_tolerance_m > 0:
        refined = _on_walked_plane(m_a, m_b, uv_a[good], uv_b[good], ground[good], walk)
        m_b = m_b if refined is None else refined
    if abs(m_b[2, 3] / height_m - 1.0) > p.height_tolerance:
        return None
    step, paced = np.linalg.norm(m_b[:3, 3] - m_a[:3, 3]), np.linalg.norm(predicted[:3, 3] - m_a[:3, 3])
    if step > p.max_step_m:
        return None
    ground = mask.astype(bool)
    if not _ground_agreement(m_a, m_b, gray_a, gray_b, k, ground) >= p.min_ground_ncc:
        return None  # (NaN, too little ground seen twice, fails too)
    if len(grays) == 2 and paced >= p.min_paced_m and step < p.stop_share * paced:
        # Ground seen in a narrow band ahead cannot tell a step forward from a nod: on a crosswalk
        # whose stripes run along the walk, PnP kept the camera still while it walked a metre. A stop
        # holds only where the rest of the view, turned by the rotation alone, lines up too. (Tracks
        # followed through the video frames do not slide: a real stop there, where the camera still
        # drifts a few centimetres and near objects shift, is kept.)
        if not _still_agreement(m_a, m_b, gray_a, gray_b, k, ground) >= p.min_ground_ncc:
            return None
    return m_b


def _chain(m_a: np.ndarray, predicted: np.ndarray, grays: list[np.ndarray], walk: _Walk) -> np.ndarray | None:
    """:func:`_step` across the images ``grays`` (a's, the video frames between, b's) in segments of at
    most ``segment_frames`` hops: over a long gap, ground corners leave the view, and the ground
    check, which compares the two ends, grows blind to a pose a few centimetres off."""
    hops = len(grays) - 1
    ends = np.linspace(0, hops, -(-hops // max(1, walk.p.segment_frames)) + 1).round().astype(int)
    m = m_a
    for start, end in zip(ends, ends[1:], strict=False):
        paced = m.copy()
        paced[:3, 3] += (predicted[:3, 3] - m_a[:3, 3]) * (end - start) / hops
        m = _step(m, paced, grays[start : end + 1], walk)
        if m is None:
            return None
    return m


def _on_walked_plane(
    m_a: np.ndarray,
    m_b: np.ndarray,
    uv_a: np.ndarray,
    uv_b: np.ndarray,
    ground: np.ndarray,
    walk: _Walk,
) -> np.ndarray | None:
    """b's pose re-solved from the tracks that lie on the walked plane, or None.

    ``uv_a``, ``uv_b`` ``(N, 2)``: the tracks in a and b; ``ground (N, 3)``: their points cast from a
    onto ``z = 0``. A sidewalk walker sees the road 0.15 m lower, cast onto the plane too close to
    the camera; the first pose is a compromise between the two levels. Triangulated between the two
    poses, such tracks stand off the plane; PnP runs again on those within ``plane_tolerance_m``."""
    k, p = walk.k, walk.p
    flat = np.abs(triangulate(k, m_a, m_b, uv_a, uv_b)[:, 2]) < p.plane_tolerance_m
    if flat.sum() < p.min_inliers:
        return None
    rvec, tvec = opencv_from_pose(m_b)
    found, rvec, tvec = cv2.solvePnP(
        ground[flat], uv_b[flat].astype(float), k, None, rvec, tvec,
        useExtrinsicGuess=True, flags=cv2.SOLVEPNP_ITERATIVE,
    )  # fmt: skip
    return pose_from_opencv(rvec, tvec) if found else None


def _ground_agreement(
    m_a: np.ndarray,
    m_b: np.ndarray,
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    k: np.ndarray,
    ground: np.ndarray,
) -> float:
    """Normalised cross-correlation of the fine texture of keyframe a's ground pixels (``ground (H, W)``
    bool) and keyframe b warped onto them by the ground homography of the two poses
    (:func:`_texture_agreement`).

    Tracks on a smooth or repeating pavement can all agree on a wrong step; the warp of the whole
    ground then misaligns its texture, which this measures.
    """
    return _texture_agreement(plane_homography(m_a, m_b, k), gray_a, gray_b, ground)


def _still_agreement(
    m_a: np.ndarray,
    m_b: np.ndarray,
    gray_a: np.ndarray,
    gray_b: np.ndarray,
    k: np.ndarray,
    ground: np.ndarray,
) -> float:
    """The agreement of keyframe a's pixels off the ground (``~ground``) with keyframe b warped onto
    them by the two poses' rotation alone (the homography of the plane at infinity): high where the
    camera stood still, low where it walked (facades and posts shift with parallax)."""
    h_ab = k @ m_b[:3, :3].T @ m_a[:3, :3] @ np.linalg.inv(k)
    return _texture_agreement(h_ab, gray_a, gray_b, ~ground)


def _texture_agreement(h_ab: np.ndarray, gray_a: np.ndarray, gray_b: np.ndarray, use: np.ndarray) -> float:
    """Normalised cross-correlation of the fine texture (minus a 5 px blur) of keyframe a's pixels
    ``use (H, W)`` and keyframe b warped onto them by the homography ``h_ab`` (a's pixels to b's);
    NaN (no evidence) where b sees under 1000 of them."""
    h, w = gray_a.shape
    warped = cv2.warpPerspective(gray_b, h_ab, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    inside = cv2.warpPerspective(
        np.ones_like(gray_b), h_ab, (w, h), flags=cv2.INTER_NEAREST | cv2.WARP_INVERSE_MAP
    ).astype(bool)
    use = use & inside
    if use.sum() < 1000:
        return float("nan")
    fine_a = gray_a.astype(float) - cv2.GaussianBlur(gray_a.astype(float), (0, 0), 5)
    fine_b = warped.astype(float) - cv2.GaussianBlur(warped.astype(float), (0, 0), 5)
    a, b = fine_a[use], fine_b[use]
    return float(a @ b / max(np.sqrt((a @ a) * (b @ b)), 1e-9))


def _predict(keyframes, a: int, b: int, direction: int) -> np.ndarray:
    """b's pose if the camera kept a's orientation and the pace between a and its registered
    neighbour before it (a's own position where there is none)."""
    m_a = np.array(keyframes[a].world_from_camera, dtype=float)
    before = a - direction
    out = m_a.copy()
    if 0 <= before < len(keyframes) and keyframes[before].registered:
        c_before = np.asarray(keyframes[before].position)
        dt = keyframes[a].time_s - keyframes[before].time_s
        if abs(dt) > 1e-6:
            out[:3, 3] += (m_a[:3, 3] - c_before) / dt * (keyframes[b].time_s - keyframes[a].time_s)
    return out


def _nearer_to_left(registered: list[bool]) -> set[int]:
    """The unregistered keyframes nearer (in keyframes; ties included) to the registered one before
    them than to the one after them, or with none after them."""
    out: set[int] = set()
    left = None
    for i, is_registered in enumerate(registered):
        if is_registered:
            left = i
        elif left is not None:
            right = next((j for j in range(i + 1, len(registered)) if registered[j]), None)
            if right is None or i - left <= right - i:
                out.add(i)
    return out


def extend_by_ground(
    recon: Reconstruction,
    image_dir: Path,
    p: ExtendCfg | None = None,
    video: Mapping[int, np.ndarray] | None = None,
) -> tuple[Reconstruction, list[int]]:
    """``recon`` with its unregistered keyframes chained from their registered neighbours (module
    docstring), and the indices newly registered. Keyframe images are read from ``image_dir``;
    ``video`` maps frame indices to grey-scale frames at the keyframes' size
    (:func:`video_frames_wanted` says which), tracked through between keyframes."""
    p = p or ExtendCfg()
    keyframes = list(recon.keyframes)
    if not p.enabled or not any(kf.registered for kf in keyframes) or all(kf.registered for kf in keyframes):
        return recon, []
    walk = _Walk(recon.intrinsics.matrix(), recon.ground.camera_height_m, p)
    grays: dict[int, np.ndarray] = {}

    def gray(i: int) -> np.ndarray:
        if i not in grays:
            grays[i] = cv2.imread(str(image_dir / keyframes[i].image), cv2.IMREAD_GRAYSCALE)
        return grays[i]

    frames = sorted((video or {}).keys())
    # A gap between two registered runs is chained from both ends, each taking the keyframes nearer
    # to it (drift grows with the chain), then each end tries the rest where the other stopped.
    left_half = _nearer_to_left([kf.registered for kf in keyframes])
    added: list[int] = []
    for direction, halves in ((1, True), (-1, False), (1, False)):
        order = range(len(keyframes)) if direction == 1 else range(len(keyframes) - 1, -1, -1)
        for b in order:
            a = b - direction
            if keyframes[b].registered or not 0 <= a < len(keyframes) or not keyframes[a].registered:
                continue
            if halves and b not in left_half:
                continue
            m_a = np.array(keyframes[a].world_from_camera, dtype=float)
            lo, hi = sorted((keyframes[a].frame, keyframes[b].frame))
            between = [f for f in frames if lo < f < hi][::direction]
            sequence = [gray(a), *(video[f] for f in between), gray(b)]
            m_b = _chain(m_a, _predict(keyframes, a, b, direction), sequence, walk)
            if m_b is None:
                continue
            kf = keyframes[b]
            keyframes[b] = make_pose(kf.index, kf.frame, kf.time_s, kf.image, m_b)
            added.append(b)
    return dataclasses.replace(recon, keyframes=tuple(keyframes)), sorted(added)
