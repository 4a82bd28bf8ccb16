"""Last step of ``gen``: physics fix, scene.json, USD, and the previews people look at.

``preview.png`` is the top-down map with the camera path; ``compare_<k>.png`` shows a video frame
beside a render of the generated scene from the same camera pose (same intrinsics).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from urbanverse.recon.record import Reconstruction
from urbanverse.records import atomic_path
from urbanverse.render.raster import PinholeCamera
from urbanverse.render.scene_model import build_rasterizer
from urbanverse.scene.physics_check import drop_entangled, fix_penetrations
from urbanverse.scene.preview import write_preview
from urbanverse.scene.record import Scene, save_scene
from urbanverse.scene.usd_writer import write_usd


def write_comparisons(
    scene: Scene, scene_dir: Path, recon: Reconstruction, images: dict[int, np.ndarray], count: int
) -> list[Path]:
    """``compare_<k>.png`` for ``count`` registered keyframes spread over the video."""
    registered = [k for k in recon.registered if k.index in images]
    lift_z = scene.camera_trajectory[0].position[2] - registered[0].position[2] if registered else 0.0
    if not registered or count <= 0 or not scene.objects and not scene.ground:
        return []
    picks = [
        registered[i] for i in np.linspace(0, len(registered) - 1, min(count, len(registered))).astype(int)
    ]
    k = recon.intrinsics
    width, height = k.width - k.width % 2, k.height - k.height % 2
    camera = PinholeCamera(width=width, height=height, fx=k.fx, fy=k.fy, cx=k.cx, cy=k.cy)
    paths = []
    with build_rasterizer(scene, scene_dir, width, height) as raster:
        for n, key in enumerate(picks):
            pose = np.asarray(key.world_from_camera).copy()
            pose[2, 3] += lift_z  # the scene's z = 0 is the road, a curb below the camera's pavement
            render = raster.render(camera, pose, ids=False).rgb
            frame = images[key.index][:height, :width]
            sheet = Image.new("RGB", (2 * width, height + 24), (255, 255, 255))
            sheet.paste(Image.fromarray(frame), (0, 24))
            sheet.paste(Image.fromarray(render), (width, 24))
            draw = ImageDraw.Draw(sheet)
            draw.text((6, 5), f"video frame {key.frame}", fill=(0, 0, 0))
            draw.text((width + 6, 5), "generated scene, same camera", fill=(0, 0, 0))
            path = scene_dir / f"compare_{n}.png"
            with atomic_path(path) as tmp:
                sheet.save(tmp, format="PNG", compress_level=1)  # fast: a preview, not an archive
            paths.append(path)
    return paths


def finish_scene(
    scene: Scene, scene_dir: Path, recon: Reconstruction, images: dict[int, np.ndarray], cfg
) -> tuple[Scene, list[str], list[str]]:
    """Fix interpenetrations (when ``cfg.physics_fix``: objects moved apart, the less confident of two
    that stay inside each other removed), then save scene.json, scene.usda and previews. Returns the
    scene, a line per object moved and a warning per object removed."""
    fixes: list[str] = []
    removed: list[str] = []
    if cfg.physics_fix and scene.objects:
        scene, fixes = fix_penetrations(scene, scene_dir)
        scene, removed = drop_entangled(scene, scene_dir)
    save_scene(scene, scene_dir)

    # The previews render on a second thread while the USD is authored (the rasteriser's NumPy and
    # the PNG encoder let go of the GIL).
    def previews() -> None:
        write_preview(scene, scene_dir)
        write_comparisons(scene, scene_dir, recon, images, cfg.compare_frames)

    with ThreadPoolExecutor(1, thread_name_prefix="previews") as pool:
        rendered = pool.submit(previews)
        write_usd(scene, scene_dir)
        rendered.result()
    return scene, fixes, removed
