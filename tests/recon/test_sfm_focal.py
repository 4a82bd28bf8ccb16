"""SfM self-calibration: a model cut short is mapped again with the focal length that bundle adjustment
finds on its plausible part (``SfmCfg.refocus``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tests.video.synth import Street
from urbanverse.recon.sfm import RawReconstruction, run_sfm
from urbanverse.recon.sfm_cfg import SfmCfg


def test_a_cut_model_is_remapped_with_the_focal_that_bundle_adjustment_finds(
    walk_keyframes, tmp_path: Path
) -> None:
    kfs, image_dir, _ = walk_keyframes
    true_f = float(Street().k[0, 0])
    prior = dataclasses.replace(kfs.intrinsics, fx=1.1 * true_f, fy=1.1 * true_f)
    names = [k.image for k in kfs.keyframes]
    mapped_with: list[float] = []

    def consistent(raw: RawReconstruction) -> list[int]:
        # Stands in for the plausibility check: the first model counts as cut before its last keyframe.
        mapped_with.append(raw.fx)
        keep = sorted(raw.wfc)
        return keep[:-1] if len(mapped_with) == 1 else keep

    # The incremental mapper keeps the focal prior fixed while it maps; the remap is its remedy.
    params = SfmCfg(
        features="colmap", attempts=1, fallback_features=False, min_images_focal=4, mapper="incremental"
    )
    raw = run_sfm(image_dir, names, prior, tmp_path, params, consistent)
    assert raw is not None and len(mapped_with) == 2
    assert mapped_with[0] == 1.1 * true_f
    assert abs(mapped_with[1] / true_f - 1) < 0.03, mapped_with
    assert any("remapped with the focal length" in n for n in raw.notes)
    assert len(raw.wfc) == len(names) and abs(raw.fx / true_f - 1) < 0.03


def test_no_remap_when_the_model_is_whole(walk_keyframes, tmp_path: Path) -> None:
    kfs, image_dir, _ = walk_keyframes
    names = [k.image for k in kfs.keyframes]
    calls: list[int] = []

    def consistent(raw: RawReconstruction) -> list[int]:
        calls.append(len(raw.wfc))
        return sorted(raw.wfc)

    raw = run_sfm(
        image_dir, names, kfs.intrinsics, tmp_path, SfmCfg(features="colmap", attempts=3), consistent
    )
    assert raw is not None and len(calls) == 1
    assert not any("remapped" in n for n in raw.notes)


def test_fallback_features_computed_during_mapping_give_the_same_model(
    walk_keyframes, tmp_path: Path
) -> None:
    """The OpenCV fallback's features are computed on a second thread while COLMAP's attempts map;
    the fallback then maps exactly as OpenCV features extracted on their own."""
    kfs, image_dir, _ = walk_keyframes
    names = [k.image for k in kfs.keyframes]
    passes: list[int] = []

    def colmap_fails(raw: RawReconstruction) -> list[int]:
        passes.append(len(raw.wfc))
        return [] if len(passes) <= 2 else sorted(raw.wfc)  # COLMAP's two attempts count as failed

    params = SfmCfg(features="colmap", attempts=2, refocus=False)
    fallback = run_sfm(image_dir, names, kfs.intrinsics, tmp_path / "a", params, colmap_fails)
    assert fallback is not None and len(passes) == 3
    assert any("retried with opencv SIFT" in n for n in fallback.notes)
    direct = run_sfm(
        image_dir,
        names,
        kfs.intrinsics,
        tmp_path / "b",
        dataclasses.replace(params, features="opencv", fallback_features=False, attempts=1),
        lambda raw: sorted(raw.wfc),
    )
    assert direct is not None and sorted(direct.wfc) == sorted(fallback.wfc)
    for i in direct.wfc:
        np.testing.assert_array_equal(direct.wfc[i], fallback.wfc[i])
