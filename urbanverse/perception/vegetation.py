"""Trees, shrubs and hedges, which COCO lacks: a vegetation colour index plus shape and texture.

Pipeline on a frame downscaled to ``work_size`` px on its long side:

1. vegetation pixels: excess-green on chromaticity, ``ExG = (2G - R - B) / (R + G + B) > exg_min``,
   with a hue gate (yellow-green .. cyan-green) and a minimum brightness;
2. morphological opening and closing, connected components;
3. components too small, or shaped like ground (lawn: wide, flat, touching the bottom of the
   frame) are dropped; the rest become crowns, scored by fill ratio and foliage texture
   (local grey-level standard deviation);
4. tree vs shrub vs hedge by shape: tall crowns (height/width >= ``tree_aspect``) or crowns with
   a trunk under them (a vertical strip from ``urbanverse.perception.poles`` that ends inside the
   crown's lower part, ``attach_trunks``) are trees and their box grows down to the trunk's foot;
   long low crowns (width/height >= ``hedge_aspect``) are hedges; the others shrubs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urbanverse.errors import InputError
from urbanverse.perception.boxes import Candidate

#: The labels of this detector's boxes: each bounds a crown (and a trunk where one was found under it).
VEGETATION_LABELS = frozenset({"tree", "shrub", "hedge"})


@dataclass(frozen=True, kw_only=True)
class VegetationCfg:
    """Thresholds of the vegetation detector.

    ``work_size``: long side (px) of the downscaled working image. ``exg_min``: excess-green
    threshold (chromaticity units, -1..2). ``min_value``: minimum brightness max(R,G,B)/255.
    ``min_area``: smallest component, fraction of the frame area. ``tree_aspect``: height/width
    above which a crown is a tree. ``hedge_aspect``: width/height above which a low crown is a
    hedge. ``ground_width``: a component touching the bottom 5 % of the frame wider than this
    fraction of the frame and flatter than ``1 / hedge_aspect`` is ground (lawn), not an object; so is
    a smooth component (mean local grey std < ``ground_texture``) that is wide and flat or touches the
    frame's side. ``min_texture``: smoother components are paint, not foliage. ``max_fill``:
    components filling more of their box are man-made rectangles (a green sign or shutter).
    ``min_fill``: components filling less are thin lines (a grass verge along a wall, seen obliquely).
    ``min_score``: candidates below are dropped.
    """

    work_size: int = 480
    exg_min: float = 0.06
    min_value: float = 0.08
    min_area: float = 0.002
    tree_aspect: float = 0.9
    hedge_aspect: float = 3.0
    ground_width: float = 0.35
    ground_texture: float = 20.0
    min_texture: float = 6.0
    max_fill: float = 0.93
    min_fill: float = 0.25
    min_score: float = 0.3

    def __post_init__(self) -> None:
        if not 64 <= self.work_size <= 4096:
            raise InputError(f"vegetation.work_size: expected 64..4096 px, got {self.work_size}")
        if not 0.0 < self.min_area < 0.5:
            raise InputError(f"vegetation.min_area: expected 0..0.5 of the frame, got {self.min_area}")
        if self.tree_aspect <= 0 or self.hedge_aspect <= 1:
            raise InputError("vegetation: tree_aspect must be > 0 and hedge_aspect > 1")


def vegetation_mask(rgb: np.ndarray, cfg: VegetationCfg) -> tuple[np.ndarray, float]:
    """Boolean vegetation mask of the downscaled frame and the scale factor (work px per frame px)."""
    import cv2

    h, w = rgb.shape[:2]
    scale = min(1.0, cfg.work_size / max(h, w))
    small = cv2.resize(
        rgb, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA
    )
    f = small.astype(np.float32)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    exg = (2 * g - r - b) / (r + g + b + 1e-3)
    hue = cv2.cvtColor(small, cv2.COLOR_RGB2HSV)[..., 0]  # 0..180
    value = np.maximum(np.maximum(r, g), b) / 255.0
    # hue 20..80 (OpenCV units, 40..160 deg): foliage and grass; painted signs are bluer (about 90)
    mask = (exg > cfg.exg_min) & (hue >= 20) & (hue <= 80) & (value >= cfg.min_value)
    m = mask.astype(np.uint8)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return m.astype(bool), scale


def _texture(gray: np.ndarray) -> np.ndarray:
    """Local grey-level standard deviation (7 x 7 window), grey levels 0..255."""
    import cv2

    g = gray.astype(np.float32)
    mean = cv2.blur(g, (7, 7))
    sq = cv2.blur(g * g, (7, 7))
    return np.sqrt(np.maximum(sq - mean * mean, 0.0))


def detect_vegetation(rgb: np.ndarray, cfg: VegetationCfg) -> list[Candidate]:
    """Crowns of trees, shrubs and hedges in an RGB frame (boxes and masks in frame pixels).

    Labels are "tree", "shrub" or "hedge" (source "vegetation"); ``extra`` holds ``aspect``,
    ``texture`` and the crown box before any trunk is attached.
    """
    import cv2

    h, w = rgb.shape[:2]
    mask, scale = vegetation_mask(rgb, cfg)
    sh, sw = mask.shape
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return []
    gray = cv2.cvtColor(cv2.resize(rgb, (sw, sh), interpolation=cv2.INTER_AREA), cv2.COLOR_RGB2GRAY)
    texture = _texture(gray)
    out: list[Candidate] = []
    min_px = cfg.min_area * sh * sw
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < min_px:
            continue
        touches_bottom = y + bh >= 0.95 * sh
        if touches_bottom and bw >= cfg.ground_width * sw and bh * cfg.hedge_aspect <= bw * 1.5:
            continue  # a lawn or verge: ground, classified by the ground stage
        comp = labels[y : y + bh, x : x + bw] == i
        fill = area / float(bw * bh)
        tex = float(texture[y : y + bh, x : x + bw][comp].mean())
        aspect = bh / float(bw)
        if fill > cfg.max_fill or fill < cfg.min_fill or tex < cfg.min_texture:
            continue
        wide_flat = bw >= cfg.ground_width * sw and aspect < 0.5
        at_side = x <= 1 or x + bw >= sw - 1
        if tex < cfg.ground_texture and (wide_flat or at_side):
            continue  # smooth lawn seen from above or a verge cut by the frame's side
        if aspect >= cfg.tree_aspect or (y <= 1 and bh >= 0.25 * sh):
            label = "tree"  # tall, or a crown cut by the top of the frame (shrubs stay below eye level)
        elif 1.0 / aspect >= cfg.hedge_aspect:
            label = "hedge"
        else:
            label = "shrub"
        score = float(np.clip(0.35 + 0.3 * fill + 0.3 * min(tex / 25.0, 1.0), 0.0, 0.95))
        if score < cfg.min_score:
            continue
        box = np.array([x, y, x + bw, y + bh], dtype=np.float64) / scale
        box = np.clip(box, 0, [w, h, w, h])
        full = np.zeros((h, w), dtype=bool)
        fx1, fy1 = int(round(x / scale)), int(round(y / scale))
        fx2, fy2 = min(w, int(round((x + bw) / scale))), min(h, int(round((y + bh) / scale)))
        if fx2 > fx1 and fy2 > fy1:
            full[fy1:fy2, fx1:fx2] = cv2.resize(
                comp.astype(np.uint8), (fx2 - fx1, fy2 - fy1), interpolation=cv2.INTER_NEAREST
            ).astype(bool)
        out.append(
            Candidate(
                label=label,
                score=score,
                box=box,
                source="vegetation",
                mask=full,
                extra={"aspect": aspect, "texture": tex, "crown_box": box.copy()},
            )
        )
    return out


def attach_trunks(crowns: list[Candidate], strips: list) -> set[int]:
    """Give crowns the trunk under them; returns indices into ``strips`` used as trunks.

    A strip (a ``poles.Strip``) is a trunk of a crown when it is centred within the middle 60 % of
    the crown's width, its top lies between 30 % of the crown's height and 15 % below the crown, and
    it is narrower than half the crown. The crown becomes a "tree" and its box (and the mask) extend
    down to the foot of the trunk. A strip whose top is above the crown is a pole in front of or
    behind it, not a trunk.
    """
    used: set[int] = set()
    for crown in crowns:
        x1, y1, x2, y2 = crown.extra["crown_box"]
        cw, ch = x2 - x1, y2 - y1
        if crown.label == "hedge":
            continue
        best, best_len = None, 0.0
        for j, s in enumerate(strips):
            if j in used:
                continue
            cx = 0.5 * (s.x1 + s.x2)
            if not (x1 + 0.2 * cw <= cx <= x2 - 0.2 * cw):
                continue
            if not (y1 + 0.3 * ch <= s.y1 <= y2 + 0.15 * ch) or s.y2 <= y2:
                continue
            if s.x2 - s.x1 > 0.5 * cw:
                continue
            if s.y2 - s.y1 > best_len:
                best, best_len = j, s.y2 - s.y1
        if best is None:
            continue
        s = strips[best]
        used.add(best)
        crown.label = "tree"
        crown.box = np.array([min(x1, s.x1), y1, max(x2, s.x2), max(y2, s.y2)], dtype=np.float64)
        crown.score = float(min(0.95, crown.score + 0.1))
        crown.extra["trunk"] = (s.x1, s.y1, s.x2, s.y2)
        if crown.mask is not None:
            h, w = crown.mask.shape
            ys, ye = int(max(0, y2 - 1)), int(min(h, np.ceil(s.y2)))
            xs, xe = int(max(0, np.floor(s.x1))), int(min(w, np.ceil(s.x2)))
            crown.mask[ys:ye, xs:xe] = True
    return used
