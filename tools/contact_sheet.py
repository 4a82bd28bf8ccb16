"""Render a PNG contact sheet with one asset per procedural generator, and time the generators.

Tiles are the library's thumbnails (``urbanverse.render.thumbnail``), each labelled with the
generator, L3 class, and length x width x height in metres.

Usage: python tools/contact_sheet.py [-o out/contact_sheet.png] [--seed 0] [--only bench]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from urbanverse.assets.generators import GENERATORS, Generator
from urbanverse.render.thumbnail import render_thumbnail

TILE = 256  # px, final tile size
LABEL_H = 34  # px under each tile


def contact_sheet(gens: list[Generator], seed: int, columns: int) -> Image.Image:
    """One tile per generator, labelled, in a grid of ``columns`` columns."""
    rows = (len(gens) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * TILE, rows * (TILE + LABEL_H)), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default(size=12)
    for i, gen in enumerate(gens):
        parts = gen.build(gen.sample_params(np.random.default_rng(seed)))
        verts = np.concatenate([p.mesh.vertices for p in parts])
        dims = verts.max(axis=0) - verts.min(axis=0)
        x, y = (i % columns) * TILE, (i // columns) * (TILE + LABEL_H)
        sheet.paste(render_thumbnail(parts, TILE), (x, y))
        draw.text((x + 4, y + TILE + 2), f"{gen.name} ({gen.l3})", fill="black", font=font)
        draw.text(
            (x + 4, y + TILE + 17),
            "{:.2f} x {:.2f} x {:.2f} m, {} parts".format(*dims, len(parts)),
            fill=(90, 90, 90),
            font=font,
        )
    return sheet


def time_generators(gens: list[Generator], samples: int) -> None:
    """Print median / p95 of ``sample_params`` + ``build`` per family and the slowest generators (ms)."""
    per_family: dict[str, list[float]] = defaultdict(list)
    per_gen: dict[str, float] = {}
    for gen in gens:
        times = []
        for s in range(samples):
            t0 = time.perf_counter()
            gen.build(gen.sample_params(np.random.default_rng(1000 + s)))
            times.append((time.perf_counter() - t0) * 1e3)
        per_family[gen.family] += times
        per_gen[gen.name] = max(times)
    everything = [t for ts in per_family.values() for t in ts]
    print(f"{'family':<18} {'n':>5} {'median ms':>10} {'p95 ms':>8} {'max ms':>8}")
    for fam, ts in sorted(per_family.items()) + [("ALL", everything)]:
        print(
            f"{fam:<18} {len(ts):>5} {statistics.median(ts):>10.2f} "
            f"{np.percentile(ts, 95):>8.2f} {max(ts):>8.2f}"
        )
    slow = sorted(per_gen.items(), key=lambda kv: -kv[1])[:5]
    print("slowest (max ms):", ", ".join(f"{k} {v:.1f}" for k, v in slow))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", type=Path, default=Path("out/contact_sheet.png"))
    ap.add_argument("--seed", type=int, default=0, help="parameter seed for every tile")
    ap.add_argument("--columns", type=int, default=10)
    ap.add_argument("--only", default="", help="substring filter on generator name, family or L3 class")
    ap.add_argument(
        "--timing-samples", type=int, default=20, help="builds per generator for timing (0: skip)"
    )
    args = ap.parse_args()
    gens = [g for g in GENERATORS.values() if args.only in f"{g.name} {g.family} {g.l3}"]
    if not gens:
        raise SystemExit(f"no generator matches {args.only!r}")
    t0 = time.perf_counter()
    sheet = contact_sheet(gens, args.seed, min(args.columns, len(gens)))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(args.output)
    print(f"wrote {args.output} ({len(gens)} generators, {time.perf_counter() - t0:.1f} s)")
    if args.timing_samples:
        time_generators(gens, args.timing_samples)


if __name__ == "__main__":
    main()
