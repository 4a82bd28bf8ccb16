"""Run independent tasks on local worker processes or on Ray, with retries when a worker is lost.

``run_tasks(fn, items, cfg)`` calls ``fn(item)`` for every ``(key, item)`` and yields a
``TaskResult`` per key as tasks finish. ``fn`` must be a module-level function (it is pickled) and
its exceptions are results, not crashes: one bad input leaves the others running.

- Local (default): a ``concurrent.futures.ProcessPoolExecutor`` of ``cfg.jobs`` processes
  (``spawn``, so workers start clean of the driver's threads). A worker that dies (killed, out of
  memory) breaks the pool; the tasks that were in flight are counted one attempt each and, up to
  ``cfg.max_retries`` retries, submitted again to a new pool.
- Ray (``cfg.ray``): each item is a Ray task declaring ``cfg.cpus_per_task`` CPUs and
  ``cfg.memory_gb_per_task`` of memory; Ray itself retries a task whose worker died
  (``max_retries``). ``cfg.ray_address`` joins an existing cluster; without it a local Ray starts on
  loopback for the run and stops after it.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from urbanverse.errors import InputError, MissingDependencyError


@dataclass(frozen=True, kw_only=True)
class ExecutorCfg:
    """Where tasks run and how failures are retried."""

    jobs: int = 1
    """Local worker processes; with a local Ray, its CPUs (1: every core); ignored on a cluster."""
    ray: bool = False
    """Run on Ray (a local one started on demand unless ``ray_address`` is given)."""
    ray_address: str | None = None
    """Address of an existing Ray cluster (``ray://host:10001`` or ``host:6379``); implies ``ray``."""
    max_retries: int = 2
    """Times a task is run again after its worker process died (not after an exception)."""
    cpus_per_task: float = 1.0
    """CPUs a Ray task declares."""
    memory_gb_per_task: float | None = None
    """Memory (GiB) a Ray task declares; None: no reservation."""

    def __post_init__(self) -> None:
        if self.jobs < 1:
            raise InputError(f"--jobs: need >= 1, got {self.jobs}")
        if self.max_retries < 0 or self.cpus_per_task <= 0:
            raise InputError("ExecutorCfg: need max_retries >= 0 and cpus_per_task > 0")

    @property
    def uses_ray(self) -> bool:
        return self.ray or self.ray_address is not None


@dataclass(frozen=True)
class TaskResult:
    """The outcome of one task: ``value`` when ``ok``, else ``error`` (``Type: message``) and
    ``error_type``, the exception's class name (``WorkerDied`` when the retries ran out, or Ray's
    error class), for a caller that maps failures to exit codes."""

    key: str
    ok: bool
    value: Any
    error: str | None
    seconds: float
    attempts: int
    error_type: str | None = None


class _Timed:
    """``fn(item)`` -> (ok, value or error text, seconds): picklable, exceptions caught in the worker."""

    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn

    def __call__(self, item: Any) -> tuple[bool, Any, float, str | None]:
        start = time.perf_counter()
        try:
            value = self.fn(item)
        except Exception as exc:  # a bad input is a result, not a crash of the run
            kind = type(exc).__name__
            return False, f"{kind}: {exc}", time.perf_counter() - start, kind
        return True, value, time.perf_counter() - start, None


def _call(task: _Timed, item: Any) -> tuple[bool, Any, float, str | None]:
    """Ray's entry point (Ray remotes functions, not callable objects)."""
    return task(item)


def run_tasks(
    fn: Callable[[Any], Any],
    items: dict[str, Any],
    cfg: ExecutorCfg,
    on_start: Callable[[str], None] | None = None,
) -> Iterator[TaskResult]:
    """Run ``fn`` on every item; yield each key's ``TaskResult`` as it finishes. ``on_start(key)`` is
    called when a task is handed to a worker (local) or submitted (Ray)."""
    if not items:
        return
    runner = _run_ray if cfg.uses_ray else _run_local
    yield from runner(_Timed(fn), items, cfg, on_start or (lambda key: None))


def _run_local(task: _Timed, items: dict[str, Any], cfg: ExecutorCfg, on_start) -> Iterator[TaskResult]:
    pending = dict(items)
    attempts = {key: 0 for key in items}
    context = multiprocessing.get_context("spawn")
    while pending:
        with cf.ProcessPoolExecutor(max_workers=min(cfg.jobs, len(pending)), mp_context=context) as pool:
            futures = {}
            for key, item in pending.items():
                futures[pool.submit(task, item)] = key
                attempts[key] += 1
                on_start(key)
            lost = []
            for future in cf.as_completed(futures):
                key = futures[future]
                try:
                    ok, value, seconds, kind = future.result()
                except cf.process.BrokenProcessPool:
                    lost.append(key)
                    continue
                del pending[key]
                yield TaskResult(
                    key, ok, value if ok else None, None if ok else value, seconds, attempts[key], kind
                )
        for key in lost:  # every task in flight when a worker died; a new pool runs them again
            if attempts[key] > cfg.max_retries:
                del pending[key]
                error = "WorkerDied: worker process died (retries exhausted)"
                yield TaskResult(key, False, None, error, 0.0, attempts[key], "WorkerDied")


def _run_ray(task: _Timed, items: dict[str, Any], cfg: ExecutorCfg, on_start) -> Iterator[TaskResult]:
    try:
        import ray
        from ray.exceptions import RayError
    except ImportError:
        raise MissingDependencyError("--ray needs Ray: pip install 'urbanverse[ray]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        if cfg.ray_address:
            ray.init(address=cfg.ray_address, log_to_driver=False)
        else:
            ray.init(
                num_cpus=cfg.jobs if cfg.jobs > 1 else None,  # None: every core of the machine
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
    try:
        options: dict[str, Any] = {"num_cpus": cfg.cpus_per_task, "max_retries": cfg.max_retries}
        if cfg.memory_gb_per_task:
            options["memory"] = int(cfg.memory_gb_per_task * 2**30)
        remote = ray.remote(_call).options(**options)
        task_ref = ray.put(task)
        refs = {}
        for key, item in items.items():
            refs[remote.remote(task_ref, item)] = key
            on_start(key)
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            key = refs[done[0]]
            try:
                ok, value, seconds, kind = ray.get(done[0])
            except RayError as exc:  # the worker died more often than max_retries allows
                kind = type(exc).__name__
                yield TaskResult(key, False, None, f"{kind}: {exc}".splitlines()[0], 0.0, 0, kind)
                continue
            yield TaskResult(key, ok, value if ok else None, None if ok else value, seconds, 1, kind)
    finally:
        if started_here:
            ray.shutdown()
