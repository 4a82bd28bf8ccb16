"""A cached, resumable sequence of stages, each in its own work folder (DESIGN.md section 4).

``<out>/work/manifest.json`` records per stage the key it ran with (a hash of its configuration and
of the keys of the stages it reads, the first one hashing the input file) and its seconds. A stage
whose key matches the manifest and whose output record exists is loaded instead of run, so a
re-run skips finished work and a killed run resumes at the stage it was in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from urbanverse.config import to_dict
from urbanverse.errors import InputError
from urbanverse.records import save_json

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"


def config_hash(*parts: Any) -> str:
    """A stable hash of dataclass configs and plain values."""

    return hashlib.sha256(json.dumps(to_dict(parts), sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclasses.dataclass
class StageRunner:
    """Runs stages in ``work_root``; ``progress(name, state)`` reports "run", "cached" or "done".

    Stages may run on several threads at once (each its own stage): the manifest, the timings and
    the progress calls are serialised."""

    work_root: Path
    resume: bool = True
    progress: Callable[[str, str], None] | None = None
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    cached: list[str] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.work_root.mkdir(parents=True, exist_ok=True)
        path = self.work_root / MANIFEST
        self.manifest: dict = json.loads(path.read_text()) if path.is_file() and self.resume else {}

    def run(
        self, name: str, key: str, output: str, compute: Callable[[Path], Any], load: Callable[[Path], Any]
    ) -> Any:
        """Run (or load) stage ``name``: ``compute(work_dir)`` must write ``work_dir/output`` last."""
        work = self.work_root / name
        with self._lock:
            entry = self.manifest.get(name)
        if self.resume and entry and entry.get("key") == key and (work / output).is_file():
            try:
                result = load(work)
            except InputError as exc:  # written by an older version whose records no longer validate
                log.warning("%s: cached output unreadable (%s); running the stage again", name, exc)
            else:
                with self._lock:
                    self.cached.append(name)
                    self.seconds[name] = 0.0
                    if self.progress:
                        self.progress(name, "cached")
                return result
        with self._lock:
            if self.progress:
                self.progress(name, "run")
        work.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        result = compute(work)
        with self._lock:
            self.seconds[name] = round(time.perf_counter() - start, 3)
            self.manifest[name] = {"key": key, "seconds": self.seconds[name], "output": output}
            save_json(self.manifest, self.work_root / MANIFEST)
            if self.progress:
                self.progress(name, "done")
        return result
