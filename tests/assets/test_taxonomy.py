"""The urban taxonomy: counts, unique names, known materials, valid detector labels, lookups."""

from __future__ import annotations

import re

import pytest

from urbanverse.assets.taxonomy import (
    COCO_CLASSES,
    MATERIALS,
    TAXONOMY,
    classes_for_label,
    get_class,
    l1_names,
    l2_names,
)


def test_counts_and_unique_names() -> None:
    assert len(l1_names()) >= 8
    assert len(l2_names()) >= 40 and len(set(l2_names())) == len(l2_names())
    assert len(TAXONOMY) >= 150
    assert len(COCO_CLASSES) == 80 and len(set(MATERIALS)) == 30


def test_every_class_is_well_formed() -> None:
    for name, c in TAXONOMY.items():
        assert c.l3 == name and re.fullmatch(r"[a-z][a-z0-9_]*", name), name
        assert c.l1 in l1_names() and c.l2 in l2_names()
        assert re.fullmatch(r"[a-z0-9_'-]+\.n\.\d\d", c.synset), c.synset
        assert c.definition and "\n" not in c.definition
        assert all(0 < lo <= hi for lo, hi in zip(c.size_min, c.size_max, strict=True)), name
        assert c.materials and set(c.materials) <= set(MATERIALS), (name, c.materials)
        assert set(c.coco) <= set(COCO_CLASSES), (name, c.coco)
        assert all(s and s == s.strip() and "_" not in s for s in c.imagenet), (name, c.imagenet)


def test_label_lookup() -> None:
    assert get_class("bench") in classes_for_label("bench", "coco")
    assert [c.l3 for c in classes_for_label("Fire Hydrant", "coco")][0] == "fire_hydrant"
    assert {"trash_bin", "wheelie_bin"} <= {c.l3 for c in classes_for_label("ashcan", "imagenet")}
    assert classes_for_label("giraffe", "coco") == []
    with pytest.raises(ValueError, match="coco"):
        classes_for_label("bench", "openimages")  # type: ignore[arg-type]


def test_get_class_suggests_close_matches() -> None:
    assert get_class("traffic_cone").l1 == "barriers"
    with pytest.raises(ValueError, match="traffic_light"):
        get_class("trafic_light")
