"""Cut-detection precision and recall on edited videos built from our own tours.

Each seed builds an edited video (``urbanverse.bench.edited_video``: rendered walks through the
example street joined by hard cuts, fades through black, cross-dissolves and title cards, some shots
with a burnt-in caption), runs gen's video stage on it and matches the transitions it found to the
true ones (within ``--tolerance`` seconds). With ``--real`` the first two shots of every video are
stretches of the bundled city walk and of OpenCV's vtest.avi (a still camera), when present.

    python tools/bench_cuts.py --seeds 101-120          # the held-out seeds of BENCHMARKS.md
    python tools/bench_cuts.py --seeds 1-10             # the seeds the thresholds were tuned on
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from urbanverse.bench.edited_video import EditCfg, build_edited_video, score_cuts
from urbanverse.video import VideoCfg, run_video

REPO = Path(__file__).resolve().parents[1]
REAL = (
    REPO / "assets" / "samples" / "city_walk.mp4",
    Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi"),
)


def _seeds(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="101-120", help="seeds, e.g. 1-10 or 3,5,8 (default 101-120)")
    parser.add_argument("--shots", type=int, default=6, help="shots per video")
    parser.add_argument("--tolerance", type=float, default=0.2, help="seconds a detection may lie off")
    parser.add_argument("--real", action="store_true", help="start each video with real clips")
    parser.add_argument("-v", "--verbose", action="store_true", help="list misses and false detections")
    args = parser.parse_args()
    real = [p for p in REAL if p.is_file()] if args.real else []
    totals = {"true": 0, "detected": 0, "matched": 0}
    by_kind: dict[str, list[int]] = {}
    seconds = video_s = 0.0
    with tempfile.TemporaryDirectory(prefix="bench_cuts_") as tmp:
        for seed in _seeds(args.seeds):
            video = build_edited_video(Path(tmp) / f"edited_{seed}.mp4", seed, EditCfg(shots=args.shots),
                                       real_clips=real)  # fmt: skip
            t0 = time.perf_counter()
            kfs = run_video(video.path, Path(tmp) / f"work_{seed}", VideoCfg())
            seconds += time.perf_counter() - t0
            video_s += kfs.duration_s
            found = [(t.start_s, t.end_s) for t in kfs.transitions]
            score = score_cuts(video.transitions, found, args.tolerance)
            for key in totals:
                totals[key] += getattr(score, key)
            missed = {id(t) for t in score.missed}
            for t in video.transitions:
                by_kind.setdefault(t.kind, [0, 0])[0] += 1
                by_kind[t.kind][1] += id(t) not in missed
            print(f"seed {seed}: {score.matched}/{score.true} found, {score.detected - score.matched} false",
                  flush=True)  # fmt: skip
            if args.verbose:
                for t in score.missed:
                    print(f"   missed {t.kind} {t.start_s:.2f}-{t.end_s:.2f} s")
                for s, e in score.spurious:
                    print(f"   false {s:.2f}-{e:.2f} s")
    precision = totals["matched"] / max(1, totals["detected"])
    recall = totals["matched"] / max(1, totals["true"])
    print(f"\ntransitions {totals['true']}, detected {totals['detected']}, matched {totals['matched']}")
    print(f"precision {precision:.3f}  recall {recall:.3f}")
    print("recall by kind: " + ", ".join(f"{k} {v[1]}/{v[0]}" for k, v in sorted(by_kind.items())))
    per_min = seconds / max(video_s, 1e-9) * 60
    print(f"video stage: {seconds:.1f} s for {video_s:.0f} s of video ({per_min:.1f} s per minute)")


if __name__ == "__main__":
    main()
