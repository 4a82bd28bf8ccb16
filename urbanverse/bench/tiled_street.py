"""A larger test street built from the example scene: for benchmarks, tests and plots.

It tiles ``scenes/example`` (a 40 m street with raised sidewalks, curbs, ramps and 11 objects)
``tiles`` times along +x, and adds seeded extra props (bollards, bins, hydrants, benches) on the
sidewalks: a fixed scene whose size the environment speed benchmark scales, independent of
``procgen``'s defaults. Deterministic for
a given ``(tiles, extra_props, seed)``; the example's asset folders are copied along.
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np

from urbanverse.scene.record import SceneSource, load_scene, save_scene

#: Length of one example street tile along x (m).
TILE_LENGTH = 40.0
#: Example objects reused as extra props, by id.
_PROP_TEMPLATES = ("bollard_1", "bin_1", "hydrant_1", "bench_1")


def _shift(points, dx: float) -> tuple:
    return tuple((x + dx, y) for x, y in points)


def make_tiled_street(
    example_dir: Path, out_dir: Path, tiles: int = 4, extra_props: int = 60, seed: int = 0
) -> Path:
    """Write the tiled street scene to ``out_dir`` (created or replaced); returns ``out_dir``."""
    example_dir, out_dir = Path(example_dir), Path(out_dir)
    base = load_scene(example_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    shutil.copytree(example_dir / "assets", out_dir / "assets")
    if (example_dir / "textures").is_dir():
        shutil.copytree(example_dir / "textures", out_dir / "textures")
    rng = np.random.default_rng(seed)
    ground, objects, walkable = [], [], []
    for t in range(tiles):
        dx = (t - 0.5 * (tiles - 1)) * TILE_LENGTH
        for region in base.ground:
            ground.append(
                dataclasses.replace(region, id=f"{region.id}_t{t}", polygon=_shift(region.polygon, dx))
            )
        for obj in base.objects:
            pos = (obj.position[0] + dx, obj.position[1], obj.position[2])
            objects.append(dataclasses.replace(obj, id=f"{obj.id}_t{t}", position=pos))
        walkable += [_shift(poly, dx) for poly in base.walkable_area]
    templates = {o.id: o for o in base.objects if o.id in _PROP_TEMPLATES}
    half = 0.5 * tiles * TILE_LENGTH
    placed = [np.array(o.position[:2]) for o in objects]
    count = 0
    while count < extra_props:
        side = rng.choice([-1.0, 1.0])
        xy = np.array([rng.uniform(-half + 1.0, half - 1.0), side * rng.uniform(5.0, 6.0)])
        if any(np.linalg.norm(xy - p) < 2.5 for p in placed):
            continue  # keep props apart so the sidewalk stays passable
        template = templates[_PROP_TEMPLATES[count % len(_PROP_TEMPLATES)]]
        yaw = 0.0 if side > 0 else float(np.pi)
        pos = (float(xy[0]), float(xy[1]), template.position[2])
        objects.append(dataclasses.replace(template, id=f"prop_{count}", position=pos, yaw=yaw))
        placed.append(xy)
        count += 1
    scene = dataclasses.replace(
        base,
        name=f"tiled_street_{tiles}x_s{seed}",
        source=SceneSource(kind="procedural", generator="urbanverse.bench.tiled_street", seed=seed),
        ground=tuple(ground),
        objects=tuple(objects),
        walkable_area=tuple(walkable),
        camera_trajectory=(),
    )
    save_scene(scene, out_dir)
    return out_dir
