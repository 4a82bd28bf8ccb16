"""Edited test videos with known transitions, built from our own rendered tours (and real clips).

:func:`build_edited_video` renders a few short walks (``render-tour`` through a scene folder, one
route seed each), gives each a constant look of its own (exposure and white balance, as if filmed on
another day), and joins them with the transitions an edited city-tour video has: hard cuts, fades
through black, cross-dissolves and title cards (a flat card with text, cut in and out). Some shots
carry a text overlay (a caption burnt into the picture), which is not a transition. The ground truth
is every transition's time span; everything follows from ``seed``, and nothing is stored in the
repository (a few seconds of low-resolution video render in about a second per shot).

:func:`score_cuts` matches detected transitions to the true ones and gives precision and recall.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import av
import cv2
import numpy as np

from urbanverse.records import atomic_path
from urbanverse.render.tour import TourCfg, run_render_tour
from urbanverse.render.video import Mp4Writer

Kind = Literal["cut", "fade", "dissolve", "title"]
KINDS: tuple[Kind, ...] = ("cut", "fade", "dissolve", "title")

#: The example street (a 40 m street with sidewalks, trees, benches) shipped in the repository.
EXAMPLE_SCENE = Path(__file__).resolve().parents[2] / "scenes" / "example"


@dataclasses.dataclass(frozen=True)
class TrueTransition:
    """One transition of an edited video: frames ``[start_frame, end_frame)`` belong to neither shot
    (fading, blended, black or a title card); for a hard cut they are empty and ``start_frame`` is the
    new shot's first frame. Times are seconds from the video's start."""

    kind: Kind
    start_frame: int
    end_frame: int
    fps: float

    @property
    def start_s(self) -> float:
        return self.start_frame / self.fps

    @property
    def end_s(self) -> float:
        return self.end_frame / self.fps


@dataclasses.dataclass(frozen=True)
class EditedVideo:
    """An edited video written to ``path`` and its ground truth."""

    path: Path
    fps: float
    frame_count: int
    transitions: tuple[TrueTransition, ...]
    overlay_shots: tuple[int, ...]
    """Shots (0-based, in order) that carry a burnt-in caption."""


@dataclasses.dataclass(frozen=True)
class EditCfg:
    """What an edited video is made of. Seconds of video unless stated."""

    shots: int = 5
    """Number of walks joined (so ``shots - 1`` transitions)."""
    shot_s: tuple[float, float] = (2.0, 3.5)
    """Each shot's length is drawn from this range."""
    fps: float = 15.0
    width: int = 320
    height: int = 180
    kinds: tuple[Kind, ...] = KINDS
    """Transitions to use, cycled in an order shuffled by the seed (each appears when there are enough)."""
    fade_s: tuple[float, float] = (0.3, 0.7)
    """Length of each half of a fade (out, then in) through black."""
    black_s: tuple[float, float] = (0.0, 0.4)
    """Black held between fade-out and fade-in."""
    dissolve_s: tuple[float, float] = (0.5, 1.0)
    """Length of a cross-dissolve (both shots blended)."""
    title_s: tuple[float, float] = (1.0, 1.5)
    """How long a title card is shown."""
    overlay_p: float = 0.4
    """Chance that a shot carries a caption."""
    exposure_stops: float = 0.5
    """Each shot's exposure is scaled by ``2**u``, u within +- this."""
    white_balance: float = 0.08
    """Each shot's colour channels are scaled within 1 +- this."""
    noise_std: float = 2.0
    """Per-frame sensor noise (8-bit levels)."""


def _look(frames: list[np.ndarray], rng: np.random.Generator, cfg: EditCfg) -> list[np.ndarray]:
    gain = 2.0 ** rng.uniform(-cfg.exposure_stops, cfg.exposure_stops)
    wb = (gain * (1.0 + rng.uniform(-cfg.white_balance, cfg.white_balance, 3))).astype(np.float32)
    out = []
    for f in frames:
        noisy = f.astype(np.float32) * wb + rng.normal(0.0, cfg.noise_std, f.shape).astype(np.float32)
        out.append(np.clip(noisy, 0, 255).astype(np.uint8))
    return out


