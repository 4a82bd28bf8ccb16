"""A declared table of cached, resumable stages and the one runner that knows their folders.

A :class:`Stage` says what it reads (the names of earlier stages' outputs), which parts of the
configuration it depends on, how to compute its output record, and how that record is stored. The
:class:`StageRunner` runs a table of them in dependency order, two at a time where the table allows
(e.g. detection beside the camera stage), each in its own work folder ``<work>/<nn>_<name>/``.

``<work>/manifest.json`` records per stage the key it ran with (a hash of its configuration and of
the keys of the stages it reads, the first one hashing the input file) and its seconds. A stage whose
key matches the manifest and whose stored output loads is loaded instead of run, so a re-run skips
finished work and a killed run resumes at the stage it was in (DESIGN.md section 4).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic, TypeVar

import cv2

from urbanverse.config import to_dict
from urbanverse.errors import InputError
from urbanverse.records import save_json

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
#: Stages running at once: the machine the defaults are sized for has two cores.
PARALLEL_STAGES = 2
#: Seconds between the runner's checks for Ctrl-C while stages run.
WAKE_S = 0.2

C = TypeVar("C")


def config_hash(*parts: Any) -> str:
    """A stable hash of dataclass configs and plain values."""

    return hashlib.sha256(json.dumps(to_dict(parts), sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class StageEnv:
    """What the runner gives a stage besides its inputs and configuration.

    ``work``: the stage's own empty-or-resumed folder for files it keeps (the runner stores the
    output record there too); ``scene_dir``: the final scene folder (only the last stage writes
    there); ``stop``: set when another stage failed or the run was interrupted, so long stages can
    end at their next step; ``source``: the input the run started from (for messages); ``name``: the
    scene's name."""

    work: Path
    scene_dir: Path
    stop: threading.Event
    source: Path
    name: str


@dataclasses.dataclass(frozen=True)
class Store:
    """How a stage's output lives in its work folder: ``save(output, work)`` writes it (``file`` last,
    atomically; None when the stage's ``run`` writes it itself), ``load(work)`` reads it back. ``file``
    marks a finished stage. The stages after it always get the loaded output, so a resumed run sees
    exactly what a fresh one saw."""

    file: str
    save: Callable[[Any, Path], None] | None
    load: Callable[[Path], Any]


@dataclasses.dataclass(frozen=True)
class Stage(Generic[C]):
    """One step of a pipeline: ``run(*inputs, cfg=cfg, env=env) -> output``.

    ``inputs``: names of the stages (or of the runner's given values) whose outputs ``run`` takes, in
    order. ``key_parts(cfg)``: the configuration's parts the output depends on, hashed into the cache
    key beside the inputs' keys. ``store``: None for a stage that is never cached (it runs every time,
    e.g. a warm-up). ``check(output, env)`` runs on computed and cached outputs alike and raises
    ``InputError`` when the output cannot serve the stages after it."""

    name: str
    inputs: tuple[str, ...]
    run: Callable[..., Any]
    key_parts: Callable[[C], Any]
    store: Store | None
    check: Callable[[Any, StageEnv], None] | None = None


def replace_stage(stages: Sequence[Stage], stage: Stage) -> tuple[Stage, ...]:
    """``stages`` with the entry of ``stage.name`` replaced by ``stage`` (a different detector, a
    depth model, a benchmark's ground truth). ``KeyError`` when no stage has that name."""
    names = [s.name for s in stages]
    if stage.name not in names:
        raise KeyError(f"no stage named {stage.name!r} (stages: {', '.join(names)})")
    return tuple(stage if s.name == stage.name else s for s in stages)


def downstream(stages: Sequence[Stage], name: str) -> set[str]:
    """``name`` and the names of every stage in ``stages`` that reads its output, directly or not."""
    found = {name}
    for stage in stages:  # a table lists each stage after the stages it reads
        if found.intersection(stage.inputs):
            found.add(stage.name)
    return found


@contextmanager
def _opencv_threads() -> Iterator[Callable[[int], None]]:
    """Yields ``running(n)``, to be called before ``n`` stages run at once: OpenCV's own worker threads
    are off while several stages run and back to their prior number otherwise, and on leaving. Two
    stages already keep the two cores busy; OpenCV's parallel loops (SIFT, optical flow, cv2.dnn)
    would add threads that the stage on the critical path then loses time to."""
    prior = cv2.getNumThreads()

    def running(n: int) -> None:
        cv2.setNumThreads(1 if n > 1 else prior)

    try:
        yield running
    finally:
        cv2.setNumThreads(prior)


