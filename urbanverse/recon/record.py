"""Records of the camera/reconstruction stage (``reconstruction.json`` + ``points.npz``).

World frame (what every later stage relies on): metres, right-handed, **Z up**, the fitted ground
plane is ``z = 0``, **X** points along the main direction of camera travel (for a static camera: the
first camera's viewing direction projected on the ground), and the origin is the point on the ground
below the first registered camera. Camera frames follow **OpenCV**: x right, y down, z forward
(optical axis). ``world_from_camera`` maps camera coordinates to world coordinates:
``p_w = R @ p_c + t`` with ``[[R, t], [0, 0, 0, 1]]`` stored as 4 rows of 4 numbers (row-major); ``t``
is the camera centre in the world.

Sparse points live in ``points.npz`` beside the JSON (arrays ``xyz`` (N, 3) float64 in the frame in
which they were written, ``rgb`` (N, 3) uint8, ``error_px`` (N,) float32 mean reprojection error,
``obs_offsets`` (N + 1,) int64 and ``obs_keyframes`` (M,) int32: the keyframe indices observing point
``i`` are ``obs_keyframes[obs_offsets[i]:obs_offsets[i + 1]]``). ``points_transform`` is a 4x4
similarity applied to ``xyz`` on loading, so :func:`urbanverse.recon.rescale` never rewrites the file.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from urbanverse.records import Vec3, Vec4, load_record, record, save_json
from urbanverse.video.record import CameraIntrinsics

RECON_SCHEMA_VERSION = 1
RECON_FILE = "reconstruction.json"
POINTS_FILE = "points.npz"

Mat4 = tuple[Vec4, Vec4, Vec4, Vec4]
IDENTITY4: Mat4 = ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0))

ReconMode = Literal["sfm", "vo", "single_view"]
ScaleSource = Literal["ground_plane", "camera_height_prior", "walking_speed_prior", "unit_baseline"]


@record
class KeyframePose:
    """One keyframe's camera. Unregistered keyframes have ``registered=False`` and no pose.

    ``position`` is the camera centre (m, world). ``yaw_rad`` is the heading of the optical axis
    projected on the ground, counter-clockwise from +X; ``pitch_rad`` its elevation (positive looking
    up); ``roll_rad`` the elevation of the camera's x (right) axis (positive: right side up, i.e. the
    camera turned counter-clockwise about its optical axis as seen from behind). Angles in radians.
    ``num_observations``: how many sparse points this keyframe observes.
    """

    index: int
    frame: int
    time_s: float
    image: str
    registered: bool
    world_from_camera: Mat4 | None = None
    position: Vec3 | None = None
    yaw_rad: float | None = None
    pitch_rad: float | None = None
    roll_rad: float | None = None
    num_observations: int = 0


@record
class GroundPlaneFit:
    """How the ground plane ``z = 0`` was found.

    ``method``: ``ransac`` (robust plane fit on sparse points below the cameras), ``up_prior`` (too
    few ground points: the normal is the camera path's up direction and the height comes from a prior),
    ``camera_prior`` (single view: the ground is where the camera-height prior puts it).
    ``num_candidates`` points were below the cameras; ``num_inliers`` lie within the inlier band;
    ``residual_m`` is their median distance to the plane (metres, after scaling). ``tilt_to_up_deg``
    is the angle between the fitted normal and the camera path's up prior. ``camera_height_m`` /
    ``camera_height_std_m``: mean / std of the registered cameras' heights above the plane.
    """

    method: Literal["ransac", "up_prior", "camera_prior"]
    num_candidates: int = 0
    num_inliers: int = 0
    residual_m: float = 0.0
    tilt_to_up_deg: float = 0.0
    camera_height_m: float
    camera_height_std_m: float = 0.0


@record
class Reconstruction:
    """Camera poses and sparse structure of one shot, metric and ground-aligned (see module docstring).

    ``mode``: ``sfm`` (pycolmap incremental SfM with bundle adjustment), ``vo`` (OpenCV two-view
    initialisation + PnP chaining, used when SfM fails), ``single_view`` (no parallax: static camera
    or stills; pose from the vertical vanishing point or a level-camera prior, at the height prior).
    ``scale_source``: ``ground_plane`` (mean camera height above the fitted plane set to the prior),
    ``camera_height_prior`` (single view), ``walking_speed_prior`` (no ground found: path length over
    time set to a walking speed), ``unit_baseline`` (nothing better: arbitrary units, warned).
    ``metric_scale`` multiplies reconstruction units into metres; :func:`rescale` multiplies it too.
    ``scale_history`` lists every factor applied after the stage (by ``rescale``).
    """

    schema_version: int = RECON_SCHEMA_VERSION
    mode: ReconMode
    intrinsics: CameraIntrinsics
    keyframes: tuple[KeyframePose, ...]
    ground: GroundPlaneFit
    scale_source: ScaleSource
    metric_scale: float
    camera_height_prior_m: float
    scale_history: tuple[float, ...] = ()
    points_file: str | None = None
    num_points: int = 0
    points_transform: Mat4 = IDENTITY4
    mean_reprojection_error_px: float = 0.0
    source_sha256: str = ""
    warnings: tuple[str, ...] = ()
    timings_s: dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def registered(self) -> tuple[KeyframePose, ...]:
        """The keyframes with a pose."""
        return tuple(k for k in self.keyframes if k.registered)


def save_reconstruction(recon: Reconstruction, work_dir: Path) -> Path:
    """Write ``work_dir/reconstruction.json`` atomically; returns the path."""
    path = Path(work_dir) / RECON_FILE
    save_json(recon, path)
    return path


def load_reconstruction(work_dir: Path) -> Reconstruction:
    """Read ``work_dir/reconstruction.json`` (``InputError`` naming the file if missing or invalid)."""
    return load_record(Reconstruction, Path(work_dir) / RECON_FILE)