def _caption(frames: list[np.ndarray], text: str) -> list[np.ndarray]:
    out = []
    for f in frames:
        g = f.copy()
        h, w = g.shape[:2]
        cv2.rectangle(g, (0, int(0.82 * h)), (w, h), (20, 20, 20), -1)
        cv2.putText(
            g, text, (int(0.04 * w), int(0.95 * h)), cv2.FONT_HERSHEY_SIMPLEX, h / 400, (240, 240, 240), 1
        )
        out.append(g)
    return out


def _title(n: int, cfg: EditCfg, rng: np.random.Generator, text: str) -> list[np.ndarray]:
    colour = tuple(int(v) for v in rng.integers(0, 90, 3))
    card = np.zeros((cfg.height, cfg.width, 3), np.uint8)
    card[:] = colour
    scale = cfg.height / 180
    cv2.putText(card, text, (int(0.1 * cfg.width), int(0.45 * cfg.height)), cv2.FONT_HERSHEY_DUPLEX,
                0.9 * scale, (235, 235, 235), 2)  # fmt: skip
    cv2.putText(card, "a city walk", (int(0.1 * cfg.width), int(0.62 * cfg.height)), cv2.FONT_HERSHEY_SIMPLEX,
                0.5 * scale, (200, 200, 200), 1)  # fmt: skip
    return [card] * n


