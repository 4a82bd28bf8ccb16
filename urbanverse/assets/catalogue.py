"""The procedural catalogue: 100,000+ assets, each deterministic from (generator, seed).

``build_catalogue`` measures and annotates every asset (parts are built in memory, never
written) on a process pool and fills the store; ``materialize`` writes an asset's folder
(visual and collision GLB, thumbnail drawn by the caller's renderer, ``asset.json``) into a
content-addressed cache the first time it is needed. Nothing generated is committed: the cache can
be deleted at any time.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import signal
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from urbanverse.assets.annotate import annotate
from urbanverse.assets.generators import GENERATORS, get_generator
from urbanverse.assets.generators.base import Part
from urbanverse.assets.record import (
    ASSET_FILE,
    THUMBNAIL_FILE,
    Asset,
    AssetSource,
    ThumbnailRenderer,
    load_asset,
    load_collision_parts,
    load_visual_parts,
    save_asset,
)
from urbanverse.assets.store import AssetStore
from urbanverse.assets.taxonomy import get_class
from urbanverse.paths import cache_dir

DEFAULT_SIZE = 100_000


@dataclass(frozen=True)
class CatalogueEntry:
    """One catalogue slot: a generator and the seed of its parameters."""

    generator: str
    seed: int

    @property
    def uid(self) -> str:
        return f"{self.generator}-{self.seed:05d}"


def catalogue_entries(size: int = DEFAULT_SIZE) -> list[CatalogueEntry]:
    """``size`` entries spread round-robin over all generators (sorted by name), seeds counting up."""
    names = sorted(GENERATORS)
    return [CatalogueEntry(names[i % len(names)], i // len(names)) for i in range(size)]


def entry_of(uid: str) -> CatalogueEntry:
    """Parse ``<generator>-<seed>`` back into its entry."""
    name, _, seed = uid.rpartition("-")
    if name not in GENERATORS or not seed.isdigit():
        raise ValueError(f"{uid!r} is not a procedural catalogue uid (<generator>-<seed>)")
    return CatalogueEntry(name, int(seed))


def params_of(entry: CatalogueEntry) -> dict:
    """The generator's parameters for this seed (independent of every other entry)."""
    rng = np.random.default_rng([zlib.crc32(entry.generator.encode()), entry.seed])
    return get_generator(entry.generator).sample_params(rng)


def build_parts(entry: CatalogueEntry) -> tuple[dict, list[Part]]:
    params = params_of(entry)
    return params, get_generator(entry.generator).build(params)


def record_of(entry: CatalogueEntry) -> Asset:
    """Build the asset in memory and annotate it (measured geometry, derived physics)."""
    generator = get_generator(entry.generator)
    params, parts = build_parts(entry)
    cls = get_class(generator.l3)
    source = AssetSource(
        kind="procedural",
        generator=f"{generator.name}@{generator.version}",
        parameters=params,
        seed=entry.seed,
    )
    asset = annotate(
        parts,
        uid=entry.uid,
        category_path=(cls.l1, cls.l2, cls.l3),
        synset=cls.synset,
        style=generator.describe(params),
        source=source,
        size_range=(cls.size_min, cls.size_max),
    )
    return dataclasses.replace(asset, thumbnail=THUMBNAIL_FILE)  # rendered with the meshes, on first use


def _records_chunk(entries: list[CatalogueEntry]) -> list[Asset]:
    return [record_of(e) for e in entries]


