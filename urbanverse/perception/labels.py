"""Detector labels -> L3 classes of the asset taxonomy.

Order of resolution for a label:

1. ``IRRELEVANT``: labels that never name a static urban object (indoor things, food, sports
   gear) -> dropped (the caller counts them);
2. ``EXPLICIT``: the preferred L3 class of every COCO label, of the ImageNet labels the crop
   classifier may return, and of this package's own detectors ("tree", "shrub", "pole"...);
3. the taxonomy's own detector links (``classes_for_label``: first linked class);
4. MiniLM text similarity between the label and each class's name + definition (open-vocabulary
   detectors such as YOLO-World / YOLOE give free-form labels); below ``min_similarity`` the
   label is dropped as unmapped.

``DYNAMIC`` labels (people, animals) map to a class but are marked as moving agents.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass

import numpy as np

from urbanverse.assets.taxonomy import TAXONOMY, classes_for_label

log = logging.getLogger(__name__)

#: COCO labels that are never a static urban object worth placing.
IRRELEVANT = frozenset(
    "airplane,boat,tie,frisbee,skis,snowboard,sports ball,kite,baseball bat,baseball glove,surfboard,"
    "tennis racket,bottle,wine glass,cup,fork,knife,spoon,bowl,banana,apple,sandwich,orange,broccoli,"
    "carrot,hot dog,pizza,donut,cake,couch,bed,toilet,tv,laptop,mouse,remote,keyboard,cell phone,"
    "microwave,oven,toaster,sink,refrigerator,book,scissors,teddy bear,hair drier,toothbrush,handbag,"
    "sheep,cow,elephant,bear,zebra,giraffe".split(",")
)

#: Preferred L3 class per known label (COCO, ImageNet crop classifier, this package's detectors).
EXPLICIT: dict[str, str] = {
    # COCO
    "person": "pedestrian",
    "bicycle": "bicycle",
    "car": "sedan",
    "motorcycle": "motorcycle",
    "bus": "city_bus",
    "train": "tram",
    "truck": "van",  # in street footage COCO "truck" is mostly vans and pickups
    "traffic light": "traffic_light",
    "fire hydrant": "fire_hydrant",
    "stop sign": "stop_sign",
    "parking meter": "parking_meter",
    "bench": "bench",
    "bird": "pigeon",
    "cat": "cat",
    "dog": "dog",
    "horse": "dog",  # a moving animal: masked out, never placed
    "backpack": "backpack",
    "umbrella": "patio_umbrella",
    "suitcase": "suitcase",
    "skateboard": "skateboard",
    "chair": "outdoor_chair",
    "potted plant": "potted_plant",
    "dining table": "cafe_table",
    "clock": "street_clock",
    "vase": "planter_pot",
    # ImageNet (crop classifier)
    "street sign": "street_name_sign",
    "pole": "street_lamp",
    "ashcan": "trash_bin",
    "park bench": "bench",
    "mailbox": "mailbox",
    "cab": "taxi",
    "moving van": "van",
    "minivan": "minivan",
    "police van": "police_car",
    "trolleybus": "city_bus",
    "moped": "moped",
    "motor scooter": "moped",
    "mountain bike": "bicycle",
    "pot": "planter",
    "barrel": "barrel",
    "flagpole": "flagpole",
    "pay-phone": "payphone",
    "beach wagon": "station_wagon",
    # this package's detectors
    "tree": "broadleaf_tree",
    "shrub": "shrub",
    "hedge": "hedge",
    "lamp post": "street_lamp",
    "street lamp": "street_lamp",
    "sign post": "street_name_sign",
    # common free-form names (open-vocabulary detectors) that text similarity gets wrong
    "lamppost": "street_lamp",
    "lamp": "street_lamp",
    "street light": "street_lamp",
    "streetlight": "street_lamp",
    "trash can": "trash_bin",
    "garbage can": "trash_bin",
    "rubbish bin": "trash_bin",
    "dustbin": "trash_bin",
    "litter bin": "trash_bin",
    "bin": "trash_bin",
    "bush": "shrub",
    "plant": "potted_plant",
    "lorry": "box_truck",
    "automobile": "sedan",
    "parked car": "sedan",
    "sign": "street_name_sign",
    "road sign": "warning_sign",
    "traffic sign": "warning_sign",
    "cyclist": "bicycle",
    "rider": "pedestrian",
}

#: Labels of moving agents: detected, kept for masking, never placed as static objects.
DYNAMIC = frozenset({"person", "bird", "cat", "dog", "horse", "pedestrian", "child", "rider", "cyclist"})


@dataclass(frozen=True)
class LabelMatch:
    """A resolved label: the L3 class, its (L1, L2, L3) path, how it was found, and whether it moves."""

    category: str
    category_path: tuple[str, str, str]
    how: str  # "explicit" | "taxonomy" | "similarity"
    dynamic: bool
    similarity: float = 1.0


def _match(l3: str, how: str, label: str, sim: float = 1.0) -> LabelMatch:
    c = TAXONOMY[l3]
    dynamic = label in DYNAMIC or c.l1 == "street_life" and c.l2 in ("people", "animals")
    return LabelMatch(category=l3, category_path=(c.l1, c.l2, c.l3), how=how, dynamic=dynamic, similarity=sim)


@functools.cache
def _class_matrix() -> tuple[tuple[str, ...], np.ndarray]:
    """L3 names and their (N, 384) MiniLM vectors of "name: definition"."""
    from urbanverse.assets.embed import embed_texts

    names = tuple(TAXONOMY)
    texts = []
    for n in names:  # "sedan, car, cab: a saloon car with a separate boot"
        c = TAXONOMY[n]
        words = [n.replace("_", " "), c.synset.split(".")[0].replace("_", " "), *c.coco, *c.imagenet]
        texts.append(f"{', '.join(dict.fromkeys(words))}: {c.definition}")
    return names, embed_texts(texts)


@functools.cache
def _similar(label: str) -> tuple[str, float]:
    from urbanverse.assets.embed import embed_texts

    names, mat = _class_matrix()
    sims = mat @ embed_texts([label])[0]
    best = int(np.argmax(sims))
    return names[best], float(sims[best])


@functools.cache
def map_label(label: str, min_similarity: float = 0.5, use_similarity: bool = True) -> LabelMatch | None:
    """The taxonomy class for a detector ``label``, or None when it is irrelevant or unmapped.

    ``min_similarity``: cosine threshold for the MiniLM fallback (step 4 above).
    """
    key = " ".join(label.strip().lower().replace("_", " ").split())
    if not key or key in IRRELEVANT:
        return None
    if key in EXPLICIT:
        return _match(EXPLICIT[key], "explicit", key)
    if key.replace(" ", "_") in TAXONOMY:
        return _match(key.replace(" ", "_"), "explicit", key)
    for source in ("coco", "imagenet"):
        linked = classes_for_label(key, source)
        if linked:
            return _match(linked[0].l3, "taxonomy", key)
    if not use_similarity:
        return None
    l3, sim = _similar(key)
    if sim < min_similarity:
        log.debug("label %r unmapped (best %s at %.2f)", key, l3, sim)
        return None
    return _match(l3, "similarity", key, sim)
