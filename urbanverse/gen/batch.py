"""``urbanverse gen`` over many inputs: one scene folder per input, a manifest, isolated failures.

A batch is several inputs, a folder holding video files, or a ``.txt`` file listing inputs (one
path per line, ``#`` comments). Input ``walk.mp4`` gets ``OUT/walk/`` (two inputs with the same
name get ``OUT/<name>-<6 hex of the path>/``; a name once given is kept in ``OUT/index.json``).

``OUT/index.json`` lists each input's status (``pending``; ``running``: handed to the executor,
which may still queue it; ``ok``; ``error``), scene
folder, seconds, counts and error; the driver rewrites it (atomically) at every change, so a driver
killed at any point leaves it readable. A re-run skips the inputs whose scene is done and runs the
others, where gen's own stage cache resumes a partial one. An input that fails leaves
``error.json`` in its folder and the others go on. Inputs run as tasks of ``urbanverse.parallel``:
local worker processes (``--jobs``) or Ray; a worker that dies is retried.

While a worker runs, gen's progress callback keeps the names of its running stages in
``<scene>/.gen_running``; the driver reads them for its display.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

from urbanverse.errors import InputError
from urbanverse.gen.pipeline import ERROR_FILE, REPORT_FILE, GenCfg, clear_for_error, run_gen
from urbanverse.gen.shots import run_gen_per_shot
from urbanverse.locks import folder_lock
from urbanverse.parallel import ExecutorCfg, TaskResult, run_tasks
from urbanverse.records import atomic_path, save_json
from urbanverse.threads import torch_threads

#: Suffixes of the video files a folder input is searched for.
VIDEO_SUFFIXES = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".ts"})
INDEX = "index.json"
#: Seconds between rewrites of the index while a batch runs (it is also written at the end). A
#: finished input the index still calls running is rerun from gen's stage cache, in seconds.
INDEX_SAVE_S = 2.0
RUNNING_FILE = ".gen_running"
#: Memory (GiB) a Ray task of gen declares: the peak of gen on a 720p walk, with headroom.
GEN_MEMORY_GB = 4.0


def batch_inputs(sources: list[Path]) -> list[Path] | None:
    """The inputs of a batch, or None when ``sources`` is one input of single gen (a video, an image
    or a folder of images). ``InputError`` for a missing path or a folder with nothing to run."""
    if len(sources) == 1:
        source = sources[0]
        if source.suffix.lower() == ".txt" and source.is_file():
            lines = (line.split("#", 1)[0].strip() for line in source.read_text().splitlines())
            listed = [
                Path(line) if Path(line).is_absolute() else source.parent / line for line in lines if line
            ]
            if not listed:
                raise InputError(f"{source}: lists no inputs")
            sources = listed
        elif not (source.is_dir() and _videos_in(source)):
            return None
    inputs: list[Path] = []
    for source in sources:
        if not source.exists():
            raise InputError(f"{source}: no such file or folder")
        inputs.extend((source.is_dir() and _videos_in(source)) or [source])
    return inputs


def _videos_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)


def scene_names(inputs: list[Path], known: dict[str, str]) -> dict[str, str]:
    """``resolved input path -> scene folder name``: ``known`` names first (from the index), else the
    input's stem (letters, digits, ``-`` and ``_``), suffixed with a digest of its path when taken."""
    names: dict[str, str] = {}
    taken = set(known.values())
    stems = [_stem(p) for p in inputs]
    uses = Counter(stems)
    for path, stem in zip(inputs, stems, strict=True):
        key = str(path.resolve())
        if key in known:
            names[key] = known[key]
            continue
        name = stem if uses[stem] == 1 and stem not in taken else f"{stem}-{_digest(key)}"
        names[key] = name
        taken.add(name)
    return names


def _stem(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "_", path.stem if path.is_file() else path.name).strip("_") or "input"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:6]


@dataclasses.dataclass(frozen=True)
class GenJob:
    """One input of a batch, as a worker runs it."""

    source: Path
    out: Path
    cfg: GenCfg
    resume: bool
    per_shot: bool
    max_walk_m: float | None
    threads: int
    """Torch threads of the worker: the machine's cores shared among the local workers."""


def run_job(job: GenJob) -> dict:
    """Run gen on one input (in a worker): its counts and seconds. A bad input leaves only
    ``error.json`` and raises; the running stages are kept in ``RUNNING_FILE`` meanwhile."""
    running: list[str] = []
    marker = job.out / RUNNING_FILE

    def progress(stage: str, state: str) -> None:
        if state == "run":
            running.append(stage)
        elif stage in running:
            running.remove(stage)
        with atomic_path(marker) as tmp:
            tmp.write_text(", ".join(running))

    job.out.mkdir(parents=True, exist_ok=True)
    with folder_lock(job.out, "gen"), torch_threads(job.threads):
        (job.out / ERROR_FILE).unlink(missing_ok=True)  # this run supersedes an earlier failure
        try:
            if job.per_shot:
                report = run_gen_per_shot(
                    job.source,
                    job.out,
                    job.cfg,
                    resume=job.resume,
                    progress=progress,
                    max_walk_m=job.max_walk_m,
                )
                shots = [s for s in report.shots if s.status == "ok"]
                return {
                    "shots": len(report.shots),
                    "scenes": len(shots),
                    "objects": sum(s.objects for s in shots),
                }
            report = run_gen(job.source, job.out, job.cfg, resume=job.resume, progress=progress)
            return {"scenes": 1, **report.counts, "gen_seconds": report.seconds["total"]}
        except InputError as exc:
            clear_for_error(job.out, str(exc))
            raise
        finally:
            marker.unlink(missing_ok=True)


