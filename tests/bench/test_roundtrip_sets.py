"""The round trip's tour sets: the held-out tours never overlap the tuning tours, and targets are read
the way the tables print them."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "bench_roundtrip.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("bench_roundtrip", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sets(tool, *argv: str) -> dict[str, list[int]]:
    parser = tool._parser()
    args = parser.parse_args(list(argv))
    tool._check_args(parser, args)
    return tool.tour_sets(args)


def test_held_out_tours_come_first_and_never_overlap_the_tuning_tours(tool):
    sets = _sets(tool, "--tours", "5")
    assert list(sets) == ["heldout", "tuning"]
    assert sets["tuning"] == [0, 1, 2, 3, 4]
    assert sets["heldout"] == list(range(tool.HELDOUT_FIRST_TOUR, tool.HELDOUT_FIRST_TOUR + 5))
    more = _sets(tool, "--tours", "10", "--first-tour", "10")
    assert more["tuning"] == list(range(10, 20)) and min(more["heldout"]) == tool.HELDOUT_FIRST_TOUR + 10
    assert _sets(tool, "--split", "tuning") == {"tuning": [0, 1, 2, 3, 4]}


def test_fresh_draws_lie_beyond_the_fixed_sets_and_can_be_named_again(tool):
    drawn = _sets(tool, "--fresh", "--tours", "3", "--split", "heldout")["heldout"]
    assert len(set(drawn)) == 3 and all(tool.FRESH_TOURS[0] <= t < tool.FRESH_TOURS[1] for t in drawn)
    again = _sets(tool, "--heldout-tours", ",".join(map(str, drawn)), "--split", "heldout")
    assert again["heldout"] == drawn


@pytest.mark.parametrize(
    "argv",
    [
        ["--heldout-tours", "3"],  # a tuning tour
        ["--fresh", "--split", "tuning"],
        ["--first-tour", "4998", "--tours", "5"],  # the tuning set running into the held-out one
        ["--fresh", "--keep", "x", "--rerun-from", "objects"],
    ],
)
def test_sets_that_would_mix_tuning_and_held_out_tours_are_refused(tool, argv):
    with pytest.raises(SystemExit):
        _sets(tool, *argv)


def test_targets_mark_the_figures_that_meet_them(tool):
    assert tool.meets("cat_acc", 0.8) and not tool.meets("cat_acc", 0.79)
    assert tool.meets("pos_err_m", 0.5) and not tool.meets("pos_err_m", 0.51)
    assert tool.meets("ground_pieces", 1.0) and not tool.meets("ground_pieces", 2.0)
    assert not tool.meets("extent_iou_inferred", math.nan) and not tool.meets("map25", 1.0)
    assert tool._cell("recall_1m", 0.7) == "**0.700**" and tool._cell("recall_1m", 0.5) == "0.500"
