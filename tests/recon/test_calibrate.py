"""Single-view calibration from upright objects (people) of known height, and re-posing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from urbanverse.recon import GroundPlaneFit, Reconstruction
from urbanverse.recon.calibrate import calibrate_from_upright, repose_single_view
from urbanverse.recon.geometry import make_pose, project
from urbanverse.recon.single_view import camera_up_from_angles, world_from_camera_up
from urbanverse.video import CameraIntrinsics


def _single_view(intr: CameraIntrinsics, pitch: float, height: float, n: int = 3) -> Reconstruction:
    m = world_from_camera_up(camera_up_from_angles(pitch), height)
    poses = tuple(make_pose(i, 10 * i, float(i), f"kf{i}.jpg", m) for i in range(n))
    return Reconstruction(
        mode="single_view",
        intrinsics=intr,
        keyframes=poses,
        ground=GroundPlaneFit(method="camera_prior", camera_height_m=height),
        scale_source="camera_height_prior",
        metric_scale=1.0,
        camera_height_prior_m=height,
    )


def _people(truth: Reconstruction, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Feet pixels and head rows (1 px noise) of 25 people 1.7 +- 0.07 m tall standing in view."""
    # People standing on the ground where the camera sees them (feet and head inside the image).
    feet_uv, top_v = [], []
    while len(feet_uv) < 25:
        p = np.array([rng.uniform(1, 40), rng.uniform(-15, 15), 0.0])
        tall = rng.normal(1.7, 0.07)
        uv, depth = project(truth, 0, np.stack([p, p + [0, 0, tall]]))
        if (depth > 0).all() and (0 <= uv[:, 0]).all() and (uv[:, 0] < 768).all() and (0 <= uv[:, 1]).all():
            if (uv[:, 1] < 576).all():
                feet_uv.append(uv[0] + rng.normal(0, 1.0, 2))
                top_v.append(uv[1, 1] + rng.normal(0, 1.0))
    return np.array(feet_uv), np.array(top_v)


@pytest.mark.parametrize(("pitch_deg", "height_m"), [(-25.0, 4.0), (-8.0, 1.6), (-45.0, 9.0)])
def test_people_give_pitch_and_height(pitch_deg: float, height_m: float) -> None:
    intr = CameraIntrinsics.from_hfov(768, 576, 60.0)
    truth = _single_view(intr, math.radians(pitch_deg), height_m)
    feet_uv, top_v = _people(truth, np.random.default_rng(0))
    fit = calibrate_from_upright(feet_uv, top_v, 1.7, intr)
    assert fit is not None and fit.num_objects == 25
    assert abs(math.degrees(fit.pitch_rad) - pitch_deg) < 1.5
    assert fit.camera_height_m == pytest.approx(height_m, rel=0.08)
    assert fit.residual_px < 3.0

    prior = _single_view(intr, math.radians(-5.0), 1.6)
    fixed = repose_single_view(prior, fit.pitch_rad, fit.camera_height_m, roll_rad=0.0)
    for kf in fixed.keyframes:
        assert kf.position == pytest.approx((0.0, 0.0, fit.camera_height_m))
        assert kf.pitch_rad == pytest.approx(fit.pitch_rad) and kf.yaw_rad == pytest.approx(0.0, abs=1e-9)
    rolled = repose_single_view(prior, fit.pitch_rad, fit.camera_height_m, roll_rad=math.radians(3.0))
    assert rolled.keyframes[0].roll_rad == pytest.approx(math.radians(3.0), abs=math.radians(0.2))


@pytest.mark.parametrize(("pitch_deg", "true_hfov"), [(-20.0, 30.0), (-35.0, 80.0)])
def test_people_and_vanishing_point_give_the_focal_length(pitch_deg: float, true_hfov: float) -> None:
    true_intr = CameraIntrinsics.from_hfov(768, 576, true_hfov)
    truth = _single_view(true_intr, math.radians(pitch_deg), 5.0)
    feet_uv, top_v = _people(truth, np.random.default_rng(1))
    r_cw = np.array(truth.keyframes[0].world_from_camera)[:3, :3].T
    vp = true_intr.matrix() @ r_cw @ np.array([0.0, 0.0, 1.0])  # where vertical lines meet
    prior = CameraIntrinsics.from_hfov(768, 576, 60.0)  # the field-of-view prior is off
    fit = calibrate_from_upright(feet_uv, top_v, 1.7, prior, vertical_vp=vp)
    assert fit is not None
    assert fit.focal_px == pytest.approx(true_intr.fx, rel=0.06)
    assert abs(math.degrees(fit.pitch_rad) - pitch_deg) < 1.5 and abs(fit.roll_rad) < math.radians(0.5)
    assert fit.camera_height_m == pytest.approx(5.0, rel=0.08)
    fixed = repose_single_view(
        _single_view(prior, -0.1, 1.6), fit.pitch_rad, fit.camera_height_m, 0.0, fit.focal_px
    )
    assert fixed.intrinsics.fx == fixed.intrinsics.fy == pytest.approx(fit.focal_px)


def test_too_few_or_degenerate_objects() -> None:
    intr = CameraIntrinsics.from_hfov(640, 480, 60.0)
    assert (
        calibrate_from_upright(
            np.array([[100.0, 300.0], [200.0, 310.0]]), np.array([200.0, 205.0]), 1.7, intr
        )
        is None
    )
    same_row = np.array([[100.0, 300.0], [200.0, 300.0], [300.0, 301.0]])
    assert calibrate_from_upright(same_row, np.array([200.0, 200.0, 201.0]), 1.7, intr) is None
    with pytest.raises(ValueError, match="single-view"):
        repose_single_view(
            _single_view(intr, 0.0, 1.6).__class__(
                **{**_single_view(intr, 0.0, 1.6).__dict__, "mode": "sfm"}
            ),
            0.0,
            1.6,
        )
