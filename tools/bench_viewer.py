"""The viewer under load: simulated browsers on loopback switch scenes and cousins at once.

Starts ``urbanverse view`` as its own process (127.0.0.1, a free port) on two copies of
``scenes/example`` (the first with a cousin on ``bench_1``), then runs one browser alone and
``--clients`` browsers at once, each for ``--seconds``, with the simulated browsers of
``urbanverse.bench.viewer_load`` (each clicks "Open <scene>" in turn and swaps the cousin, and times
every request until its page shows the answer). Prints the number of browsers, requests answered
and unanswered, p50 / p99 / max answer time, what the browsers received, and the server's resident
memory (RSS) before the load, after it and after a second run of the same load (steady state).

    python tools/bench_viewer.py --clients 50 --seconds 20
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from urbanverse.bench.viewer_load import rss_bytes, run_load  # noqa: E402

EXAMPLE = REPO / "scenes" / "example"
SCENES = ("example", "example_b")
COUSIN_OBJECT, COUSIN_UID = "bench_1", "bin_round_a"


def make_scenes(root: Path) -> tuple[str, str, str]:
    """Two scene folders under ``root``; returns (object id, its asset uid, cousin uid)."""
    for name in SCENES:
        shutil.copytree(EXAMPLE, root / name, ignore=shutil.ignore_patterns("physics_check.json"))
        path = root / name / "scene.json"
        data = json.loads(path.read_text())
        data["name"] = name
        if name == SCENES[0]:
            obj = next(o for o in data["objects"] if o["id"] == COUSIN_OBJECT)
            obj["cousins"] = [{"uid": COUSIN_UID, "path": f"assets/{COUSIN_UID}"}]
            asset_uid = obj["asset"]["uid"]
        path.write_text(json.dumps(data))
    return COUSIN_OBJECT, asset_uid, COUSIN_UID


def start_viewer(scenes: Path, library: Path) -> tuple[subprocess.Popen, str]:
    """``urbanverse view`` on ``scenes``; returns the process and its URL."""
    cmd = [sys.executable, "-m", "urbanverse.cli", "view", str(scenes), "--port", "0"]
    cmd += ["--library", str(library)]
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    deadline = time.monotonic() + 120
    for line in proc.stdout:
        if match := re.search(r"(http://127\.0\.0\.1:\d+)", line):
            return proc, match.group(1)
        if time.monotonic() > deadline:
            break
    proc.kill()
    raise SystemExit("the viewer did not start")


def report(label: str, result) -> None:
    print(
        f"{label}: {result.clients} browsers, {result.seconds:.0f} s: {len(result.times)} requests answered, "
        f"{len(result.failures)} unanswered; p50 {1000 * result.percentile(50):.0f} ms, "
        f"p99 {1000 * result.percentile(99):.0f} ms, max {1000 * max(result.times, default=0):.0f} ms; "
        f"received {result.frames} frames, {result.bytes / 2**20:.1f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "scenes"
        root.mkdir()
        cousin = make_scenes(root)
        proc, url = start_viewer(root, Path(tmp))
        try:
            time.sleep(2.0)
            machine = platform.processor() or platform.machine()
            print(f"machine: {machine}, {os.cpu_count()} CPUs; viewer at {url}")
            idle = rss_bytes(proc.pid)
            single = asyncio.run(run_load(url, 1, min(args.seconds, 5.0), list(SCENES), cousin))
            report("one browser", single)
            before = rss_bytes(proc.pid)
            first = asyncio.run(run_load(url, args.clients, args.seconds, list(SCENES), cousin))
            time.sleep(2.0)
            after = rss_bytes(proc.pid)
            report("load", first)
            second = asyncio.run(run_load(url, args.clients, args.seconds, list(SCENES), cousin))
            time.sleep(2.0)
            again = rss_bytes(proc.pid)
            report("load again", second)
            mib = 2**20
            print(
                f"server RSS: idle {idle / mib:.0f} MiB, after one browser {before / mib:.0f} MiB, "
                f"after {args.clients} browsers {after / mib:.0f} MiB, "
                f"after a second run {again / mib:.0f} MiB"
            )
            p99 = max(first.percentile(99), second.percentile(99))
            print(
                f"clients={args.clients} requests={len(first.times) + len(second.times)} "
                f"unanswered={len(first.failures) + len(second.failures)} p99_ms={1000 * p99:.0f} "
                f"rss_before_mib={before / mib:.0f} rss_after_mib={again / mib:.0f}"
            )
        finally:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
