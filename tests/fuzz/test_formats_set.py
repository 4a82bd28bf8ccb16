"""Fuzzing ``--set key=value`` strings through ``apply_overrides`` (gen's and train's configs) and gen.

The property: ``apply_overrides`` returns a config of the same type, or raises ``InputError`` with one
line; a number it accepts is finite. Through ``urbanverse gen`` (on a missing video, so nothing
runs): exit 2 with one ``error:`` line, and a bad ``--set`` writes nothing at all.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.fuzz.formats_common import assert_one_line_error, command_tree_built_once
from urbanverse.cli import app
from urbanverse.config import apply_overrides, to_dict
from urbanverse.errors import InputError
from urbanverse.gen.pipeline import GenCfg
from urbanverse.rl.config import EnvSpec, TrainCfg

runner = CliRunner()
GEN = GenCfg()
TRAIN = TrainCfg(scenes=("scenes/example",), env=EnvSpec())


def _keys(data, prefix=""):
    out = []
    for key, value in data.items():
        out.append(prefix + key)
        if isinstance(value, dict):
            out += _keys(value, f"{prefix}{key}.")
    return out


GEN_KEYS, TRAIN_KEYS = _keys(to_dict(GEN)), _keys(to_dict(TRAIN))

#: Value text: JSON of every kind, numbers at and past every edge, and free text.
VALUES = st.one_of(
    st.sampled_from(
        ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000, "[" * 100000, "1e308", "-0", "0"]
        + ["true", "null", "[]", "{}", '"x"', "[1, 2, 3]", '{"a": 1}', "1.5", "-1", "3e-4", "", " ", "a=b"]
        + ["\n", "\x85", "\u2028", "\x00", "[1, [2, [3]]]", '{"', "2**64", str(2**64), str(-(2**63))]
    ),
    st.integers(min_value=-(2**80), max_value=2**80).map(str),
    st.floats().map(repr),
    st.text(max_size=30),
)


@st.composite
def overrides(draw, keys: list[str]) -> str:
    if draw(st.integers(0, 4)):
        key = draw(st.sampled_from(keys)) + draw(st.sampled_from(["", "", "", ".x", "x", ".", " "]))
    else:
        key = draw(st.text(max_size=20))
    sep = draw(st.sampled_from(["=", "=", "=", "", "==", " = "]))
    return f"{key}{sep}{draw(VALUES)}"


def _finite_numbers(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_numbers(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite_numbers(v) for v in value)
    return True


def check_override(cfg, items: list[str]) -> None:
    try:
        out = apply_overrides(cfg, items)
    except InputError as exc:
        assert len(str(exc).splitlines()) == 1, str(exc)
        assert len(str(exc)) < 2000, str(exc)[:200]
        return
    assert type(out) is type(cfg) and dataclasses.is_dataclass(out)
    assert _finite_numbers(to_dict(out)), items


@settings(max_examples=150, derandomize=True, deadline=None)
@given(items=st.lists(overrides(GEN_KEYS), min_size=1, max_size=3))
def test_gen_overrides_apply_or_give_one_line(items):
    check_override(GEN, items)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(items=st.lists(overrides(TRAIN_KEYS), min_size=1, max_size=3))
def test_train_overrides_apply_or_give_one_line(items):
    check_override(TRAIN, items)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, database=None)
@given(
    gen=st.lists(overrides(GEN_KEYS), min_size=1, max_size=4),
    train=st.lists(overrides(TRAIN_KEYS), max_size=4),
)
def test_overrides_long_run(gen, train):
    check_override(GEN, gen)
    check_override(TRAIN, train)


def check_gen_cli(item: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        try:
            apply_overrides(GEN, [item])
            bad = False
        except InputError:
            bad = True
        result = runner.invoke(app, ["gen", str(Path(tmp) / "missing.mp4"), "-o", str(out), "--set", item])
        assert result.exit_code == 2, (item, result.output, result.exception)
        assert_one_line_error(result.output, "")
        if bad:
            assert not out.exists(), "a bad --set wrote into the output folder"
        else:
            assert "missing.mp4" in result.output


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(item=overrides(GEN_KEYS))
def test_gen_cli_set_exits_2_with_one_line(item):
    with command_tree_built_once():
        check_gen_cli(item)


#: (override, text of the one error line; "" when it applies). Crashes found are marked.
CORPUS = [
    ("lift.merge_radius_m=1.5", ""),
    ("lift.merge_radius_m=NaN", "expected a finite number, got nan"),  # was accepted: NaN passes every `<=`
    ("lift.merge_radius_m=Infinity", "expected a finite number, got inf"),  # was accepted
    ("lift.merge_radius_m=" + "9" * 5000, "cannot read"),  # crash: ValueError (int digits limit)
    ("lift.merge_radius_m=" + "[" * 100000, "cannot read"),  # crash: RecursionError
    ("retrieval.k=1e300", "out of range"),  # was accepted as a 301-digit int
    ("detection.detector=[1]", "expected a string, got [1]"),  # was accepted as the text "[1]"
    ("lift.x.y=1", "'lift.x' is not a config section"),
    ("nope=1", "no field 'nope'"),
    ("justtext", "expected key=value"),
]


@pytest.mark.parametrize(("item", "expected"), CORPUS, ids=[c[0][:40] for c in CORPUS])
def test_corpus(item, expected):
    if not expected:
        apply_overrides(GEN, [item])
    else:
        with pytest.raises(InputError) as info:
            apply_overrides(GEN, [item])
        assert expected in str(info.value) and len(str(info.value).splitlines()) == 1
    with command_tree_built_once():
        check_gen_cli(item)
