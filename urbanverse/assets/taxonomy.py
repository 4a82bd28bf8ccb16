"""A 3-level urban object ontology (L1 / L2 / L3) linked to WordNet synsets and detector label sets.

Each L3 class carries a one-line definition, a typical size range, default materials (keys of the
material table) and the COCO and ImageNet-1k class names that detect it. Sizes are extents in the
asset frame, in metres: (length along +X = the front direction, width along Y, height along Z).
So a bench, whose front is where one sits, is short in x and long in y; a car is long in x.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from urbanverse.assets.taxonomy_table import TREE

#: The 80 COCO detection class names.
COCO_CLASSES = tuple(
    "person,bicycle,car,motorcycle,airplane,bus,train,truck,boat,traffic light,fire hydrant,stop sign,"
    "parking meter,bench,bird,cat,dog,horse,sheep,cow,elephant,bear,zebra,giraffe,backpack,umbrella,"
    "handbag,tie,suitcase,frisbee,skis,snowboard,sports ball,kite,baseball bat,baseball glove,skateboard,"
    "surfboard,tennis racket,bottle,wine glass,cup,fork,knife,spoon,bowl,banana,apple,sandwich,orange,"
    "broccoli,carrot,hot dog,pizza,donut,cake,chair,couch,potted plant,bed,dining table,toilet,tv,laptop,"
    "mouse,remote,keyboard,cell phone,microwave,oven,toaster,sink,refrigerator,book,clock,vase,scissors,"
    "teddy bear,hair drier,toothbrush".split(",")
)

#: Material names used by the taxonomy and the generators (keys of the material table).
MATERIALS = (
    "steel stainless_steel cast_iron aluminium painted_metal wood hardwood plastic hdpe rubber glass "
    "concrete stone granite brick asphalt ceramic fabric foliage bark soil water fibreglass carbon_fibre "
    "leather foam cardboard paper marble bronze"
).split()


@dataclass(frozen=True)
class TaxonomyClass:
    """One L3 class. Sizes: (length x, width y, height z) in metres, asset frame, front along +X."""

    l1: str
    l2: str
    l3: str
    synset: str
    definition: str
    size_min: tuple[float, float, float]
    size_max: tuple[float, float, float]
    materials: tuple[str, ...]
    coco: tuple[str, ...]
    imagenet: tuple[str, ...]


def _build() -> dict[str, TaxonomyClass]:
    out: dict[str, TaxonomyClass] = {}
    for l1, l2s in TREE.items():
        for l2, entries in l2s.items():
            for l3, synset, definition, smin, smax, mats, coco, imnet in entries:
                if l3 in out:
                    raise ValueError(f"taxonomy: duplicate L3 class {l3!r}")
                out[l3] = TaxonomyClass(
                    l1=l1,
                    l2=l2,
                    l3=l3,
                    synset=synset,
                    definition=definition,
                    size_min=tuple(float(x) for x in smin),
                    size_max=tuple(float(x) for x in smax),
                    materials=tuple(mats.split()),
                    coco=tuple(s for s in coco.split(",") if s),
                    imagenet=tuple(s for s in imnet.split(",") if s),
                )
    return out


#: Every L3 class, keyed by its snake_case name.
TAXONOMY: dict[str, TaxonomyClass] = _build()


def get_class(l3: str) -> TaxonomyClass:
    """The L3 class named ``l3``; raises ``ValueError`` naming close matches when unknown."""
    try:
        return TAXONOMY[l3]
    except KeyError:
        close = difflib.get_close_matches(l3, list(TAXONOMY), n=5, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown taxonomy class {l3!r}{hint}") from None


def classes_for_label(label: str, source: Literal["coco", "imagenet"]) -> list[TaxonomyClass]:
    """L3 classes linked to a detector label (``source`` "coco" or "imagenet"), in taxonomy order."""
    if source not in ("coco", "imagenet"):
        raise ValueError(f"label source must be 'coco' or 'imagenet', got {source!r}")
    key = label.strip().lower()
    return [c for c in TAXONOMY.values() if key in (s.lower() for s in getattr(c, source))]


def l1_names() -> list[str]:
    """L1 class names in taxonomy order."""
    return list(TREE)


def l2_names() -> list[str]:
    """L2 class names in taxonomy order (unique across L1)."""
    return [l2 for l2s in TREE.values() for l2 in l2s]
