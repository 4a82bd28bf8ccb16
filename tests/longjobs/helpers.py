"""Helpers of the long-job tests: run the ``urbanverse`` command in its own process, stop it the way a
user or the system does (Ctrl-C to its process group, SIGKILL), and hold a folder's writer lock from
another process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from urbanverse.locks import LOCK_FILE, read_holder

#: The installed command, beside this interpreter.
URBANVERSE = str(Path(sys.executable).parent / "urbanverse")


@dataclass(frozen=True)
class Stopped:
    """How a stopped command ended: its exit status (negative: the signal that ended it), its stderr,
    and whether it was still running when the signal was sent (False: it had already finished)."""

    returncode: int
    stderr: str
    interrupted: bool


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
    """``urbanverse ARGS`` in a new session (its own process group, as a terminal's foreground job)."""
    return subprocess.Popen(
        [URBANVERSE, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )


def stop(proc: subprocess.Popen, sig: signal.Signals) -> Stopped:
    """Send ``sig`` to ``proc``'s process group (Ctrl-C reaches every process of the foreground job;
    SIGKILL of the group also ends its worker processes) and wait for it to end."""
    running = proc.poll() is None
    if running:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        raise AssertionError(f"{proc.args[:3]} did not end within 120 s of {sig.name}") from None
    return Stopped(proc.returncode, err.decode(errors="replace"), running)


def run_until(
    args: list[str], ready: Callable[[], bool], sig: signal.Signals, delay: float = 0.0, timeout: float = 300
) -> Stopped:
    """Start ``urbanverse ARGS``, wait until ``ready()`` (polled), then ``delay`` seconds, then send
    ``sig``. Fails when the command ends before ``ready()``."""
    proc = start(args)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None:
                raise AssertionError(f"ended before the kill point: {proc.stderr.read().decode()[-800:]}")
            assert time.monotonic() < deadline, f"not ready within {timeout} s"
            time.sleep(0.01)
        time.sleep(delay)
    except BaseException:
        stop(proc, signal.SIGKILL)
        raise
    return stop(proc, sig)


def locked_by_a_command(folder: Path) -> Callable[[], bool]:
    """``ready`` for :func:`run_until`: the folder's writer lock is taken and names an urbanverse command."""
    return lambda: "urbanverse" in read_holder(folder).get("command", "")


HOLDER = """
import sys, time
from urbanverse.locks import folder_lock
with folder_lock(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    time.sleep(600)
"""


@contextlib.contextmanager
def held_elsewhere(folder: Path, what: str = "writer") -> Iterator[subprocess.Popen]:
    """``folder``'s writer lock held by another process (a stand-in writer) while the block runs."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), what], stdout=subprocess.PIPE, env=dict(os.environ)
    )
    try:
        assert proc.stdout.readline().strip() == b"held"
        assert (Path(folder) / LOCK_FILE).is_file()
        yield proc
    finally:
        proc.kill()
        proc.wait()


def error_lines(stderr: str) -> list[str]:
    """The ``error:`` lines of a command's stderr."""
    return [line for line in stderr.splitlines() if line.startswith("error:")]
