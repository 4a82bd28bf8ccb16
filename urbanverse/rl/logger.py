"""Run logging: a CSV of per-iteration figures, TensorBoard event files, a live progress display.

The CSV (``progress.csv``) is the source of truth for learning curves; on ``--resume`` rows
past the checkpoint's iteration are dropped and TensorBoard purges events past it, so a run
killed between checkpoints leaves no duplicated history.
"""

from __future__ import annotations

import csv
import importlib.util
import math
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from urbanverse.records import atomic_path

CSV_NAME = "progress.csv"
#: Columns always present, in this order; the rest follow sorted.
LEAD_COLUMNS = (
    "iteration",
    "env_steps",
    "wall_s",
    "steps_per_s",
    "episodes",
    "mean_return",
    "success_rate",
    "spl",
    "collisions_per_episode",
    "route_completion",
    "episode_length",
)


def _truncate_csv(path: Path, last_iteration: int) -> list[str] | None:
    """Keep rows with ``iteration <= last_iteration``; returns the header (None if no file)."""
    if not path.is_file():
        return None
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return None
    header, body = rows[0], rows[1:]
    keep = [r for r in body if r and int(float(r[0])) <= last_iteration]
    with atomic_path(path) as tmp, tmp.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(keep)
    return header


def read_csv(path: Path) -> dict[str, list[float]]:
    """Columns of a ``progress.csv`` as float lists (empty cells become NaN)."""
    with Path(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return {}
    return {k: [float(r[k]) if r[k] not in ("", None) else math.nan for r in rows] for k in rows[0]}


class RunLogger:
    """Writes ``progress.csv`` and (when tensorboard is installed) ``tb/`` under ``run_dir``."""

    def __init__(
        self,
        run_dir: Path,
        start_iteration: int,
        total_iterations: int,
        quiet: bool = False,
        max_seconds: float = 0.0,
        start_seconds: float = 0.0,
    ):
        """``max_seconds`` > 0: the run stops on a wall-clock budget; progress and ETA follow time then."""
        self.run_dir = run_dir
        self.csv_path = run_dir / CSV_NAME
        self.header = _truncate_csv(self.csv_path, start_iteration)
        self.console = Console(stderr=True, highlight=False, quiet=quiet)
        self.tb = None
        if importlib.util.find_spec("tensorboard") is not None:
            from torch.utils.tensorboard import SummaryWriter

            self.tb = SummaryWriter(str(run_dir / "tb"), purge_step=start_iteration + 1)
        else:
            self.console.print(
                "note: TensorBoard logs are off (tensorboard is not installed: "
                "pip install 'urbanverse[train]')"
            )
        self.total = total_iterations
        self.progress = Progress(
            TextColumn("[bold]train[/bold]"),
            BarColumn(),
            TaskProgressColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[info]}"),
            console=self.console,
            transient=False,
        )
        self.max_seconds = max_seconds
        if max_seconds > 0:
            self.task = self.progress.add_task("train", total=max_seconds, completed=start_seconds, info="")
        else:
            self.task = self.progress.add_task(
                "train", total=total_iterations, completed=start_iteration, info=""
            )
        self.live = self.console.is_terminal
        self.print_every = max(1, total_iterations // 25)
        self.t_start = self.t_printed = time.perf_counter()
        self.start_iteration = start_iteration

    def __enter__(self) -> RunLogger:
        if self.live:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.live:
            self.progress.stop()
        if self.tb is not None:
            self.tb.close()

    def log(self, row: dict[str, float]) -> None:
        """Append one iteration's figures (``row["iteration"]`` 1-based) and refresh the display."""
        it = int(row["iteration"])
        if self.header is None:
            rest = sorted(k for k in row if k not in LEAD_COLUMNS)
            self.header = [c for c in LEAD_COLUMNS if c in row] + rest
            with self.csv_path.open("w", newline="") as f:
                csv.writer(f).writerow(self.header)
        with self.csv_path.open("a", newline="") as f:
            csv.writer(f).writerow([_fmt(row.get(k, math.nan)) for k in self.header])
        if self.tb is not None:
            for k, v in row.items():
                if k != "iteration" and isinstance(v, (int, float)) and math.isfinite(v):
                    self.tb.add_scalar(k, v, it)
        info = (
            f"{row['steps_per_s']:,.0f} steps/s  return {row['mean_return']:.1f}  "
            f"success {100 * row['success_rate']:.0f}%  SPL {row['spl']:.2f}"
        )
        now = time.perf_counter()
        if self.max_seconds > 0:
            self.progress.update(self.task, completed=min(row["wall_s"], self.max_seconds), info=info)
            eta = max(0.0, self.max_seconds - row["wall_s"])
        else:
            self.progress.update(self.task, completed=it, info=info)
            eta = (now - self.t_start) / max(it - self.start_iteration, 1) * (self.total - it)
        due = it % self.print_every == 0 or it == self.total or now - self.t_printed > 30.0
        if not self.live and due:
            self.t_printed = now
            total = "" if self.max_seconds > 0 else f"/{self.total}"
            self.console.print(f"iter {it}{total}  {info}  ETA {eta / 60:.1f} min")


def _fmt(v: float) -> str:
    if isinstance(v, float) and not math.isfinite(v):
        return ""
    return f"{v:.6g}" if isinstance(v, float) else str(v)
