"""Digital cousins: the library assets that could stand in for a lifted object, asked of the asset store.

Three stages, as in UrbanVerse (text, then box size, then appearance), each a query of the store, so
every asset of the library takes part, the 100,000 of the procedural catalogue and whatever was ingested:

1. **Class.** The assets of the object's L3 class (or, when the library has none, of its L2 and then
   L1 class). A label outside the taxonomy (a swapped detector's own words) is matched by text: the
   assets whose descriptions are nearest to it in the store's MiniLM index.
2. **Size.** UrbanVerse's bounding-box distance: the sum of absolute differences of length, width and
   height (m); width and height alone for an object whose front only was seen (a building from the
   street); a height above one measured as a lower bound (the object's top ran out of the frame) counts
   ``unseen_height_weight`` of the difference. The ``size_keep`` nearest go on.
3. **Look.** Those candidates' rendered views are embedded with the image embedder (MobileNetV2 by
   default, :mod:`urbanverse.retrieval.embedders`) and compared with the object's crops from the
   keyframes (cosine distance), and their rendered colour with the crops' colour (CIEDE2000). The
   views and their vectors are made the first time an asset is ranked and kept in the library
   (:mod:`urbanverse.retrieval.appearance`).

The score (lower is better) is the box distance plus ``look_weight`` metres per 0.1 of cosine distance
plus ``colour_weight`` metres per 10 CIEDE2000; the best ``k`` are the cousins, the first is placed.
A library that was never built gets a core of the catalogue's assets of the classes a scene needs the
first time it needs them (:func:`prepare_library`), so a first run on a fresh machine builds seconds,
not the whole library (4 minutes on two cores).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import numpy as np

from urbanverse.assets.catalogue import fill_entries, missing_entries
from urbanverse.assets.generators import GENERATORS
from urbanverse.assets.store import AssetStore, ClassMembers
from urbanverse.assets.taxonomy import TAXONOMY, get_class
from urbanverse.colour import ciede2000
from urbanverse.errors import InputError
from urbanverse.records import record
from urbanverse.retrieval.embedders import check_spec

log = logging.getLogger(__name__)

#: Seconds to build, measure and store one catalogue asset on one core (tools/bench_assets.py).
FILL_S_PER_ASSET = 0.002
#: Taxonomy levels from the finest, with the class attribute each is named by.
_LEVELS = ("l3", "l2", "l1")


@dataclasses.dataclass(frozen=True, kw_only=True)
class RetrievalCfg:
    """Configuration of the retrieval stage (``--set retrieval.<field>=...``)."""

    library: Path | None = None
    """Asset library folder (``gen --library``); None: ``$URBANVERSE_LIBRARY``, else the cache's
    ``library/``, filled with the classes a scene needs when it was never built."""
    k: int = 5
    """Cousins per object (``--cousins``)."""
    core_seeds: int = 160
    """Assets of each generator of a class seen that a library lacking them gets on first use: the first
    ``core_seeds`` of the catalogue's ~840 (about 0.3 s a generator). A library built whole with
    ``urbanverse assets build`` has them all, and retrieval ranks them all."""
    size_keep: int = 24
    """Candidates nearest in box size that are ranked by look (each costs one render and embedding the
    first time the library ranks it, about 30 ms)."""
    embedder: str = "mobilenetv2"
    """Image embedder of crops and asset views: ``mobilenetv2``, ``dinov2:PATH`` or ``clip:PATH`` (a
    model folder on disk; :mod:`urbanverse.retrieval.embedders`)."""
    view_azimuths_deg: tuple[float, ...] = (-35.0, -125.0)
    """Views rendered of each asset, degrees from its front (counter-clockwise seen from above): the
    front-right and back-right three-quarter views in which a walker sees street objects."""
    view_px: int = 128
    """Side of a rendered view (pixels)."""
    look_weight: float = 0.3
    """Metres of box distance that 0.1 of cosine distance between crop and views is worth."""
    colour_weight: float = 0.1
    """Metres of box distance that 10 CIEDE2000 units between crop and rendered colour are worth."""
    unseen_height_weight: float = 0.25
    """Metres of box distance per metre an asset stands above an object's measured height where the
    object's top was not seen (a lower bound): a taller asset may fit, one much taller less likely."""
    text_candidates: int = 64
    """Assets taken by text search for a label outside the taxonomy."""
    use_text: bool = True
    """Stage 1 on: candidates of the object's class (or text); off: every asset of the library (ablation)."""
    use_size: bool = True
    """Stage 2 on; off: every candidate is ranked by look and colour alone (an ablation; slow on a large
    class, whose every asset is drawn and embedded)."""
    use_look: bool = True
    """Stage 3 on; off: box distance alone ranks the cousins (ablation)."""

    def __post_init__(self) -> None:
        for name in ("k", "core_seeds", "size_keep", "view_px", "text_candidates"):
            if getattr(self, name) < 1:
                raise InputError(f"retrieval.{name}: expected >= 1, got {getattr(self, name)}")
        for name in ("look_weight", "colour_weight", "unseen_height_weight"):
            if not getattr(self, name) >= 0:
                raise InputError(f"retrieval.{name}: expected >= 0, got {getattr(self, name)}")
        if not self.view_azimuths_deg:
            raise InputError("retrieval.view_azimuths_deg: expected at least one view")
        check_spec(self.embedder)


@record
class Cousins:
    """Ranked cousins of one object: asset uids and their scores (lower is better; metres of box
    distance plus the look and colour terms), and ``matched_level``: the taxonomy level ("l3", "l2",
    "l1") whose class the candidates share with the object, "text" when they were found by text search,
    "all" when the class stage was off, "none" when the library has nothing for it."""

    track_id: int
    uids: tuple[str, ...]
    scores: tuple[float, ...]
    matched_level: str


