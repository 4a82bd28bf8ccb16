"""Benchmark the video and camera stages of ``urbanverse gen`` (seconds per stage, accuracy vs truth).

Runs ``run_video`` then ``run_recon`` on a video (or image / image folder) and prints per-stage
seconds, seconds per minute of video, keyframes, mode and ground fit. With ``--gt tour_gt.json`` (from
``urbanverse render-tour``) it also compares the keyframe poses with the true ones:

- ``ate_m``: RMS position error after a similarity alignment (rotation from the camera orientations,
  scale and translation from the positions by least squares);
- ``scale_err``: the alignment's scale minus 1 (our metric scale against the true one);
- ``direct_err_m``: the same with scale 1 (our metres as they are): what later stages see;
- ``rot_err_deg``: median rotation error after the alignment;
- ``ground_tilt_deg`` / ``ground_height_m``: our ground plane (z = 0) mapped into the true world: the
  angle of its normal to true +Z and its height at the cameras (0 = road level, 0.15 = sidewalk).

    python tools/bench_camera.py /tmp/p1/tour.mp4 --gt /tmp/p1/tour_gt.json
    python tools/bench_camera.py vtest.avi
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np


def evaluate(recon, gt: dict) -> dict:
    """Accuracy of ``recon`` against render-tour ground truth (see the module docstring)."""
    frames = {f["index"]: np.array(f["world_from_camera"], float).reshape(4, 4) for f in gt["frames"]}
    regs = [k for k in recon.keyframes if k.registered and k.frame in frames]
    if len(regs) < 3:
        return {"evaluated_keyframes": len(regs)}
    est = np.array([np.array(k.world_from_camera) for k in regs])
    true = np.array([frames[k.frame] for k in regs])
    # Rotation from the camera orientations (a near-straight path leaves the roll about it free),
    # then scale and translation from the positions.
    u, _, vt = np.linalg.svd(sum(g[:3, :3] @ e[:3, :3].T for e, g in zip(est, true, strict=True)))
    r = u @ np.diag([1.0, 1.0, np.linalg.det(u @ vt)]) @ vt
    pe, pt = est[:, :3, 3] @ r.T, true[:, :3, 3]
    a, b = pe - pe.mean(0), pt - pt.mean(0)
    s = float((a * b).sum() / (a * a).sum())
    t = pt.mean(0) - s * pe.mean(0)
    ate = float(np.sqrt(((s * pe + t - pt) ** 2).sum(1).mean()))
    direct = float(np.sqrt(((pe + pt.mean(0) - pe.mean(0) - pt) ** 2).sum(1).mean()))
    rot_err = []
    for e, g in zip(est, true, strict=True):
        d = (r @ e[:3, :3]).T @ g[:3, :3]
        rot_err.append(math.degrees(math.acos(np.clip((np.trace(d) - 1) / 2, -1, 1))))
    n_true = r @ np.array([0.0, 0.0, 1.0])
    ground_pt = t  # our origin (on our ground plane) in the true world
    heights = [float(n_true @ (c - ground_pt)) / n_true[2] for c in true[:, :3, 3]]
    cam_z = true[:, 2, 3]
    ground_h = float(np.mean(cam_z - np.array(heights)))
    length = float(np.linalg.norm(np.diff(true[:, :3, 3], axis=0), axis=1).sum())
    return {
        "evaluated_keyframes": len(regs),
        "path_length_m": round(length, 2),
        "ate_m": round(ate, 4),
        "ate_pct_of_path": round(100 * ate / max(length, 1e-9), 2),
        "scale_err": round(s - 1, 4),
        "direct_err_m": round(direct, 4),
        "rot_err_deg_median": round(float(np.median(rot_err)), 3),
        "ground_tilt_deg": round(math.degrees(math.acos(np.clip(n_true[2], -1, 1))), 3),
        "ground_height_m": round(ground_h, 4),
        "true_camera_height_mean_m": round(float(cam_z.mean()), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", type=Path)
    ap.add_argument("--gt", type=Path, help="render-tour ground truth (tour_gt.json)")
    ap.add_argument("--camera-height", type=float, default=1.6)
    ap.add_argument("--fov", type=float, default=65.0, help="horizontal FOV prior (deg)")
    ap.add_argument("--work", type=Path, help="keep the work folders here (default: a temporary folder)")
    ap.add_argument("--method", default="auto", choices=["auto", "sfm", "vo", "single_view"])
    args = ap.parse_args()

    from urbanverse.recon import ReconCfg, run_recon
    from urbanverse.video import VideoCfg, run_video

    work = args.work or Path(tempfile.mkdtemp(prefix="bench_camera_"))
    c0, t0 = time.process_time(), time.perf_counter()
    kfs = run_video(args.input, work / "01_video", VideoCfg(fov_deg=args.fov))
    t_video, c_video = time.perf_counter() - t0, time.process_time() - c0
    c0, t0 = time.process_time(), time.perf_counter()
    recon = run_recon(
        work / "01_video", work / "02_recon", ReconCfg(camera_height_m=args.camera_height, method=args.method)
    )
    t_recon, c_recon = time.perf_counter() - t0, time.process_time() - c0
    minutes = kfs.duration_s / 60.0
    out = {
        "input": str(args.input),
        "duration_s": kfs.duration_s,
        "original_size": kfs.original_size,
        "working_size": kfs.working_size,
        "keyframes": len(kfs.keyframes),
        "video_s": round(t_video, 2),
        "recon_s": round(t_recon, 2),
        "recon_steps_s": recon.timings_s,
        "s_per_video_min": round((t_video + t_recon) / minutes, 2) if minutes > 0 else None,
        # CPU seconds of this process (all its threads): comparable across runs on a busy machine.
        "cpu_s": {"video": round(c_video, 2), "recon": round(c_recon, 2)},
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "mode": recon.mode,
        "registered": len(recon.registered),
        "points": recon.num_points,
        "focal_px": [round(kfs.intrinsics.fx, 1), round(recon.intrinsics.fx, 1)],
        "ground": {
            "method": recon.ground.method,
            "inliers": recon.ground.num_inliers,
            "residual_m": round(recon.ground.residual_m, 4),
        },
        "scale_source": recon.scale_source,
        "warnings": list(kfs.warnings) + list(recon.warnings),
    }
    if args.gt:
        gt = json.loads(args.gt.read_text())
        out["gt_focal_px"] = round(
            gt["intrinsics"]["fx"] * kfs.working_size[0] / gt["intrinsics"]["width"], 1
        )
        out["accuracy"] = evaluate(recon, gt)
    print(json.dumps(out, indent=2))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
