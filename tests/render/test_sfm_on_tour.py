"""Structure from motion works on rendered tours as on real video: the camera stage (pycolmap SfM,
single-threaded so deterministic) recovers a tour's camera path and its metric scale.

A regression check on one tour that the stage reconstructs well, not a claim about every tour: on the
sparse example street (tiled sidewalk, flat asphalt) the 6 s tours of seeds 2-4 at 960x540 end 1.6-2.7 m
off, RMS (measured 2026-12-03 with tools/bench_camera.py, BENCHMARKS.md "Camera stage"). The video encoder is
deterministic (``Mp4Writer``), so the same tour gives the same keyframes and poses on every run."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.recon.stage import run_recon
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.video.stage import run_video

pytest.importorskip("pycolmap")


def _similarity_align(source: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, float]:
    """``source`` points ``(N, 3)`` moved onto ``target`` by the least-squares similarity (Umeyama
    1991), and that similarity's scale."""
    mu_s, mu_t = source.mean(axis=0), target.mean(axis=0)
    s, t = source - mu_s, target - mu_t
    u, sigma, vt = np.linalg.svd(t.T @ s)
    d = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    rotation = u @ d @ vt
    scale = np.trace(np.diag(sigma) @ d) / (s**2).sum()
    return scale * s @ rotation.T + mu_t, float(scale)


def test_sfm_recovers_the_tour_camera_path_and_scale(example_dir, tmp_path):
    cfg = TourCfg(seconds=6.0, fps=10.0, width=960, height=540, seed=1)
    gt = run_render_tour(example_dir, tmp_path / "tour.mp4", cfg)
    keyframes = run_video(tmp_path / "tour.mp4", tmp_path / "video")
    recon = run_recon(keyframes, tmp_path / "recon", image_dir=tmp_path / "video")
    assert recon.mode == "sfm"
    registered = recon.registered
    assert len(registered) >= 0.7 * len(keyframes.keyframes)
    estimated = np.array([k.position for k in registered])
    true = np.array([np.reshape(gt.frames[k.frame].world_from_camera, (4, 4))[:3, 3] for k in registered])
    aligned, scale = _similarity_align(estimated, true)
    error = np.linalg.norm(aligned - true, axis=1)
    path_length = np.linalg.norm(np.diff(true, axis=0), axis=1).sum()
    assert path_length > 4.0
    median = float(np.median(error))
    assert median < 0.1, f"median camera error {median:.3f} m over a {path_length:.1f} m walk"
    # Metric: the scale comes from the ground plane and the 1.6 m camera-height prior (truth: 1.65-1.85 m).
    assert 0.85 < scale < 1.2
