"""Records of the detection and tracking stages, and the compact mask encoding they use.

Image coordinates are pixels of the keyframe as given (origin top-left, x right, y down);
boxes are ``(x1, y1, x2, y2)`` with ``x1 < x2``, ``y1 < y2``. Masks are stored as COCO
compressed RLE strings (column-major run lengths, the ``counts`` string of pycocotools),
never as JSON arrays; ``decode_rle`` / ``encode_rle`` convert to and from boolean arrays.

Files: ``detections.json`` (``FrameDetections``); ``tracks.json`` (``Tracks``) with the
per-track mean appearance embeddings in ``track_embeddings.npz`` (key ``embeddings``,
``(num_tracks, D)`` float32, row ``i`` belongs to ``tracks[i]``; key ``track_ids``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from urbanverse.errors import InputError
from urbanverse.records import Vec4, atomic_path, load_record, record, save_json

PERCEPTION_SCHEMA_VERSION = 1
DETECTIONS_FILE = "detections.json"
TRACKS_FILE = "tracks.json"
TRACK_EMBEDDINGS_FILE = "track_embeddings.npz"


@record
class Mask:
    """A binary instance mask of the full frame, ``height`` x ``width``, as a COCO compressed RLE string."""

    height: int
    width: int
    rle: str


@record
class Detection:
    """One 2D instance in one keyframe.

    ``det_id``: unique over the whole ``FrameDetections``. ``label``: the detector's own class name
    (COCO "car", ImageNet "street sign", "tree" from the vegetation detector...). ``category``: the
    L3 taxonomy class and ``category_path`` its (L1, L2, L3). ``score`` in [0, 1]. ``box``: xyxy in
    pixels. ``source``: the detector ("ssd_coco", "vegetation", "poles", "yolo:<weights name>").
    ``dynamic``: a moving agent (pedestrian, animal): kept so that later stages can mask it out
    of ground fitting and SfM, never placed as a static object. ``classifier_label`` /
    ``classifier_score``: the ImageNet crop classifier's verdict when it was consulted.
    """

    det_id: int
    label: str
    category: str
    category_path: tuple[str, str, str]
    score: float
    box: Vec4
    source: str
    dynamic: bool = False
    mask: Mask | None = None
    classifier_label: str | None = None
    classifier_score: float | None = None


@record
class FrameDetection:
    """The detections of one keyframe (``frame_index``: the keyframe index given by the caller)."""

    frame_index: int
    width: int
    height: int
    image: str | None = None
    detections: tuple[Detection, ...] = ()


@record
class FrameDetections:
    """Output of ``run_detection``: per keyframe its detections, plus what was dropped and timings.

    ``dropped_labels``: detector label -> count of detections dropped because the label maps to no
    urban taxonomy class (indoor objects, food...). ``seconds``: wall time per part ("ssd_coco",
    "vegetation", "poles", "classifier", "total").
    """

    schema_version: int = PERCEPTION_SCHEMA_VERSION
    detectors: tuple[str, ...]
    frames: tuple[FrameDetection, ...]
    dropped_labels: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        ids = [d.det_id for f in self.frames for d in f.detections]
        if len(ids) != len(set(ids)):
            raise ValueError("det_id values must be unique")

    def by_id(self) -> dict[int, tuple[int, Detection]]:
        """``det_id`` -> (frame_index, detection)."""
        return {d.det_id: (f.frame_index, d) for f in self.frames for d in f.detections}


@record
class TrackObservation:
    """A track's detection in one keyframe: the detection id, its box (xyxy px) and score."""

    frame_index: int
    det_id: int
    box: Vec4
    score: float


@record
class Track:
    """One object followed over keyframes.

    ``category`` / ``category_path``: the score-weighted vote over the observations' categories;
    ``category_votes``: category -> summed score. ``label``: the most common detector label.
    ``score``: mean observation score. ``observations``: in frame order, at most one per frame.
    """

    track_id: int
    category: str
    category_path: tuple[str, str, str]
    label: str
    score: float
    dynamic: bool
    category_votes: dict[str, float]
    observations: tuple[TrackObservation, ...]

    @property
    def frames(self) -> list[int]:
        return [o.frame_index for o in self.observations]