def iter_records(entries: list[CatalogueEntry], workers: int = 2, chunk: int = 500) -> Iterator[list[Asset]]:
    """Records in chunks, computed on ``workers`` processes (1: in this process), in entry order."""
    chunks = [entries[i : i + chunk] for i in range(0, len(entries), chunk)]
    if workers <= 1:
        yield from map(_records_chunk, chunks)
        return
    with ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts) as pool:
        yield from pool.map(_records_chunk, chunks)


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent process, which stops the pool (no traceback per worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def build_catalogue(
    store: AssetStore,
    size: int = DEFAULT_SIZE,
    workers: int = 2,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Fill ``store`` with ``size`` procedural assets (records, text vectors, filter columns)."""
    written = 0
    for records in iter_records(catalogue_entries(size), workers=workers):
        written += store.add(records)
        if progress:
            progress(len(records))
    return written


def missing_entries(store: AssetStore, generators: Iterable[str], seeds: int) -> list[CatalogueEntry]:
    """The entries of ``generators`` with a seed below ``seeds`` (those the ``DEFAULT_SIZE`` catalogue
    has) that ``store`` does not hold."""
    wanted = set(generators)
    entries = [e for e in catalogue_entries(DEFAULT_SIZE) if e.generator in wanted and e.seed < seeds]
    present = store.present(e.uid for e in entries)
    return [e for e in entries if e.uid not in present]


def fill_entries(store: AssetStore, entries: list[CatalogueEntry]) -> int:
    """Add ``entries``' records to ``store`` (the records ``build_catalogue`` writes), their texts to be
    embedded at the next text search; returns how many were added."""
    return sum(store.add(records, embed=False) for records in iter_records(entries, workers=1))


#: Bump when the files written for an asset change, so cached folders are regenerated.
CACHE_FORMAT = 3


def cache_key(asset: Asset) -> str:
    """Content address of a generated asset: hash of the cache format, its generator and version,
    parameters and seed."""
    blob = json.dumps(
        [CACHE_FORMAT, asset.source.generator, asset.source.parameters, asset.source.seed], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def materialize(asset: Asset, root: Path | None = None, *, thumbnail: ThumbnailRenderer) -> Path:
    """The asset's folder in the mesh cache, generating it on first use (atomic: json written last).

    ``thumbnail`` draws the folder's ``thumbnail.png`` from the parts (see ``ThumbnailRenderer``)."""
    folder = (root or cache_dir("meshes")) / cache_key(asset)
    if (folder / ASSET_FILE).is_file() and load_asset(folder).uid == asset.uid:
        return folder
    entry = entry_of(asset.uid)
    _, parts = build_parts(entry)
    folder.mkdir(parents=True, exist_ok=True)
    thumbnail(parts).save(folder / THUMBNAIL_FILE)
    save_asset(asset, folder, parts, [p.mesh for p in parts])
    return folder


def _ingested_folder(asset: Asset, library_root: Path) -> Path:
    return Path(library_root) / "ingested" / asset.uid


def asset_folder(asset: Asset, library_root: Path, *, thumbnail: ThumbnailRenderer) -> Path:
    """The folder holding the asset's meshes: the ingested copy, or the generated one (made on first use,
    with ``thumbnail`` drawing its thumbnail)."""
    if asset.source.kind == "ingested":
        return _ingested_folder(asset, library_root)
    return materialize(asset, thumbnail=thumbnail)


def visual_parts(asset: Asset, library_root: Path) -> list:
    """The asset's coloured visual parts (``mesh`` + linear ``rgb``, asset frame): rebuilt in memory for
    procedural assets, read from the ingested folder's visual GLB otherwise."""
    if asset.source.kind == "procedural":
        return build_parts(entry_of(asset.uid))[1]
    return load_visual_parts(_ingested_folder(asset, library_root), asset)


def asset_parts(asset: Asset, library_root: Path) -> list[Part]:
    """The asset's convex parts with materials: rebuilt in memory for procedural assets (no disk),
    read from the collision file for ingested ones (material: the asset's main material)."""
    if asset.source.kind == "procedural":
        return build_parts(entry_of(asset.uid))[1]
    folder = _ingested_folder(asset, library_root)
    material = asset.materials[0] if asset.materials else "plastic"
    return [
        Part(f"part_{i:03d}", m, material, (0.5, 0.5, 0.5))
        for i, m in enumerate(load_collision_parts(folder, asset))
    ]
