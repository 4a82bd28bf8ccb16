"""The camera stage of ``urbanverse gen``: poses and sparse points (pycolmap SfM, OpenCV visual odometry
or single view), ground plane, metric scale, in a Z-up ground-aligned world frame.

Entry point: :func:`run_recon` (``ReconCfg`` -> :class:`Reconstruction`, saved as
``reconstruction.json`` + ``points.npz``). Helpers: :func:`project`, :func:`pixel_rays`,
:func:`pixel_to_ground`, :func:`load_points`, :func:`rescale`; single view: :func:`calibrate_from_upright`
(pitch, height and focal from people) and :func:`repose_single_view`.
Conventions: :mod:`urbanverse.recon.record`.
"""

from urbanverse.recon.calibrate import UprightFit, calibrate_from_upright, repose_single_view
from urbanverse.recon.geometry import (
    SparsePoints,
    camera_positions,
    load_points,
    pixel_rays,
    pixel_to_ground,
    project,
    rescale,
    world_from_camera,
)
from urbanverse.recon.record import (
    POINTS_FILE,
    RECON_FILE,
    GroundPlaneFit,
    KeyframePose,
    Reconstruction,
    load_reconstruction,
    save_reconstruction,
)
from urbanverse.recon.stage import ReconCfg, run_recon

__all__ = [
    "POINTS_FILE",
    "RECON_FILE",
    "GroundPlaneFit",
    "KeyframePose",
    "ReconCfg",
    "Reconstruction",
    "SparsePoints",
    "UprightFit",
    "calibrate_from_upright",
    "camera_positions",
    "load_points",
    "load_reconstruction",
    "pixel_rays",
    "pixel_to_ground",
    "project",
    "repose_single_view",
    "rescale",
    "run_recon",
    "save_reconstruction",
    "world_from_camera",
]
