"""Benchmark the asset library: catalogue build, lazy mesh generation, filtered search, ingest, retrieval.

Builds a catalogue of ``--size`` assets into a temporary library (records, text embeddings,
vector index; meshes lazily), then measures one asset's mesh generation (materialize into an
empty cache), search latency with category/size filters, ingest throughput on GLB files
exported from the catalogue, and gen's cousin query per object (class, box size, look: the
appearance of the candidates drawn and embedded on first use, "cold", then read from the library,
"warm"), with the cost of one asset's appearance and what embedding the whole catalogue up front
would take. Prints a table and, last, the line
``assets=N build_s=X search_p50_ms=Y search_p99_ms=Z mesh_p50_ms=W ingest_per_s=V query_p50_ms=..
query_p99_ms=.. appearance_ms=..``.

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


def _time_cousin_queries(store, n: int, rng: np.random.Generator) -> dict:
    """Time ``rank_cousins`` (the default RetrievalCfg) for ``n`` objects: each a library asset's class,
    its box with 10 % noise per side, and a look (a crop embedding and colour near the asset's own).
    "cold": the first query of each object, which draws the candidates' views the library lacks;
    "warm": the same queries again in a new run, the views read from the library. Also the seconds
    to draw and embed the ``n`` sampled assets' views, one batch."""
    from urbanverse.retrieval.appearance import AssetAppearance
    from urbanverse.retrieval.cousins import ObjectLook, RetrievalCfg, rank_cousins

    cfg = RetrievalCfg()
    appearance = AssetAppearance(store, cfg)
    uids = store.sample_uids(n, seed=2)
    t = time.perf_counter()
    drawn = appearance.draw(uids)
    draw_s = time.perf_counter() - t
    objects = []
    for uid in uids:
        asset = store.get(uid)
        vector, lab = drawn[uid]
        noisy = vector + rng.normal(0, 0.02, vector.shape).astype(np.float32)
        size = tuple(float(d * rng.lognormal(0, 0.1)) for d in (asset.length, asset.width, asset.height))
        objects.append(
            (asset.category, size, ObjectLook(noisy / np.linalg.norm(noisy), lab + rng.normal(0, 3, 3)))
        )
    timings: dict = {"cold": [], "warm": [], "appearance_s": draw_s, "drawn": len(drawn)}
    for phase in ("cold", "warm"):
        appearance = AssetAppearance(store, cfg)  # a new run: views come from the library where it has them
        for category, size, look in objects:
            t = time.perf_counter()
            rank_cousins(0, category, size, look, store, appearance.of, cfg)
            timings[phase].append(time.perf_counter() - t)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000, help="catalogue size (default 100000)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the build")
    parser.add_argument("--queries", type=int, default=300, help="number of timed searches")
    parser.add_argument("--meshes", type=int, default=40, help="number of meshes generated / ingested")
    parser.add_argument("--objects", type=int, default=200, help="number of timed cousin queries")
    parser.add_argument(
        "--library", type=Path, default=None,
        help="time search and retrieval on this built library instead of building one (no build figure)",
    )  # fmt: skip
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="uv-bench-assets-"))
    os.environ["URBANVERSE_CACHE"] = str(work / "cache")
    from urbanverse.assets.catalogue import build_catalogue, materialize
    from urbanverse.assets.embed import embed_texts
    from urbanverse.assets.ingest import IngestCfg, ingest
    from urbanverse.assets.store import AssetStore, SearchFilter
    from urbanverse.render.thumbnail import library_thumbnail

    embed_texts(["warm up the text model"])  # model load is a one-off, not part of the build figure
    store = AssetStore(args.library or work / "library")
    start = time.perf_counter()
    if args.library is None:
        build_catalogue(store, args.size, workers=args.workers)
    store.search("bench", k=1)  # vector index built as part of the catalogue
    build_s = time.perf_counter() - start if args.library is None else float("nan")
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

    query = _time_cousin_queries(store, args.objects, rng)

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
    cold50, cold99 = _percentile_ms(query["cold"], 50), _percentile_ms(query["cold"], 99)
    q50, q99 = _percentile_ms(query["warm"], 50), _percentile_ms(query["warm"], 99)
    per_asset_ms = 1000 * query["appearance_s"] / max(query["drawn"], 1)
    full_min = per_asset_ms * len(store) / 60_000
    print(f"| cousin query per object, views in the library (warm), p50 / p99 | {q50:.2f} / {q99:.2f} ms |")
    print(f"| cousin query per object, first time (cold), p50 / p99 | {cold50:.0f} / {cold99:.0f} ms |")
    print(f"| one asset's appearance (2 views drawn + embedded) | {per_asset_ms:.1f} ms |")
    print(f"| appearance of the whole catalogue up front (1 core) | {full_min:.0f} min |")
    print(
        f"assets={len(store)} build_s={build_s:.1f} search_p50_ms={p50:.2f} search_p99_ms={p99:.2f} "
        f"mesh_p50_ms={mesh_p50:.1f} ingest_per_s={len(accepted) / ingest_s:.1f} "
        f"query_p50_ms={q50:.2f} query_p99_ms={q99:.2f} appearance_ms={per_asset_ms:.1f}"
    )
    store.close()
    target.close()


if __name__ == "__main__":
    main()
