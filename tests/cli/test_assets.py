"""``urbanverse assets`` end to end on a small library."""

from __future__ import annotations

import json
from unittest.mock import ANY

import pytest
import trimesh
from typer.testing import CliRunner

from urbanverse.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    lib = tmp_path_factory.mktemp("lib")
    mp = pytest.MonkeyPatch()
    mp.setenv("URBANVERSE_CACHE", str(cache))
    build = ["assets", "build", "--size", "400", "--workers", "1", "--json", "--library", str(lib)]
    result = runner.invoke(app, build)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["assets"] == 400  # progress went to stderr
    yield lib
    mp.undo()


def _run(*args):
    return runner.invoke(app, ["assets", *args])


def test_stats(library):
    result = _run("stats", "--json", "--library", str(library))
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["assets"] == 400 and stats["by_source"] == {"procedural": 400}
    assert stats["coverage"]["mass"]["coverage"] == 1.0
    assert stats["coverage"]["mass"]["origin"] == {"derived": 400}


def test_search_with_filters(library):
    result = _run("search", "tall tree", "--json", "-k", "5", "--library", str(library))
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert len(hits) == 5 and hits[0]["category_path"][0] == "vegetation"
    result = _run("search", "tree", "--json", "--max-height", "1.0", "--library", str(library))
    assert all(h["height"] <= 1.0 for h in json.loads(result.stdout))


def test_show_and_export(library, tmp_path):
    hits = json.loads(_run("search", "bench", "--json", "-k", "1", "--library", str(library)).stdout)
    uid = hits[0]["uid"]
    shown = json.loads(_run("show", uid, "--library", str(library)).stdout)
    assert shown["uid"] == uid
    for fmt, name in (("glb", "a.glb"), ("obj", "a.obj"), ("usd", "a.usda")):
        out = tmp_path / name
        result = _run("export", uid, "--format", fmt, "-o", str(out), "--library", str(library))
        assert result.exit_code == 0, result.output
        assert out.stat().st_size > 0
    assert trimesh.load(tmp_path / "a.glb", force="mesh").extents[2] == pytest.approx(
        shown["height"], rel=1e-3
    )
    assert "PhysicsMaterialAPI" in (tmp_path / "a.usda").read_text()


def test_verify(library):
    result = _run("verify", "--sample", "40", "--json", "--library", str(library))
    report = json.loads(result.stdout)
    assert report["sampled"] == 40
    assert result.exit_code == (1 if report["flagged_fraction"] > 0.01 else 0)


def test_bad_inputs(library, tmp_path):
    assert _run("show", "no-such-uid", "--library", str(library)).exit_code == 2
    assert _run("search", "x", "--library", str(tmp_path / "empty")).exit_code == 2
    assert _run("export", "x", "--format", "fbx", "--library", str(library)).exit_code == 2
    corrupt = tmp_path / "broken.glb"
    corrupt.write_bytes(b"not a mesh at all")
    result = _run("ingest", str(corrupt), "--library", str(tmp_path / "lib2"))
    assert result.exit_code == 2 and "rejected" in result.output
    result = _run("ingest", str(corrupt), "--json", "--library", str(tmp_path / "lib3"))
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"added": [], "rejected": [{"path": str(corrupt), "reason": ANY}]}