@record
class Tracks:
    """Output of ``run_tracking``. ``embedding_dim``: length of the appearance vectors (0 when
    appearance was off). ``dropped_short`` / ``dropped_low_score``: tracks removed by the filters."""

    schema_version: int = PERCEPTION_SCHEMA_VERSION
    tracks: tuple[Track, ...]
    num_frames: int
    embedding_dim: int = 0
    dropped_short: int = 0
    dropped_low_score: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackingResult:
    """``tracks`` plus their mean appearance embeddings ``(len(tracks.tracks), embedding_dim)`` float32."""

    tracks: Tracks
    embeddings: np.ndarray

    def save(self, out_dir: Path) -> None:
        """Write ``tracks.json`` and ``track_embeddings.npz`` into ``out_dir`` (atomically each)."""
        out_dir = Path(out_dir)
        save_json(self.tracks, out_dir / TRACKS_FILE)
        ids = np.array([t.track_id for t in self.tracks.tracks], dtype=np.int64)
        with atomic_path(out_dir / TRACK_EMBEDDINGS_FILE) as tmp:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, embeddings=self.embeddings.astype(np.float32), track_ids=ids)

    @staticmethod
    def load(out_dir: Path) -> TrackingResult:
        """Read what ``save`` wrote; ``InputError`` when a file is missing or the two disagree."""
        out_dir = Path(out_dir)
        tracks = load_record(Tracks, out_dir / TRACKS_FILE)
        path = out_dir / TRACK_EMBEDDINGS_FILE
        if not path.is_file():
            raise InputError(f"{path}: file not found")
        with np.load(path) as data:
            emb, ids = data["embeddings"], data["track_ids"]
        if list(ids) != [t.track_id for t in tracks.tracks] or emb.shape[0] != len(ids):
            raise InputError(f"{path}: track ids do not match {TRACKS_FILE}")
        return TrackingResult(tracks=tracks, embeddings=emb)


def save_detections(dets: FrameDetections, out_dir: Path) -> Path:
    """Write ``detections.json`` into ``out_dir``; returns its path."""
    path = Path(out_dir) / DETECTIONS_FILE
    save_json(dets, path)
    return path


def load_detections(path: Path) -> FrameDetections:
    """Read a ``detections.json`` (or the folder holding it)."""
    path = Path(path)
    return load_record(FrameDetections, path / DETECTIONS_FILE if path.is_dir() else path)


# --- COCO compressed RLE -------------------------------------------------------------------------


def encode_rle(mask: np.ndarray) -> Mask:
    """A boolean ``(H, W)`` mask as a COCO compressed RLE ``Mask`` (pycocotools-compatible)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2:
        raise ValueError(f"mask must be 2-D, got shape {mask.shape}")
    h, w = mask.shape
    flat = mask.T.reshape(-1)  # column-major, as COCO
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    runs = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        runs = [0, *runs]  # counts always start with a run of zeros
    out = []
    for i, x in enumerate(runs):
        if i > 2:
            x -= runs[i - 2]  # delta against the run of the same value
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            if more:
                c |= 0x20
            out.append(chr(c + 48))
    return Mask(height=h, width=w, rle="".join(out))


def decode_rle(mask: Mask) -> np.ndarray:
    """The boolean ``(height, width)`` array of a ``Mask``."""
    s, runs, p = mask.rle, [], 0
    while p < len(s):
        x, k, more = 0, 0, True
        while more:
            c = ord(s[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and (c & 0x10):
                x |= -1 << (5 * k)
        if len(runs) > 2:
            x += runs[-2]
        runs.append(x)
    total = mask.height * mask.width
    if sum(runs) != total:
        raise InputError(f"mask: RLE covers {sum(runs)} pixels, expected {total}")
    values = np.zeros(len(runs), dtype=bool)
    values[1::2] = True
    flat = np.repeat(values, runs)
    return flat.reshape(mask.width, mask.height).T.copy()
