"""Per-keyframe cost of the detection and tracking stages at 720p, and seconds per minute of video.

Usage:

    python tools/bench_perception.py [--frames N] [--source vtest|FOLDER] [--threads 2]

Frames: ``vtest.avi`` (Debian ``opencv-doc``: a real street) resized to 1280 x 720, or the PNGs
of a folder (e.g. a rendered tour's ``frames/rgb``). Runs ``run_detection`` (SSD + poles +
vegetation + crop classifier) and ``run_tracking`` (MobileNetV2 appearance + Hungarian) and
prints milliseconds per keyframe per part, then the cost of one minute of video at 1 and 2
keyframes per second. Also prints the load average: the machine is shared, so compare runs
made at similar load.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from urbanverse.perception.appearance import embed_crops
from urbanverse.perception.detect import DetectionCfg, run_detection
from urbanverse.perception.track import TrackingCfg, run_tracking

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")


def _frames(source: str, n: int) -> list[tuple[int, np.ndarray]]:
    import cv2

    out = []
    if source == "vtest":
        if not VTEST.is_file():
            sys.exit("vtest.avi absent: apt-get install opencv-doc, or pass --source FOLDER")
        cap = cv2.VideoCapture(str(VTEST))
        total = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
        for k, i in enumerate(np.linspace(0, total - 1, n).astype(int)):
            cap.set(cv2.CAP_PROP_POS_FRAMES, int(i))
            ok, bgr = cap.read()
            if ok:
                out.append((k, cv2.cvtColor(cv2.resize(bgr, (1280, 720)), cv2.COLOR_BGR2RGB)))
        return out
    paths = sorted(Path(source).glob("*.png"))
    for k, p in enumerate(paths[:: max(1, len(paths) // n)][:n]):
        out.append((k, cv2.cvtColor(cv2.imread(str(p)), cv2.COLOR_BGR2RGB)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--source", default="vtest")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    frames = _frames(args.source, args.frames)
    n = len(frames)
    h, w = frames[0][1].shape[:2]
    load = os.getloadavg()[0]
    print(f"{n} keyframes {w}x{h} from {args.source}; load average {load:.1f} on {os.cpu_count()} cpus")
    rows = []
    for name, cfg in (
        ("full (classifier on)", DetectionCfg(classifier="auto", threads=args.threads)),
        ("classifier off", DetectionCfg(classifier="off", threads=args.threads)),
        ("SSD only", DetectionCfg(classifier="off", poles=False, vegetation=False, threads=args.threads)),
    ):
        run_detection(frames[:1], cfg)  # load models first
        t, c = time.perf_counter(), time.process_time()
        dets = run_detection(frames, cfg)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        ndet = sum(len(f.detections) for f in dets.frames)
        parts = ", ".join(f"{k} {1000 * v / n:.0f}" for k, v in sorted(dets.seconds.items()) if k != "total")
        print(f"detection [{name}]: {1000 * wall / n:.0f} ms/keyframe ({parts}); {ndet / n:.1f} dets/frame")
        print(f"    process CPU time {1000 * cpu / n:.0f} ms/keyframe (both threads)")
        rows.append((name, wall / n, dets))
    dets = rows[0][2]
    embed_crops([frames[0][1][:64, :64]])  # embedder export / load outside the timing
    t, c = time.perf_counter(), time.process_time()
    res = run_tracking(frames, dets, TrackingCfg())
    track, cpu = (time.perf_counter() - t) / n, (time.process_time() - c) / n
    parts = ", ".join(
        f"{k} {1000 * v / n:.0f}" for k, v in sorted(res.tracks.seconds.items()) if k != "total"
    )
    print(f"tracking: {1000 * track:.0f} ms/keyframe ({parts}); {len(res.tracks.tracks)} tracks")
    print(f"    process CPU time {1000 * cpu:.0f} ms/keyframe (both threads)")
    for name, det, _ in rows:
        per = det + track
        print(f"[{name}] det+track: {per * 60:.1f} s/video-min at 1 kf/s, {per * 120:.1f} s at 2 kf/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
