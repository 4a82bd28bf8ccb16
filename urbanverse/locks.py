"""One writer per output folder: an advisory lock file that names its holder.

``gen`` (its output folder), ``assets build`` / ``assets ingest`` (the library folder) and ``train``
(the run folder) each hold :func:`folder_lock` on the folder they write for as long as they write
it. A second writer is refused at once with :class:`FolderLocked` (an ``InputError``: exit 2) whose
one-line message names the holder's pid, host and command; readers never take the lock.

The lock is ``fcntl.flock`` on ``<folder>/.urbanverse.lock``, whose text is the holder as JSON. The
kernel drops the lock when its process ends, SIGKILL included, so a killed writer never blocks the
next one; the next writer takes over the file it left. A lock released normally removes its file
(after checking, on taking it, that the file it locked is still the one at the path, so a writer
that raced the removal retries instead of holding a lock nobody else sees). Within one process the
lock is re-entrant: a command and the library function it calls may both take it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from urbanverse.errors import InputError

#: The lock file in a locked folder (hidden; clean-ups of the folder must leave it alone).
LOCK_FILE = ".urbanverse.lock"

#: Seconds between tries of a lock that is waited for.
WAIT_POLL_S = 0.1

_held: dict[str, list] = {}  # resolved folder -> [descriptor, depth]
_guard = threading.Lock()


class FolderLocked(InputError):
    """Another process writes into the folder; the message names it (pid, host, command)."""


def holder_text(info: dict) -> str:
    """``pid 123 on host (urbanverse gen walk.mp4 -o out)`` from a lock file's JSON."""
    if not info:
        return "another process (it is starting)"
    where = f" on {info['host']}" if info.get("host") and info["host"] != socket.gethostname() else ""
    return f"pid {info.get('pid', '?')}{where} ({info.get('command', '?')})"


def read_holder(folder: Path) -> dict:
    """The holder recorded in ``folder``'s lock file ({} when none or unreadable)."""
    try:
        return json.loads((Path(folder) / LOCK_FILE).read_text() or "{}")
    except (OSError, ValueError):
        return {}


def _command() -> str:
    args = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else ["python"]
    return " ".join(args)


def _acquire(folder: Path, what: str, wait_s: float) -> int:
    path = folder / LOCK_FILE
    deadline = time.monotonic() + wait_s
    replaced = 0
    while replaced < 100:  # retried when the file was removed under us (a holder released it)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            if time.monotonic() < deadline:
                time.sleep(WAIT_POLL_S)
                continue
            info: dict = {}
            for _ in range(20):  # the holder writes its name just after taking the lock
                info = read_holder(folder)
                if info:
                    break
                time.sleep(0.01)
            raise FolderLocked(
                f"{folder}: another {what} is writing here: {holder_text(info)}; "
                "wait for it to finish or give another folder"
            ) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            replaced += 1
            continue
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": _command(), "what": what}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        return fd
    raise OSError(f"{path}: cannot take the lock (the file keeps being replaced)")


@contextlib.contextmanager
def folder_lock(folder: Path, what: str = "writer", wait_s: float = 0.0) -> Iterator[Path]:
    """Hold ``folder``'s writer lock (creating the folder) while the block runs; yields the folder.

    ``what`` names the job in the refusal (``gen``, ``asset library writer``, ``training run``).
    Raises :class:`FolderLocked` when another process holds it: at once, or after waiting up to
    ``wait_s`` seconds for it to let go (short writes that may queue behind each other).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    with _guard:
        entry = _held.get(key)
        if entry is not None:
            entry[1] += 1
        else:
            _held[key] = [_acquire(folder, what, wait_s), 1]
    try:
        yield folder
    finally:
        with _guard:
            entry = _held[key]
            entry[1] -= 1
            if entry[1] == 0:
                del _held[key]
                with contextlib.suppress(OSError):
                    os.unlink(folder / LOCK_FILE)  # still ours: it is removed while held
                os.close(entry[0])
