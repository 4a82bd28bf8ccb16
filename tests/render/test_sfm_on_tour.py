"""Structure from motion works on rendered tours as on real video: pycolmap recovers the camera path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from urbanverse.render.tour import TourCfg, run_render_tour

pycolmap = pytest.importorskip("pycolmap")


def _similarity_align(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """``source`` points ``(N, 3)`` moved onto ``target`` by the least-squares similarity (Umeyama 1991)."""
    mu_s, mu_t = source.mean(axis=0), target.mean(axis=0)
    s, t = source - mu_s, target - mu_t
    u, sigma, vt = np.linalg.svd(t.T @ s)
    d = np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))])
    rotation = u @ d @ vt
    scale = np.trace(np.diag(sigma) @ d) / (s**2).sum()
    return scale * s @ rotation.T + mu_t


def test_pycolmap_recovers_the_tour_camera_path(example_dir, tmp_path):
    gt = run_render_tour(
        example_dir,
        tmp_path / "tour.mp4",
        TourCfg(seconds=4.0, fps=5.0, width=480, height=270, seed=3),
        frames_dir=tmp_path / "frames",
    )
    images = tmp_path / "frames" / "rgb"
    k = gt.intrinsics
    database = tmp_path / "database.db"
    extraction = pycolmap.FeatureExtractionOptions()
    extraction.num_threads = 2
    extraction.sift.max_num_features = 2000
    pycolmap.extract_features(
        database,
        images,
        camera_mode=pycolmap.CameraMode.SINGLE,
        reader_options=pycolmap.ImageReaderOptions(
            camera_model="PINHOLE", camera_params=f"{k.fx},{k.fy},{k.cx},{k.cy}"
        ),
        extraction_options=extraction,
    )
    pycolmap.match_sequential(database)
    mapping = pycolmap.IncrementalPipelineOptions()
    mapping.ba_refine_focal_length = False
    mapping.ba_refine_principal_point = False
    mapping.ba_refine_extra_params = False
    mapping.num_threads = 2
    models = pycolmap.incremental_mapping(database, images, tmp_path / "sparse", options=mapping)
    assert models, "pycolmap reconstructed nothing"
    model = max(models.values(), key=lambda m: m.num_reg_images())
    assert model.num_reg_images() >= 0.8 * len(gt.frames)

    estimated, true = [], []
    for image in model.images.values():
        cam_from_world = image.cam_from_world() if callable(image.cam_from_world) else image.cam_from_world
        r, t = cam_from_world.rotation.matrix(), cam_from_world.translation
        estimated.append(-r.T @ t)
        true.append(np.reshape(gt.frames[int(Path(image.name).stem)].world_from_camera, (4, 4))[:3, 3])
    estimated, true = np.array(estimated), np.array(true)
    error = np.linalg.norm(_similarity_align(estimated, true) - true, axis=1)
    path_length = np.linalg.norm(np.diff(true, axis=0), axis=1).sum()
    assert path_length > 3.0
    median = float(np.median(error))
    assert median < 0.1, f"median camera error {median:.3f} m over a {path_length:.1f} m walk"
