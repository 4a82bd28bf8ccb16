"""Round-trip scoring: a scene generated from a rendered tour against the scene the tour was rendered from.

Frames: a blind run's scene lives in its own ground-aligned frame; it is moved into the true scene's
frame by the rigid planar motion (rotation about Z + translation, no scale: metric scale is part of
what is scored) that best maps its camera path onto the true camera path of the same frames.

Objects: generated and true objects are matched one-to-one by the Hungarian method on planar
distance between their anchors, pairs farther than 2 m apart being unmatched. An object's anchor is
its base centre; a building's (or facade's) is the midpoint of its street front, of the stretch the
walk saw for a true one (:mod:`urbanverse.bench.fronts`): no building is scored by its footprint's
centre. Recall counts the true objects the tour passes (``min_pixels`` visible in at least
``min_frames`` frames taken within 20 m); precision counts every generated object, matched to any
true object. Recall is also split between the objects the walk went past and those that lie ahead of
its end (:func:`ahead_of_walk`), seen only from in front and from afar.

Scores: category accuracy (matched pairs with the same L3 class), precision / recall at 1 m, median
position error (m, anchor to anchor), median yaw error (deg) of oriented classes (vehicles and street
furniture that faces the street), median relative volume error, class-agnostic average precision at
3D IoU 0.25 (oriented boxes at the base centres), and ground-type IoU on a 0.25 m grid over the area
the generated ground covers (frequency-weighted mean over the true types there: a type covering 1 %
of the area weighs 1 %). Buildings apart, over the pairs of a true building (or facade) with a
generated one: ``front_recall_1m`` (true fronts passed, paired with a generated front within 1 m),
``front_err_m`` (median front midpoint distance, m) and ``front_dir_err_deg`` (median angle, deg,
between the fronts' outward normals). The whole-street figures and the ground IoU over the scene's
extent are those of :mod:`urbanverse.bench.ground_metrics`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.optimize
import shapely

from urbanverse.assets.taxonomy import get_class
from urbanverse.bench.fronts import anchors, scored_by_front
from urbanverse.bench.ground_metrics import TYPE_OF, SeenGrid, extent_iou, scene_checks
from urbanverse.layout.street import ALONG_STREET_L1, FACING_L2
from urbanverse.render.tour import TourGroundTruth
from urbanverse.scene.ground import footprint
from urbanverse.scene.record import Scene


def _paired_paths(generated: Scene, truth: TourGroundTruth) -> tuple[np.ndarray, np.ndarray]:
    """``(src (N, 2), dst (N, 2))``: the generated camera positions and the true ones of the same
    frames (m, planar)."""
    src, dst = [], []
    for pose in generated.camera_trajectory:
        if pose.frame < len(truth.frames):
            src.append(pose.position[:2])
            dst.append(np.reshape(truth.frames[pose.frame].world_from_camera, (4, 4))[:2, 3])
    return np.asarray(src, float).reshape(-1, 2), np.asarray(dst, float).reshape(-1, 2)


def _fit_2d(src: np.ndarray, dst: np.ndarray, with_scale: bool) -> tuple[np.ndarray, float]:
    """The 3x3 homogeneous 2D transform (rotation, translation and, ``with_scale``, a uniform scale:
    Umeyama's least squares) best mapping points ``src (N, 2)`` onto ``dst (N, 2)``, and its scale."""
    mu_s, mu_d = src.mean(axis=0), dst.mean(axis=0)
    u, sv, vt = np.linalg.svd((dst - mu_d).T @ (src - mu_s))
    d = np.diag([1.0, np.sign(np.linalg.det(u @ vt))])
    rot = u @ d @ vt
    var = float(((src - mu_s) ** 2).sum())
    scale = float((sv * np.diag(d)).sum() / var) if with_scale and var > 0 else 1.0
    out = np.eye(3)
    out[:2, :2], out[:2, 2] = scale * rot, mu_d - scale * rot @ mu_s
    return out, scale


def planar_alignment(generated: Scene, truth: TourGroundTruth) -> np.ndarray:
    """3x3 homogeneous 2D rigid transform from the generated scene's frame to the true scene's frame."""
    src, dst = _paired_paths(generated, truth)
    return _fit_2d(src, dst, with_scale=False)[0] if len(src) >= 2 else np.eye(3)


def camera_path_errors(generated: Scene, truth: TourGroundTruth) -> dict[str, float]:
    """How the generated camera path fits the true one: RMS planar error (m) after the rigid fit that
    scoring uses (``path_rms_m``), after a fit that may also scale (``path_rms_scaled_m``), and that
    fit's scale (``path_scale``: true metres per generated metre). A small scaled error beside a large
    rigid one says the metric scale is off, not the path's shape. NaN with fewer than two poses."""
    src, dst = _paired_paths(generated, truth)
    if len(src) < 2:
        return {"path_rms_m": math.nan, "path_rms_scaled_m": math.nan, "path_scale": math.nan}

    def rms(t: np.ndarray) -> float:
        return float(np.sqrt(((src @ t[:2, :2].T + t[:2, 2] - dst) ** 2).sum(axis=1).mean()))

    rigid, _ = _fit_2d(src, dst, with_scale=False)
    scaled, scale = _fit_2d(src, dst, with_scale=True)
    return {"path_rms_m": rms(rigid), "path_rms_scaled_m": rms(scaled), "path_scale": scale}


def _iou3d(a, b) -> float:
    fa, fb = footprint(*a[:3]), footprint(*b[:3])
    inter_xy = fa.intersection(fb).area
    if inter_xy <= 0:
        return 0.0
    za, zb = (a[0][2], a[0][2] + a[2][2]), (b[0][2], b[0][2] + b[2][2])
    inter = inter_xy * max(0.0, min(za[1], zb[1]) - max(za[0], zb[0]))
    union = fa.area * a[2][2] + fb.area * b[2][2] - inter
    return inter / union if union > 0 else 0.0


def _oriented(category: str) -> bool:
    cls = get_class(category)
    return cls.l1 in ALONG_STREET_L1 or cls.l2 in FACING_L2


def _average_precision(hits: np.ndarray, num_true: int) -> float:
    """All-point interpolated AP of detections ``hits`` (1 true / 0 false positive) ranked by confidence."""
    if num_true == 0 or len(hits) == 0:
        return 0.0
    tp = np.cumsum(hits)
    precision = tp / np.arange(1, len(hits) + 1)
    recall = tp / num_true
    envelope = np.maximum.accumulate(precision[::-1])[::-1]
    steps = np.diff(np.concatenate([[0.0], recall]))
    return float((envelope * steps).sum())


def seen_objects(
    truth_scene: Scene,
    tour: TourGroundTruth,
    min_pixels: int = 150,
    min_frames: int = 2,
    max_distance_m: float = 20.0,
) -> list[int]:
    """Indices of the true objects the tour passes: at least ``min_pixels`` visible in ``min_frames``
    frames taken within ``max_distance_m`` of the object."""
    counts: dict[int, int] = {}
    for frame in tour.frames:
        for v in frame.visible:
            if v.pixels >= min_pixels and v.distance_m <= max_distance_m:
                counts[v.instance_id - 1] = counts.get(v.instance_id - 1, 0) + 1
    return sorted(i for i, n in counts.items() if n >= min_frames and i < len(truth_scene.objects))


def ahead_of_walk(truth_scene: Scene, tour: TourGroundTruth, indices: list[int]) -> set[int]:
    """Those of the true objects ``indices`` nearer the tour's last camera than to any other: the walk
    stopped before it reached them."""
    cameras = np.array([np.asarray(f.world_from_camera).reshape(4, 4)[:2, 3] for f in tour.frames])
    last = len(cameras) - 1
    return {
        i
        for i in indices
        if int(np.argmin(np.linalg.norm(cameras - np.asarray(truth_scene.objects[i].position[:2]), axis=1)))
        == last
    }


def _ground_iou(generated: Scene, truth: Scene, transform: np.ndarray, cell: float = 0.25) -> float:
    gen_regions = [(TYPE_OF.get(r.type, r.type), shapely.Polygon(r.polygon)) for r in generated.ground]
    if not gen_regions:
        return 0.0
    moved = [
        (t, shapely.affinity.affine_transform(p, [*transform[0, :2], *transform[1, :2], *transform[:2, 2]]))
        for t, p in gen_regions
    ]
    covered = shapely.union_all([p for _, p in moved])
    x0, y0, x1, y1 = covered.bounds
    gx, gy = np.meshgrid(np.arange(x0, x1, cell) + cell / 2, np.arange(y0, y1, cell) + cell / 2)
    gen_label = np.full(gx.shape, "", dtype=object)
    for t, p in moved:
        gen_label[shapely.contains_xy(p, gx, gy)] = t
    true_label = np.full(gx.shape, "", dtype=object)
    for r in truth.ground:
        true_label[shapely.contains_xy(shapely.Polygon(r.polygon), gx, gy)] = TYPE_OF.get(r.type, r.type)
    inside = gen_label != ""
    ious, weights = [], []
    for t in sorted(set(true_label[inside]) - {""}):
        a, b = (gen_label == t) & inside, (true_label == t) & inside
        ious.append((a & b).sum() / max((a | b).sum(), 1))
        weights.append(b.sum())
    return float(np.average(ious, weights=weights)) if ious else 0.0


#: Generated and true objects farther apart than this (m) are not paired.
PAIR_RADIUS_M = 2.0
#: A pair at most this far apart (m) counts for precision and recall.
HIT_RADIUS_M = 1.0


@dataclasses.dataclass(frozen=True)
class ObjectMatch:
    """Generated objects matched to true ones (module docstring), in the true scene's frame.

    ``transform``: 3x3 homogeneous planar map from the generated scene's frame to the true one;
    ``generated_xy (G, 2)``: the generated objects' anchors (base centres; buildings' front midpoints)
    moved by it (m); ``true_xy (T, 2)``: the true objects' anchors (buildings' seen front midpoints, m);
    ``distance (G, T)``: planar distances between the anchors (m); ``pairs``: ``(generated index, true
    index)`` of the Hungarian matching, under ``PAIR_RADIUS_M`` apart; ``seen``: the true objects the
    walk passes (:func:`seen_objects`), ``ahead`` those of them ahead of its end
    (:func:`ahead_of_walk`)."""

    transform: np.ndarray
    generated_xy: np.ndarray
    true_xy: np.ndarray
    distance: np.ndarray
    pairs: list[tuple[int, int]]
    seen: set[int]
    ahead: set[int]

    def hits(self) -> list[tuple[int, int]]:
        """The pairs at most ``HIT_RADIUS_M`` apart."""
        return [(r, c) for r, c in self.pairs if self.distance[r, c] <= HIT_RADIUS_M]


def match_objects(
    generated: Scene, truth: Scene, tour: TourGroundTruth, aligned: bool = False
) -> ObjectMatch:
    """The objects of ``generated`` matched to those of ``truth`` (the scene ``tour`` walked through)
    by their anchors; ``aligned``: the generated scene is already in the true frame (oracle poses)."""
    transform = np.eye(3) if aligned else planar_alignment(generated, tour)
    xy = anchors(generated) @ transform[:2, :2].T + transform[:2, 2]
    true_xy = anchors(truth, tour)
    dist = np.linalg.norm(xy[:, None, :] - true_xy[None, :, :], axis=2)
    pairs = []
    if dist.size:
        rows, cols = scipy.optimize.linear_sum_assignment(np.where(dist < PAIR_RADIUS_M, dist, 1e6))
        pairs = [(int(r), int(c)) for r, c in zip(rows, cols, strict=True) if dist[r, c] < PAIR_RADIUS_M]
    seen = seen_objects(truth, tour)
    return ObjectMatch(
        transform, xy, true_xy, dist, pairs, set(seen), ahead_of_walk(truth, tour, sorted(seen))
    )


def class_counts(match: ObjectMatch, generated: Scene, truth: Scene) -> dict[str, tuple[int, int, int, int]]:
    """Per L2 class of the true objects the walk passes: ``(seen, paired, hits, right)``, the objects
    seen, those paired within ``PAIR_RADIUS_M``, those within ``HIT_RADIUS_M``, and the pairs whose
    generated object has the true L3 class. Sums over tours show which classes the misses are."""
    pair_of = {c: r for r, c in match.pairs}
    counts: dict[str, list[int]] = {}
    for c in match.seen:
        row = counts.setdefault(get_class(truth.objects[c].category).l2, [0, 0, 0, 0])
        row[0] += 1
        if c in pair_of:
            r = pair_of[c]
            row[1] += 1
            row[2] += int(match.distance[r, c] <= HIT_RADIUS_M)
            row[3] += int(generated.objects[r].category == truth.objects[c].category)
    return {k: tuple(v) for k, v in counts.items()}


def compare_scenes(
    generated: Scene,
    truth: Scene,
    tour: TourGroundTruth,
    aligned: bool = False,
    match: ObjectMatch | None = None,
    seen_grid: SeenGrid | None = None,
) -> dict[str, float | list[float]]:
    """The round-trip scores (see module docstring); ``aligned``: the generated scene is already in the
    true frame (oracle poses). Besides the scores (floats), ``pos_errors_m``, ``yaw_errors_deg``,
    ``front_errors_m`` and ``front_dir_errors_deg`` list each matched pair's anchor distance (m), each
    oriented pair's yaw error (deg) and each pair of a true building's front midpoint distance (m) and
    direction error (deg), for medians over several tours' pairs. ``match``: :func:`match_objects` of
    the same scenes, when the caller has it already. ``seen_grid``: the ground cells gen's ground stage
    observed (:func:`urbanverse.bench.ground_metrics.load_seen_grid`), which split the extent's ground
    IoU into its seen and inferred parts (NaN without it). Also
    :func:`urbanverse.bench.ground_metrics.scene_checks` of ``generated``."""
    match = match or match_objects(generated, truth, tour, aligned)
    transform, dist, pairs, seen = match.transform, match.distance, match.pairs, match.seen
    rot_yaw = math.atan2(transform[1, 0], transform[0, 0])
    centres = np.array([o.position[:2] for o in generated.objects], float).reshape(-1, 2)
    centres = centres @ transform[:2, :2].T + transform[:2, 2]
    gen = [
        ((x, y, o.position[2]), o.yaw + rot_yaw, o.size, o.category, o.confidence)
        for (x, y), o in zip(centres, generated.objects, strict=True)
    ]
    true = [(t.position, t.yaw, t.size, t.category) for t in truth.objects]
    out = {"generated": float(len(gen)), "true_seen": float(len(seen))}
    # Precision over everything generated (matching any true object); recall over the objects passed.
    within = match.hits()
    out["matched"] = float(len(pairs))
    out["cat_acc"] = float(np.mean([gen[r][3] == true[c][3] for r, c in pairs])) if pairs else 0.0
    out["precision_1m"] = len(within) / len(gen) if gen else 0.0
    out["recall_1m"] = sum(c in seen for _, c in within) / len(seen) if seen else 0.0
    out["true_ahead"] = float(len(match.ahead))
    out["hits_ahead"] = float(sum(c in match.ahead for _, c in within))
    out["pos_errors_m"] = [float(dist[r, c]) for r, c in pairs]
    out["pos_err_m"] = float(np.median(out["pos_errors_m"])) if pairs else float("nan")
    yaw_errors = [_yaw_error_deg(gen[r][1], true[c][1]) for r, c in pairs if _oriented(true[c][3])]
    out["yaw_errors_deg"] = yaw_errors
    out["yaw_err_deg"] = float(np.median(yaw_errors)) if yaw_errors else float("nan")
    out["volume_err"] = (
        float(np.median([abs(np.prod(gen[r][2]) / np.prod(true[c][2]) - 1.0) for r, c in pairs]))
        if pairs
        else float("nan")
    )
    ious = np.array([[_iou3d(g, t) for t in true] for g in gen]) if gen and true else np.zeros((len(gen), 0))
    # Greedy by confidence: a hit takes its best free true box; hits on objects the tour did not pass
    # are neither true nor false positives (left out of the ranking).
    hits, taken = [], set()
    for r in np.argsort([-g[4] for g in gen], kind="stable"):
        c = (
            int(np.argmax(np.where([j in taken for j in range(len(true))], -1.0, ious[r])))
            if len(true)
            else -1
        )
        if c >= 0 and ious[r, c] >= 0.25:
            taken.add(c)
            if c not in seen:
                continue
        hits.append(float(c >= 0 and ious[r, c] >= 0.25))
    out["map25"] = _average_precision(np.array(hits), len(seen))
    out["ground_iou"] = _ground_iou(generated, truth, transform)
    out.update(_front_scores(match, generated, truth, rot_yaw))
    out.update(extent_iou(generated, truth, transform, seen_grid))
    out.update(scene_checks(generated))
    return out


def _yaw_error_deg(a: float, b: float) -> float:
    """The angle (deg, 0-180) between the yaws ``a`` and ``b`` (rad)."""
    return abs(math.degrees(math.remainder(a - b, 2 * math.pi)))


def _front_scores(match: ObjectMatch, generated: Scene, truth: Scene, rot_yaw: float) -> dict:
    """The buildings' figures (module docstring) over the pairs of a true building (or facade) with a
    generated one: ``fronts_seen`` (true fronts the walk passed), ``front_recall_1m``, ``front_err_m``,
    ``front_dir_err_deg`` and the per-pair lists behind the medians; NaN where no building was seen or
    paired. ``rot_yaw``: the alignment's rotation (rad)."""
    fronts = {c for c in match.seen if scored_by_front(truth.objects[c].category)}
    pairs = [
        (r, c)
        for r, c in match.pairs
        if scored_by_front(truth.objects[c].category) and scored_by_front(generated.objects[r].category)
    ]
    errors = [float(match.distance[r, c]) for r, c in pairs]
    directions = [_yaw_error_deg(generated.objects[r].yaw + rot_yaw, truth.objects[c].yaw) for r, c in pairs]
    found = sum(c in fronts and match.distance[r, c] <= HIT_RADIUS_M for r, c in pairs)
    return {
        "fronts_seen": float(len(fronts)),
        "front_recall_1m": found / len(fronts) if fronts else math.nan,
        "front_errors_m": errors,
        "front_err_m": float(np.median(errors)) if errors else math.nan,
        "front_dir_errors_deg": directions,
        "front_dir_err_deg": float(np.median(directions)) if directions else math.nan,
    }
