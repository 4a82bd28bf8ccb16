"""Appearance of library assets and of the objects seen: embedded views and crops, and their colours.

An asset's appearance is the mean unit vector of its views (``render_views``: a few three-quarter
views on a plain background) under the image embedder, and the CIELAB colour of the mean sRGB of its
pixels in them. It is made the first time retrieval ranks the asset and kept in the library's
``appearance`` table under a key naming the embedder and the views, so each asset is drawn once per
library, not once per scene. Embedding the whole 100,000-asset catalogue up front would cost about
40 ms an asset (an hour on one core, ``tools/bench_assets.py`` measures it), while a scene ranks a few
hundred: hence lazily.

An object's appearance comes from its boxes in the keyframes (a track's best detector boxes, or its
3D box projected into the nearest keyframes): the whole box cropped and embedded the same way, and
the mean colour of the box's central half (the object's own colour, not the background its box
corners take in).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from urbanverse.assets.catalogue import visual_parts
from urbanverse.assets.store import AssetStore
from urbanverse.colour import srgb8_to_lab
from urbanverse.errors import InputError
from urbanverse.locks import FolderLocked
from urbanverse.render.thumbnail import render_views
from urbanverse.retrieval.cousins import ObjectLook, RetrievalCfg
from urbanverse.retrieval.embedders import make_embedder

log = logging.getLogger(__name__)

#: Pixel box (x0, y0, x1, y1) of an object in a keyframe, with the keyframe's index.
FrameBox = tuple[int, Sequence[float]]


def _unit_mean(vectors: np.ndarray) -> np.ndarray:
    mean = vectors.mean(axis=0)
    return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)


def asset_views(parts: Sequence, cfg: RetrievalCfg) -> tuple[list[np.ndarray], np.ndarray]:
    """An asset's views (``cfg.view_azimuths_deg``, ``cfg.view_px`` square RGB uint8) from its coloured
    ``parts``, and its rendered colour: the CIELAB colour of the mean sRGB of its pixels in them."""
    views = render_views(parts, cfg.view_px, cfg.view_azimuths_deg)
    pixels = np.concatenate([rgb[mask] for rgb, mask in views])
    mean = pixels.mean(axis=0) if len(pixels) else np.full(3, 128.0)
    return [rgb for rgb, _ in views], srgb8_to_lab(np.round(mean).astype(np.uint8))


class AssetAppearance:
    """uid -> (unit vector, CIELAB colour (3,)) of library assets' views, read from the library or
    made on first need (see the module docstring). One per retrieval run."""

    def __init__(self, store: AssetStore, cfg: RetrievalCfg):
        self.store, self.cfg = store, cfg
        self._known: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def embedder(self):
        return make_embedder(self.cfg.embedder)

    @property
    def key(self) -> str:
        """The library's key of these vectors: the embedder and how the views were drawn."""
        azimuths = ",".join(f"{a:g}" for a in self.cfg.view_azimuths_deg)
        return f"{self.embedder.name}|views={azimuths}|px={self.cfg.view_px}"

    def of(self, uids: Iterable[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The appearance of ``uids``; an asset whose meshes cannot be read is left out (with a warning)."""
        uids = list(dict.fromkeys(uids))
        need = [u for u in uids if u not in self._known]
        if need:
            self._known |= self.store.appearance(need, self.key)
            missing = [u for u in need if u not in self._known]
            if missing:
                made = self.draw(missing)
                self._known |= made
                self._keep(made)
        return {u: self._known[u] for u in uids if u in self._known}

    def draw(self, uids: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Draw and embed the views of ``uids`` now (neither read from nor written to the library)."""
        images, labs, drawn = [], [], []
        for uid in uids:
            asset = self.store.get(uid)
            try:
                parts = visual_parts(asset, self.store.root)
            except (InputError, ValueError, OSError) as exc:
                log.warning("asset %s: its views cannot be drawn (%s); ranked without its look", uid, exc)
                continue
            views, lab = asset_views(parts, self.cfg)
            images += views
            labs.append(lab)
            drawn.append(uid)
        if not drawn:
            return {}
        per_view = self.embedder.embed(images).reshape(len(drawn), len(self.cfg.view_azimuths_deg), -1)
        return {uid: (_unit_mean(v), lab) for uid, v, lab in zip(drawn, per_view, labs, strict=True)}

    def _keep(self, rows: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
        """Write ``rows`` to the library; when another process is writing it they serve this run only."""
        if not rows:
            return
        try:
            self.store.add_appearance(self.key, rows)
        except FolderLocked as exc:
            log.info("asset appearance not saved in the library this time: %s", exc)


def _central(image: np.ndarray, box: Sequence[float]) -> np.ndarray:
    """``(N, 3)`` pixels of the central half (each side) of pixel ``box`` in ``image``, clipped to it."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    rows = slice(max(0, int(y1 + h / 4)), max(0, int(y2 - h / 4)))
    cols = slice(max(0, int(x1 + w / 4)), max(0, int(x2 - w / 4)))
    return image[rows, cols].reshape(-1, 3)


def _crop(image: np.ndarray, box: Sequence[float]) -> np.ndarray | None:
    """The box's pixels, clipped to the image; None when fewer than 4 pixels a side remain."""
    height, width = image.shape[:2]
    x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
    x2, y2 = min(width, int(np.ceil(box[2]))), min(height, int(np.ceil(box[3])))
    return image[y1:y2, x1:x2] if x2 - x1 >= 4 and y2 - y1 >= 4 else None


def object_looks(
    boxes: dict[int, list[FrameBox]], images: dict[int, np.ndarray], cfg: RetrievalCfg
) -> dict[int, ObjectLook]:
    """Per object id, its look from its ``boxes`` in the keyframe ``images`` (see the module
    docstring); the crops are embedded only when ``cfg.use_look`` (the embedder is not loaded otherwise)."""
    crops: list[tuple[int, np.ndarray]] = []
    colours: dict[int, np.ndarray] = {}
    for object_id, frame_boxes in boxes.items():
        frame_boxes = [(i, b) for i, b in frame_boxes if i in images]
        pixels = [p for i, b in frame_boxes if len(p := _central(images[i], b))]
        if pixels:
            mean = np.concatenate(pixels).mean(axis=0)
            colours[object_id] = srgb8_to_lab(np.round(mean).astype(np.uint8))
        crops += [(object_id, c) for i, b in frame_boxes if (c := _crop(images[i], b)) is not None]
    vectors: dict[int, np.ndarray] = {}
    if cfg.use_look and crops:
        embedded = make_embedder(cfg.embedder).embed([c for _, c in crops])
        ids = np.array([object_id for object_id, _ in crops])
        vectors = {int(o): _unit_mean(embedded[ids == o]) for o in np.unique(ids)}
    return {o: ObjectLook(vectors.get(o), colours.get(o)) for o in boxes}
