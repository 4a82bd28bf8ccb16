"""Benchmark the asset library: catalogue build, lazy mesh generation, filtered search, ingest.

Builds a catalogue of ``--size`` assets into a temporary library (records, text embeddings,
vector index; meshes lazily), then measures one asset's mesh generation (materialize into an
empty cache), search latency with category/size filters, and ingest throughput on GLB files
exported from the catalogue. Prints a table and, last, the line
``assets=N build_s=X search_p50_ms=Y search_p99_ms=Z mesh_p50_ms=W ingest_per_s=V``.

    python tools/bench_assets.py                 # the full 100K figure (about 10 minutes on 2 cores)
    python tools/bench_assets.py --size 2000     # a quick run
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def _percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples) * 1000.0, q))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000, help="catalogue size (default 100000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the build")
    parser.add_argument("--queries", type=int, default=300, help="number of timed searches")
    parser.add_argument("--meshes", type=int, default=40, help="number of meshes generated / ingested")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="uv-bench-assets-"))
    os.environ["URBANVERSE_CACHE"] = str(work / "cache")
    from urbanverse.assets.catalogue import build_catalogue, materialize
    from urbanverse.assets.embed import embed_texts
    from urbanverse.assets.ingest import IngestCfg, ingest
    from urbanverse.assets.store import AssetStore, SearchFilter
    from urbanverse.render.thumbnail import library_thumbnail

    embed_texts(["warm up the text model"])  # model load is a one-off, not part of the build figure
    store = AssetStore(work / "library")
    start = time.perf_counter()
    build_catalogue(store, args.size, workers=args.workers)
    store.search("bench", k=1)  # vector index built as part of the catalogue
    build_s = time.perf_counter() - start
    n_texts = store._text_count()

    rng = np.random.default_rng(0)
    uids = store.sample_uids(args.meshes, seed=1)
    mesh_times = []
    for uid in uids:
        asset = store.get(uid)
        t = time.perf_counter()
        materialize(asset, thumbnail=library_thumbnail)
        mesh_times.append(time.perf_counter() - t)

    categories = sorted(store.count_by("l3"))
    words = ["red", "metal", "wooden", "small", "tall", "green", "modern", "old", "round", "concrete"]
    queries = [
        (
            f"{rng.choice(words)} {rng.choice(categories).replace('_', ' ')}",
            SearchFilter(category=str(rng.choice(categories)), max_height=float(rng.uniform(0.5, 10.0))),
        )
        for _ in range(args.queries)
    ]
    vectors = embed_texts([q for q, _ in queries])
    for vector, (_, where) in zip(vectors[:20], queries[:20], strict=True):  # warm caches
        store.search(vector, k=10, where=where)
    search_times = []
    for vector, (_, where) in zip(vectors, queries, strict=True):
        t = time.perf_counter()
        store.search(vector, k=10, where=where)
        search_times.append(time.perf_counter() - t)

    ingest_dir = work / "ingest"
    ingest_dir.mkdir()
    for i, uid in enumerate(uids):
        folder = materialize(store.get(uid), thumbnail=library_thumbnail)
        (ingest_dir / f"mesh_{i:03d}.glb").write_bytes((folder / "visual.glb").read_bytes())
    target = AssetStore(work / "ingested_library")
    t = time.perf_counter()
    accepted, rejected = ingest(
        [ingest_dir], target, IngestCfg(category="bench"), thumbnail=library_thumbnail
    )
    ingest_s = time.perf_counter() - t

    mesh_p50 = _percentile_ms(mesh_times, 50)
    p50, p99 = _percentile_ms(search_times, 50), _percentile_ms(search_times, 99)
    print("| figure | value |\n|---|---|")
    print(f"| assets in the catalogue | {len(store)} |")
    print(f"| unique descriptions embedded | {n_texts} |")
    print(f"| catalogue build (records + embeddings + index) | {build_s:.1f} s |")
    print(f"| one asset's mesh generated (p50 / max) | {mesh_p50:.1f} / {1000 * max(mesh_times):.1f} ms |")
    print(f"| filtered search (category + height), p50 / p99 | {p50:.2f} / {p99:.2f} ms |")
    print(
        f"| ingest | {len(accepted) / ingest_s:.1f} meshes/s ({len(accepted)} ok, {len(rejected)} rejected) |"
    )
    print(
        f"assets={len(store)} build_s={build_s:.1f} search_p50_ms={p50:.2f} search_p99_ms={p99:.2f} "
        f"mesh_p50_ms={mesh_p50:.1f} ingest_per_s={len(accepted) / ingest_s:.1f}"
    )
    store.close()
    target.close()


if __name__ == "__main__":
    main()