@dataclasses.dataclass
class StageRunner:
    """Runs stage tables in ``work_root``; ``progress(name, state)`` reports "run", "cached" or "done".

    ``seconds`` (per stage folder, wall time), ``cached`` (folders loaded from the cache) and ``keys``
    (each stage's cache key, by stage name) accumulate over the runner's calls; the manifest, the
    timings and the progress calls are serialised across the stages' threads."""

    work_root: Path
    resume: bool = True
    progress: Callable[[str, str], None] | None = None
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    cached: list[str] = dataclasses.field(default_factory=list)
    keys: dict[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.work_root.mkdir(parents=True, exist_ok=True)
        path = self.work_root / MANIFEST
        self.manifest: dict = json.loads(path.read_text()) if path.is_file() and self.resume else {}

    def folder(self, position: int, stage: Stage) -> Path:
        """The work folder of the table's ``position``-th stage (0-based): ``<work>/<nn>_<name>``."""
        return self.work_root / f"{position + 1:02d}_{stage.name}"

    def load(self, stages: Sequence[Stage], name: str) -> Any:
        """The stored output of the stage ``name`` of the table ``stages`` (run before in this work
        folder), e.g. for a tool that studies one stage's output; ``InputError`` when it is missing."""
        for position, stage in enumerate(stages):
            if stage.name == name and stage.store is not None:
                work = self.folder(position, stage)
                if not (work / stage.store.file).is_file():
                    raise InputError(f"{work}: stage {name!r} has not run here")
                return stage.store.load(work)
        raise KeyError(f"no stored stage named {name!r}")

    def run_table(
        self,
        stages: Sequence[Stage[C]],
        cfg: C,
        given: Mapping[str, tuple[Any, str]],
        scene_dir: Path,
        source: Path,
        name: str,
        first: int = 0,
    ) -> dict[str, Any]:
        """Run ``stages`` (each once its inputs exist, up to :data:`PARALLEL_STAGES` at once) and return
        every output by stage name (``given``'s values included).

        ``given``: values the table starts from, by name, each with its cache key (e.g. the keyframes
        of one shot). ``first``: the position of ``stages[0]`` in the whole table, which numbers the
        folders (a per-shot run continues the video stage's numbering). The first failure sets
        every running stage's ``stop``, waits for them, and is raised; a ``KeyboardInterrupt`` sets
        ``stop`` and is raised at once."""
        outputs = {n: value for n, (value, _) in given.items()}
        keys = self.keys
        keys.update({n: key for n, (_, key) in given.items()})
        known = set(outputs) | {s.name for s in stages}
        for stage in stages:
            missing = [i for i in stage.inputs if i not in known]
            if missing:
                raise ValueError(f"stage {stage.name!r} reads {missing}, which no stage or given value makes")
        pending = list(enumerate(stages, start=first))
        stop = threading.Event()
        running: dict[Future, Stage] = {}
        pool = ThreadPoolExecutor(PARALLEL_STAGES, thread_name_prefix="stage")
        with _opencv_threads() as opencv_running:
            try:
                while pending or running:
                    for item in [p for p in pending if all(i in outputs for i in p[1].inputs)]:
                        if len(running) >= PARALLEL_STAGES:
                            break
                        position, stage = item
                        pending.remove(item)
                        key = config_hash(stage.name, [keys[i] for i in stage.inputs], stage.key_parts(cfg))
                        keys[stage.name] = key
                        args = [outputs[i] for i in stage.inputs]
                        env = StageEnv(self.folder(position, stage), scene_dir, stop, source, name)
                        opencv_running(len(running) + 1)
                        running[pool.submit(self._run_one, stage, key, args, cfg, env)] = stage
                    if not running:
                        blocked = ", ".join(s.name for _, s in pending)
                        raise ValueError(f"stages {blocked} wait on each other")
                    # Woken now and then: a Ctrl-C delivered to a stage's thread is only acted on when
                    # this (main) thread runs Python code.
                    done, _ = wait(running, timeout=WAKE_S, return_when=FIRST_COMPLETED)
                    for future in done:
                        stage = running.pop(future)
                        opencv_running(len(running))
                        outputs[stage.name] = future.result()
            except KeyboardInterrupt:
                # Ctrl-C: the stages see ``stop``; the caller need not wait for those that cannot
                # stop at once (COLMAP), as every stage's stored output survives a kill.
                stop.set()
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            except BaseException:
                stop.set()
                pool.shutdown(wait=True, cancel_futures=True)
                raise
            pool.shutdown(wait=True)
        return outputs

    def _run_one(self, stage: Stage, key: str, args: list, cfg: Any, env: StageEnv) -> Any:
        """Load ``stage``'s output from the cache when its key matches, else compute and store it."""
        label = env.work.name
        cached = self._load_cached(stage, label, key, env.work)
        if cached is not None:
            output = cached[0]
        else:
            with self._lock:
                if self.progress:
                    self.progress(label, "run")
            if stage.store is not None:
                env.work.mkdir(parents=True, exist_ok=True)
            start = time.perf_counter()
            output = stage.run(*args, cfg=cfg, env=env)
            if stage.store is not None:
                if stage.store.save is not None:
                    stage.store.save(output, env.work)
                output = stage.store.load(env.work)
            with self._lock:
                self.seconds[label] = round(time.perf_counter() - start, 3)
                if stage.store is not None:
                    self.manifest[label] = {
                        "key": key,
                        "seconds": self.seconds[label],
                        "output": stage.store.file,
                    }
                    save_json(self.manifest, self.work_root / MANIFEST)
                if self.progress:
                    self.progress(label, "done")
        if stage.check is not None:
            stage.check(output, env)
        return output

    def _load_cached(self, stage: Stage, label: str, key: str, work: Path) -> tuple[Any] | None:
        """``(output,)`` when ``stage`` finished before with ``key`` and its output loads, else None."""
        with self._lock:
            entry = self.manifest.get(label)
        store = stage.store
        if not (
            self.resume and store and entry and entry.get("key") == key and (work / store.file).is_file()
        ):
            return None
        try:
            output = store.load(work)
        except InputError as exc:  # written by an older version whose records no longer validate
            log.warning("%s: cached output unreadable (%s); running the stage again", label, exc)
            return None
        with self._lock:
            self.cached.append(label)
            self.seconds[label] = 0.0
            if self.progress:
                self.progress(label, "cached")
        return (output,)
