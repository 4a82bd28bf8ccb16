"""Whole-library jobs: what ``urbanverse assets build`` and ``urbanverse assets verify`` run.

Each takes an open ``AssetStore`` and reports progress through a callback, so that callers
choose how to show it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from urbanverse.assets.store import DB_FILE, AssetStore
from urbanverse.errors import InputError
from urbanverse.locks import folder_lock

if TYPE_CHECKING:
    from urbanverse.assets.verify import DropResult

#: Environment variable naming the default library folder.
LIBRARY_ENV = "URBANVERSE_LIBRARY"


def library_root(library: Path | None = None) -> Path:
    """The library folder: ``library``, else ``$URBANVERSE_LIBRARY``, else the cache's ``library/``."""
    from urbanverse.paths import cache_dir

    return library or Path(os.environ.get(LIBRARY_ENV) or cache_dir("library"))


def open_library(library: Path | None = None, must_exist: bool = True) -> AssetStore:
    """The ``AssetStore`` at ``library_root(library)``; ``InputError`` when ``must_exist`` and none
    is there."""
    root = library_root(library)
    if must_exist and not (root / DB_FILE).is_file():
        raise InputError(f"{root}: no asset library here; build one with `urbanverse assets build`")
    return AssetStore(root)


@contextlib.contextmanager
def library_writer(library: Path | None = None) -> Iterator[AssetStore]:
    """The library at ``library_root(library)`` opened for writing, its writer lock held while the block
    runs. The lock is taken before the store is opened, so a writer refused (``FolderLocked``, naming
    the one writing) has touched nothing; readers open the store without it."""
    root = library_root(library)
    with folder_lock(root, "asset library writer"), AssetStore(root) as store:
        yield store


def build_library(
    store: AssetStore,
    size: int,
    workers: int,
    progress: Callable[[int], None] | None = None,
    indexing: Callable[[], None] | None = None,
) -> int:
    """Build the procedural catalogue of ``size`` assets into ``store`` and its vector index.

    ``progress(n)`` is told of every ``n`` assets measured; ``indexing()`` once before the index is
    built (so that the first search starts fast). Returns the number of assets in the library. Holds
    the library's writer lock throughout; a killed build leaves whole batches of records, and a
    rerun writes the same records again (each is deterministic from its generator and seed).
    """
    from urbanverse.assets.catalogue import build_catalogue

    if size < 1 or workers < 1:
        raise InputError("--size and --workers must be at least 1")
    with store.writing():
        build_catalogue(store, size, workers, progress=progress)
        if indexing is not None:
            indexing()
        store.search("bench", k=1)  # any query builds the vector index once
        return len(store)


@dataclass(frozen=True)
class VerifySummary:
    """Drop tests of a uniform sample of the library; ``flagged`` are those with problems."""

    results: list[DropResult]

    @property
    def flagged(self) -> list[DropResult]:
        return [r for r in self.results if r.problems]

    @property
    def flagged_fraction(self) -> float:
        """Flagged share of the sample, in [0, 1] (0 for an empty sample)."""
        return len(self.flagged) / max(len(self.results), 1)

    def to_dict(self) -> dict:
        return {
            "sampled": len(self.results),
            "flagged": len(self.flagged),
            "flagged_fraction": self.flagged_fraction,
            "flagged_assets": [{"uid": r.uid, "problems": r.problems} for r in self.flagged],
        }


def verify_library(
    store: AssetStore,
    sample: int,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> VerifySummary:
    """Drop ``sample`` assets (uniform, ``seed``) on flat ground in MuJoCo; ``progress(done, total)``
    after each."""
    from urbanverse.assets.catalogue import asset_parts
    from urbanverse.assets.verify import drop_test

    uids = store.sample_uids(sample, seed)
    results = []
    for done, uid in enumerate(uids, 1):
        asset = store.get(uid)
        results.append(drop_test(asset, asset_parts(asset, store.root)))
        if progress is not None:
            progress(done, len(uids))
    return VerifySummary(results)
