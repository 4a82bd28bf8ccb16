"""Poles (lamp posts, sign poles, utility poles) and tree trunks: long near-vertical strips.

On a grey frame downscaled to ``work_size`` px on its long side:

1. line segments by OpenCV's LSD; keep those within ``max_tilt_deg`` of vertical;
2. each segment's polarity: the sign of (grey right of it - grey left of it);
3. merge collinear segments of the same polarity (a pole's edge is often broken by a sign or
   a lamp arm) into edge lines;
4. pair a rising edge with a falling edge to its right (or the reverse) that overlaps it
   vertically and is ``min_width_px..max_width`` away: the two sides of a strip that is
   uniformly brighter (or darker) than both its neighbours;
5. check that contrast on the strip's sample columns.

Strips of at least ``min_pole_length`` of the frame height with length/width >= ``min_slenderness``
are pole candidates (label "pole"); shorter strips can still be tree trunks
(``vegetation.attach_trunks``). The crop classifier later confirms or relabels poles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from urbanverse.errors import InputError
from urbanverse.perception.boxes import Candidate


@dataclass(frozen=True, kw_only=True)
class PoleCfg:
    """Thresholds of the pole detector.

    ``work_size``: long side (px) of the working image. ``max_tilt_deg``: largest angle from the
    vertical of a pole edge. ``min_segment``: shortest LSD segment kept, fraction of the frame
    height. ``merge_gap``: largest vertical gap bridged when joining collinear segments, fraction of
    the frame height. ``min_width_px`` / ``max_width``: strip width in working px / as a fraction of
    its length. ``min_contrast``: grey levels between the strip and each neighbour. ``strip_gap``: largest
    vertical gap (fraction of the frame height) between two strips on one line that are joined.
    ``min_pole_length``: strip length (fraction of frame height) to count as a pole; trunks may be
    shorter. ``min_slenderness``: length / width of a pole. ``max_poles``: per frame, longest first.
    """

    work_size: int = 640
    max_tilt_deg: float = 8.0
    min_segment: float = 0.03
    merge_gap: float = 0.04
    min_width_px: float = 1.5
    max_width: float = 0.15
    min_contrast: float = 10.0
    strip_gap: float = 0.15
    min_pole_length: float = 0.18
    min_slenderness: float = 8.0
    max_poles: int = 8

    def __post_init__(self) -> None:
        if not 64 <= self.work_size <= 4096:
            raise InputError(f"poles.work_size: expected 64..4096 px, got {self.work_size}")
        if not 0 < self.max_tilt_deg < 45:
            raise InputError(f"poles.max_tilt_deg: expected 0..45, got {self.max_tilt_deg}")
        if not 0 < self.min_pole_length < 1:
            raise InputError(f"poles.min_pole_length: expected 0..1 of the frame, got {self.min_pole_length}")
        if self.max_poles < 0:
            raise InputError(f"poles.max_poles: expected >= 0, got {self.max_poles}")


@dataclass(frozen=True)
class Strip:
    """A vertical strip in frame pixels: ``x1 < x2`` (left, right edge), ``y1 < y2`` (top, foot);
    ``contrast``: mean grey difference to its neighbours (working-image grey levels, signed:
    positive when the strip is brighter)."""

    x1: float
    y1: float
    x2: float
    y2: float
    contrast: float

    @property
    def length(self) -> float:
        return self.y2 - self.y1

    @property
    def width(self) -> float:
        return self.x2 - self.x1


def _edge_lines(gray: np.ndarray, cfg: PoleCfg) -> np.ndarray:
    """Merged near-vertical edges ``(N, 5)``: x_top, y_top, x_bottom, y_bottom, polarity (+1 / -1)."""
    import cv2

    h, w = gray.shape
    lsd = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD)
    found = lsd.detect(gray)[0]
    if found is None:
        return np.zeros((0, 5))
    seg = found.reshape(-1, 4).astype(np.float64)
    dx, dy = seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1]
    length = np.hypot(dx, dy)
    keep = (np.abs(dx) <= np.tan(np.radians(cfg.max_tilt_deg)) * np.abs(dy)) & (length >= cfg.min_segment * h)
    seg = seg[keep]
    # orient top -> bottom
    flip = seg[:, 1] > seg[:, 3]
    seg[flip] = seg[flip][:, [2, 3, 0, 1]]
    # polarity from grey samples 2 px either side along the segment
    pol = np.zeros(len(seg))
    g = gray.astype(np.float32)
    for k, (x0, y0, x1, y1) in enumerate(seg):
        ts = np.linspace(0.1, 0.9, 7)
        xs, ys = x0 + ts * (x1 - x0), (y0 + ts * (y1 - y0)).astype(int).clip(0, h - 1)
        right = g[ys, np.clip((xs + 2).astype(int), 0, w - 1)].mean()
        left = g[ys, np.clip((xs - 2).astype(int), 0, w - 1)].mean()
        pol[k] = 1.0 if right > left else -1.0
    order = np.argsort(seg[:, 1])
    seg, pol = seg[order], pol[order]
    merged: list[list[float]] = []
    gap = cfg.merge_gap * h
    for (x0, y0, x1, y1), p in zip(seg, pol, strict=True):
        for m in merged:
            # same polarity, continuation below the line's foot, x at the join within 2.5 px
            if m[4] == p and -0.5 * (y1 - y0) <= y0 - m[3] <= gap and abs(x0 - m[2]) <= 2.5:
                if y1 > m[3]:
                    m[2], m[3] = x1, y1
                break
        else:
            merged.append([x0, y0, x1, y1, p])
    return np.array(merged, dtype=np.float64).reshape(-1, 5)


def find_strips(rgb: np.ndarray, cfg: PoleCfg) -> list[Strip]:
    """All vertical strips (poles and shorter trunk-like strips) in frame pixels, longest first."""
    import cv2

    h, w = rgb.shape[:2]
    scale = min(1.0, cfg.work_size / max(h, w))
    gray = cv2.cvtColor(
        cv2.resize(rgb, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA),
        cv2.COLOR_RGB2GRAY,
    )
    gh, gw = gray.shape
    lines = _edge_lines(gray, cfg)
    if len(lines) < 2:
        return []
    xm = 0.5 * (lines[:, 0] + lines[:, 2])
    g = gray.astype(np.float32)
    cands: list[tuple[float, Strip]] = []
    for i in range(len(lines)):
        for j in range(len(lines)):
            if xm[j] <= xm[i] or lines[i, 4] == lines[j, 4]:
                continue
            top, foot = max(lines[i, 1], lines[j, 1]), min(lines[i, 3], lines[j, 3])
            overlap = foot - top
            span_i, span_j = lines[i, 3] - lines[i, 1], lines[j, 3] - lines[j, 1]
            if overlap < 0.6 * min(span_i, span_j) or overlap <= 0:
                continue
            width = xm[j] - xm[i]
            y1, y2 = min(lines[i, 1], lines[j, 1]), max(lines[i, 3], lines[j, 3])
            if width < cfg.min_width_px or width > cfg.max_width * (y2 - y1):
                continue
            # strip brighter than both sides: rising edge on the left (+1), falling on the right (-1)
            sign = lines[i, 4]
            ys = np.linspace(top, foot, 9)[1:-1].astype(int).clip(0, gh - 1)
            cols = np.clip((xm[i] + width * np.array([0.35, 0.5, 0.65])).astype(int), 0, gw - 1)
            inner = g[ys[:, None], cols[None, :]]
            left = g[ys, np.clip((xm[i] - 2.5).astype(int), 0, gw - 1)]
            right = g[ys, np.clip((xm[j] + 2.5).astype(int), 0, gw - 1)]
            c_left, c_right = sign * (inner.mean() - left.mean()), sign * (inner.mean() - right.mean())
            if min(c_left, c_right) < cfg.min_contrast:
                continue
            strip = Strip(
                x1=float(xm[i] / scale),
                y1=float(y1 / scale),
                x2=float(xm[j] / scale),
                y2=float(y2 / scale),
                contrast=float(sign * min(c_left, c_right)),
            )
            cands.append((strip.length, strip))
    joined = _join_collinear([c for _, c in cands], cfg.strip_gap * h)
    gx = np.abs(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3))
    cands = []
    for s in joined:
        if s.length >= 0.5 * cfg.min_pole_length * h:
            s = _extend_down(g, gx, s, scale, cfg)
        cands.append((s.length, s))
    cands.sort(key=lambda t: -t[0])
    out: list[Strip] = []
    for _, s in cands:  # each edge line belongs to one strip: drop strips overlapping a longer one
        if any(s.x1 < o.x2 and o.x1 < s.x2 and s.y1 < o.y2 and o.y1 < s.y2 for o in out):
            continue
        out.append(s)
    return out


def _extend_down(g: np.ndarray, gx: np.ndarray, s: Strip, scale: float, cfg: PoleCfg) -> Strip:
    """Follow a strip down past where LSD lost it (a grey pole in front of a grey road).

    ``g``: the working grey image, ``gx``: its |d grey / dx|. Row by row below the foot, each edge
    is re-centred within 1 px (tracking a slight tilt) and the row counts as pole when the strip's
    interior is brighter, or darker, than both sides by ``min_contrast`` (mean over 5 rows, so
    grass or cobbles, whose contrast flips at random, stop it). Gaps up to ``strip_gap`` (a sign
    panel) are bridged.
    """
    gh, gw = g.shape
    xl, xr = s.x1 * scale, s.x2 * scale
    y = int(s.y2 * scale)
    last, gap_rows = y, int(cfg.strip_gap * gh)
    window: list[float] = []
    while y + 1 < gh and y - last <= gap_rows:
        y += 1
        cand = []
        for x in (xl, xr):  # re-centre each edge within 1 px
            lo, hi = max(0, int(round(x)) - 1), min(gw, int(round(x)) + 2)
            ok = hi > lo and gx[y, lo:hi].max() >= cfg.min_contrast
            cand.append(lo + float(np.argmax(gx[y, lo:hi])) if ok else x)
        a, b = int(np.ceil(cand[0] + 0.5)), int(np.floor(cand[1] - 0.5))
        inner = g[y, a : b + 1].mean() if b >= a else g[y, int(round(0.5 * (cand[0] + cand[1])))]
        left = g[y, max(0, int(round(cand[0])) - 2)]
        right = g[y, min(gw - 1, int(round(cand[1])) + 2)]
        c = max(min(inner - left, inner - right), min(left - inner, right - inner))
        window = (window + [c])[-5:]
        if c < cfg.min_contrast or not 1.0 <= cand[1] - cand[0] <= 1.5 * (s.x2 - s.x1) * scale + 2:
            continue
        xl, xr = cand  # commit the re-centred edges only on rows that look like the pole
        if len(window) == 5 and np.mean(window) >= cfg.min_contrast:
            last = y
    if last <= s.y2 * scale + 1:
        return s
    return Strip(
        x1=min(s.x1, xl / scale),
        y1=s.y1,
        x2=max(s.x2, xr / scale),
        y2=(last + 1) / scale,
        contrast=s.contrast,
    )


def _join_collinear(strips: list[Strip], gap: float) -> list[Strip]:
    """Join strips stacked on one vertical line (a pole interrupted by a sign panel or an occluder;
    its contrast may change sign where the background changes): centres at most the wider width
    apart (a slightly tilted pole), vertical gap <= ``gap`` px."""
    strips = sorted(strips, key=lambda s: s.y1)
    joined: list[Strip] = []
    for s in strips:
        for k, o in enumerate(joined):
            shift = abs((s.x1 + s.x2) - (o.x1 + o.x2)) / 2
            if (
                shift <= max(s.width, o.width, 2.0)
                and -0.2 * s.length <= s.y1 - o.y2 <= gap
                and max(s.width, o.width) <= 2.5 * max(min(s.width, o.width), 1.0)
            ):
                joined[k] = Strip(
                    x1=min(s.x1, o.x1),
                    y1=o.y1,
                    x2=max(s.x2, o.x2),
                    y2=max(s.y2, o.y2),
                    contrast=o.contrast if abs(o.contrast) < abs(s.contrast) else s.contrast,
                )
                break
        else:
            joined.append(s)
    return joined


def poles_from_strips(strips: list[Strip], height: int, cfg: PoleCfg) -> list[Candidate]:
    """Pole candidates (label "pole", source "poles") among ``strips`` of a frame ``height`` px tall.

    Score in [0.3, 0.8]: longer, more slender and higher-contrast strips score higher. A strip brighter
    than its sides that reaches the top of the frame is sky seen between two tall things, not a pole.
    """
    out: list[Candidate] = []
    for s in strips:
        if s.length < cfg.min_pole_length * height or s.length < cfg.min_slenderness * max(s.width, 1.0):
            continue
        if s.y1 <= 0.01 * height and s.contrast > 0:
            continue  # a bright strip reaching the top of the frame: sky between two trees or buildings
        score = 0.3 + 0.25 * min(s.length / (0.6 * height), 1.0) + 0.25 * min(abs(s.contrast) / 60.0, 1.0)
        out.append(
            Candidate(
                label="pole",
                score=float(score),
                box=np.array([s.x1, s.y1, s.x2, s.y2], dtype=np.float64),
                source="poles",
                extra={"strip": s},
            )
        )
        if len(out) >= cfg.max_poles:
            break
    return out
