"""``assets build`` and ``assets ingest`` stopped at seeded random points (SIGKILL, or Ctrl-C to the
process group) leave a library that opens and reads, and a rerun ends with the same records as an
uninterrupted run. While a build runs, a second writer is refused naming it; readers during an ingest
see the library before it or after it, never in between."""

from __future__ import annotations

import json
import random
import shutil
import signal
import time
from pathlib import Path

import pytest
import trimesh
from typer.testing import CliRunner

from tests.longjobs.helpers import error_lines, locked_by_a_command, run_until, start, stop
from urbanverse.assets.catalogue import catalogue_entries, record_of
from urbanverse.assets.store import AssetStore, SearchFilter
from urbanverse.cli import app

runner = CliRunner()
#: Catalogue size of the default run's build (one batch of records) and of the long run's (two
#: batches: the catalogue commits 500 records at a time).
SIZE, LONG_SIZE = 60, 600
#: Meshes ingested by the ingest runs.
MESHES = 8


def library_state(root: Path) -> dict:
    """Everything a library holds that a rerun must reproduce: records, texts with their vectors, and
    the ingested assets' records on disk; opening it, reading every record and searching must work."""
    with AssetStore(root) as store:
        records = {a.uid: json.dumps(a.__dict__, default=str, sort_keys=True) for a in store.records()}
        texts = store._db.execute("SELECT id, text, vector FROM texts ORDER BY id").fetchall()
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        if records:
            assert store.search("a bench", k=3)  # the vector index loads (or is rebuilt)
            assert store.search("a bench", k=3, where=SearchFilter(max_height=100.0))
    ingested = root / "ingested"
    folders = (
        {p.name: (p / "asset.json").read_text() for p in sorted(ingested.iterdir()) if p.name in records}
        if ingested.is_dir()
        else {}
    )
    return {"records": records, "texts": texts, "ingested": folders}


def _stopped_then_rerun(args: list[str], library: Path, sig: signal.Signals, delay: float) -> None:
    """Start ``urbanverse ARGS`` on ``library``, stop it with ``sig`` ``delay`` s after it took the
    library's lock, check how it ended and that the library opens, and run the command again. A job
    whose work was done when the signal took effect (exit 0, or Python ended by SIGINT while it shut
    down, without the command's line) is run again from scratch and stopped at half the delay, so
    that every call stops a job that is working."""
    for _ in range(4):
        stopped = run_until(args, locked_by_a_command(library), sig, delay)
        if stopped.returncode not in (0, -signal.SIGINT):
            break
        shutil.rmtree(library)
        delay /= 2
    assert stopped.interrupted and stopped.returncode not in (0, -signal.SIGINT), "the job had finished"
    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped.stderr[-800:]
        assert "Traceback" not in stopped.stderr, stopped.stderr[-2000:]
        assert len(error_lines(stopped.stderr)) == 1 and "interrupted (Ctrl-C)" in stopped.stderr
    else:
        assert stopped.returncode == -signal.SIGKILL
    if (library / "assets.sqlite").is_file():
        library_state(library)  # never corrupt
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output


