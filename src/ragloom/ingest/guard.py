"""Limits and checkpoints of a running ingestion task.

Parsers, chunkers and the pipeline read the size limits of the task they run in
with :func:`limits` and call :func:`checkpoint` between units of work (pages,
sheets, row batches, embedding batches). The task runner installs a
:class:`TaskGuard` around a task with :func:`guarded`; a checkpoint then raises

- :class:`~ragloom.errors.TaskInterruptedError` when the worker is stopping, or its pool
  asks for the task back to let another workspace's waiting task run (the task goes back
  to the queue, its attempt not counted),
- :class:`~ragloom.errors.LimitExceededError` when the task is over its wall time
  or its worker over its memory limit (the task fails, the limit named),
- :class:`~ragloom.errors.TaskCancelledError` when a user cancelled the task.

Outside a task (``ragloom parse``, unit tests) a checkpoint does nothing and the
limits are the defaults of :class:`~ragloom.config.Settings` (or those given to
:func:`guarded`). A size limit that is exceeded raises
``LimitExceededError(exceeded(...))``, whose message names the limit, the value
found and the setting that raises it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields

from ragloom.config import Settings
from ragloom.errors import LimitExceededError, TaskCancelledError, TaskInterruptedError

__all__ = ["IngestLimits", "TaskGuard", "checkpoint", "exceeded", "guarded", "limits", "rss_mb"]


@dataclass(frozen=True, slots=True)
class IngestLimits:
    """Size limits of one document (each is the ``RAGLOOM_*`` setting of the same name; defaults there)."""

    max_pages: int
    max_page_pixels: int
    max_unzipped_mb: int
    max_sheet_cells: int
    max_sheet_columns: int
    max_chunk_chars: int
    max_chunks: int
    max_nesting: int

    @classmethod
    def from_settings(cls, settings: Settings) -> IngestLimits:
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls)})

    @classmethod
    def defaults(cls, **changes: int) -> IngestLimits:
        """The settings' default limits (no environment read), with ``changes``."""
        values = {f.name: Settings.model_fields[f.name].default for f in fields(cls)}
        return cls(**{**values, **changes})

    @property
    def max_unzipped_bytes(self) -> int:
        return self.max_unzipped_mb * 1024 * 1024


def exceeded(setting: str, what: str, limit: float | int, found: float | int | None = None) -> LimitExceededError:
    """``LimitExceededError`` for ``what`` over ``limit``, naming the ``RAGLOOM_*`` setting that raises it.

    ``exceeded("max_pages", "pages", 5000, 24000)`` -> "24,000 pages: more than the limit of 5,000
    (RAGLOOM_MAX_PAGES)".
    """
    head = f"{_num(found)} {what}: more than" if found is not None else f"more {what} than"
    return LimitExceededError(f"{head} the limit of {_num(limit)} (RAGLOOM_{setting.upper()})")


def _num(v: float | int) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:,.0f}"


def rss_mb() -> float:
    """Resident memory of this process in MiB (``/proc/self/statm``; peak RSS where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            resident = int(f.read().split()[1])
        return resident * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


STOPPING = "the worker stopped; waiting for another"
YIELDED = "handed back to the queue to let another workspace's waiting task run; waiting for a worker"


class TaskGuard:
    """The checks of one running task. ``is_cancelled`` (a DB read) is asked at most every
    ``cancel_every`` seconds; ``stopping`` (a flag) at every checkpoint."""

    def __init__(self, limits: IngestLimits, *, time_limit: float | None = None, memory_limit_mb: float | None = None,
                 is_cancelled: Callable[[], bool] | None = None, stopping: Callable[[], bool] | None = None,
                 yielding: Callable[[], bool] | None = None, cancel_every: float = 0.5,
                 memory_baseline_mb: float | None = None) -> None:
        self.limits = limits
        # None: the memory limit holds the whole process (a worker process of its own); a figure: the process
        # also serves other work (the API server, the CLI, tests), and the limit holds what the task added to it
        self.memory_baseline_mb = memory_baseline_mb
        self.yielding = yielding
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.is_cancelled = is_cancelled
        self.stopping = stopping
        self.cancel_every = cancel_every
        self.started = time.monotonic()
        self._cancel_checked = 0.0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def checkpoint(self) -> None:
        if self.stopping is not None and self.stopping():
            raise TaskInterruptedError(STOPPING)
        if self.yielding is not None and self.yielding():
            raise TaskInterruptedError(YIELDED)
        if self.time_limit is not None and self.elapsed > self.time_limit:
            raise exceeded("task_time_limit_seconds", "seconds of work", self.time_limit, round(self.elapsed))
        if self.memory_limit_mb is not None:
            used = rss_mb() - (self.memory_baseline_mb or 0.0)
            if used > self.memory_limit_mb:
                what = "MiB of worker memory" if self.memory_baseline_mb is None else "MiB of memory taken by the task"
                raise exceeded("task_memory_limit_mb", what, int(self.memory_limit_mb), int(used))
        now = time.monotonic()
        if self.is_cancelled is not None and now - self._cancel_checked >= self.cancel_every:
            self._cancel_checked = now
            if self.is_cancelled():
                raise TaskCancelledError("cancelled by user")


_DEFAULT = IngestLimits.defaults()
_current: ContextVar[TaskGuard | None] = ContextVar("ragloom_task_guard", default=None)


def limits() -> IngestLimits:
    """The size limits of the task running in this context (defaults outside a task)."""
    guard = _current.get()
    return guard.limits if guard is not None else _DEFAULT


def checkpoint() -> None:
    """Raise if the running task must stop (see the module docstring); nothing outside a task."""
    guard = _current.get()
    if guard is not None:
        guard.checkpoint()


@contextmanager
def guarded(guard: TaskGuard | IngestLimits) -> Iterator[TaskGuard]:
    """Run the block under ``guard`` (or, given only limits, under those limits and no other check)."""
    g = guard if isinstance(guard, TaskGuard) else TaskGuard(guard)
    token = _current.set(g)
    try:
        yield g
    finally:
        _current.reset(token)
