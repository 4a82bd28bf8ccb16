"""Library statistics: counts per taxonomy level and source, attribute coverage and value origins."""

from __future__ import annotations

import dataclasses
from collections import Counter

from urbanverse.assets.record import Asset
from urbanverse.assets.store import AssetStore

#: Fields whose presence is counted (a field is covered when it is not empty, zero or unknown).
COVERAGE_FIELDS = tuple(
    f.name
    for f in dataclasses.fields(Asset)
    if f.name
    not in (
        "schema_version",
        "uid",
        "visual_mesh",
        "collision_parts",
        "collision_approximation",
        "value_origin",
        "source",
    )
)


def _covered(value) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        return value != 0
    return bool(value)


def library_stats(store: AssetStore, sample: int = 5000) -> dict:
    """Counts over the whole store; coverage and origins over a uniform sample of ``sample`` records."""
    uids = store.sample_uids(sample)
    records = [store.get(uid) for uid in uids]
    coverage = {}
    for name in COVERAGE_FIELDS:
        origin = Counter(r.value_origin.get(name, "-") for r in records)
        coverage[name] = {
            "coverage": sum(_covered(getattr(r, name)) for r in records) / max(len(records), 1),
            "origin": dict(origin.most_common()),
        }
    by_l1, by_l2, by_l3 = store.count_by("l1"), store.count_by("l2"), store.count_by("l3")
    return {
        "assets": len(store),
        "l1_classes": len(by_l1),
        "l2_classes": len(by_l2),
        "l3_classes": len(by_l3),
        "by_source": store.count_by("source_kind"),
        "by_l1": by_l1,
        "by_l2": by_l2,
        "by_l3": by_l3,
        "sampled": len(records),
        "coverage": coverage,
    }