def _frames(video: Path) -> list[np.ndarray]:
    with av.open(str(video)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def _clip(source: Path, seconds: float, cfg: EditCfg, rng: np.random.Generator) -> list[np.ndarray]:
    """``seconds`` of a real video from a start drawn by ``rng``, resampled to ``cfg``'s fps and size."""
    with av.open(str(source)) as container:
        stream = container.streams.video[0]
        fps = float(stream.average_rate or 25)
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    n = int(round(seconds * cfg.fps))
    span = n / cfg.fps * fps
    start = rng.uniform(0.0, max(0.0, len(frames) - span - 1))
    picks = [min(len(frames) - 1, int(start + k * fps / cfg.fps)) for k in range(n)]
    return [cv2.resize(frames[i], (cfg.width, cfg.height), interpolation=cv2.INTER_AREA) for i in picks]


def build_edited_video(
    out: Path,
    seed: int,
    cfg: EditCfg | None = None,
    *,
    scene_dir: Path = EXAMPLE_SCENE,
    real_clips: Sequence[Path] = (),
) -> EditedVideo:
    """Write an edited video to ``out`` (.mp4) and return its ground truth (module docstring).

    Shots are tours through ``scene_dir`` (route seed drawn from ``seed``); each path of
    ``real_clips`` (e.g. the bundled city walk, a still camera) replaces one of them, in order, by a
    stretch of that video. The same ``seed`` and inputs give the same transitions and frames.
    """
    cfg = cfg or EditCfg()
    rng = np.random.default_rng(seed)
    lengths = rng.uniform(*cfg.shot_s, size=cfg.shots)
    order = list(rng.permutation(len(cfg.kinds)))
    kinds = [cfg.kinds[order[k % len(order)]] for k in range(cfg.shots - 1)]
    shots: list[list[np.ndarray]] = []
    overlays = []
    with tempfile.TemporaryDirectory(prefix="edited_") as tmp:
        for k, seconds in enumerate(lengths):
            if k < len(real_clips):
                frames = _clip(Path(real_clips[k]), float(seconds), cfg, rng)
            else:
                tour = Path(tmp) / f"tour_{k}.mp4"
                tour_cfg = TourCfg(seconds=float(seconds), fps=cfg.fps, width=cfg.width, height=cfg.height,
                                   seed=int(rng.integers(1 << 30)), shadows=bool(k % 2))  # fmt: skip
                run_render_tour(scene_dir, tour, tour_cfg)
                frames = _frames(tour)
            frames = _look(frames, rng, cfg)
            if rng.random() < cfg.overlay_p:
                frames = _caption(frames, f"Street {seed}-{k}  {rng.integers(1, 60)} min walk")
                overlays.append(k)
            shots.append(frames)
    video: list[np.ndarray] = list(shots[0])
    transitions = []
    for kind, nxt in zip(kinds, shots[1:], strict=True):
        n = lambda span: max(1, int(round(rng.uniform(*span) * cfg.fps)))  # noqa: E731
        if kind == "cut":
            transitions.append(TrueTransition("cut", len(video), len(video), cfg.fps))
            video.extend(nxt)
        elif kind == "fade":
            out_n, hold, in_n = n(cfg.fade_s), int(round(rng.uniform(*cfg.black_s) * cfg.fps)), n(cfg.fade_s)
            start = len(video) - out_n
            for j in range(out_n):  # the last out_n frames of the shot darken to black
                video[start + j] = (video[start + j] * (1.0 - (j + 1) / out_n)).astype(np.uint8)
            video.extend([np.zeros_like(nxt[0])] * hold)
            faded = [(f * ((j + 1) / (in_n + 1))).astype(np.uint8) for j, f in enumerate(nxt[:in_n])]
            transitions.append(TrueTransition("fade", start, len(video) + in_n, cfg.fps))
            video.extend(faded + nxt[in_n:])
        elif kind == "dissolve":
            m = min(n(cfg.dissolve_s), len(nxt) // 2)
            start = len(video) - m
            for j in range(m):
                a = (j + 1) / (m + 1)
                video[start + j] = cv2.addWeighted(video[start + j], 1.0 - a, nxt[j], a, 0.0)
            transitions.append(TrueTransition("dissolve", start, len(video), cfg.fps))
            video.extend(nxt[m:])
        else:
            card = _title(n(cfg.title_s), cfg, rng, f"Part {len(transitions) + 2}")
            transitions.append(TrueTransition("title", len(video), len(video) + len(card), cfg.fps))
            video.extend(card + nxt)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as partial:
        writer = Mp4Writer(partial, cfg.fps, cfg.width, cfg.height)
        for frame in video:
            writer.write(frame)
        writer.close()
    return EditedVideo(out, cfg.fps, len(video), tuple(transitions), tuple(overlays))


@dataclasses.dataclass(frozen=True)
class CutScore:
    """Detected transitions against the true ones: a detection matches a true transition when their
    spans, each widened by ``tolerance_s``, overlap (each matched at most once)."""

    true: int
    detected: int
    matched: int
    missed: tuple[TrueTransition, ...]
    spurious: tuple[tuple[float, float], ...]
    """Detections matching nothing, as ``(start_s, end_s)``."""

    @property
    def precision(self) -> float:
        return self.matched / self.detected if self.detected else 1.0

    @property
    def recall(self) -> float:
        return self.matched / self.true if self.true else 1.0


def score_cuts(
    truth: Sequence[TrueTransition], detected: Sequence[tuple[float, float]], tolerance_s: float = 0.2
) -> CutScore:
    """Match ``detected`` spans ``(start_s, end_s)`` (a hard cut: start = end = the new shot's first
    frame) to ``truth``, greedily in time order."""
    used: set[int] = set()
    missed = []
    for t in truth:
        hit = next(
            (
                j
                for j, (s, e) in enumerate(detected)
                if j not in used and s - tolerance_s <= t.end_s and t.start_s <= e + tolerance_s
            ),
            None,
        )
        if hit is None:
            missed.append(t)
        else:
            used.add(hit)
    spurious = tuple(d for j, d in enumerate(detected) if j not in used)
    return CutScore(len(truth), len(detected), len(used), tuple(missed), spurious)
