"""Retrieval scores of a generated scene against the true one it was made from (round-trip benchmark).

For the object pairs matched within ``HIT_RADIUS_M`` (:mod:`urbanverse.bench.evaluate`):

- ``ret_class``: the placed asset has the true object's L3 class;
- ``ret_size_m``: |dl| + |dw| + |dh| between the placed asset's box and the true one's (m, as placed,
  stretch included);
- ``ret_colour``: CIEDE2000 between the two assets' rendered colours (the mean colour of their views,
  :func:`urbanverse.retrieval.appearance.asset_views`, the same for both, so like is compared with like);
- ``ret_look``: the true asset's generator is among the object's cousins (the placed one included).

Each comes as the list over pairs (``*_list``, to pool tours) and its mean or median.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from urbanverse.assets.record import load_asset, load_visual_parts
from urbanverse.bench.evaluate import ObjectMatch
from urbanverse.colour import ciede2000
from urbanverse.retrieval.appearance import asset_views
from urbanverse.retrieval.cousins import RetrievalCfg
from urbanverse.scene.record import AssetRef, Scene


@functools.cache
def _generator(folder: Path) -> str | None:
    """The name of the generator that made the asset in ``folder`` (None for an ingested asset)."""
    generator = load_asset(folder).source.generator
    return generator.split("@")[0] if generator else None


@functools.cache
def _rendered_lab(folder: Path) -> np.ndarray:
    """The rendered CIELAB colour of the asset in ``folder``."""
    return asset_views(load_visual_parts(folder, load_asset(folder)), RetrievalCfg())[1]


def _folder(scene_dir: Path, ref: AssetRef) -> Path:
    return (Path(scene_dir) / ref.path).resolve()


def retrieval_scores(
    generated: Scene, generated_dir: Path, truth: Scene, truth_dir: Path, match: ObjectMatch
) -> dict[str, float | list[float]]:
    """The scores of the module docstring for the pairs of ``match`` within its hit radius."""
    classes, sizes, colours, looks = [], [], [], []
    for r, c in match.hits():
        placed, true = generated.objects[r], truth.objects[c]
        classes.append(float(placed.category == true.category))
        sizes.append(float(np.abs(np.subtract(placed.size, true.size)).sum()))
        true_lab, placed_lab = (
            _rendered_lab(_folder(truth_dir, true.asset)),
            _rendered_lab(_folder(generated_dir, placed.asset)),
        )
        colours.append(float(ciede2000(placed_lab, true_lab)))
        true_generator = _generator(_folder(truth_dir, true.asset))
        cousin_generators = {
            _generator(_folder(generated_dir, ref)) for ref in (placed.asset, *placed.cousins)
        }
        looks.append(float(true_generator is not None and true_generator in cousin_generators))
    out: dict[str, float | list[float]] = {
        "ret_class_list": classes,
        "ret_size_list": sizes,
        "ret_colour_list": colours,
        "ret_look_list": looks,
    }
    out["ret_pairs"] = float(len(classes))
    out["ret_class"] = float(np.mean(classes)) if classes else float("nan")
    out["ret_size_m"] = float(np.median(sizes)) if sizes else float("nan")
    out["ret_colour"] = float(np.median(colours)) if colours else float("nan")
    out["ret_look"] = float(np.mean(looks)) if looks else float("nan")
    return out
