"""Contact sheets of the procedural ground materials and skies, with generation timings.

Writes ``<out>/ground_materials.png`` (each material shown as the centre of a 2 x 2 tiling, so
the tile's wrap-around seams cross the middle of every thumbnail and any discontinuity is
visible) and ``<out>/skies.png`` (each sky's sRGB latlong map, horizon across the middle).
Prints the generation time of every material and sky (cold cache) and the medians.

    python tools/materials_sheet.py -o out/            # both sheets
    python tools/materials_sheet.py --only sky --cache /tmp/uv   # use a throw-away cache
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

LABEL_PX = 16
COLUMNS = 8


def _sheet(tiles: list[tuple[str, np.ndarray]], columns: int) -> Image.Image:
    """Grid of uint8 RGB tiles (all the same shape) with their names underneath."""
    h, w = tiles[0][1].shape[:2]
    rows = (len(tiles) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * (w + 4) + 4, rows * (h + LABEL_PX + 4) + 4), (24, 24, 24))
    draw = ImageDraw.Draw(sheet)
    for k, (name, tile) in enumerate(tiles):
        x, y = 4 + (k % columns) * (w + 4), 4 + (k // columns) * (h + LABEL_PX + 4)
        sheet.paste(Image.fromarray(tile), (x, y))
        draw.text((x + 2, y + h + 2), name, fill=(230, 230, 230))
    return sheet


def _timed(build, names: list[str]) -> tuple[list, list[float]]:
    results, times = [], []
    for name in names:
        t0 = time.perf_counter()
        results.append(build(name))
        times.append(time.perf_counter() - t0)
        print(f"  {name:34s} {times[-1] * 1000:7.1f} ms")
    return results, times


def ground_sheet(out: Path) -> Path:
    """Build every ground material (timed), write the contact sheet, return its path."""
    from urbanverse.assets.ground_materials import GROUND_MATERIALS, ground_material

    print(f"ground materials ({len(GROUND_MATERIALS)}):")
    mats, times = _timed(ground_material, list(GROUND_MATERIALS))
    tiles = []
    for mat in mats:
        with Image.open(mat.base_color_map) as im:
            tile = np.asarray(im.convert("RGB"))
        n = tile.shape[0]
        tiled = np.tile(tile, (2, 2, 1))[n // 2 : n // 2 + n, n // 2 : n // 2 + n]
        tiles.append((f"{mat.name} ({mat.texture_scale_m:g} m)", tiled))
    print(f"median {statistics.median(times) * 1000:.1f} ms per material, total {sum(times):.1f} s")
    path = out / "ground_materials.png"
    _sheet(tiles, COLUMNS).save(path)
    return path


def sky_sheet(out: Path) -> Path:
    """Build every sky (timed), write the contact sheet (half-size latlong maps), return its path."""
    from urbanverse.assets.skies import SKIES, sky_map

    print(f"skies ({len(SKIES)}):")
    skies, times = _timed(sky_map, list(SKIES))
    tiles = []
    for sky in skies:
        with Image.open(sky.png) as im:
            tiles.append((sky.name, np.asarray(im.convert("RGB").reduce(2))))
    print(f"median {statistics.median(times) * 1000:.1f} ms per sky, total {sum(times):.1f} s")
    path = out / "skies.png"
    _sheet(tiles, COLUMNS // 2 + 1).save(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-o", "--out", type=Path, default=Path("out"), help="output folder (default out/)")
    parser.add_argument("--only", choices=("ground", "sky"), help="build one sheet only")
    parser.add_argument(
        "--cache", type=Path, help="cache folder (default: a fresh temporary one, so timings are cold)"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["URBANVERSE_CACHE"] = str(args.cache or tmp)
        paths = []
        if args.only in (None, "ground"):
            paths.append(ground_sheet(args.out))
        if args.only in (None, "sky"):
            paths.append(sky_sheet(args.out))
    for path in paths:
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
