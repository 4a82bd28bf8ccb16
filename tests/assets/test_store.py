"""The store: search by meaning with filters, transactions, concurrent readers, the ANN index."""

from __future__ import annotations

import dataclasses
import sqlite3

import numpy as np
import pytest

from urbanverse.assets import store as store_module
from urbanverse.assets.store import DB_FILE, AssetStore, SearchFilter
from urbanverse.errors import InputError


@pytest.fixture
def store(tmp_path, small_assets):
    with AssetStore(tmp_path / "lib") as s:
        s.add(small_assets)
        yield s


def test_round_trip_and_counts(store, small_assets):
    assert len(store) == 3
    assert store.get("bench-1") == small_assets[0]
    assert store.count_by("l1") == {"street_furniture": 2, "lighting": 1}
    with pytest.raises(InputError, match="no asset"):
        store.get("nope")


@pytest.mark.parametrize(
    ("query", "first"),
    [("wooden park bench to sit on", "bench-1"), ("garbage can", "bin-1"), ("street light pole", "post-1")],
)
def test_search_by_meaning(store, query, first):
    hits = store.search(query, k=3)
    assert hits[0].asset.uid == first
    assert hits[0].score >= hits[-1].score


def test_filters(store):
    hits = store.search("something", k=5, where=SearchFilter(category="street_furniture"))
    assert {h.asset.uid for h in hits} == {"bench-1", "bin-1"}
    hits = store.search("something", k=5, where=SearchFilter(max_height=1.0))
    assert {h.asset.uid for h in hits} == {"bench-1", "bin-1"}
    assert store.search("bench", where=SearchFilter(category="vehicles")) == []


def test_ann_index_agrees_with_exact_search(store, monkeypatch):
    exact = [h.asset.uid for h in store.search("lamp", k=3, where=SearchFilter(min_height=0.0))]
    monkeypatch.setattr(store_module, "EXACT_SEARCH_MAX", 0)
    approx = [h.asset.uid for h in store.search("lamp", k=3, where=SearchFilter(min_height=0.0))]
    assert approx == exact
    assert (store.root / store_module.INDEX_FILE).is_file()


def test_failed_write_leaves_store_unchanged(store, small_assets, monkeypatch):
    renamed = [
        dataclasses.replace(a, uid=a.uid + "-copy", description=a.description + " copy") for a in small_assets
    ]
    real_row = AssetStore._row

    def failing_row(asset, text_id):
        if asset.uid == "post-1-copy":
            raise RuntimeError("disk full")
        return real_row(asset, text_id)

    monkeypatch.setattr(AssetStore, "_row", staticmethod(failing_row))
    with pytest.raises(RuntimeError):
        store.add(renamed)
    assert len(store) == 3
    assert store._text_count() == 3


def test_readers_search_while_a_writer_holds_a_transaction(store):
    writer = sqlite3.connect(store.root / DB_FILE, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM assets")
    with AssetStore(store.root) as reader:
        assert len(reader) == 3
        assert reader.search(np.asarray(reader._all_vectors()[1][0]), k=1)
    writer.execute("ROLLBACK")
    writer.close()


def test_a_text_another_process_added_after_the_look_up_is_kept(store, small_assets, monkeypatch):
    # gen workers of one batch fill one library: each looks its texts up before it takes the lock
    ids_before = dict(store._db.execute("SELECT text, id FROM texts").fetchall())
    with AssetStore(store.root) as late:
        monkeypatch.setattr(late, "_text_ids", lambda texts: {})  # looked up before the first writer
        assert late.add(small_assets, embed=False) == 3
        assert dict(late._db.execute("SELECT text, id FROM texts").fetchall()) == ids_before
        assert late.get("bench-1") == small_assets[0] and len(late) == 3
