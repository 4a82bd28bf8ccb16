"""SIFT features of keyframes into a COLMAP database: COLMAP's own extractor, or OpenCV's SIFT with a
low contrast threshold (more features on weak texture) written in COLMAP's conventions.

Why by hand (OpenCV's part): COLMAP reads only its own features; OpenCV's keypoints and descriptors are
converted to its pixel convention and RootSIFT quantisation here.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path

import cv2
import numpy as np

from urbanverse.recon.sfm_cfg import SfmCfg
from urbanverse.video.record import CameraIntrinsics


def few_features(intr: CameraIntrinsics, names: list[str], p: SfmCfg) -> bool:
    """Small images (up to ``upsample_below_px`` after downscaling) or a short sequence (up to
    ``upsample_max_images``): features are scarce and extraction time does not matter."""
    longest = min(max(intr.width, intr.height), p.max_image_size)
    return longest <= p.upsample_below_px or len(names) <= p.upsample_max_images


def extract_colmap_sift(
    pycolmap, db: Path, image_dir: Path, names: list[str], intr, reader, p: SfmCfg
) -> None:
    ext = pycolmap.FeatureExtractionOptions()
    ext.max_image_size = p.max_image_size
    ext.num_threads = 1 if p.deterministic else p.num_threads  # image ids follow completion order
    ext.use_gpu = False
    ext.sift.max_num_features = p.max_features
    # Octave -1 (COLMAP's default) doubles the image first: 4x the cost, spent only on small images or
    # short sequences (a still pair), where features are scarce and the time does not matter.
    ext.sift.first_octave = -1 if few_features(intr, names, p) else 0
    ext.sift.peak_threshold = p.peak_threshold
    pycolmap.extract_features(
        db,
        image_dir,
        image_names=names,
        camera_mode=pycolmap.CameraMode.SINGLE,
        reader_options=reader,
        extraction_options=ext,
        device=pycolmap.Device.cpu,
    )


def opencv_sift(gray: np.ndarray, p: SfmCfg) -> tuple[np.ndarray, np.ndarray]:
    """SIFT keypoints ``(N, 4)`` (x, y, scale, orientation in COLMAP's pixel convention, at the input
    resolution) and RootSIFT descriptors ``(N, 128)`` uint8 as COLMAP stores them.

    The image is downscaled to ``max_image_size`` for detection (small images, up to ``upsample_below_px``,
    are doubled instead, like COLMAP's first octave -1). A low contrast threshold keeps enough
    features on weakly textured streets (renders, overcast facades); the strongest ``max_features`` stay.
    """
    longest = max(gray.shape[:2])
    s = 2.0 if longest <= p.upsample_below_px else min(1.0, p.max_image_size / longest)
    interp = cv2.INTER_CUBIC if s > 1 else cv2.INTER_AREA
    small = cv2.resize(gray, None, fx=s, fy=s, interpolation=interp) if s != 1 else gray
    sift = cv2.SIFT_create(nfeatures=p.max_features, contrastThreshold=p.contrast_threshold)
    kps, desc = sift.detectAndCompute(small, None)
    if desc is None or not kps:
        return np.zeros((0, 4), np.float32), np.zeros((0, 128), np.uint8)
    kp = np.array([(k.pt[0], k.pt[1], k.size / 2.0, np.deg2rad(k.angle)) for k in kps], np.float32)
    kp[:, :3] /= s
    kp[:, :2] += 0.5  # OpenCV: pixel centres at integers; COLMAP: at +0.5
    # RootSIFT (COLMAP's L1_ROOT normalisation), then COLMAP's 8-bit quantisation (x 512, clipped).
    d = desc / np.maximum(desc.sum(axis=1, keepdims=True), 1e-12)
    d = np.clip(np.round(512.0 * np.sqrt(d)), 0, 255).astype(np.uint8)
    return kp, d


def opencv_features(path: Path, p: SfmCfg) -> tuple[np.ndarray, np.ndarray]:
    """:func:`opencv_sift` of the image file ``path``."""
    gray = cv2.imread(str(path), cv2.IMREAD_GRAYSCALE)
    if gray is None:
        raise FileNotFoundError(f"{path}: keyframe image missing or unreadable")
    return opencv_sift(gray, p)


def write_opencv_sift(pycolmap, db: Path, image_dir: Path, p: SfmCfg, prefetched: dict[str, Future]) -> None:
    """Write OpenCV SIFT features of every image in ``db``, taken from ``prefetched`` (futures by image
    name) where there."""
    with pycolmap.Database.open(db) as database:
        for image in database.read_all_images():
            if image.name in prefetched:
                kp, d = prefetched[image.name].result()
            else:
                kp, d = opencv_features(image_dir / image.name, p)
            database.write_keypoints(image.image_id, kp)
            database.write_descriptors(
                image.image_id, pycolmap.FeatureDescriptors(pycolmap.FeatureExtractorType.SIFT, d)
            )
