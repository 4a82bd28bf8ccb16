"""Settings of structure from motion (``ReconCfg.sfm``).

A module of its own so that :mod:`urbanverse.recon.sfm` and :mod:`urbanverse.recon.sift_features`,
which both read it, do not import each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, kw_only=True)
class SfmCfg:
    """pycolmap settings of the camera stage's SfM (:func:`urbanverse.recon.sfm.run_sfm`).

    Pixels are at the keyframes' working resolution unless said otherwise; angles in degrees.
    """

    max_image_size: int = 640
    """Longest image side (px) for feature extraction: keyframes are downscaled to it (also for visual
    odometry and the parallax check). Keeps extraction and matching to seconds on two cores."""
    max_features: int = 2048
    """SIFT features kept per keyframe (the strongest). Enough for sequential matching of a walk, few
    enough to match quickly."""
    overlap: int = 6
    """Sequential matching: each keyframe is matched against the next ``overlap`` keyframes (plus
    quadratic strides, which reach farther back along a loop). Consecutive keyframes share most of
    their view, so near neighbours carry the matches."""
    init_min_tri_angle_deg: float = 4.0
    """Incremental mapper: least triangulation angle (degrees) of the initial image pair; the second and
    third attempts use 2x and 1.5x this. A wider angle avoids initial pairs too close to each other
    to triangulate reliably."""
    num_threads: int = 2
    """Threads of COLMAP's extraction, matching and bundle adjustment when ``deterministic`` is off."""
    deterministic: bool = True
    """Run COLMAP single-threaded: with threads, image ids (extraction), RANSAC streams (matching) and
    bundle adjustment depend on scheduling, and a rerun can give a different model."""
    max_seconds: float = 60.0
    """Time limit (s, whole seconds) of one run of the incremental mapper (COLMAP's
    ``max_runtime_seconds``; the global mapper has none), so a hard walk cannot hold the stage for long."""
    refine_focal: bool = True
    """Refine the shared focal length by a final global bundle adjustment (see ``max_focal_change``);
    False keeps the video stage's field-of-view prior. The prior can be some per cent off."""
    features: Literal["auto", "opencv", "colmap"] = "colmap"
    """SIFT implementation: ``colmap`` (COLMAP's own SIFT), ``opencv`` (OpenCV SIFT with the low
    ``contrast_threshold``, imported into COLMAP's database: more features on weak texture), ``auto``:
    COLMAP's for small images or short sequences (``upsample_below_px``, ``upsample_max_images``),
    OpenCV's otherwise."""
    fallback_features: bool = True
    """When the first features map too few keyframes plausibly (below ``accept_score``), retry on the
    other SIFT implementation's features: the two find different features on weak texture, and a walk
    one cannot map the other often can."""
    fallback_attempts: int = 1
    """Mapping attempts on the fallback features (each one costs a mapping run)."""
    contrast_threshold: float = 0.015
    """OpenCV SIFT's contrast threshold (OpenCV's default is 0.04): lower keeps enough features on weakly
    textured streets (renders, overcast facades)."""
    upsample_below_px: int = 400
    """Images whose longest side (after downscaling to ``max_image_size``) is at most this many pixels
    are doubled before SIFT (COLMAP's first octave -1): features are scarce on small images and the
    extra cost (4x) does not matter there."""
    upsample_max_images: int = 12
    """Sequences of at most this many keyframes (a still pair, a short clip) are treated as small images
    too (doubled for COLMAP's SIFT, COLMAP's SIFT under ``features="auto"``): few images, little time."""
    peak_threshold: float = 0.0067
    """COLMAP SIFT's peak (contrast) threshold, COLMAP's default (0.02 / 3 octave layers); features
    weaker than it are dropped."""
    mapper: Literal["global", "incremental"] = "global"
    """``global``: COLMAP's global mapper (GLOMAP: rotation averaging, then global positioning and
    bundle adjustment; a pair of images is mapped incrementally, as it builds no model of two) or
    ``incremental``: COLMAP's incremental mapper (registers one image after another; one wrong
    registration bends or shrinks the rest of the walk)."""
    pieces: bool = True
    """Map each run of at least ``min_piece`` keyframes the model left out as a model of its own, with
    ``piece_overlaps`` keyframes of the model on each side (tried in turn), and join it to the model by
    those (:mod:`urbanverse.recon.pieces`) when their centres then agree within ``max_join_error`` of
    their spread. A walk's model can break at a turn or a crossing while the rest maps well alone."""
    min_piece: int = 4
    """Fewest consecutive left-out keyframes mapped as a piece (shorter gaps are left to
    ``ReconCfg.extend``): a piece needs enough keyframes of its own to be worth a mapping run."""
    piece_overlaps: tuple[int, ...] = (10, 4)
    """Keyframes of the model taken on each side of a piece, tried in this order until a join holds: more
    shared keyframes fix the join better, fewer keep the piece clear of the model's broken part."""
    max_join_error: float = 0.05
    """Largest RMS distance of the shared camera centres after the join, as a fraction of their RMS
    spread, for a piece to be joined; above it the two models disagree about the shared keyframes."""
    max_models: int = 3
    """Models COLMAP may build per mapping run (the one with the most registered keyframes is kept): when
    the first initial pair sits in a hard stretch (a fast turn), later pairs still build a model."""
    attempts: int = 2
    """Mapping attempts (another initial angle and seed each) on the first features while fewer than
    ``accept_score`` of the keyframes are plausible; the focal-length remap (``refocus``) takes the
    second. Each attempt costs a mapping run."""
    accept_score: float = 0.5
    """Fraction of the keyframes that must be plausible (the caller's ``consistent`` check) to accept a
    model without further attempts or fallback features; below it the later stages get too little of
    the walk."""
    refocus: bool = True
    """When an attempt maps fewer than ``refocus_below`` of the keyframes plausibly, map once more with
    the focal length that bundle adjustment finds on its plausible part: mapping keeps the focal
    length fixed, and a forward walk mapped with a wrong one bends."""
    refocus_below: float = 0.9
    """Fraction of the keyframes mapped plausibly below which ``refocus`` remaps."""
    refocus_min_change: float = 0.02
    """Least relative change of the focal length (0.02 = 2 %) for ``refocus`` to remap: a smaller change
    would map the same model again."""
    abs_pose_min_inliers: int = 30
    """Incremental mapper: fewest 2D-3D inlier matches to register a keyframe, so keyframes seen through
    a few stray matches stay out rather than pulling the model."""
    ba_max_iterations: int = 30
    """Iterations of the incremental mapper's global bundle adjustments (its local ones take half, at
    least 10): fewer and shorter than COLMAP's offline defaults, so a minute of walk maps in seconds."""
    ba_global_ratio: float = 1.3
    """The incremental mapper runs a global bundle adjustment each time the model grows by this factor in
    keyframes or points (COLMAP's default is 1.1): fewer global adjustments, for speed."""
    min_images_focal: int = 8
    """Fewest registered keyframes for refining the focal length (final refinement or ``refocus``):
    fewer views constrain it too weakly, and a forward walk's focal can collapse."""
    max_focal_change: float = 0.3
    """Largest relative change of the focal length (0.3 = 30 %) accepted from bundle adjustment; a larger
    one is taken as a failed refinement and the prior is kept."""
    seed: int = 0
    """Seed of COLMAP's RANSAC (matching), mapping and triangulation; later attempts add 1, 2."""

    def __post_init__(self) -> None:
        if self.max_image_size < 64 or self.max_features < 64 or self.overlap < 1:
            raise ValueError("SfmCfg.max_image_size/max_features must be >= 64, overlap >= 1")
        if not self.max_seconds > 0:
            raise ValueError(f"SfmCfg.max_seconds must be positive, got {self.max_seconds}")