@dataclasses.dataclass(frozen=True)
class BatchOutcome:
    """What a batch did: entries as in ``index.json``."""

    entries: list[dict]

    @property
    def ok(self) -> int:
        return sum(e["status"] == "ok" for e in self.entries)

    @property
    def exit_code(self) -> int:
        """0: every input made its scene; 1: some did; 2: none did."""
        return 0 if self.ok == len(self.entries) else (1 if self.ok else 2)


class BatchIndex:
    """``OUT/index.json``: one entry per input, written atomically at every change."""

    def __init__(self, out: Path, inputs: list[Path]):
        self.path = out / INDEX
        old = json.loads(self.path.read_text())["inputs"] if self.path.is_file() else []
        by_input = {e["input"]: e for e in old}
        names = scene_names(inputs, {e["input"]: e["name"] for e in old})
        self._saved = 0.0  # time.monotonic() of the last write
        self.entries: dict[str, dict] = {}
        for path in inputs:
            key = str(path.resolve())
            entry = by_input.get(key, {"input": key, "name": names[key], "status": "pending"})
            entry["scene_dir"] = str(out / entry["name"])
            self.entries[key] = entry

    def save(self) -> None:
        save_json({"inputs": list(self.entries.values()), "updated": time.time()}, self.path)
        self._saved = time.monotonic()

    def update(self, key: str, **values) -> None:
        """Change ``key``'s entry; the file is rewritten at most every ``INDEX_SAVE_S`` (a batch of
        thousands of inputs would otherwise rewrite a file of megabytes at every event)."""
        self.entries[key].update(values)
        if time.monotonic() - self._saved >= INDEX_SAVE_S:
            self.save()


def _done(entry: dict) -> bool:
    """Whether ``entry``'s scene is finished on disk (marked ok, its report there, no error since)."""
    folder = Path(entry["scene_dir"])
    return (
        entry.get("status") == "ok"
        and (folder / REPORT_FILE).is_file()
        and not (folder / ERROR_FILE).is_file()
    )


def run_batch(
    inputs: list[Path],
    out: Path,
    cfg: GenCfg,
    executor: ExecutorCfg,
    *,
    resume: bool = True,
    per_shot: bool = False,
    max_walk_m: float | None = None,
    on_event: Callable[[str, dict], None] | None = None,
) -> BatchOutcome:
    """Run gen on every input not done yet (see the module docstring); ``on_event(kind, entry)`` sees
    ``skip``, ``start`` and ``end`` events for a display."""
    out.mkdir(parents=True, exist_ok=True)
    event = on_event or (lambda kind, entry: None)
    with folder_lock(out, "gen batch"):
        index = BatchIndex(out, inputs)
        threads = 1 if executor.uses_ray else max(1, (os.cpu_count() or 1) // executor.jobs)
        jobs = {}
        for key, entry in index.entries.items():
            if resume and _done(entry):
                event("skip", entry)
                continue
            entry.update(status="pending", error=None)
            jobs[key] = GenJob(
                Path(key), Path(entry["scene_dir"]), cfg, resume, per_shot, max_walk_m, threads
            )
        index.save()

        def started(key: str) -> None:
            index.update(key, status="running")
            event("start", index.entries[key])

        try:
            for result in _results(jobs, executor, started):
                entry = index.entries[result.key]
                seconds = round(result.seconds, 1)
                if result.ok:
                    index.update(result.key, status="ok", seconds=seconds, counts=result.value, error=None)
                else:
                    folder = Path(entry["scene_dir"])
                    if not (folder / ERROR_FILE).is_file():  # a crash, not a bad input: keep its work
                        folder.mkdir(parents=True, exist_ok=True)
                        save_json({"error": result.error, "stage": None}, folder / ERROR_FILE)
                    index.update(result.key, status="error", seconds=seconds, error=result.error)
                event("end", entry)
        finally:
            index.save()
        return BatchOutcome(list(index.entries.values()))


def _results(jobs: dict[str, GenJob], executor: ExecutorCfg, started) -> Iterator[TaskResult]:
    if executor.uses_ray:
        executor = dataclasses.replace(
            executor, memory_gb_per_task=executor.memory_gb_per_task or GEN_MEMORY_GB
        )
    return run_tasks(run_job, jobs, executor, on_start=started)
