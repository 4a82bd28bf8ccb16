"""The ground stage on the synthetic street (true poses): facades stay out of the ground, and the
result does not depend on what used OpenCV's random generator before."""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np
import pytest

from tests.layout.test_offplane import STREET
from tests.video.synth import StreetRenderer, camera_path, street_reconstruction
from urbanverse.layout.ground import run_ground
from urbanverse.layout.ground_cfg import GroundCfg
from urbanverse.perception.record import FrameDetections
from urbanverse.recon.depth import DenseCfg, dense_cloud


@pytest.fixture(scope="module")
def street_frames():
    poses = camera_path(STREET, np.arange(0.0, 6.0, 0.5))
    renderer = StreetRenderer(STREET)
    frames = [(i, np.ascontiguousarray(renderer.render(m)[..., ::-1])) for i, m in enumerate(poses)]
    return frames, street_reconstruction(STREET, poses)


def _ground(street_frames, tmp_path, cfg: GroundCfg, dense: bool = False):
    frames, recon = street_frames
    dense_xyz = dense_cloud(recon, dict(frames)).xyz if dense else None
    return run_ground(frames, recon, FrameDetections(detectors=(), frames=()), tmp_path, cfg, None, dense_xyz)


def _area_behind_walls(layout) -> float:
    """m2 of ground regions beyond the street's walls (y = +-4 m), sampled on a 0.25 m grid."""
    import shapely

    polygons = [shapely.Polygon(r.polygon) for r in layout.regions]
    gx, gy = np.meshgrid(np.arange(-5, 45, 0.25), np.arange(-20, 20, 0.25))
    inside = np.zeros(gx.shape, bool)
    for p in polygons:
        inside |= shapely.contains_xy(p, gx, gy)
    return float((inside & (np.abs(gy) > STREET.half_width + 0.5)).sum() * 0.25**2)


def test_facades_are_kept_out_of_the_ground(street_frames, tmp_path) -> None:
    plain = _ground(street_frames, tmp_path / "plain", GroundCfg(parallax_px=0))
    checked = _ground(street_frames, tmp_path / "checked", GroundCfg())
    # Without the check the walls' pixels land behind the walls; with it, under a third as many
    # (a wall's foot has too little parallax to tell).
    assert _area_behind_walls(plain) > 20.0
    assert _area_behind_walls(checked) < 0.4 * _area_behind_walls(plain)
    assert sum(r.area_m2 for r in checked.regions) > 60.0


def test_dense_points_keep_the_ground_behind_the_walls_out(street_frames, tmp_path) -> None:
    plain = _ground(street_frames, tmp_path / "plain", GroundCfg(parallax_px=0))
    dense = _ground(street_frames, tmp_path / "dense", GroundCfg(parallax_px=0), dense=True)
    assert _area_behind_walls(dense) < 0.4 * _area_behind_walls(plain)
    assert sum(r.area_m2 for r in dense.regions) > 60.0


def test_raised_dense_points_hide_the_ground_at_their_pixels(street_frames, tmp_path) -> None:
    """With neither the parallax nor the free-space check, the walls' own dense points (all higher
    than 0.3 m) keep their pixels from being cast onto the ground behind them."""
    alone = GroundCfg(parallax_px=0, obstacle_min_height_m=0)
    plain = _ground(street_frames, tmp_path / "plain", dataclasses.replace(alone, raised_min_height_m=0))
    raised = _ground(street_frames, tmp_path / "raised", alone, dense=True)
    assert _area_behind_walls(raised) < 0.4 * _area_behind_walls(plain)
    assert sum(r.area_m2 for r in raised.regions) > 60.0


def test_the_ground_does_not_depend_on_opencvs_generator_state(street_frames, tmp_path) -> None:
    first = _ground(street_frames, tmp_path / "a", GroundCfg())
    cv2.setRNGSeed(1234)
    cv2.randu(np.zeros(1000, np.float32), 0, 1)  # move the process-wide generator on
    second = _ground(street_frames, tmp_path / "b", GroundCfg())
    assert first == second


def test_the_ground_is_the_same_cast_on_one_thread_or_two(street_frames, tmp_path) -> None:
    one = _ground(street_frames, tmp_path / "one", GroundCfg(threads=1))
    two = _ground(street_frames, tmp_path / "two", GroundCfg(threads=2))
    assert one == two


def test_the_dense_points_are_the_same_on_one_thread_or_two(street_frames) -> None:
    frames, recon = street_frames
    one = dense_cloud(recon, dict(frames), DenseCfg(threads=1))
    two = dense_cloud(recon, dict(frames), DenseCfg(threads=2))
    assert len(one.xyz) > 1000
    assert np.array_equal(one.xyz, two.xyz) and np.array_equal(one.keyframe, two.keyframe)
    assert np.array_equal(one.rgb, two.rgb)
