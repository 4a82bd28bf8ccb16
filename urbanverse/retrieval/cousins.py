"""Digital cousins: library assets that could stand in for a lifted object.

Candidates are the library's procedural assets of the object's L3 class (or, when no generator
makes that class, of its L2 and then L1 class): ``candidates_per_generator`` seeds of each such
generator, built and measured in memory on the fly, so no prebuilt database is needed. They are
ranked by the bounding-box distance of UrbanVerse (sum of absolute differences of length, width
and height, m; width and height alone for an object whose front only was seen, a building from
the street; a height above one measured as a lower bound, where the object's top ran out of the
frame, counts a quarter) plus a colour term (Lab distance of the object's mean crop colour to the asset's
dominant colour, weighted by ``colour_weight`` per 100 Lab units; the crop is a track's detector
boxes, or for an object found in the dense points its box projected into the nearest keyframes,
:mod:`urbanverse.retrieval.stage`); the best ``k`` are the cousins and the first is placed. Size
comes first because a wrong size shows as a collision or a gap in the street; colour breaks ties
between assets of about the right size.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable

import numpy as np

from urbanverse.assets.catalogue import CatalogueEntry, entry_of, record_of
from urbanverse.assets.generators import GENERATORS
from urbanverse.assets.record import Asset
from urbanverse.assets.taxonomy import get_class
from urbanverse.assets.textures import rgb8_to_lab
from urbanverse.records import record


@dataclasses.dataclass(frozen=True, kw_only=True)
class CousinCfg:
    """Configuration of ``rank_cousins``: how many cousins, from how many candidates, and how they score."""

    k: int = 5
    """Cousins per object (``--cousins``)."""
    candidates_per_generator: int = 24
    """Seeds tried of each generator that makes the object's class: more give closer sizes, at about
    the cost of building that many assets in memory."""
    colour_weight: float = 0.5
    """Metres of box distance that 100 Lab units of colour difference are worth."""
    unseen_height_weight: float = 0.25
    """Metres of box distance per metre an asset stands above an object's measured height where the
    object's top was not seen (a lower bound): a taller asset may fit, one much taller less likely."""


@record
class Cousins:
    """Ranked cousins of one object: asset uids and their scores (lower is better; metres of box
    distance plus the colour term), and ``matched_level``, the taxonomy level ("l3", "l2", "l1") whose
    class the candidates share with the object, or "none" when no generator makes a related class."""

    track_id: int
    uids: tuple[str, ...]
    scores: tuple[float, ...]
    matched_level: str


@record
class CousinSet:
    """The cousins of every lifted object of a scene."""

    schema_version: int = 1
    objects: tuple[Cousins, ...]


def _generators_for(category: str) -> tuple[tuple[str, ...], str]:
    cls = get_class(category)
    for level, attr in (("l3", "l3"), ("l2", "l2"), ("l1", "l1")):
        names = tuple(
            sorted(n for n, g in GENERATORS.items() if getattr(get_class(g.l3), attr) == getattr(cls, attr))
        )
        if names:
            return names, level
    return (), "none"


@functools.cache
def _candidates(generators: tuple[str, ...], per_generator: int) -> tuple[Asset, ...]:
    return tuple(record_of(CatalogueEntry(g, seed)) for g in generators for seed in range(per_generator))


def prepare_candidates(categories: Iterable[str], cfg: CousinCfg) -> None:
    """Measure the candidate assets of ``categories`` now (kept for the process), so that ranking
    cousins for them later costs no building: gen does this beside the camera stage, once the tracks
    are known, which takes the 0.3-1 s of building off the stages that wait for the camera."""
    for category in sorted(set(categories)):
        generators, _ = _generators_for(category)
        if generators:
            _candidates(generators, cfg.candidates_per_generator)


_COLOUR_RGB = {
    "black": (20, 20, 20), "dark grey": (70, 70, 70), "grey": (128, 128, 128), "light grey": (190, 190, 190),
    "white": (240, 240, 240), "red": (180, 30, 30), "orange": (220, 120, 30), "yellow": (220, 200, 40),
    "green": (50, 140, 50), "dark green": (30, 80, 30), "blue": (40, 70, 180), "brown": (120, 80, 40),
    "beige": (210, 190, 150), "navy": (30, 40, 90), "teal": (30, 120, 120),
}  # fmt: skip


def _asset_lab(asset: Asset) -> np.ndarray | None:
    for name in asset.colors:
        if name in _COLOUR_RGB:
            return rgb8_to_lab(np.array([_COLOUR_RGB[name]], np.uint8))[0]
    return None


def rank_cousins(
    track_id: int,
    category: str,
    size: tuple[float, float, float],
    crop_rgb: np.ndarray | None,
    cfg: CousinCfg,
    front_only: bool = False,
    top_cut: bool = False,
) -> Cousins:
    """The ``cfg.k`` best assets for an object of ``category`` and ``size`` (m); ``crop_rgb``: mean
    sRGB (3,) uint8 of its image crops, or None; ``front_only``: the length (depth) is a prior, not
    measured, and does not count; ``top_cut``: the height is a lower bound, so an asset that much
    taller costs only ``cfg.unseen_height_weight`` of the difference."""
    generators, level = _generators_for(category)
    if not generators:
        return Cousins(track_id=track_id, uids=(), scores=(), matched_level="none")
    assets = _candidates(generators, cfg.candidates_per_generator)
    dims = np.array([[a.length, a.width, a.height] for a in assets])
    diff = dims - np.asarray(size)
    if top_cut:
        diff[:, 2] = np.where(diff[:, 2] > 0, cfg.unseen_height_weight * diff[:, 2], diff[:, 2])
    score = np.abs(diff)[:, 1 if front_only else 0 :].sum(axis=1)
    if crop_rgb is not None:
        lab = rgb8_to_lab(np.asarray(crop_rgb, np.uint8)[None])[0]
        colour = np.array(
            [np.linalg.norm(lab - c) if (c := _asset_lab(a)) is not None else 50.0 for a in assets]
        )
        score = score + cfg.colour_weight * colour / 100.0
    order = np.argsort(score, kind="stable")[: cfg.k]
    return Cousins(
        track_id=track_id,
        uids=tuple(assets[i].uid for i in order),
        scores=tuple(float(score[i]) for i in order),
        matched_level=level,
    )


def asset_of(uid: str) -> Asset:
    """The record of a procedural asset uid (``<generator>-<seed>``)."""
    return record_of(entry_of(uid))
