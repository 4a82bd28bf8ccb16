"""The detection stage: ``run_detection(frames, cfg) -> FrameDetections``.

Per keyframe:

1. the object detector: the offline default COCO SSD-MobileNet-v2 (``detector="ssd"``), a YOLO
   exported to ONNX (``detector="model.onnx"`` beside ``model.json``) or ultralytics weights given
   by path (``detector="path/to/yolo11n-seg.pt"``);
2. urban classes COCO lacks: vertical strips (``poles``) and vegetation crowns (``vegetation``);
   strips under crowns become trunks, the others pole candidates; pole candidates inside an
   object box (a person's legs, a car's pillar) are dropped;
3. the ImageNet crop classifier (optional, ``classifier``) confirms pole candidates (vetoing
   those it sees as facades or windows) or relabels them ("street sign", "traffic light"...), and
   refines ambiguous COCO boxes (a bin the SSD calls a fire hydrant becomes an "ashcan"; a "truck"
   becomes a "moving van" or a "pickup");
4. every label is mapped to the asset taxonomy (``labels.map_label``); irrelevant or unmapped
   labels are dropped and counted; people and animals are kept with ``dynamic=True``;
5. the crop classifier trained on street renders (``crop_classifier``) keeps an object detector's
   box scored below ``min_score`` (down to ``confirm_min_score``) only where its look confirms the
   box's taxonomy family, and relabels a static detection whose look beats its class by more than the
   detector's confidence (:func:`relabel_by_look`);
6. duplicates across classes (the SSD's "car" and "truck" on one van) are suppressed, and so is a
   vehicle box lying mostly inside a stronger one (the SSD's "bus" on the side of a minibus it also
   boxed whole: cast from its higher bottom edge, a second bus 10 m behind the first).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from urbanverse.assets.taxonomy import get_class
from urbanverse.errors import Cancelled, InputError, MissingDependencyError
from urbanverse.perception.boxes import Candidate, containment_matrix, nms
from urbanverse.perception.crop_classifier import (
    CropClassifier,
    classifier_path,
    load_crop_classifier,
    look_outranks,
)
from urbanverse.perception.crop_classifier import crop as look_crop
from urbanverse.perception.frames import FrameInput, crop, iter_frames
from urbanverse.perception.labels import LabelMatch, map_label
from urbanverse.perception.poles import PoleCfg, find_strips, poles_from_strips
from urbanverse.perception.record import Detection, FrameDetection, FrameDetections, encode_rle
from urbanverse.perception.vegetation import VegetationCfg, attach_trunks, detect_vegetation

log = logging.getLogger(__name__)

#: ImageNet labels that confirm a pole candidate, and the label the candidate then takes.
POLE_CONFIRM = {
    "pole": "pole",
    "flagpole": "flagpole",
    "maypole": "pole",
    "totem pole": "pole",
    "street sign": "street sign",
    "traffic light": "traffic light",
    "parking meter": "parking meter",
    "table lamp": "lamp post",  # a crop of a lamp post's head
}

#: COCO labels the classifier may refine, and the ImageNet labels it may refine each into.
_VEHICLES = (
    "cab",
    "minivan",
    "moving van",
    "police van",
    "pickup",
    "jeep",
    "sports car",
    "convertible",
    "beach wagon",
    "limousine",
    "ambulance",
    "school bus",
    "trolleybus",
    "fire engine",
    "garbage truck",
    "tow truck",
    "trailer truck",
    "streetcar",
    "minibus",
)
_FURNITURE = (
    "ashcan",
    "mailbox",
    "parking meter",
    "park bench",
    "street sign",
    "pot",
    "barrel",
    "pay-phone",
    "traffic light",
    "fire hydrant",
)
REFINE = {
    "truck": _VEHICLES,
    "bus": _VEHICLES,
    "train": ("streetcar", "trolleybus"),
    "fire hydrant": _FURNITURE,
    "parking meter": _FURNITURE,
    "suitcase": _FURNITURE,
    "toilet": _FURNITURE,
    "potted plant": _FURNITURE,
    "bench": ("park bench",),
}


@dataclass(frozen=True, kw_only=True)
class DetectionCfg:
    """Configuration of ``run_detection``: which detectors run, and the thresholds that combine them."""

    #: The object detector: "ssd" (offline COCO SSD-MobileNet-v2), a YOLO exported to ONNX with its
    #: ``.json`` sidecar (run by cv2.dnn, see ``onnx_yolo``), or a YOLO / YOLOE / YOLO-World weights
    #: path or name (needs ``pip install 'urbanverse[yolo]'``).
    detector: str = "ssd"
    #: Object-detector score (0..1) a box needs on its own; with a crop classifier, boxes scored from
    #: ``confirm_min_score`` up are kept when the classifier confirms them.
    min_score: float = 0.4
    #: YOLO inference size (px, longer image side).
    yolo_imgsz: int = 640
    #: Open-vocabulary class names (YOLO-World / YOLOE only); empty: the model's own classes.
    vocabulary: tuple[str, ...] = ()
    #: Run the pole detector (long near-vertical strips); skipped when the object detector has pole classes.
    poles: bool = True
    #: Run the tree/shrub detector (vegetation colour); skipped when the object detector has plant classes.
    vegetation: bool = True
    #: Settings of the pole detector.
    pole_cfg: PoleCfg = field(default_factory=PoleCfg)
    #: Settings of the tree/shrub detector.
    vegetation_cfg: VegetationCfg = field(default_factory=VegetationCfg)
    #: The ImageNet crop classifier that confirms poles and refines COCO labels: "auto" (used when its
    #: runtime is installed), "on" (required), "off".
    classifier: Literal["auto", "on", "off"] = "auto"
    #: Crops per frame given to the ImageNet classifier (about 40 ms each on one core).
    classifier_max_crops: int = 2
    #: Summed probability (0..1) the confirming ImageNet labels (``POLE_CONFIRM``) need among the top 5
    #: for a pole candidate to count as confirmed.
    pole_min_prob: float = 0.12
    #: Drop pole candidates the ImageNet classifier does not confirm (thin strips are often edges).
    veto_poles: bool = True
    #: Probability (0..1) an ImageNet label needs to relabel a COCO box (a "truck" that is a "pickup").
    refine_min_prob: float = 0.3
    #: The crop classifier trained on street renders ("shipped", a ``.npz`` path, or "" for none) that
    #: relabels static detections by their look (:func:`relabel_by_look`).
    crop_classifier: str = "shipped"
    #: Crop-classifier probability (0..1) needed to rename a class it does not know from a colour or
    #: shape detector (a "shrub"), and that its classes of a box's taxonomy family need to confirm a box
    #: scored between ``confirm_min_score`` and ``min_score``.
    look_min_prob: float = 0.5
    #: Lowest object-detector score (0..``min_score``) of a box the crop classifier may confirm: the SSD
    #: scores rendered and distant cars low, so a second opinion recovers them without a lower
    #: ``min_score`` for every box.
    confirm_min_score: float = 0.1
    #: IoU (0..1) above which detections of different classes on one object are merged.
    nms_iou: float = 0.7
    #: Share (0..1) of a vehicle box inside a stronger vehicle box that makes it a part of that vehicle
    #: (dropped): a detector also boxes the side of a vehicle it boxed whole.
    part_containment: float = 0.9
    #: MiniLM cosine similarity (0..1) needed to map a free-form label onto a taxonomy class.
    min_similarity: float = 0.5
    #: Keep instance masks (vegetation, YOLO-seg) as RLE.
    masks: bool = True
    #: CPU threads of the TFLite classifier and of a torch YOLO (1: gen runs detection beside the camera
    #: stage, which keeps the other core busy). The SSD and ONNX models run on OpenCV's threads, a
    #: process-wide setting left to the caller.
    threads: int = 1

    def __post_init__(self) -> None:
        if not self.detector.strip():
            raise InputError("detection.detector: expected 'ssd' or a YOLO weights path, got ''")
        if not 0.0 < self.min_score < 1.0:
            raise InputError(f"detection.min_score: expected 0..1, got {self.min_score}")
        if self.classifier not in ("auto", "on", "off"):
            raise InputError(f"detection.classifier: expected auto, on or off, got {self.classifier!r}")
        if self.classifier_max_crops < 0:
            raise InputError(
                f"detection.classifier_max_crops: expected >= 0, got {self.classifier_max_crops}"
            )
        if not 0.0 < self.confirm_min_score <= self.min_score:
            raise InputError(
                f"detection.confirm_min_score: expected 0..min_score ({self.min_score}), "
                f"got {self.confirm_min_score}"
            )
        for name in (
            "pole_min_prob",
            "refine_min_prob",
            "look_min_prob",
            "nms_iou",
            "part_containment",
            "min_similarity",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"detection.{name}: expected 0..1, got {getattr(self, name)}")
        if self.threads < 1:
            raise InputError(f"detection.threads: expected >= 1, got {self.threads}")


class _ObjectDetector:
    """The configured object detector (SSD or YOLO) behind one call signature."""

    def __init__(self, cfg: DetectionCfg, min_score: float) -> None:
        self.cfg, self.min_score = cfg, min_score
        if cfg.detector.lower() in ("ssd", "ssd_coco", "default"):
            from urbanverse.perception.models import ssd_net

            ssd_net()  # load now: a missing package fails before any frame
            self.name, self.yolo = "ssd_coco", None
        else:
            from urbanverse.perception.onnx_yolo import OnnxYoloDetector, is_onnx_yolo

            if is_onnx_yolo(cfg.detector):  # an exported model with its sidecar: cv2.dnn, no ultralytics
                self.yolo = OnnxYoloDetector(cfg.detector)
            else:
                from urbanverse.perception.yolo import YoloDetector

                self.yolo = YoloDetector(cfg.detector, cfg.yolo_imgsz, cfg.vocabulary, cfg.threads)
            self.name = self.yolo.name

    def covers(self, l1: str) -> bool:
        """True when the detector has a class of taxonomy L1 ``l1`` (a YOLO trained on our renders
        detects trees and lamps itself, so the geometric detectors would only add duplicates)."""
        if self.yolo is None:
            return False
        names = self.yolo.names.values() if isinstance(self.yolo.names, dict) else self.yolo.names
        return any((m := map_label(str(n), use_similarity=False)) and m.category_path[0] == l1 for n in names)

    def __call__(self, rgb: np.ndarray) -> list[Candidate]:
        if self.yolo is not None:
            return self.yolo(rgb, self.min_score)
        from urbanverse.perception.ssd import detect_ssd

        return detect_ssd(rgb, self.min_score)


def _use_classifier(cfg: DetectionCfg) -> bool:
    if cfg.classifier == "off" or cfg.classifier_max_crops == 0:
        return False
    from urbanverse.perception.classifier import _interpreter

    try:
        _interpreter(cfg.threads)
    except MissingDependencyError:
        if cfg.classifier == "on":
            raise
        log.warning("no TFLite runtime: the crop classifier is off (pip install 'ai-edge-litert>=2.3')")
        return False
    return True


def _pole_crop(rgb: np.ndarray, box: np.ndarray) -> np.ndarray | None:
    """A crop around a pole wide enough to show what it carries (a lamp head, a sign panel)."""
    x1, y1, x2, y2 = box
    length, cx = y2 - y1, 0.5 * (x1 + x2)
    half = max(2.0 * (x2 - x1), 0.25 * length)
    return crop(rgb, (cx - half, y1 - 0.05 * length, cx + half, y2 + 0.02 * length))


def _classify(rgb: np.ndarray, poles: list[Candidate], objects: list[Candidate], cfg: DetectionCfg) -> list:
    """Run the classifier on poles then refinable objects (highest score first), within the crop budget.

    Returns the pole candidates to keep; object candidates are relabelled in place.
    """
    from urbanverse.perception.classifier import classify_crops

    jobs: list[tuple[Candidate, np.ndarray]] = []
    for c in sorted(poles, key=lambda c: -c.score):
        if len(jobs) < cfg.classifier_max_crops and (pix := _pole_crop(rgb, c.box)) is not None:
            jobs.append((c, pix))
    for c in sorted((o for o in objects if o.label in REFINE), key=lambda c: -c.score):
        if (
            len(jobs) < cfg.classifier_max_crops
            and (pix := crop(rgb, c.box, pad=0.1, min_size=8)) is not None
        ):
            jobs.append((c, pix))
    verdicts = classify_crops([pix for _, pix in jobs], top_k=5, threads=cfg.threads)
    checked: set[int] = set()
    for (c, _), top in zip(jobs, verdicts, strict=True):
        checked.add(id(c))
        c.classifier_label, c.classifier_score = top[0]
        if c.source == "poles":
            hits = [(lab, p) for lab, p in top if lab in POLE_CONFIRM]
            if hits and sum(p for _, p in hits) >= cfg.pole_min_prob:
                c.label = POLE_CONFIRM[hits[0][0]]
                c.classifier_label, c.classifier_score = hits[0]
                c.score = float(min(0.95, 0.5 * c.score + 0.5 * min(1.0, 2.0 * sum(p for _, p in hits))))
            else:
                c.extra["vetoed"] = True
        else:
            lab, p = top[0]
            if lab in REFINE[c.label] and p >= cfg.refine_min_prob:
                c.extra["coco_label"] = c.label
                c.label = lab
    keep = []
    for c in poles:
        if c.extra.get("vetoed") and cfg.veto_poles:
            continue
        if id(c) not in checked and cfg.veto_poles:
            continue  # over the crop budget: unconfirmed
        keep.append(c)
    return keep


def _frame_candidates(
    rgb: np.ndarray, detector: _ObjectDetector, cfg: DetectionCfg, use_cls: bool, seconds: Counter
) -> list[Candidate]:
    t = time.perf_counter()
    objects = detector(rgb)
    seconds[detector.name] += time.perf_counter() - t
    # Boxes under min_score wait for the crop classifier's word (relabel_by_look): until then they
    # neither block pole candidates nor spend the ImageNet classifier's crops.
    strong = [o for o in objects if o.score >= cfg.min_score]
    strips, crowns, poles = [], [], []
    use_poles = cfg.poles and not detector.covers("lighting")
    use_veg = cfg.vegetation and not detector.covers("vegetation")
    if use_poles or use_veg:
        t = time.perf_counter()
        strips = find_strips(rgb, cfg.pole_cfg)
        seconds["poles"] += time.perf_counter() - t
    if use_veg:
        t = time.perf_counter()
        crowns = detect_vegetation(rgb, cfg.vegetation_cfg)
        used = attach_trunks(crowns, strips)
        strips = [s for j, s in enumerate(strips) if j not in used]
        seconds["vegetation"] += time.perf_counter() - t
    if use_poles:
        poles = poles_from_strips(strips, rgb.shape[0], cfg.pole_cfg)
        blockers = [o.box for o in strong] + [c.box for c in crowns]
        if poles and blockers:  # legs, car pillars, branches are not poles
            inside = containment_matrix(np.array([p.box for p in poles]), np.array(blockers)).max(axis=1)
            poles = [p for p, f in zip(poles, inside, strict=True) if f < 0.5]
    if use_cls and (poles or any(o.label in REFINE for o in strong)):
        t = time.perf_counter()
        poles = _classify(rgb, poles, strong, cfg)
        seconds["classifier"] += time.perf_counter() - t
    return objects + crowns + poles


#: Detectors whose class is a guess from colour and shape (a green blob, a vertical strip).
SHAPE_SOURCES = frozenset({"vegetation", "poles"})


def _without_vehicle_parts(mapped: list, keep: list[int], containment: float) -> list[int]:
    """``keep`` (indices into ``mapped``, ``(candidate, label mapping)`` pairs, highest score first)
    less the vehicle boxes lying ``containment`` or more inside a higher-scored kept vehicle box."""
    vehicles = [k for k in keep if mapped[k][1].category_path[0] == "vehicles"]
    if len(vehicles) < 2:
        return keep
    boxes = np.array([mapped[k][0].box for k in vehicles])
    inside = containment_matrix(boxes, boxes)
    parts = {k for j, k in enumerate(vehicles) if (inside[j, :j] >= containment).any()}
    return [k for k in keep if k not in parts]


def relabel_by_look(
    rgb: np.ndarray,
    mapped: list[tuple[Candidate, LabelMatch]],
    looks: CropClassifier,
    min_prob: float,
    confirm_below: float = 0.0,
) -> list[tuple[Candidate, LabelMatch]]:
    """``mapped`` with each static detection renamed to the crop classifier's class where its look
    outranks the detector (:func:`urbanverse.perception.crop_classifier.look_outranks`: by more than
    the log-odds of the detector's score; a colour or shape detector's guess counts as even odds, and
    one the classifier does not know gives way to a class of ``min_prob`` or more). The detector's
    ``label`` stays; the category changes.

    An object detector's box scored under ``confirm_below`` stays only where the classifier's classes
    of its taxonomy family (L1) hold ``min_prob`` or more, with the score ``1 - (1 - s)(1 - p)`` of
    two detectors that agree (``s`` the detector's, ``p`` that probability)."""
    faint = [c.score < confirm_below and c.source not in SHAPE_SOURCES for c, _ in mapped]
    jobs = [(j, look_crop(rgb, c.box, looks.pad)) for j, (c, m) in enumerate(mapped) if not m.dynamic]
    jobs = [(j, pixels) for j, pixels in jobs if pixels is not None]
    out: list[tuple[Candidate, LabelMatch] | None] = [
        None if unconfirmed else pair for pair, unconfirmed in zip(mapped, faint, strict=True)
    ]
    families = np.array([get_class(c).l1 for c in looks.classes])
    log_ps = looks.log_probabilities([pixels for _, pixels in jobs]) if jobs else []
    for (j, _), log_p in zip(jobs, log_ps, strict=True):
        c, m = mapped[j]
        if faint[j]:
            family = float(np.exp(log_p)[families == m.category_path[0]].sum())
            if family < min_prob:
                continue
            c = dataclasses.replace(c, score=1.0 - (1.0 - c.score) * (1.0 - family))
        scores = dict(zip(looks.classes, log_p, strict=True))
        best = max(scores, key=scores.__getitem__)
        trust = 0.0 if c.source in SHAPE_SOURCES else None
        if best != m.category and look_outranks(scores, best, m.category, c.score, trust, min_prob):
            m = map_label(best)
        out[j] = (c, m)
    return [pair for pair in out if pair is not None]


def run_detection(
    frames: Sequence[FrameInput], cfg: DetectionCfg | None = None, stop: threading.Event | None = None
) -> FrameDetections:
    """Detect urban objects in keyframes.

    ``frames``: ``(keyframe index, image)`` pairs, the image an ``(H, W, 3)`` uint8 RGB array or an
    image path (read one at a time). Returns a ``FrameDetections`` whose ``det_id`` values number
    the detections 0, 1, 2... over all frames in order. Raises ``InputError`` for bad frames or a
    missing ``--detector`` weights file, ``MissingDependencyError`` for a missing package, and
    ``Cancelled`` before the next frame once ``stop`` is set (the run failed or was interrupted
    elsewhere).
    """
    cfg = cfg or DetectionCfg()
    t_start = time.perf_counter()
    use_cls = _use_classifier(cfg)
    looks_file = classifier_path(cfg.crop_classifier)
    looks = None if looks_file is None else load_crop_classifier(looks_file)
    # Boxes under min_score need the crop classifier's confirmation: without it, none are asked for.
    detector = _ObjectDetector(cfg, cfg.min_score if looks is None else cfg.confirm_min_score)
    seconds: Counter = Counter()
    dropped: Counter = Counter()
    out_frames: list[FrameDetection] = []
    next_id = 0
    for index, rgb, path in iter_frames(frames):
        if stop is not None and stop.is_set():
            raise Cancelled("detection stopped")
        h, w = rgb.shape[:2]
        mapped = []
        for c in _frame_candidates(rgb, detector, cfg, use_cls, seconds):
            m = map_label(c.label, cfg.min_similarity)
            if m is None and "coco_label" in c.extra:  # a refinement that maps nowhere: keep COCO's
                m = map_label(c.extra["coco_label"], cfg.min_similarity)
            if m is None:
                dropped[c.label] += 1
                continue
            mapped.append((c, m))
        if looks is not None:
            t = time.perf_counter()
            mapped = relabel_by_look(rgb, mapped, looks, cfg.look_min_prob, cfg.min_score)
            seconds["crop_classifier"] += time.perf_counter() - t
        # duplicates across classes and sources: one object, one detection (vegetation masks excepted)
        keep = nms(np.array([c.box for c, _ in mapped]), np.array([c.score for c, _ in mapped]), cfg.nms_iou)
        keep = _without_vehicle_parts(mapped, keep, cfg.part_containment)
        dets = []
        for k in sorted(keep):
            c, m = mapped[k]
            dets.append(
                Detection(
                    det_id=next_id,
                    label=c.label,
                    category=m.category,
                    category_path=m.category_path,
                    score=round(float(c.score), 4),
                    box=tuple(round(float(v), 2) for v in c.box),
                    source=c.source,
                    dynamic=m.dynamic,
                    mask=encode_rle(c.mask) if (cfg.masks and c.mask is not None) else None,
                    classifier_label=c.classifier_label,
                    classifier_score=None if c.classifier_score is None else round(c.classifier_score, 4),
                )
            )
            next_id += 1
        out_frames.append(
            FrameDetection(frame_index=index, width=w, height=h, image=path, detections=tuple(dets))
        )
    seconds["total"] = time.perf_counter() - t_start
    detectors = [detector.name]
    detectors += ["poles"] if cfg.poles and not detector.covers("lighting") else []
    detectors += ["vegetation"] if cfg.vegetation and not detector.covers("vegetation") else []
    if use_cls:
        detectors.append("imagenet_classifier")
    if looks is not None:
        detectors.append("crop_classifier")
    return FrameDetections(
        detectors=tuple(detectors),
        frames=tuple(out_frames),
        dropped_labels=dict(sorted(dropped.items())),
        seconds={k: round(v, 4) for k, v in sorted(seconds.items())},
    )
