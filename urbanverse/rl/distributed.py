"""Data-parallel PPO over ``torch.distributed``: the collectives a run needs, the process group, the launcher.

A run on ``N`` ranks (``urbanverse train --nproc N``, or any launcher that sets ``WORLD_SIZE``,
``RANK`` and ``LOCAL_RANK``, e.g. ``torchrun --nproc_per_node N -m urbanverse.cli train ...``) is
``N`` processes, each with its own ``NavVecEnv`` of ``num_envs`` environments (``num_envs`` is per
rank: a rank steps as many environments as a one-process run), its own scenes and its own seed
(:func:`rank_scenes`, ``seed + rank``). Every rank holds the same model at all times:

* parameters and buffers start as rank 0's (:meth:`Sync.broadcast_module`);
* the running observation statistics and the reward normaliser fold in the rows of all ranks at
  every step (:meth:`Sync.gather_rows`), so each rank makes the update a one-process run over the
  concatenated batch would make;
* gradients are averaged over ranks after every PPO minibatch's backward pass
  (:meth:`Sync.mean_grads`), advantages are standardised with the moments of all ranks
  (:meth:`Sync.mean_std`) and the KL that adapts the learning rate is averaged
  (:meth:`Sync.mean`), so every rank takes the same optimiser step.

:class:`Sync` is the one-process case, where every collective is the identity: a run without
``WORLD_SIZE`` takes the same code path as before, with no communication. The backend is gloo on
CPU and NCCL on CUDA (rank ``r`` on ``cuda:<LOCAL_RANK>``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from urbanverse.errors import InputError

#: Environment variables a launcher (``torchrun``, the elastic agent) sets in every rank.
WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE = "WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"
#: Thread pools sized from the environment at import: OpenMP (torch's intra-op threads) and numba
#: (the simulator's kernels). :func:`launch` gives each rank its share of the cores.
THREAD_VARS = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")


def launched_world_size() -> int:
    """Ranks of the run this process belongs to, from ``WORLD_SIZE`` (1 when no launcher set it)."""
    return int(os.environ.get(WORLD_SIZE, "1"))


def is_main_process() -> bool:
    """Whether this process is rank 0 (or runs alone): the one that writes and prints."""
    return os.environ.get(RANK, "0") == "0"


def rank_scenes(scenes: tuple[str, ...], rank: int, world_size: int) -> tuple[str, ...]:
    """The scenes of ``rank``: every ``world_size``-th from ``rank`` on, or all of them when there
    are fewer scenes than ranks (every rank then trains in every scene, with its own seed)."""
    return scenes[rank::world_size] if len(scenes) >= world_size else scenes


class Sync:
    """Collectives of a one-process run: each returns its input (no communication)."""

    rank = 0
    world_size = 1
    local_rank = 0
    local_world_size = 1

    @property
    def is_main(self) -> bool:
        """Whether this rank writes the run folder and the logs (rank 0)."""
        return self.rank == 0

    def gather_rows(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` (B, ...) of every rank concatenated along dim 0, in rank order: (world_size * B, ...)."""
        return x

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        """The elementwise mean of ``x`` over ranks."""
        return x

    def max(self, value: float) -> float:
        """The largest ``value`` over ranks (e.g. an iteration's wall-clock seconds)."""
        return value

    def sum(self, x: torch.Tensor) -> torch.Tensor:
        """The elementwise sum of ``x`` over ranks."""
        return x

    def mean_std(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and unbiased standard deviation of the elements of ``x`` on all ranks together."""
        return x.mean(), x.std()

    def mean_grads(self, params: list[nn.Parameter]) -> None:
        """Replace every ``.grad`` of ``params`` by its mean over ranks."""

    def broadcast_module(self, module: nn.Module) -> None:
        """Copy rank 0's parameters and buffers of ``module`` into every rank's."""

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's ``obj`` (picklable) on every rank."""
        return obj

    def gather_objects(self, obj: Any) -> list[Any]:
        """Every rank's ``obj`` (picklable), in rank order, on every rank."""
        return [obj]

    def check_identical(self, module: nn.Module) -> None:
        """Raise ``RuntimeError`` on every rank when ``module``'s floating-point parameters and buffers
        differ from rank 0's anywhere (the ranks would be training different models)."""


class ProcessGroupSync(Sync):
    """The collectives over the default ``torch.distributed`` process group."""

    def __init__(self, local_rank: int, local_world_size: int):
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.local_rank, self.local_world_size = local_rank, local_world_size

    def gather_rows(self, x: torch.Tensor) -> torch.Tensor:
        parts = [torch.empty_like(x) for _ in range(self.world_size)]
        dist.all_gather(parts, x.contiguous())
        return torch.cat(parts)

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        return self.sum(x) / self.world_size

    def max(self, value: float) -> float:
        t = torch.tensor([value], dtype=torch.float64, device=self._device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t)

    def sum(self, x: torch.Tensor) -> torch.Tensor:
        y = x.to(self._device, copy=True)
        dist.all_reduce(y)
        return y.to(x.device)

    def mean_std(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # Count, sum and sum of squares in float64, so the one-pass variance loses nothing that matters.
        x64 = x.double()
        n, s, ss = self.sum(torch.stack([x64.new_tensor(x.numel()), x64.sum(), x64.square().sum()]))
        mean = s / n
        std = ((ss - n * mean.square()) / (n - 1)).clamp_min(0).sqrt()
        return mean.to(x.dtype), std.to(x.dtype)

    def mean_grads(self, params: list[nn.Parameter]) -> None:
        # One all-reduce of all gradients flattened into one buffer: what DistributedDataParallel does
        # with a single bucket, minus the overlap with the backward pass (the policies are small).
        # Explicit rather than DDP because PPO calls the policy through forward_sequence, distribution
        # and aux_loss, not forward(), which DDP's gradient hooks are armed by; this works the same
        # for every backbone (recurrent ones replay stored sequences with the same parameters).
        # Parameters without a gradient (none used by the loss) are left alone on every rank alike.
        grads = [p.grad for p in params if p.grad is not None]
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for g in grads:
            g.copy_(flat[offset : offset + g.numel()].view_as(g))
            offset += g.numel()

    def broadcast_module(self, module: nn.Module) -> None:
        for t in module.state_dict().values():
            dist.broadcast(t, src=0)

    def broadcast_object(self, obj: Any) -> Any:
        box = [obj]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather_objects(self, obj: Any) -> list[Any]:
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, obj)
        return out

    def check_identical(self, module: nn.Module) -> None:
        flat = torch.cat(
            [t.reshape(-1).double() for t in module.state_dict().values() if t.is_floating_point()]
        )
        ref = flat.clone()
        dist.broadcast(ref, src=0)
        differs = self.max(float(not torch.equal(flat, ref)))
        if differs:
            raise RuntimeError("the ranks' models differ: the data-parallel synchronisation failed")

    @property
    def _device(self) -> torch.device:
        """Where scalars go for the collectives: the rank's GPU under NCCL, else the CPU."""
        return (
            torch.device("cuda", torch.cuda.current_device())
            if dist.get_backend() == "nccl"
            else torch.device("cpu")
        )


def rank_device(device: str, local_rank: int) -> str:
    """The device of a rank: ``cuda:<local_rank>`` for a CUDA run (one GPU per rank), else ``device``."""
    return f"cuda:{local_rank}" if device.startswith("cuda") else device


@contextlib.contextmanager
def rank_threads(nproc: int) -> Iterator[None]:
    """Within the block, processes started from this one size their thread pools for ``nproc`` ranks
    sharing this machine's cores (``cores // nproc`` each, at least 1), unless the variables of
    :data:`THREAD_VARS` are set already; the environment is restored on leaving."""
    threads = str(max(1, len(os.sched_getaffinity(0)) // nproc))
    missing = [v for v in THREAD_VARS if v not in os.environ]
    os.environ.update(dict.fromkeys(missing, threads))
    try:
        yield
    finally:
        for v in missing:
            os.environ.pop(v, None)


@contextlib.contextmanager
def process_group(device: str) -> Iterator[Sync]:
    """The collectives of this process's run: :class:`ProcessGroupSync` over a process group (gloo on
    CPU, NCCL on CUDA) set up here from a launcher's ``WORLD_SIZE``, ``RANK`` and ``LOCAL_RANK``,
    and torn down on leaving; the one-process :class:`Sync` when no launcher started this process."""
    if launched_world_size() <= 1:
        yield Sync()
        return
    local_rank = int(os.environ.get(LOCAL_RANK, "0"))
    local_world = int(os.environ.get(LOCAL_WORLD_SIZE, os.environ[WORLD_SIZE]))
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl" if cuda else "gloo")
    try:
        yield ProcessGroupSync(local_rank, local_world)
    finally:
        dist.destroy_process_group()


def free_port() -> int:
    """A TCP port free on the loopback interface now (for the rendezvous of a launch)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_entry(fn: Callable, *args: Any) -> Any:
    """Run ``fn(*args)`` in a rank; an ``InputError`` (of any subclass) leaves as a plain one, so the
    launcher's record of it reads ``InputError: <message>`` and :func:`launch` can raise it again."""
    try:
        return fn(*args)
    except InputError as exc:
        raise InputError(str(exc)) from None


def launch(fn: Callable, nproc: int, *args: Any) -> Any:
    """Run ``fn(*args)`` in ``nproc`` new processes on this machine, ranks of one process group
    (``torch.distributed`` elastic launch: rendezvous on the loopback interface at a free port, no
    restarts; each rank with ``cores // nproc`` threads, :func:`rank_threads`); returns rank 0's
    result. ``fn`` must be importable (a module-level function).

    A rank's ``InputError`` is raised again here; any other failure of a rank raises ``RuntimeError``
    with the first failing rank's error (the launcher stops the other ranks)."""
    from torch.distributed.elastic.multiprocessing import DefaultLogsSpecs
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    if launched_world_size() > 1:
        raise InputError(f"--nproc: this process is already one of {launched_world_size()} ranks")
    with tempfile.TemporaryDirectory(prefix="urbanverse-ranks-") as logs, rank_threads(nproc):
        config = LaunchConfig(
            min_nodes=1,
            max_nodes=1,
            nproc_per_node=nproc,
            run_id=uuid.uuid4().hex,
            rdzv_backend="c10d",
            rdzv_endpoint=f"127.0.0.1:{free_port()}",
            max_restarts=0,
            start_method="spawn",
            logs_specs=DefaultLogsSpecs(log_dir=logs),  # the ranks' error files
        )
        try:
            return elastic_launch(config, _rank_entry)(fn, *args)[0]
        except ChildFailedError as exc:
            rank, failure = exc.get_first_failure()
    message = failure.message.get("message", "") if isinstance(failure.message, dict) else failure.message
    if message.startswith("InputError: "):
        raise InputError(message.removeprefix("InputError: "))
    raise RuntimeError(f"rank {rank} failed: {message or f'exit code {failure.exitcode}'}")
