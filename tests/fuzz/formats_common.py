"""What the format fuzzers share: JSON mutations, folder snapshots, and the property on a CLI result.

A mutation starts from a valid file and changes one thing the way a broken writer or a hand edit
would: a value of the wrong type, NaN or infinity, a huge or negative number, a missing or an extra
field, a duplicated list element, truncated text, bytes that are not UTF-8. Numbers JSON cannot
carry from Python (5000 digits, 1e400) are spliced in as raw text.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

#: Raw JSON number tokens that Python's json cannot write (or writes only as NaN/Infinity).
RAW_TOKENS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000, "1" + "0" * 400, "-0"]

#: Values a broken writer puts anywhere.
NASTY_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -1, 1e-300, 1e300, -1e300, 1e9, -1e9, 1e5 + 1, 2**63, 2**64]),
    st.text(max_size=20),
    st.sampled_from(["", "x" * 5000, "../../etc/passwd", "/etc", "assets/\x00x", "a\nb"]),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=5),
    st.just({}),
    st.just([]),
    st.sampled_from([f"__RAW{i}__" for i in range(len(RAW_TOKENS))]),
)


def leaf_paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``data`` (dict keys and list indices), the root excluded."""
    out = []
    if isinstance(data, dict):
        for key, value in data.items():
            out.append((*prefix, key))
            out += leaf_paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out.append((*prefix, i))
            out += leaf_paths(value, (*prefix, i))
    return out


def get_at(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


def dumps_with_raw(data: Any) -> bytes:
    """``data`` as JSON, each ``"__RAW<i>__"`` string replaced by ``RAW_TOKENS[i]``."""
    text = json.dumps(data, allow_nan=True)
    for i, token in enumerate(RAW_TOKENS):
        text = text.replace(f'"__RAW{i}__"', token)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def json_mutation(draw, base: dict, focus: list[tuple] = ()) -> tuple[str, bytes]:
    """One mutation of ``base`` (a parsed JSON document): ``(description, bytes to write)``.

    ``focus``: paths worth hitting more often (a scene's objects, polygons and asset paths).
    """
    data = json.loads(json.dumps(base))
    paths = leaf_paths(data)
    kind = draw(
        st.sampled_from(
            ["value", "value", "number", "number", "delete", "extra", "duplicate", "truncate", "bytes"]
        )
    )
    if kind in ("value", "number") and focus and draw(st.booleans()):
        path = draw(st.sampled_from(list(focus)))
    else:
        path = draw(st.sampled_from(paths))
    parent, key = get_at(data, path[:-1]), path[-1]
    if kind == "value":
        parent[key] = draw(NASTY_VALUES)
    elif kind == "number":
        old = parent[key]
        numbers = [v for v in (old if isinstance(old, list) else [old]) if isinstance(v, int | float)]
        factor = draw(st.sampled_from([-1.0, 0.0, 1e-9, 1e3, 1e6, 1e12, 1e300]))
        new = draw(
            st.one_of(
                st.just(
                    [v * factor for v in numbers] if isinstance(old, list) else (numbers or [1])[0] * factor
                ),
                st.floats(allow_nan=False, allow_infinity=False),
                st.integers(min_value=-(2**70), max_value=2**70),
                st.sampled_from(["__RAW0__", "__RAW1__", "__RAW3__", "__RAW5__"]),
            )
        )
        parent[key] = new
    elif kind == "delete":
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    elif kind == "extra":
        target = get_at(data, path) if isinstance(get_at(data, path), dict) else data
        target[draw(st.text(min_size=1, max_size=12))] = draw(NASTY_VALUES)
    elif kind == "duplicate":
        lists = [p for p in paths if isinstance(get_at(data, p), list) and get_at(data, p)]
        target = get_at(data, draw(st.sampled_from(lists)))
        target.append(json.loads(json.dumps(target[draw(st.integers(0, len(target) - 1))])))
    raw = dumps_with_raw(data)
    if kind == "truncate":
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    elif kind == "bytes":
        at = draw(st.integers(0, len(raw)))
        raw = (
            raw[:at]
            + draw(st.sampled_from([b"\xff\xfe", b"\x80", b"\xc3\x28", b"\x00", b"\xef\xbb\xbf"]))
            + raw[at:]
        )
    return f"{kind} at {path}", raw


@contextlib.contextmanager
def command_tree_built_once():
    """Within it, ``typer.testing.CliRunner`` builds the app's command tree once instead of on every
    ``invoke`` (0.15 s each on 2 cores: most of a fuzz example's time)."""
    import typer.testing

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(typer.testing, "_get_command", functools.cache(typer.testing._get_command))
        yield


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def leftovers(folder: Path) -> list[str]:
    """Temporary files or folders an atomic write left behind (``.<name>.<hex>.tmp.<ext>``, ``.partial``)."""
    return [str(p) for p in folder.rglob(".*") if ".tmp" in p.name or p.name.endswith(".partial")]


def assert_one_line_error(output: str, names: str) -> None:
    """``output`` is exactly one ``error: ...`` line naming ``names`` (a file or folder), no traceback."""
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    assert lines[0].startswith("error: "), output
    assert "internal error" not in lines[0], output
    assert "Traceback" not in output
    assert names in lines[0], output