def _stops(job: str, count: int) -> list:
    """``count`` seeded (signal, fraction of the job's time) pairs, the signals alternating."""
    rng = random.Random(job)
    return [
        pytest.param(sig, rng.uniform(0.0, 0.8), id=f"{'kill' if sig == signal.SIGKILL else 'ctrl-c'}-{i}")
        for i, sig in enumerate([signal.SIGKILL, signal.SIGINT] * (count // 2))
    ]


# ------------------------------------------------------------------------------------------ build
def _build_args(library: Path, size: int = SIZE) -> list[str]:
    return ["assets", "build", "--size", str(size), "--workers", "2", "--library", str(library)]


def _build(folder: Path, size: int) -> tuple[dict, float]:
    """An uninterrupted build's library state and its seconds."""
    t0 = time.perf_counter()
    result = runner.invoke(app, _build_args(folder / "library", size))
    assert result.exit_code == 0, result.output
    return library_state(folder / "library"), time.perf_counter() - t0


@pytest.fixture(scope="module")
def built_long(tmp_path_factory) -> tuple[dict, float]:
    return _build(tmp_path_factory.mktemp("built_long"), LONG_SIZE)


def test_a_build_killed_midway_refuses_a_second_writer_and_reruns_to_the_same_library(tmp_path):
    library = tmp_path / "library"
    build = start(_build_args(library))
    try:
        ready = locked_by_a_command(library)
        while not ready():
            assert build.poll() is None, build.stderr.read().decode()[-800:]
        mesh = tmp_path / "box.stl"
        trimesh.creation.box((0.5, 0.5, 1.0)).export(mesh)
        second = runner.invoke(app, ["assets", "ingest", str(mesh), "--library", str(library)])
        time.sleep(random.Random("build-default").uniform(0.5, 2.0))
    finally:
        stopped = stop(build, signal.SIGKILL)
    assert second.exit_code == 2
    holder = f"pid {build.pid} (urbanverse assets build"
    assert error_lines(second.stderr)[0].startswith(
        f"error: {library}: another asset library writer is writing here: {holder}"
    )
    assert stopped.interrupted and stopped.returncode == -signal.SIGKILL
    if (library / "assets.sqlite").is_file():
        library_state(library)
    result = runner.invoke(app, _build_args(library))
    assert result.exit_code == 0, result.output
    # The records an uninterrupted build writes: each is deterministic from its generator and seed.
    expected = {e.uid: record_of(e) for e in catalogue_entries(SIZE)}
    with AssetStore(library) as store:
        assert {a.uid: a for a in store.records()} == expected
    library_state(library)


@pytest.mark.slow
@pytest.mark.parametrize("sig, fraction", _stops("build", 20))
def test_a_build_stopped_at_a_random_point_reruns_to_the_same_library(built_long, tmp_path, sig, fraction):
    state, seconds = built_long
    args = _build_args(tmp_path / "library", LONG_SIZE)
    _stopped_then_rerun(args, tmp_path / "library", sig, fraction * seconds)
    assert library_state(tmp_path / "library") == state


# ----------------------------------------------------------------------------------------- ingest
@pytest.fixture(scope="module")
def meshes(tmp_path_factory) -> Path:
    """``MESHES`` small meshes of different shapes and sizes in three formats."""
    folder = tmp_path_factory.mktemp("meshes")
    for i in range(MESHES):
        mesh = (
            trimesh.creation.box((0.3 + 0.1 * i, 0.4, 0.5 + 0.2 * i))
            if i % 2
            else trimesh.creation.cylinder(radius=0.1 + 0.05 * i, height=0.8 + 0.1 * i, sections=12)
        )
        mesh.export(folder / f"thing_{i}.{('stl', 'obj', 'glb')[i % 3]}")
    return folder


def _ingest_args(paths: list[Path], library: Path) -> list[str]:
    return ["assets", "ingest", *map(str, paths), "--category", "bollard", "--library", str(library)]


@pytest.fixture(scope="module")
def ingested(meshes, tmp_path_factory) -> tuple[dict, float]:
    """An uninterrupted ingest's library state and its seconds."""
    library = tmp_path_factory.mktemp("ingested") / "library"
    t0 = time.perf_counter()
    result = runner.invoke(app, _ingest_args([meshes], library))
    assert result.exit_code == 0, result.output
    state = library_state(library)
    assert len(state["records"]) == MESHES
    return state, time.perf_counter() - t0


@pytest.mark.parametrize(
    "sig, fraction",
    [
        pytest.param(signal.SIGINT, 0.5, id="ctrl-c"),
        *[pytest.param(*p.values, marks=pytest.mark.slow, id=p.id) for p in _stops("ingest", 20)],
    ],
)
def test_an_ingest_stopped_at_a_random_point_reruns_to_the_same_library(
    meshes, ingested, tmp_path, sig, fraction
):
    state, seconds = ingested
    library = tmp_path / "library"
    _stopped_then_rerun(_ingest_args([meshes], library), library, sig, fraction * seconds)
    assert library_state(library) == state


def test_readers_during_an_ingest_see_the_library_before_it_or_after_it(meshes, tmp_path):
    library = tmp_path / "library"
    files = sorted(meshes.iterdir())
    result = runner.invoke(app, _ingest_args(files[:2], library))
    assert result.exit_code == 0, result.output
    before = set(library_state(library)["records"])
    job = start(_ingest_args(files[2:], library))
    seen: list[frozenset[str]] = []
    try:
        while job.poll() is None:
            with AssetStore(library) as store:  # a reader opens the library as gen or search would
                assets = list(store.records())  # one query: one committed state
            for asset in assets:  # an asset listed has its files in place
                if asset.uid not in before:
                    assert (library / "ingested" / asset.uid / "asset.json").is_file()
            seen.append(frozenset(a.uid for a in assets))
    finally:
        ended = stop(job, signal.SIGKILL)
    assert ended.returncode == 0, ended.stderr[-800:]
    after = set(library_state(library)["records"])
    assert len(after) == MESHES and after > before
    assert len(seen) > 3 and set(seen) <= {frozenset(before), frozenset(after)}
