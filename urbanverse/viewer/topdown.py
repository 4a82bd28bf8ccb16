"""Top-down maps of scenes with PIL: the scene list's thumbnails and the viewer's map panel.

North (+y) is up, east (+x) right. Ground regions are filled with their material colour,
objects drawn as their oriented footprint (length along the yaw direction, width across),
dynamic bodies in orange and kinematic ones in slate blue; the walkable area, the video's
camera path, the people's paths (one colour each, a dot at the end) and a recorded episode are
drawn on top when given.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from urbanverse.assets.textures import linear_to_srgb
from urbanverse.scene.agents import agent_colour
from urbanverse.scene.record import Scene, SceneObject

BODY_COLOURS = {"dynamic": (235, 140, 40), "kinematic": (70, 90, 140)}
HIGHLIGHT = (230, 30, 60)
BACKGROUND = (225, 228, 222)


def srgb255(linear_rgb: Sequence[float]) -> tuple[int, int, int]:
    """Linear RGB in [0, 1] -> 8-bit sRGB tuple (what browsers and PNGs expect)."""
    return tuple(int(round(255 * c)) for c in linear_to_srgb(np.asarray(linear_rgb)))


def footprint(obj: SceneObject) -> np.ndarray:
    """The object's oriented footprint rectangle, ``(4, 2)`` world xy, counter-clockwise."""
    half = np.array([[1, 1], [-1, 1], [-1, -1], [1, -1]], dtype=np.float64) * 0.5 * np.array(obj.size[:2])
    c, s = np.cos(obj.yaw), np.sin(obj.yaw)
    return half @ np.array([[c, s], [-s, c]]) + np.array(obj.position[:2])


def scene_bounds(scene: Scene, margin: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper xy corners (m) around ground, objects, camera path and people's paths, plus
    ``margin``."""
    pts = [np.asarray(r.polygon, dtype=np.float64) for r in scene.ground]
    pts += [footprint(o) for o in scene.objects]
    pts += [np.asarray(a.trajectory, dtype=np.float64)[:, 1:3] for a in scene.agents]
    pts += [np.array([p.position[:2] for p in scene.camera_trajectory], dtype=np.float64).reshape(-1, 2)]
    allp = np.concatenate(pts) if pts else np.zeros((1, 2))
    if len(allp) == 0:
        allp = np.zeros((1, 2))
    return allp.min(axis=0) - margin, allp.max(axis=0) + margin


def render_map(
    scene: Scene,
    width: int = 512,
    *,
    walkable: bool = True,
    camera_path: bool = True,
    people: bool = True,
    episode: np.ndarray | None = None,
    highlight: str | None = None,
) -> Image.Image:
    """A map ``width`` pixels wide (height follows the scene's aspect ratio, at most ``width``);
    ``walkable``, ``camera_path`` and ``people`` choose the layers drawn over ground and objects.

    ``episode``: robot positions ``(T, 2+)`` to draw as a path; ``highlight``: an object id drawn
    in red.
    """
    lo, hi = scene_bounds(scene)
    span = hi - lo
    scale = width / span[0]
    height = int(min(width, max(16, round(span[1] * scale))))
    scale = min(scale, height / span[1])
    ss = 2  # supersampling
    img = Image.new("RGB", (width * ss, height * ss), BACKGROUND)
    draw = ImageDraw.Draw(img, "RGBA")
    offset = (np.array([width, height]) - span * scale) / 2

    def px(xy: np.ndarray) -> list[tuple[float, float]]:
        q = (np.asarray(xy, dtype=np.float64)[:, :2] - lo) * scale + offset
        q[:, 1] = height - q[:, 1]
        return [tuple(p) for p in q * ss]

    for region in sorted(scene.ground, key=lambda r: r.elevation):
        outline = (90, 90, 90) if region.elevation > 0 else None
        draw.polygon(px(region.polygon), fill=srgb255(region.material.base_color), outline=outline)
    if walkable:
        for poly in scene.walkable_area:
            draw.polygon(px(poly), fill=(60, 200, 90, 70), outline=(40, 150, 60, 200))
    for obj in scene.objects:
        colour = HIGHLIGHT if obj.id == highlight else BODY_COLOURS.get(obj.body_type, (120, 120, 120))
        draw.polygon(px(footprint(obj)), fill=colour, outline=(20, 20, 20))
    if camera_path and len(scene.camera_trajectory) >= 2:
        path = np.array([p.position for p in scene.camera_trajectory])
        draw.line(px(path), fill=(200, 40, 200), width=2 * ss)
    if people:
        for i, agent in enumerate(scene.agents):
            points = px(np.asarray(agent.trajectory)[:, 1:3])
            draw.line(points, fill=agent_colour(i), width=ss, joint="curve")
            (ex, ey), r = points[-1], 2 * ss
            draw.ellipse([ex - r, ey - r, ex + r, ey + r], fill=agent_colour(i))
    if episode is not None and len(episode) >= 2:
        draw.line(px(episode), fill=(20, 120, 230), width=2 * ss)
        (ex, ey), r = px(episode[-1:])[0], 4 * ss
        draw.ellipse([ex - r, ey - r, ex + r, ey + r], fill=(20, 120, 230))
    return img.resize((width, height), Image.LANCZOS)


def render_thumbnail(scene: Scene, size: int = 160) -> Image.Image:
    """A small map for the scene list (walkable area and paths left out)."""
    return render_map(scene, size, walkable=False, camera_path=False, people=False)