@record
class CousinSet:
    """The cousins of every lifted object of a scene."""

    schema_version: int = 1
    objects: tuple[Cousins, ...]


@dataclasses.dataclass(frozen=True)
class ObjectLook:
    """What the keyframes show of an object: its crops' mean embedding (unit vector) and CIELAB colour;
    either may be None (no crop)."""

    vector: np.ndarray | None
    lab: np.ndarray | None


def generators_for(category: str) -> tuple[tuple[str, ...], str]:
    """The procedural generators making ``category``'s L3 class, else its L2, else its L1 class, and the
    level matched ("none" and no generators for a label outside the taxonomy or with no generator)."""
    if category not in TAXONOMY:
        return (), "none"
    cls = get_class(category)
    for level in _LEVELS:
        names = tuple(
            sorted(n for n, g in GENERATORS.items() if getattr(get_class(g.l3), level) == getattr(cls, level))
        )
        if names:
            return names, level
    return (), "none"


def prepare_library(store: AssetStore, categories: set[str], cfg: RetrievalCfg) -> int:
    """Make sure ``store`` holds the library core of ``categories``: the first ``cfg.core_seeds``
    catalogue assets of each of their generators (see :func:`generators_for`). Returns how many were
    added: 0 when the library was built (``urbanverse assets build``) or these classes were filled before."""
    generators = sorted({g for c in categories for g in generators_for(c)[0]})
    missing = missing_entries(store, generators, cfg.core_seeds)
    if missing:
        log.info(
            "asset library %s: adding the core of %d asset classes, %d assets (about %.0f s; "
            "`urbanverse assets build` adds the whole catalogue)",
            store.root, len(generators), len(missing), FILL_S_PER_ASSET * len(missing),
        )  # fmt: skip
    return fill_entries(store, missing) if missing else 0


def _class_members(store: AssetStore, category: str, cfg: RetrievalCfg) -> tuple[ClassMembers, str]:
    """Stage 1: the candidates of ``category`` and the level they were matched on."""
    if not cfg.use_text:
        return store.members(None, None), "all"
    if category in TAXONOMY:
        cls = get_class(category)
        for level in _LEVELS:
            members = store.members(level, getattr(cls, level))
            if members.uids:
                return members, level
        return store.members("l3", category), "none"
    hits = store.search(category.replace("_", " "), k=cfg.text_candidates)
    uids = tuple(h.asset.uid for h in hits)
    dims = np.array([[h.asset.length, h.asset.width, h.asset.height] for h in hits]).reshape(-1, 3)
    return ClassMembers("text", uids, dims), "text" if uids else "none"


def box_distance(
    dims: np.ndarray, size: tuple[float, float, float], front_only: bool, top_cut: bool, cfg: RetrievalCfg
) -> np.ndarray:
    """UrbanVerse's bounding-box distance (m) of assets ``dims`` ``(N, 3)`` to an object's ``size``
    (see the module docstring for ``front_only`` and ``top_cut``)."""
    diff = np.asarray(dims, np.float64) - np.asarray(size)
    if top_cut:
        diff[:, 2] = np.where(diff[:, 2] > 0, cfg.unseen_height_weight * diff[:, 2], diff[:, 2])
    return np.abs(diff)[:, 1 if front_only else 0 :].sum(axis=1)


def _worst_where_unknown(term: np.ndarray) -> np.ndarray:
    """``term`` with its NaNs (assets whose views could not be drawn) set to its worst known value."""
    known = term[np.isfinite(term)]
    return np.where(np.isfinite(term), term, known.max() if len(known) else 0.0)


def rank_cousins(
    track_id: int,
    category: str,
    size: tuple[float, float, float],
    look: ObjectLook,
    store: AssetStore,
    appearance,
    cfg: RetrievalCfg,
    front_only: bool = False,
    top_cut: bool = False,
) -> Cousins:
    """The ``cfg.k`` best assets of ``store`` for an object of ``category`` and ``size`` (m) that looks
    like ``look``. ``appearance(uids)`` gives uid -> (unit vector, CIELAB colour) of the assets' views
    (:meth:`urbanverse.retrieval.appearance.AssetAppearance.of`)."""
    members, level = _class_members(store, category, cfg)
    if not members.uids:
        return Cousins(track_id=track_id, uids=(), scores=(), matched_level="none")
    uids = np.array(members.uids)
    score = box_distance(members.dims, size, front_only, top_cut, cfg)
    if cfg.use_size:
        keep = np.argsort(score, kind="stable")[: max(cfg.size_keep, cfg.k)]
    else:
        keep, score = np.arange(len(uids)), np.zeros(len(uids))
    uids, score = uids[keep], score[keep]
    if cfg.use_look and (look.vector is not None or look.lab is not None):
        views = appearance(list(uids))
        if look.vector is not None:
            cos = np.array([float(views[u][0] @ look.vector) if u in views else np.nan for u in uids])
            score = score + _worst_where_unknown(cfg.look_weight * (1.0 - cos) / 0.1)
        if look.lab is not None:
            labs = np.array([views[u][1] if u in views else (np.nan,) * 3 for u in uids])
            score = score + _worst_where_unknown(cfg.colour_weight * ciede2000(labs, look.lab) / 10.0)
    order = np.argsort(score, kind="stable")[: cfg.k]
    return Cousins(
        track_id=track_id,
        uids=tuple(str(uids[i]) for i in order),
        scores=tuple(float(score[i]) for i in order),
        matched_level=level,
    )
