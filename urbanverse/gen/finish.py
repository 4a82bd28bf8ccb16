"""Last step of ``gen``: physics fix, scene.json, USD, and the previews people look at.

``preview.png`` is the top-down map with the camera path; ``compare_<k>.png`` shows a video frame
beside a render of the generated scene from the same camera pose (same intrinsics), with the people
lifted from the video drawn over both: each one's ground trajectory, and where it stands at the
frame's time as a body line from its feet to its head.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from urbanverse.recon.geometry import project_with
from urbanverse.recon.record import Reconstruction
from urbanverse.records import atomic_path
from urbanverse.render.raster import PinholeCamera
from urbanverse.render.scene_model import build_rasterizer
from urbanverse.scene.agents import agent_colour, position_at
from urbanverse.scene.ground import top_height_at
from urbanverse.scene.physics_check import drop_entangled, fix_penetrations
from urbanverse.scene.preview import write_preview
from urbanverse.scene.record import Scene, save_scene
from urbanverse.scene.usd_writer import write_usd


def ground_paths(scene: Scene) -> list[np.ndarray]:
    """Each agent's trajectory as ``(T, 3)`` points on the ground top (m), for :func:`draw_people`."""
    paths = []
    for agent in scene.agents:
        xy = np.asarray(agent.trajectory)[:, 1:]
        paths.append(np.column_stack([xy, top_height_at(scene.ground, xy)]))
    return paths


def draw_people(
    draw: ImageDraw.ImageDraw,
    scene: Scene,
    paths: list[np.ndarray],
    pose: np.ndarray,
    k: np.ndarray,
    time_s: float,
    offsets: tuple[tuple[int, int], ...],
) -> int:
    """Draw each agent of ``scene`` (its ground path in ``paths``, :func:`ground_paths`) as seen by the
    camera ``pose`` (4x4 world_from_camera in the scene's frame) with intrinsics ``k``: its path as a
    thin line, and, where it was seen at ``time_s``, its body as a thick line from feet to head; once
    on each panel of the sheet, ``offsets`` (px). Returns how many people stand in the frame at
    ``time_s``."""
    standing = 0
    for j, (agent, path) in enumerate(zip(scene.agents, paths, strict=True)):
        colour = agent_colour(j)
        uv, depth = project_with(pose, k, path)
        uv = uv[depth > 0.5]
        body = None
        if agent.trajectory[0][0] <= time_s <= agent.trajectory[-1][0]:
            at = position_at(agent, [time_s])
            feet = np.append(at[0], top_height_at(scene.ground, at)[0])
            ends, ends_depth = project_with(pose, k, np.stack([feet, feet + (0, 0, agent.height)]))
            body = ends if (ends_depth > 0.5).all() else None
            standing += body is not None
        for dx, dy in offsets:
            if len(uv) > 1:
                draw.line([(float(u) + dx, float(v) + dy) for u, v in uv], fill=colour, width=2)
            if body is not None:
                (u0, v0), (u1, v1) = body + (dx, dy)
                draw.line([(u0, v0), (u1, v1)], fill=colour, width=4)
                draw.ellipse([u0 - 4, v0 - 4, u0 + 4, v0 + 4], outline=colour, width=2)
    return standing


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
    people_paths = ground_paths(scene)
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
            people = ""
            if scene.agents:
                panels = ((0, 24), (width, 24))
                standing = draw_people(
                    draw, scene, people_paths, pose, recon.intrinsics.matrix(), key.time_s, panels
                )
                people = f"; {standing} of {len(scene.agents)} lifted people here at {key.time_s:.1f} s"
            draw.text((6, 5), f"video frame {key.frame}{people}", fill=(0, 0, 0))
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
