"""Cousin ranking: candidates measured ahead of time are the ones ranked later."""

from __future__ import annotations

import pytest

from urbanverse.retrieval import cousins
from urbanverse.retrieval.cousins import CousinCfg, prepare_candidates, rank_cousins


def test_candidates_prepared_ahead_are_ranked_without_building_again(monkeypatch) -> None:
    cfg = CousinCfg(k=2, candidates_per_generator=3)
    cousins._candidates.cache_clear()
    prepare_candidates(["bench", "bench", "pedestrian_crossing_sign"], cfg)

    def no_building(entry):
        raise AssertionError(f"{entry} built again")

    monkeypatch.setattr(cousins, "record_of", no_building)
    ranked = rank_cousins(7, "bench", (1.8, 0.6, 0.8), None, cfg)
    assert ranked.track_id == 7 and len(ranked.uids) == cfg.k
    assert ranked.scores == tuple(sorted(ranked.scores))
    with pytest.raises(AssertionError, match="built again"):
        rank_cousins(8, "fire_hydrant", (0.3, 0.3, 0.7), None, cfg)
    cousins._candidates.cache_clear()


def test_a_front_only_object_is_matched_on_width_and_height() -> None:
    """A facade 30 m deep by its prior (nothing seen behind the front) ranks the slabs as one 1 m
    deep: the depth does not count; measured whole, the depth pushes every score up."""
    cfg = CousinCfg(k=4, candidates_per_generator=6)
    front = rank_cousins(1, "building_facade", (30.0, 12.0, 10.0), None, cfg, front_only=True)
    shallow = rank_cousins(2, "building_facade", (1.0, 12.0, 10.0), None, cfg, front_only=True)
    whole = rank_cousins(3, "building_facade", (30.0, 12.0, 10.0), None, cfg)
    assert front.uids == shallow.uids and front.scores == pytest.approx(shallow.scores)
    assert min(whole.scores) > max(front.scores)


def test_a_height_seen_as_a_lower_bound_lets_a_taller_asset_of_the_right_width_win() -> None:
    """A front 9.7 m long whose 5 m of wall ran out of the frame (the library's facade slabs are 6-20
    m tall): measured as its true height, the shortest, 6 m wide slab wins; as a lower bound, the
    width decides, and the asset placed is at least as tall as what was seen."""
    cfg = CousinCfg(k=1)
    size = (1.0, 9.7, 5.0)
    seen_whole = rank_cousins(1, "building_facade", size, None, cfg, front_only=True)
    cut = rank_cousins(1, "building_facade", size, None, cfg, front_only=True, top_cut=True)
    whole_asset, cut_asset = cousins.asset_of(seen_whole.uids[0]), cousins.asset_of(cut.uids[0])
    assert abs(cut_asset.width - 9.7) < abs(whole_asset.width - 9.7)
    assert abs(cut_asset.width - 9.7) < 0.5 and cut_asset.height >= 5.0
