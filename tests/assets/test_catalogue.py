"""The procedural catalogue: deterministic entries, every generator annotated, lazy cached meshes."""

from __future__ import annotations

import pytest

from urbanverse.assets.catalogue import (
    build_parts,
    catalogue_entries,
    entry_of,
    materialize,
    record_of,
)
from urbanverse.assets.generators import GENERATORS
from urbanverse.assets.record import load_asset, load_collision_parts, load_visual_parts
from urbanverse.assets.taxonomy import TAXONOMY
from urbanverse.render.thumbnail import library_thumbnail


def test_entries_cover_every_generator_and_round_trip():
    entries = catalogue_entries(3 * len(GENERATORS))
    assert {e.generator for e in entries} == set(GENERATORS)
    assert len({e.uid for e in entries}) == len(entries)
    assert all(entry_of(e.uid) == e for e in entries)
    with pytest.raises(ValueError, match="not a procedural"):
        entry_of("nonsense-xx")


def test_records_are_deterministic_and_plausible():
    for entry in catalogue_entries(len(GENERATORS)):
        first, again = record_of(entry), record_of(entry)
        assert first == again
        assert first.category in TAXONOMY
        assert first.mass > 0 and first.height > 0
        assert first.source.generator.startswith(entry.generator)
        assert first.value_origin["mass"] == "derived"


def test_materialize_writes_once_to_the_cache(tmp_path):
    asset = record_of(catalogue_entries(1)[0])
    folder = materialize(asset, tmp_path, thumbnail=library_thumbnail)
    assert load_asset(folder) == asset
    stamp = (folder / "asset.json").stat().st_mtime_ns
    assert materialize(asset, tmp_path, thumbnail=library_thumbnail) == folder
    assert (folder / "asset.json").stat().st_mtime_ns == stamp
    parts = load_collision_parts(folder, asset)
    assert all(p.is_convex for p in parts)
    visual = load_visual_parts(folder, asset)
    assert len(visual) == len(parts)
    built = {p.name: p.rgb for p in build_parts(catalogue_entries(1)[0])[1]}
    for saved in visual:  # colours survive the GLB round trip
        assert saved.rgb == pytest.approx(built[saved.name], abs=1 / 255), saved.name
