"""Top-down map of a scene as a PNG: ground regions coloured by type, objects as labelled footprints,
the filming camera's path, and the people seen walking (one coloured line each, a dot where it starts
and an arrowhead where it ends) over light arrows of their flow field."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from urbanverse.records import atomic_path
from urbanverse.scene.agents import agent_colour, agent_headings, flow_arrays
from urbanverse.scene.record import Agent, FlowField, Scene

GROUND_COLORS = {
    "road": (70, 72, 78),
    "crosswalk": (215, 215, 205),
    "sidewalk": (190, 186, 176),
    "ramp": (222, 190, 80),
    "terrain": (120, 160, 95),
    "plaza": (205, 180, 150),
}
# Object colours by the first word of their category, then a default.
_OBJECT_COLORS = {
    "tree": (40, 120, 50),
    "shrub": (60, 140, 60),
    "house": (170, 90, 70),
    "building": (150, 80, 70),
    "car": (60, 110, 200),
    "bench": (150, 100, 50),
    "lamp": (240, 200, 40),
    "street": (240, 200, 40),
    "bollard": (90, 90, 90),
}
_VEHICLES = (
    "sedan",
    "hatchback",
    "suv",
    "taxi",
    "van",
    "pickup",
    "coupe",
    "minivan",
    "bus",
    "truck",
    "wagon",
)


def _object_color(category: str) -> tuple[int, int, int]:
    if any(v in category for v in _VEHICLES):
        return _OBJECT_COLORS["car"]
    for key, color in _OBJECT_COLORS.items():
        if key in category:
            return color
    return (200, 60, 160)


def _agent_path(draw: ImageDraw.ImageDraw, agent: Agent, px, colour, scale: float) -> None:
    """One person's path: a thin line, a dot where it starts and an arrowhead where it ends, pointing
    the way it last walked."""
    points = [px(p[1:]) for p in agent.trajectory]
    if len(points) >= 2:
        draw.line(points, fill=colour, width=max(1, int(scale * 0.08)), joint="curve")
    x, y = points[0]
    r = max(2.0, scale * 0.2)
    draw.ellipse([x - r, y - r, x + r, y + r], fill=colour, outline=(255, 255, 255))
    heading = float(agent_headings(np.asarray(agent.trajectory))[-1])
    ahead = np.array([math.cos(heading), -math.sin(heading)])  # image rows grow southwards
    side = np.array([-ahead[1], ahead[0]])
    size = max(6.0, scale * 0.7)
    tip = np.asarray(points[-1]) + ahead * size * 0.5
    head = [tip, tip - ahead * size + side * size * 0.45, tip - ahead * size - side * size * 0.45]
    draw.polygon([tuple(p) for p in head], fill=colour, outline=(255, 255, 255))


def _flow_arrows(draw: ImageDraw.ImageDraw, flow: FlowField, px, scale: float) -> None:
    """A light grey arrow per flow cell from its centre along the mean walking velocity, a cell long at
    1.5 m/s (a brisk walk) and longer for faster cells; cells with no net direction get none."""
    arrays = flow_arrays(flow)
    for row, col in zip(*np.nonzero(arrays["seen"]), strict=True):
        vx, vy = (float(v) for v in arrays["velocity"][row, col])
        length = math.hypot(vx, vy) / 1.5 * flow.cell * 0.8
        if length * scale < 3:
            continue
        centre = (flow.origin[0] + (col + 0.5) * flow.cell, flow.origin[1] + (row + 0.5) * flow.cell)
        unit = (vx / math.hypot(vx, vy), vy / math.hypot(vx, vy))
        start = (centre[0] - unit[0] * length / 2, centre[1] - unit[1] * length / 2)
        tip = (centre[0] + unit[0] * length / 2, centre[1] + unit[1] * length / 2)
        barb = 0.3 * length
        wings = [
            (tip[0] - barb * (unit[0] * c - unit[1] * s), tip[1] - barb * (unit[1] * c + unit[0] * s))
            for c, s in ((math.cos(0.5), math.sin(0.5)), (math.cos(0.5), -math.sin(0.5)))
        ]
        colour = (150, 150, 160)
        draw.line([px(start), px(tip)], fill=colour, width=1)
        draw.line([px(wings[0]), px(tip), px(wings[1])], fill=colour, width=1)


def _agent_points(agents: tuple[Agent, ...]) -> list[tuple[float, float]]:
    return [(x, y) for agent in agents for _, x, y in agent.trajectory]


def render_preview(scene: Scene, width_px: int = 1400, labels: bool = True) -> Image.Image:
    """Draw ``scene`` from above (+X right, +Y up), ``width_px`` wide, with a 10 m scale bar."""
    path = [tuple(c.position[:2]) for c in scene.camera_trajectory]
    points = np.array(
        [p for r in scene.ground for p in r.polygon]
        + [o.position[:2] for o in scene.objects]
        + path
        + _agent_points(scene.agents)
    )
    lo, hi = points.min(0) - 2.0, points.max(0) + 2.0
    scale = width_px / (hi[0] - lo[0])
    height_px = int(math.ceil((hi[1] - lo[1]) * scale))
    image = Image.new("RGB", (width_px, height_px + 30), (245, 245, 240))
    draw = ImageDraw.Draw(image)

    def px(xy) -> tuple[float, float]:
        return ((xy[0] - lo[0]) * scale, (hi[1] - xy[1]) * scale)

    for region in scene.ground:
        draw.polygon(
            [px(p) for p in region.polygon],
            fill=GROUND_COLORS.get(region.type, (180, 180, 180)),
            outline=(40, 40, 40),
        )
    font = ImageFont.load_default(size=max(10, int(scale * 0.6)))
    for obj in sorted(scene.objects, key=lambda o: -o.size[0] * o.size[1]):  # big first, small on top
        length, width = obj.size[0], obj.size[1]
        c, s = math.cos(obj.yaw), math.sin(obj.yaw)
        corners = [
            (obj.position[0] + c * dx - s * dy, obj.position[1] + s * dx + c * dy)
            for dx, dy in (
                (-length / 2, -width / 2),
                (length / 2, -width / 2),
                (length / 2, width / 2),
                (-length / 2, width / 2),
            )
        ]
        color = _object_color(obj.category)
        draw.polygon([px(p) for p in corners], fill=color, outline=(20, 20, 20))
        tip = (obj.position[0] + c * length / 2, obj.position[1] + s * length / 2)  # front (+X) marker
        draw.line([px(obj.position[:2]), px(tip)], fill=(255, 255, 255), width=max(1, int(scale * 0.08)))
    if scene.flow is not None:
        _flow_arrows(draw, scene.flow, px, scale)
    for i, agent in enumerate(scene.agents):
        _agent_path(draw, agent, px, agent_colour(i), scale)
    if labels:
        draw_labels(draw, [(px(o.position[:2]), o.category.replace("_", " ")) for o in scene.objects], font)
    if len(path) >= 2:  # the camera that filmed the scene (generated scenes): a red line, dot at the start
        draw.line([px(p) for p in path], fill=(220, 30, 30), width=max(2, int(scale * 0.12)))
    if path:
        x, y = px(path[0])
        r = max(3, int(scale * 0.3))
        draw.ellipse([x - r, y - r, x + r, y + r], fill=(220, 30, 30))
    bar = 10.0 * scale
    draw.rectangle([10, height_px + 10, 10 + bar, height_px + 16], fill=(0, 0, 0))
    draw.text(
        (20 + bar, height_px + 6),
        f"10 m   {scene.name}: {len(scene.objects)} objects"
        + (f", {len(scene.agents)} people (dot: start, arrow: end)" if scene.agents else ""),
        fill=(0, 0, 0),
        font=ImageFont.load_default(size=14),
    )
    return image


def draw_labels(
    draw: ImageDraw.ImageDraw, items: list[tuple[tuple[float, float], str]], font
) -> list[tuple[float, float, float, float]]:
    """Write each label next to its anchor (px) where it overlaps no label written before: to the
    right, left, above or below, then farther out; a label moved off its anchor gets a leader line.
    Returns the label boxes ``(x0, y0, x1, y1)`` (px) in the order of ``items``."""
    placed: list[tuple[float, float, float, float]] = []
    pad = 2
    for (x, y), text in items:
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        w, h = right - left + 2 * pad, bottom - top + 2 * pad
        spots = [(x + 4 + ring * w, y - h / 2 + k * ring * h) for ring in (0, 1, 2) for k in (0, -1, 1)] + [
            (x - 4 - w, y - h / 2),
            (x - w / 2, y - 4 - h),
            (x - w / 2, y + 4),
        ]
        spots.sort(key=lambda p: (p[0] + w / 2 - x) ** 2 + (p[1] + h / 2 - y) ** 2)
        sx, sy = next(
            (
                (sx, sy)
                for sx, sy in spots
                if all(sx + w <= a or sx >= c or sy + h <= b or sy >= d for a, b, c, d in placed)
            ),
            spots[0],
        )
        placed.append((sx, sy, sx + w, sy + h))
        if math.hypot(sx + w / 2 - x, sy + h / 2 - y) > w:
            draw.line([(x, y), (sx + w / 2, sy + h / 2)], fill=(60, 60, 60), width=1)
        draw.rectangle([sx, sy, sx + w, sy + h], fill=(255, 255, 255))
        draw.text((sx + pad - left, sy + pad - top), text, fill=(0, 0, 0), font=font)
    return placed


def write_preview(scene: Scene, scene_dir: Path, name: str = "preview.png") -> Path:
    """Render the top-down map into ``scene_dir/name`` (atomically); returns the path."""
    out = Path(scene_dir) / name
    with atomic_path(out) as tmp:
        render_preview(scene).save(tmp)
    return out
