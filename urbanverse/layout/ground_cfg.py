"""Settings of the ground stage (``GenCfg.ground``).

A module of its own so that :mod:`urbanverse.layout.ground` and :mod:`urbanverse.layout.road_extent`,
which both read it, do not import each other.
"""

from __future__ import annotations

import dataclasses

from urbanverse.errors import InputError


@dataclasses.dataclass(frozen=True, kw_only=True)
class GroundCfg:
    """Bird's-eye ground map settings (:func:`urbanverse.layout.ground.run_ground`); lengths in metres,
    lightness in CIE L* (0-100)."""

    cell_m: float = 0.2
    """Side of a bird's-eye grid cell (m): fine enough for a 15 cm curb band and paint bars, coarse
    enough that every cell near the path gets pixels."""
    max_distance_m: float = 18.0
    """Pixels whose ground point is farther from the camera are not used: far ground is cast from few
    pixels at grazing angles, where a small plane error moves it metres."""
    pixel_stride: int = 3
    """Sample every n-th pixel in each direction (a 3x3 block per sample): neighbouring pixels add time,
    not ground."""
    max_keyframes: int = 24
    """Keyframes cast onto the ground are thinned to every n-th, n = registered keyframes // this (at
    least 1): neighbouring keyframes see the same ground."""
    min_region_m2: float = 1.0
    """Ground polygons and crossings smaller than this (m2) are dropped as noise."""
    simplify_m: float = 0.25
    """Tolerance (m) of the polygon simplification (shapely): removes the grid's staircase edges."""
    excess_green: float = 0.06
    """(2G - R - B) / (R + G + B) above this is vegetation (terrain): a cue that needs no trained model."""
    parallax_px: float = 3.0
    """Pixels that move more than this (px) off the ground plane between neighbouring keyframes (plane +
    parallax) are not ground: facades and walls cast onto the ground would paint it. 0 turns the check
    off. Neither this nor the free-space check runs on a reconstruction without a fitted ground plane
    (``up_prior``)."""
    parallax_scale: float = 0.5
    """Optical flow for the parallax check runs at this fraction of the working resolution (for speed)."""
    obstacle_min_height_m: float = 1.0
    """Sparse SfM points higher than this (m) hide the ground behind them from the camera (free space),
    so a facade's colour is not cast onto the ground behind it; 0 turns it off."""
    obstacle_max_range_m: float = 40.0
    """Obstacle points farther than this (m) from the camera are ignored: far points are imprecise."""
    raised_min_height_m: float = 0.3
    """Dense points higher than this (m) above the plane hide the ground at the pixels they project to
    (benches, bins, car bodies, trunks: objects too low for the free-space check); 0 turns it off."""
    colour_clusters: int = 3
    """k-means clusters of the non-vegetation colours, each then labelled walked paving or road: walked
    paving, road and one more (a second paving, shade)."""
    walked_share: float = 0.5
    """A cluster with at least this share of the most-walked cluster's path cells is walked paving too
    (a sidewalk of two pavings)."""
    chroma_lightness: float = 50.0
    """Before the colour clustering, a*, b* are scaled by this over L* (at most ``chroma_max_gain``
    times): chroma relative to lightness, as shade darkens a paving's colour with its lightness, so a
    coloured paving in shade does not cluster with asphalt. 0 turns it off."""
    chroma_max_gain: float = 2.0
    """Largest gain of ``chroma_lightness``: on dark asphalt a larger gain makes the colour noise look
    like a coloured paving."""
    lightness_weight: float = 0.9
    """Weight of CIE L* against a*, b* in the colour clustering and when clusters are matched to the
    walked paving or the road. Close to 1 because, with chroma relative to lightness, shade needs no
    lower weight, and a low one merges neutral greys (asphalt, a grey paving, kerb ramps) into one
    cluster."""
    road_side_share: float = 0.75
    """A camera position's road side holds at least this share of its nearest road cells; road on the
    other side, beyond ``walk_margin_m``, becomes terrain (a lot's gravel, a facade cast onto its lot).
    1 turns the rule off."""
    walk_margin_m: float = 1.0
    """Road cells nearer than this (m) to the path on its far side stay road (the walked sidewalk's edge)."""
    min_walk_m: float = 2.0
    """The road-side rule needs a camera path at least this long (m): a shorter one has no clear side."""
    marking_max_width_m: float = 1.2
    """Light structures narrower than this (m) are paint lines; gaps up to this between bars are closed,
    so a crossing's bars join into one area."""
    paint_contrast_l: float = 12.0
    """A paint cell is this much lighter (CIE L*, 0-100) than the opening of its neighbourhood: paint is
    light on darker paving whatever the light."""
    crosswalk_min_width_m: float = 1.6
    """Painted areas narrower than this (m; a curb, a lane line) are no crossing."""
    paint_fraction: float = 0.15
    """A crossing has at least this share of paint cells (bars with gaps between them)."""
    crossing_length_m: tuple[float, float] = (3.0, 20.0)
    """A crossing spans a road: its length (m, the long axis of its cells) lies in this range, which
    leaves out light patches and long rows of light tiles along a sidewalk."""
    landing_m: float = 3.0
    """Road cells up to this far (m) beyond either end of a crossing, within its width, are sidewalk: a
    crossing joins two pavings (kerb ramps and corner squares in grey paving look like asphalt); 0
    turns the rule off."""
    landing_min_elongation: float = 1.5
    """A crossing's length (across the road) over its width: below this its direction is unclear and
    the landing and curb rules skip it."""
    curb_reach_m: float = 30.0
    """Along the street, up to this (m) from a crossing across the walk, road-coloured ground outside
    every crossing's road is the far sidewalk or behind it (``road_extent.beyond_curbs``): a crossing
    shows how wide the road is. 0 turns the rule off."""
    crossing_band_margin_m: float = 1.0
    """A crossing's road reaches this (m) beyond either end of its cells (curb ramps, a bar not seen)."""
    far_sidewalk_m: float = 4.0
    """Ground beyond a curb, up to this far (m), is the far sidewalk; farther, a lot or verge (terrain):
    about a sidewalk's width."""
    across_walk_deg: float = 45.0
    """A crossing whose length lies more than this (degrees) off the walk's main direction crosses the
    street walked along; nearer to it, it crosses a side street."""
    threads: int = 2
    """Keyframes cast onto the ground at once (the stage runs after the camera stage, alone)."""

    def __post_init__(self) -> None:
        if self.threads < 1:
            raise InputError(f"ground.threads: expected >= 1, got {self.threads}")
        lo, hi = self.crossing_length_m
        if not 0 <= lo <= hi:
            raise InputError(
                f"ground.crossing_length_m: expected [min, max] with 0 <= min <= max, got [{lo}, {hi}]"
            )
        for name in ("chroma_lightness", "curb_reach_m", "crossing_band_margin_m", "far_sidewalk_m"):
            if not getattr(self, name) >= 0:
                raise InputError(f"ground.{name}: expected >= 0, got {getattr(self, name)}")
        if not self.chroma_max_gain >= 1:
            raise InputError(f"ground.chroma_max_gain: expected >= 1, got {self.chroma_max_gain}")
        if not self.lightness_weight > 0:
            raise InputError(f"ground.lightness_weight: expected > 0, got {self.lightness_weight}")
        if not 0 <= self.across_walk_deg <= 90:
            raise InputError(f"ground.across_walk_deg: expected 0..90, got {self.across_walk_deg}")
