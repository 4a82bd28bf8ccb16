"""Ground regions from keyframes: a bird's-eye colour map on the ground plane, classified and vectorised.

Pixels below the horizon (outside object boxes, and not found off the ground plane by
:mod:`urbanverse.layout.offplane`: facades, walls) are cast onto the ground plane ``z = 0`` of the
metric reconstruction and averaged into a bird's-eye grid. Cells are classified with cues that need
no trained model: vegetation by its excess-green index (terrain); the rest in colour clusters (k-means
in Lab), walked paving being the clusters under the camera path (not counting the steps on or within
1 m of a crosswalk: they cross the road) and road the darkest, greyest of the others; areas of narrow
light paint lines on darker paving, 3-20 m long, are crosswalk; road on the far side of the camera
path from the street's road (the road joined to a crossing; a facade cast onto its lot, a lot's grey
gravel) is terrain, and so is what lies beyond a crossing's far curb (or the far sidewalk, near it:
:mod:`urbanverse.layout.road_extent`). The class grid is cleaned with a majority filter and
vectorised into polygons (OpenCV contours, simplified with shapely).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import scipy.ndimage
import scipy.spatial
import shapely

from urbanverse.colour import srgb_to_lab_opencv
from urbanverse.layout.birdseye import points_by_label
from urbanverse.layout.ground_cfg import GroundCfg
from urbanverse.layout.offplane import hidden_by_obstacles, parallax_residual
from urbanverse.layout.road_extent import (
    beyond_curbs,
    component_shapes,
    crossing_landings,
    crossing_shapes,
    path_sides,
)
from urbanverse.perception.record import FrameDetections
from urbanverse.recon.geometry import SparsePoints, empty_points, pixel_to_ground, project
from urbanverse.recon.record import Reconstruction
from urbanverse.records import Vec2, Vec3, record

GROUND_TYPES = ("road", "sidewalk", "crosswalk", "terrain")
_CLASS = {name: i + 1 for i, name in enumerate(GROUND_TYPES)}  # 0: unseen


@record
class GroundRegionEstimate:
    """A classified ground polygon (m, world) with the mean sRGB colour of its cells."""

    type: str
    polygon: tuple[Vec2, ...]
    area_m2: float
    mean_rgb: Vec3


@record
class GroundLayout:
    """Output of the ground stage. ``pixels_file``: npz, a colour sample per ground type (uint8 (N, 3))."""

    schema_version: int = 1
    regions: tuple[GroundRegionEstimate, ...]
    cell_m: float
    origin: Vec2
    shape: tuple[int, int]
    grid_file: str
    pixels_file: str
    coverage_m2: float


def _on_ground(
    index: int,
    uv: np.ndarray,
    ground: np.ndarray,
    recon: Reconstruction,
    images: dict[int, np.ndarray],
    partners: list[int],
    obstacles: np.ndarray,
    cfg: GroundCfg,
) -> np.ndarray:
    """Which pixels ``uv (N, 2)`` of keyframe ``index`` (ground points ``(N, 3)``) are on the ground plane."""
    ok = np.ones(len(uv), bool)
    if cfg.parallax_px > 0 and partners:
        # The smaller residual over the partners that see the pixel's ground point (NaN: no evidence).
        residual = np.fmin.reduce(
            [
                parallax_residual(recon, index, j, images[index], images[j], uv, cfg.parallax_scale)
                for j in partners
            ]
        )
        ok &= ~(residual > cfg.parallax_px)
    if len(obstacles):
        camera = np.asarray(recon.keyframes[index].position[:2])
        near = np.linalg.norm(obstacles - camera, axis=1) <= cfg.obstacle_max_range_m
        ok &= ~hidden_by_obstacles(obstacles[near], camera, ground[:, :2])
    return ok


def _raised(
    recon: Reconstruction, index: int, raised_xyz: np.ndarray, shape: tuple[int, int], stride: int
) -> np.ndarray:
    """Mask ``(ceil(H / stride), ceil(W / stride))`` of the sampled pixels of keyframe ``index`` (image
    ``shape`` (H, W)) onto which a point of ``raised_xyz (M, 3)`` (points above the plane) projects.

    Seen from a camera above the plane, a point above the plane lies on its ray before the ray
    reaches the ground, so the ground there is hidden, whichever keyframe the point was measured
    in. Dense points sample every few pixels: the mask is grown by one sample cell either side."""
    h, w = shape
    grid = np.zeros((-(-h // stride), -(-w // stride)), np.uint8)
    if len(raised_xyz):
        uv, depth = project(recon, index, raised_xyz)
        ok = (depth > 0) & (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
        cells = (uv[ok] // stride).astype(int)
        grid[cells[:, 1], cells[:, 0]] = 1
        grid = cv2.dilate(grid, np.ones((3, 3), np.uint8))
    return grid.astype(bool)


def _splat(
    frames: Sequence[int],
    recon: Reconstruction,
    images: dict[int, np.ndarray],
    boxes: dict,
    points_xyz: np.ndarray,
    cfg: GroundCfg,
    dense_xyz: np.ndarray,
):
    """World xy ``(N, 2)`` and colours ``(N, 3)`` of ground pixels over keyframes ``frames``;
    ``points_xyz (M, 3)``: 3D points whose tall ones are obstacles (free space); ``dense_xyz (D, 3)``:
    dense points, whose raised ones hide the ground where they project."""
    registered = [k.index for k in recon.registered if k.index in images]
    z = points_xyz[:, 2]
    # Points above 25 m are outliers (a facade's top is lower); a threshold of 0 turns free space off.
    high = (cfg.obstacle_min_height_m > 0) & (z > cfg.obstacle_min_height_m) & (z < 25.0)
    obstacles = points_xyz[high, :2]
    dense_z = dense_xyz[:, 2]
    raised = dense_xyz[(cfg.raised_min_height_m > 0) & (dense_z > cfg.raised_min_height_m) & (dense_z < 25.0)]

    def frame_ground(index: int) -> tuple[np.ndarray, np.ndarray]:
        image = images[index]
        h, w = image.shape[:2]
        vs, us = np.mgrid[0 : h : cfg.pixel_stride, 0 : w : cfg.pixel_stride]
        keep = np.ones(us.shape, bool)
        keep &= ~_raised(recon, index, raised, (h, w), cfg.pixel_stride)
        for x1, y1, x2, y2 in boxes.get(index, ()):
            keep &= ~((us >= x1) & (us <= x2) & (vs >= y1) & (vs <= y2))
        uv = np.stack([us[keep], vs[keep]], axis=1).astype(float) + 0.5
        ground = pixel_to_ground(recon, index, uv, cfg.max_distance_m)
        ok = np.isfinite(ground[:, 0])
        k = registered.index(index)
        partners = [registered[j] for j in (k - 1, k + 1) if 0 <= j < len(registered)]
        if ok.any():
            ok[ok] = _on_ground(index, uv[ok], ground[ok], recon, images, partners, obstacles, cfg)
        return ground[ok, :2], image[vs[keep][ok], us[keep][ok]]

    # Keyframes are cast side by side (OpenCV and NumPy let go of the GIL in the flow, the homography
    # fits and the array work); results come back in frame order, so the ground is the same.
    with ThreadPoolExecutor(cfg.threads) as pool:
        parts = list(pool.map(frame_ground, frames))
    xy, rgb = [part[0] for part in parts], [part[1] for part in parts]
    if not xy:
        return np.zeros((0, 2)), np.zeros((0, 3), np.uint8)
    return np.concatenate(xy), np.concatenate(rgb)


def _classify(mean: np.ndarray, seen: np.ndarray, path_cells: np.ndarray, cfg: GroundCfg) -> np.ndarray:
    """Class per cell (0 unseen, else ``_CLASS``) from mean colours ``(H, W, 3)`` in [0, 1]."""
    r, g, b = mean[..., 0], mean[..., 1], mean[..., 2]
    exg = (2 * g - r - b) / np.maximum(r + g + b, 1e-6)
    classes = np.zeros(seen.shape, np.int32)
    green = seen & (exg > cfg.excess_green)
    classes[green] = _CLASS["terrain"]
    rest = seen & ~green
    if rest.sum() < 10:
        classes[rest] = _CLASS["sidewalk"]
        return classes
    lab = srgb_to_lab_opencv(mean)
    crossing = _crosswalks(lab[..., 0], rest, cfg)
    # Steps on a crosswalk and just beside it cross the road: they do not make its asphalt paving.
    near_crossing = scipy.ndimage.binary_dilation(crossing, iterations=_cells(1.0, cfg.cell_m))
    on_pavement = path_cells[~near_crossing[path_cells[:, 0], path_cells[:, 1]]]
    walk = _walked_colour(lab, rest, on_pavement, cfg)
    classes[rest & walk] = _CLASS["sidewalk"]
    classes[rest & ~walk] = _CLASS["road"]
    classes[crossing] = _CLASS["crosswalk"]
    return classes


def _walked_colour(lab: np.ndarray, rest: np.ndarray, path_cells: np.ndarray, cfg: GroundCfg) -> np.ndarray:
    """Cells ``(H, W)`` of ``rest`` whose colour is a walked paving's rather than the road's.

    ``lab``: CIE Lab colours ``(H, W, 3)``. The cells are split into ``colour_clusters`` k-means
    clusters, lightness weighted by ``lightness_weight`` and chroma taken relative to lightness
    (``chroma_lightness``: a paving in a building's shadow is as dark as asphalt but keeps its hue).
    A cluster holding at least ``walked_share`` of the most-walked cluster's path cells is walked
    paving; of the others (each at least 5 % of the cells), the darkest and greyest (smallest mean
    L* + chroma) is road: asphalt is dark and grey, pavings come in every colour. Any cluster left
    joins the nearer of the two in mean colour, lightness weighted again. With no path cell in view,
    the largest cluster is road and the next largest walked paving.
    """
    weight = np.array([cfg.lightness_weight, 1.0, 1.0], np.float32)
    colours = lab[rest]
    values = colours.astype(np.float32) * weight
    if cfg.chroma_lightness > 0:
        # Chroma relative to lightness: shade darkens a paving's a*, b* with its L*.
        gain = cfg.chroma_lightness / np.maximum(colours[:, 0], 1.0)
        values[:, 1:] *= np.minimum(gain, cfg.chroma_max_gain)[:, None]
    k = min(cfg.colour_clusters, len(values))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.1)
    # The best of 10 k-means++ starts: with 3, a plaza's two pavings split differently from run to run.
    _, labels, _ = cv2.kmeans(values, k, None, criteria, 10, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    # Each cluster's mean colour (Lab) decides what it is: road, walked paving, or nearer which
    # (OpenCV's k-means leaves no cluster empty when there are at least k values).
    centres = np.stack([colours[part].mean(axis=0) for part in points_by_label(labels + 1, k)])
    cluster = np.full(rest.shape, -1)
    cluster[rest] = labels
    under = cluster[path_cells[:, 0], path_cells[:, 1]]
    walks = np.bincount(under[under >= 0], minlength=k)
    sizes = np.bincount(labels, minlength=k)
    if walks.any():
        walked = walks >= cfg.walked_share * walks.max()
        candidates = np.flatnonzero(~walked & (sizes >= 0.05 * len(labels)))
        darkness = centres[candidates, 0] + np.hypot(centres[candidates, 1], centres[candidates, 2])
        road = int(candidates[np.argmin(darkness)]) if len(candidates) else -1
    else:
        # No ground under the camera in view (a static camera above the street): the largest
        # cluster is the road, the next largest walked paving.
        by_size = np.argsort(-sizes)
        walked = np.isin(np.arange(k), by_size[1:2])
        road = int(by_size[0])
    if road >= 0 and walked.any():
        weighted = centres * np.array([cfg.lightness_weight, 1.0, 1.0], np.float32)
        to_walked = np.linalg.norm(weighted[:, None] - weighted[walked][None], axis=2).min(axis=1)
        walked |= to_walked < np.linalg.norm(weighted - weighted[road], axis=1)
        walked[road] = False
    return walked[np.maximum(cluster, 0)] & rest


def _crosswalks(lightness: np.ndarray, rest: np.ndarray, cfg: GroundCfg) -> np.ndarray:
    """Cells ``(H, W)`` of painted crossings: areas of paint lines (zebra bars, ladder rungs) on paving;
    ``lightness``: CIE L* per cell ``(H, W)``.

    A paint cell is lighter than the grey-scale opening of the lightness with a ``marking_max_width_m``
    square, i.e. part of a light structure narrower than that (a line, not a light sidewalk). Paint
    cells closed over the gaps between bars, then opened with a ``crosswalk_min_width_m`` square (a
    single curb line or lane marking does not survive it), with at least ``paint_fraction`` of paint
    and a length in ``crossing_length_m``, make a crossing; its dark cells between the bars belong to
    it too.
    """
    # Unseen cells count as light, so that the opening does not make seen cells next to them look
    # like narrow light lines.
    lightness = np.where(rest, lightness, 100.0).astype(np.float32)
    line = _cells(cfg.marking_max_width_m, cfg.cell_m)
    opened = cv2.morphologyEx(lightness, cv2.MORPH_OPEN, np.ones((line, line), np.uint8))
    paint = rest & (lightness - opened > cfg.paint_contrast_l)
    width = _cells(cfg.crosswalk_min_width_m, cfg.cell_m)
    area = cv2.morphologyEx(paint.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((line, line), np.uint8))
    area = cv2.morphologyEx(area, cv2.MORPH_OPEN, np.ones((width, width), np.uint8)).astype(bool) & rest
    labels, n = scipy.ndimage.label(area)
    if n == 0:
        return area
    index = np.arange(1, n + 1)
    size = scipy.ndimage.sum(np.ones_like(paint), labels, index) * cfg.cell_m**2
    share = scipy.ndimage.mean(paint, labels, index)
    lo, hi = cfg.crossing_length_m
    length = np.array([shape.length for shape in component_shapes(labels, n)]) * cfg.cell_m
    keep = index[
        (size >= cfg.min_region_m2) & (share >= cfg.paint_fraction) & (length >= lo) & (length <= hi)
    ]
    return np.isin(labels, keep)


def _cells(length_m: float, cell_m: float) -> int:
    """An odd number of cells (>= 3) spanning about ``length_m``."""
    return max(3, int(round(length_m / cell_m)) // 2 * 2 + 1)


def _place_road(classes: np.ndarray, path: np.ndarray, origin: np.ndarray, cfg: GroundCfg) -> None:
    """Relabel, in place, the road-coloured cells of ``classes (H, W)`` that are not the street's road
    (:mod:`urbanverse.layout.road_extent`): behind the walk terrain, where crossings land sidewalk,
    beyond the curbs the far sidewalk or terrain. ``path (K, 2)``: camera positions (m)."""
    crossing = classes == _CLASS["crosswalk"]
    behind, beside = path_sides(classes == _CLASS["road"], crossing, path, origin, cfg)
    crossings = crossing_shapes(crossing, cfg.landing_min_elongation)
    if cfg.road_side_share < 1.0:
        classes[behind] = _CLASS["terrain"]
    if cfg.landing_m > 0:
        classes[crossing_landings(classes == _CLASS["road"], crossings, cfg)] = _CLASS["sidewalk"]
    if cfg.curb_reach_m > 0:
        far_sidewalk, lots = beyond_curbs(classes == _CLASS["road"], crossings, path, beside, cfg)
        classes[far_sidewalk] = _CLASS["sidewalk"]
        classes[lots] = _CLASS["terrain"]


def _majority(classes: np.ndarray, size: int = 5) -> np.ndarray:
    """Mode filter over a ``size`` window; unseen cells stay unseen."""
    votes = np.stack(
        [scipy.ndimage.uniform_filter((classes == c).astype(np.float32), size) for c in range(1, 5)]
    )
    out = votes.argmax(axis=0).astype(np.int32) + 1
    out[classes == 0] = 0
    return out


def _polygons(mask: np.ndarray, origin: np.ndarray, cfg: GroundCfg) -> list[shapely.Polygon]:
    contours, hierarchy = cv2.findContours(mask.astype(np.uint8), cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for k, contour in enumerate(contours):
        if hierarchy[0][k][3] >= 0 or len(contour) < 3:
            continue  # holes are subtracted by their parent's polygon below
        shell = origin + (contour[:, 0, :] + 0.5) * cfg.cell_m
        holes = [
            origin + (contours[j][:, 0, :] + 0.5) * cfg.cell_m
            for j in range(len(contours))
            if hierarchy[0][j][3] == k and len(contours[j]) >= 3
        ]
        # Opening (shrink, grow) removes one-cell spikes and slivers before simplifying.
        poly = shapely.Polygon(shell, holes).buffer(0).buffer(-cfg.cell_m).buffer(cfg.cell_m)
        poly = poly.simplify(cfg.simplify_m)
        for part in getattr(poly, "geoms", [poly]):
            if part.area >= cfg.min_region_m2 and isinstance(part, shapely.Polygon):
                out.append(shapely.Polygon(part.exterior))  # scene regions have no holes
    return out


def run_ground(
    frames: Sequence[tuple[int, np.ndarray]],
    recon: Reconstruction,
    detections: FrameDetections,
    work_dir: Path,
    cfg: GroundCfg | None = None,
    points: SparsePoints | None = None,
    dense_xyz: np.ndarray | None = None,
) -> GroundLayout:
    """Classify and vectorise the ground seen in ``frames`` ((keyframe index, RGB uint8 image) pairs).

    ``points``: the reconstruction's sparse points (world frame), and ``dense_xyz (N, 3)``: its dense
    points (:func:`urbanverse.recon.depth.dense_cloud`), obstacles for the free-space check. The
    dense points outline facades that the sparse ones leave full of holes, so the ground behind house
    fronts is not cast onto the plane as road and crosswalk. Raised dense
    points also hide the ground at the pixels they project to (``raised_min_height_m``).
    """
    cfg = cfg or GroundCfg()
    # k-means starts and RANSAC samples draw from OpenCV's process-wide generator: seed it, so the
    # stage gives the same ground whatever ran before it in the process (a resumed run, a benchmark).
    cv2.setRNGSeed(0)
    if recon.ground.method == "up_prior":
        # No fitted ground plane: the plane is a guess, its homography would move real ground too,
        # and heights above it mean little. Neither off-plane cue is used.
        cfg = dataclasses.replace(cfg, parallax_px=0.0, obstacle_min_height_m=0.0)
    images = {i: im for i, im in frames if recon.keyframes[i].registered}
    step = max(1, len(images) // cfg.max_keyframes)
    boxes = {f.frame_index: [d.box for d in f.detections] for f in detections.frames}
    xyz = (points or empty_points()).xyz
    dense_xyz = np.zeros((0, 3)) if dense_xyz is None else np.asarray(dense_xyz, float).reshape(-1, 3)
    xy, rgb = _splat(
        list(images)[::step], recon, images, boxes, np.concatenate([xyz, dense_xyz]), cfg, dense_xyz
    )
    path = np.array([k.position[:2] for k in recon.registered]).reshape(-1, 2)
    lo = np.minimum(xy.min(axis=0) if len(xy) else path.min(axis=0), path.min(axis=0)) - 1.0
    hi = np.maximum(xy.max(axis=0) if len(xy) else path.max(axis=0), path.max(axis=0)) + 1.0
    shape = tuple(np.ceil((hi - lo) / cfg.cell_m).astype(int)[::-1])  # rows: y, cols: x
    cells = np.floor((xy - lo) / cfg.cell_m).astype(int)
    flat = cells[:, 1] * shape[1] + cells[:, 0]
    count = np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape)
    mean = (
        np.stack(
            [np.bincount(flat, rgb[:, c] / 255.0, shape[0] * shape[1]).reshape(shape) for c in range(3)],
            axis=-1,
        )
        / np.maximum(count, 1)[..., None]
    )
    seen = count >= 2
    path_cells = np.clip(np.floor((path - lo) / cfg.cell_m).astype(int)[:, ::-1], 0, np.array(shape) - 1)
    classes = _classify(mean, seen, path_cells, cfg)
    _place_road(classes, path, lo, cfg)
    classes = _majority(classes)
    regions, samples = [], {}
    for name, c in _CLASS.items():
        mask = classes == c
        if not mask.any():
            continue
        colour = mean[mask].mean(axis=0)
        samples[name] = np.clip(mean[mask] * 255, 0, 255).astype(np.uint8)
        for poly in _polygons(mask, lo, cfg):
            regions.append(
                GroundRegionEstimate(
                    type=name,
                    polygon=tuple((float(x), float(y)) for x, y in poly.exterior.coords[:-1]),
                    area_m2=float(poly.area),
                    mean_rgb=tuple(float(v) for v in colour),
                )
            )
    work_dir.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(work_dir / "ground_grid.npz", classes=classes.astype(np.uint8), count=count)
    np.savez_compressed(work_dir / "ground_pixels.npz", **samples)
    return GroundLayout(
        regions=tuple(regions),
        cell_m=cfg.cell_m,
        origin=(float(lo[0]), float(lo[1])),
        shape=(int(shape[0]), int(shape[1])),
        grid_file="ground_grid.npz",
        pixels_file="ground_pixels.npz",
        coverage_m2=float(seen.sum() * cfg.cell_m**2),
    )


def road_points(layout: GroundLayout, spacing_m: float = 0.5, min_piece_m2: float = 0.0) -> np.ndarray:
    """Points ``(R, 2)`` (m) on a ``spacing_m`` grid inside the layout's road regions, leaving out the
    connected pieces of road (and crosswalk) smaller than ``min_piece_m2``."""
    roads = [shapely.Polygon(r.polygon) for r in layout.regions if r.type in ("road", "crosswalk")]
    pieces = shapely.get_parts(shapely.union_all(roads)) if roads else []
    pieces = [piece for piece in pieces if piece.area >= min_piece_m2]
    if not pieces:
        return np.zeros((0, 2))
    area = shapely.union_all(pieces)
    x0, y0, x1, y1 = area.bounds
    gx, gy = np.meshgrid(np.arange(x0, x1, spacing_m), np.arange(y0, y1, spacing_m))
    inside = shapely.contains_xy(area, gx, gy)
    return np.column_stack([gx[inside], gy[inside]])


def surface_height(layout: GroundLayout, curb_m: float):
    """``f(xy (N, 2)) -> z (N,)``: ``-curb_m`` on road and crosswalk cells of the layout, else 0 (the
    pavement the camera walks on is the reconstruction's plane z = 0)."""
    grid = None

    def height(xy: np.ndarray) -> np.ndarray:
        nonlocal grid
        if grid is None:
            grid = _region_grid(layout)
        cells = np.floor((np.asarray(xy) - layout.origin) / layout.cell_m).astype(int)
        rows, cols = cells[:, 1], cells[:, 0]
        ok = (rows >= 0) & (rows < grid.shape[0]) & (cols >= 0) & (cols < grid.shape[1])
        z = np.zeros(len(cells))
        z[ok] = np.where(grid[rows[ok], cols[ok]], -curb_m, 0.0)
        return z

    return height


def _region_grid(layout: GroundLayout) -> np.ndarray:
    """Boolean grid (layout cells) of road and crosswalk regions."""
    h, w = layout.shape
    gx, gy = np.meshgrid(
        layout.origin[0] + (np.arange(w) + 0.5) * layout.cell_m,
        layout.origin[1] + (np.arange(h) + 0.5) * layout.cell_m,
    )
    roads = [shapely.Polygon(r.polygon) for r in layout.regions if r.type in ("road", "crosswalk")]
    if not roads:
        return np.zeros((h, w), bool)
    return shapely.contains_xy(shapely.union_all(roads), gx, gy)
