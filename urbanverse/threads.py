"""Thread counts of the numeric libraries, set for a block of work and restored after it.

``torch.set_num_threads`` is process-wide: a model that set it at load (or a library that sets it at
import, as ultralytics does) would change every later torch call of the process, the training
loops' included. Code that wants a count for its own work sets it here, for that work only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with torch on ``threads`` CPU threads; the count before is restored on leaving."""
    import torch  # imported here: callers reach this only on their torch paths

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@contextmanager
def numba_threads(threads: int) -> Iterator[None]:
    """Run the block with numba's parallel kernels (the simulator's) on at most ``threads`` threads;
    the count before is restored on leaving. Without numba (the kernels' torch twins run) a no-op."""
    try:
        import numba
    except ImportError:
        yield
        return
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(before)
