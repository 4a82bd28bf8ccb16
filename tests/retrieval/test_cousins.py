"""Cousins from the asset store: class (or text), box size, then look, on a library filled on first use."""

from __future__ import annotations

import numpy as np
import pytest

from urbanverse.assets.store import AssetStore
from urbanverse.colour import ciede2000, srgb8_to_lab
from urbanverse.retrieval import appearance as appearance_module
from urbanverse.retrieval.appearance import AssetAppearance
from urbanverse.retrieval.cousins import ObjectLook, RetrievalCfg, prepare_library, rank_cousins

NO_LOOK = ObjectLook(None, None)
RED = srgb8_to_lab(np.array([170, 25, 25], np.uint8))


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A library never built, filled with the catalogue's benches and facades as gen fills it."""
    store = AssetStore(tmp_path_factory.mktemp("library"))
    added = prepare_library(store, {"bench", "building_facade"}, RetrievalCfg())
    yield store, added
    store.close()


def _rank(store, category, size, cfg, look=NO_LOOK, **flags):
    return rank_cousins(1, category, size, look, store, AssetAppearance(store, cfg).of, cfg, **flags)


def test_a_library_never_built_gets_the_core_of_the_classes_seen_once(library) -> None:
    store, added = library
    seeds = RetrievalCfg().core_seeds
    assert store.count_by("l3") == {"bench": seeds, "building_facade": seeds}
    assert added == len(store) == 2 * seeds
    last, next_one = f"bench_slatted-{seeds - 1:05d}", f"bench_slatted-{seeds:05d}"
    assert store.present(["bench_slatted-00000", last, next_one]) == {"bench_slatted-00000", last}
    assert prepare_library(store, {"bench", "building_facade"}, RetrievalCfg()) == 0
    assert (
        prepare_library(store, {"bench"}, RetrievalCfg(core_seeds=seeds + 2)) == 2
    )  # a bigger core: the rest


def test_size_alone_ranks_every_asset_of_the_class_by_box_distance(library) -> None:
    store, _ = library
    cfg = RetrievalCfg(k=5, use_look=False)
    ranked = _rank(store, "bench", (1.8, 0.6, 0.8), cfg)
    members = store.members("l3", "bench")
    distance = np.abs(members.dims - [1.8, 0.6, 0.8]).sum(axis=1)
    assert ranked.matched_level == "l3" and len(ranked.uids) == 5
    assert ranked.scores == pytest.approx(sorted(distance)[:5])  # the whole class, not a sample of it


def test_a_front_only_object_is_matched_on_width_and_height(library) -> None:
    """A facade 30 m deep by its prior (nothing seen behind the front) ranks the slabs as one 1 m
    deep: the depth does not count; measured whole, the depth pushes every score up."""
    store, _ = library
    cfg = RetrievalCfg(k=4, use_look=False)
    front = _rank(store, "building_facade", (30.0, 12.0, 10.0), cfg, front_only=True)
    shallow = _rank(store, "building_facade", (1.0, 12.0, 10.0), cfg, front_only=True)
    whole = _rank(store, "building_facade", (30.0, 12.0, 10.0), cfg)
    assert front.uids == shallow.uids and front.scores == pytest.approx(shallow.scores)
    assert min(whole.scores) > max(front.scores)


def test_a_height_seen_as_a_lower_bound_lets_a_taller_asset_of_the_right_width_win(library) -> None:
    """A front 9.7 m long whose 5 m of wall ran out of the frame (the library's facade slabs are 6-20
    m tall): measured as its true height, the shortest slab of about that width wins; as a lower
    bound, the width decides, and the asset placed is at least as tall as what was seen."""
    store, _ = library
    cfg = RetrievalCfg(k=1, use_look=False)
    size = (1.0, 9.7, 5.0)
    whole_asset = store.get(_rank(store, "building_facade", size, cfg, front_only=True).uids[0])
    cut_asset = store.get(_rank(store, "building_facade", size, cfg, front_only=True, top_cut=True).uids[0])
    assert abs(cut_asset.width - 9.7) <= abs(whole_asset.width - 9.7)
    assert abs(cut_asset.width - 9.7) < 0.5 and cut_asset.height >= 5.0


def test_the_crops_colour_picks_the_size_candidate_whose_rendered_colour_is_nearest(library) -> None:
    store, _ = library
    size = (1.8, 0.6, 0.8)
    cfg = RetrievalCfg(k=1, colour_weight=10.0)  # colour outweighs any box difference among the kept
    kept = _rank(store, "bench", size, RetrievalCfg(k=cfg.size_keep, use_look=False)).uids
    by_look = _rank(store, "bench", size, cfg, look=ObjectLook(None, RED)).uids[0]
    views = AssetAppearance(store, cfg).of(kept)
    differences = {u: float(ciede2000(views[u][1], RED)) for u in kept}
    assert by_look in kept and differences[by_look] == min(differences.values())
    assert max(differences.values()) - min(differences.values()) > 10  # the kept benches differ in colour


def test_asset_views_are_drawn_once_and_kept_in_the_library(library, monkeypatch) -> None:
    store, _ = library
    cfg = RetrievalCfg()
    uids = list(store.members("l3", "bench").uids[:3])
    first = AssetAppearance(store, cfg).of(uids)
    assert set(first) == set(uids)
    assert all(abs(np.linalg.norm(v) - 1) < 1e-5 and lab.shape == (3,) for v, lab in first.values())

    def no_drawing(*args, **kwargs):
        raise AssertionError("drawn again")

    monkeypatch.setattr(appearance_module, "render_views", no_drawing)
    again = AssetAppearance(store, cfg).of(uids)  # a later run reads them from the library
    assert all(np.array_equal(again[u][0], first[u][0]) for u in uids)
    with pytest.raises(AssertionError, match="drawn again"):  # another embedder's views are its own
        AssetAppearance(store, RetrievalCfg(view_px=64)).of(uids[:1])


def test_a_label_outside_the_taxonomy_finds_its_candidates_by_text(library) -> None:
    store, _ = library
    ranked = _rank(store, "wooden park bench with a backrest", (1.8, 0.6, 0.8), RetrievalCfg(use_look=False))
    assert ranked.matched_level == "text" and ranked.uids
    assert all(store.get(u).category == "bench" for u in ranked.uids)
    assert not store._db.execute("SELECT COUNT(*) FROM texts WHERE vector IS NULL").fetchone()[0]


def test_with_the_class_stage_off_every_asset_of_the_library_is_a_candidate(library) -> None:
    store, _ = library
    ranked = _rank(store, "bench", (0.9, 12.0, 15.0), RetrievalCfg(k=3, use_text=False, use_look=False))
    assert ranked.matched_level == "all"
    assert all(store.get(u).category == "building_facade" for u in ranked.uids)  # a bench that size is none
