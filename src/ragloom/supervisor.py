"""The worker pool: starts worker processes, keeps them alive, enforces the hard limits.

``ragloom serve`` and ``ragloom worker`` own one :class:`WorkerPool`. Its monitor
thread checks every child twice a second:

- a child that **died** (killed, crashed) is replaced at once; the task it was
  running is re-queued at once with the attempt counted, and failed with that
  reason once it used up ``task_max_retries`` attempts (a file that kills its
  worker is not retried forever). A child that keeps dying right after its start
  is restarted with a growing delay (up to a minute).
- a child whose task ran past ``task_time_limit_seconds`` (plus a grace for the
  task to stop by itself at its next checkpoint), or whose resident memory is
  over ``task_memory_limit_mb``, is killed and replaced; its task fails with the
  limit named. Workers stop such tasks themselves between pages and batches; the
  pool is for a task stuck inside one call.

At start, tasks left running by dead workers of this machine (a previous server
killed with SIGKILL) are re-queued at once. :meth:`WorkerPool.stop` sends SIGTERM
to every child — each hands its task back to the queue at its next checkpoint —,
waits, kills what is left and hands their tasks back; nothing is left running.
Children die with the pool's process even when it is killed (``PR_SET_PDEATHSIG``).
The pool also collects unreferenced files from the object store every
``gc_interval_seconds``.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field

from sqlalchemy import select

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db import builds, tasks, workers
from ragloom.db.models import KnowledgeBuild, Task, utcnow
from ragloom.ingest.guard import exceeded
from ragloom.states import TaskStatus

log = logging.getLogger(__name__)

CHECK_SECONDS = 0.5
STOP_SECONDS = 30.0  # how long stop() waits for children to hand their tasks back
QUICK_DEATH_SECONDS = 10.0  # a child dying sooner than this after its start is backed off
RECYCLE_FRACTION = 0.6  # a worker above this fraction of the memory limit after a task restarts itself


def time_limit_grace(limit: float) -> float:
    """Extra time the pool gives a task over its limit to stop by itself before killing its worker."""
    return max(15.0, 0.1 * limit)


@dataclass(slots=True)
class Slot:
    index: int
    process: mp.process.BaseProcess | None = None
    started: float = 0.0
    restarts: int = 0
    quick_deaths: int = 0
    next_start: float = 0.0
    last_exit: str = ""

    @property
    def worker_id(self) -> str | None:
        if self.process is None or self.process.pid is None:
            return None
        return f"{socket.gethostname()}:{self.process.pid}:{self.index}"


@dataclass(slots=True)
class PoolStatus:
    expected: int
    alive: int
    restarts: int
    last_exits: list[str] = field(default_factory=list)


def _child_main(settings: Settings, index: int, supervisor: str, parent_pid: int) -> None:
    from ragloom.logs import setup_logging
    from ragloom.worker import die_with_parent, serve_forever

    die_with_parent()
    if os.getppid() != parent_pid:  # the pool died before we got here
        return
    setup_logging(settings.log_level)
    serve_forever(settings, index=index, supervisor=supervisor, parent_pid=parent_pid,
                  recycle_above_mb=RECYCLE_FRACTION * settings.task_memory_limit_mb)


def describe_exit(code: int | None) -> str:
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def process_rss_mb(pid: int) -> float | None:
    """Resident memory of another process in MiB (Linux ``/proc``); None when unknown."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class WorkerPool:
    """``count`` worker processes for ``settings``, supervised (see the module docstring)."""

    def __init__(self, settings: Settings, count: int, *, ctx: Context | None = None) -> None:
        if settings.embedding_threads is None and count > 0:
            # share the cores: OpenMP threads of several processes on the same cores slow each other down
            settings = settings.model_copy(update={"embedding_threads": max(1, (os.cpu_count() or 1) // count)})
        settings = settings.model_copy(update={"workers": count})  # each worker knows how many share the queue
        self.settings = settings
        self.ctx = ctx or Context(settings)
        self._own_ctx = ctx is None
        self.slots = [Slot(i) for i in range(count)]
        self.supervisor_id = f"{socket.gethostname()}:{os.getpid()}"
        self._spawn = mp.get_context("spawn")
        self._stopping = threading.Event()
        self._lock = threading.RLock()
        self._monitor: threading.Thread | None = None
        self._last_gc = time.monotonic()

    # -- life cycle -------------------------------------------------------------------------------

    def start(self) -> WorkerPool:
        self.recover_orphans()
        with self._lock:
            for slot in self.slots:
                self._start(slot)
        self._monitor = threading.Thread(target=self._watch, name="worker-pool", daemon=True)
        self._monitor.start()
        return self

    def stop(self, timeout: float = STOP_SECONDS) -> None:
        """SIGTERM every child (each hands its task back at its next checkpoint), wait up to
        ``timeout`` seconds, SIGKILL the rest and hand their tasks back. Idempotent."""
        if self._stopping.is_set() and self._monitor is None:
            return
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join(5)
            self._monitor = None
        with self._lock:
            live = [(s, s.process) for s in self.slots if s.process is not None]
            for _, process in live:
                if process.is_alive() and process.pid:
                    os.kill(process.pid, signal.SIGTERM)
            deadline = time.monotonic() + timeout
            for _, process in live:
                process.join(max(0.1, deadline - time.monotonic()))
            for slot, proc in live:
                if proc.is_alive():
                    log.warning("worker %s did not stop in %.0f s; killing it", slot.worker_id, timeout)
                    proc.kill()
                    proc.join(5)
                self._forget(slot, reason="its worker was stopped", count_attempt=False)
        if self._own_ctx:
            self.ctx.close()

    def kill(self) -> None:
        """Stop at once (a second Ctrl-C while stopping): SIGKILL every child; :meth:`stop` hands
        their tasks back."""
        self._stopping.set()
        for slot in list(self.slots):
            proc = slot.process
            if proc is not None and proc.pid and proc.is_alive():
                os.kill(proc.pid, signal.SIGKILL)

    def status(self) -> PoolStatus:
        with self._lock:
            alive = sum(1 for s in self.slots if s.process is not None and s.process.is_alive())
            return PoolStatus(expected=len(self.slots), alive=alive, restarts=sum(s.restarts for s in self.slots),
                              last_exits=[s.last_exit for s in self.slots if s.last_exit])

    def pids(self) -> list[int]:
        with self._lock:
            return [s.process.pid for s in self.slots
                    if s.process is not None and s.process.pid and s.process.is_alive()]

    # -- supervision -------------------------------------------------------------------------------

    def recover_orphans(self) -> list[str]:
        """Re-queue at once the tasks that dead workers of this machine left running (the server
        was killed); the attempt is counted. Returns the ids of tasks that failed for good."""
        host = socket.gethostname()
        failed: list[str] = []
        with self.ctx.db.session() as s:
            running = s.scalars(select(Task).where(Task.status == TaskStatus.RUNNING)).all()
            for task in running:
                owner_host, _, rest = (task.claimed_by or "").partition(":")
                pid = rest.partition(":")[0]
                if owner_host == host and pid.isdigit() and not pid_alive(int(pid)):
                    failed += tasks.requeue_worker(s, task.claimed_by or "", reason="its worker died with the "
                                                   "server", max_attempts=self.settings.task_max_retries)
                    workers.unregister(s, task.claimed_by or "")
        self._fail_versions(failed)
        return failed

    def check(self) -> None:
        """One round of supervision (the monitor thread calls it twice a second)."""
        now = time.monotonic()
        with self._lock:
            for slot in self.slots:
                if self._stopping.is_set():
                    return
                proc = slot.process
                if proc is None:
                    if now >= slot.next_start:
                        self._start(slot)
                elif not proc.is_alive():  # also reaps it: no zombie is left
                    self._on_death(slot)
                else:
                    self._enforce_limits(slot)
        self._maybe_gc()

    def _watch(self) -> None:
        while not self._stopping.wait(CHECK_SECONDS):
            try:
                self.check()
            except Exception:  # the DB may be busy for a moment: supervise again next round
                log.exception("worker pool check failed")

    def _start(self, slot: Slot) -> None:
        proc = self._spawn.Process(target=_child_main, name=f"ragloom-worker-{slot.index}",
                                   args=(self.settings, slot.index, self.supervisor_id, os.getpid()))
        proc.start()
        slot.process, slot.started = proc, time.monotonic()
        log.info("worker %s started (pid %s)", slot.index, proc.pid)

    def _on_death(self, slot: Slot) -> None:
        proc = slot.process
        assert proc is not None
        how = describe_exit(proc.exitcode)
        clean = proc.exitcode == 0  # it stopped itself (recycled, or SIGTERM from outside)
        slot.last_exit = f"worker {slot.index} {how}"
        if clean:
            log.info("worker %s %s; starting a fresh one", slot.worker_id, how)
        else:
            log.error("worker %s %s; re-queueing its task and starting another", slot.worker_id, how)
        self._forget(slot, reason=f"its worker {how}", count_attempt=not clean)
        slot.restarts += 1
        lived = time.monotonic() - slot.started
        slot.quick_deaths = slot.quick_deaths + 1 if (lived < QUICK_DEATH_SECONDS and not clean) else 0
        delay = min(60.0, 2.0 ** (slot.quick_deaths - 1)) if slot.quick_deaths else 0.0
        slot.next_start = time.monotonic() + delay
        if delay:
            log.warning("worker %s keeps dying at start; next try in %.0f s", slot.index, delay)
        else:
            self._start(slot)

    def _forget(self, slot: Slot, *, reason: str, count_attempt: bool) -> None:
        """Take back the task of a child that is gone and remove its registry row."""
        wid = slot.worker_id
        slot.process = None
        if wid is None:
            return
        with self.ctx.db.session() as s:
            failed = tasks.requeue_worker(s, wid, reason=reason, max_attempts=self.settings.task_max_retries,
                                          count_attempt=count_attempt)
            workers.unregister(s, wid)
        self._fail_versions(failed)

    def _enforce_limits(self, slot: Slot) -> None:
        proc, wid = slot.process, slot.worker_id
        assert proc is not None and proc.pid is not None and wid is not None
        limit_mb = self.settings.task_memory_limit_mb
        rss = process_rss_mb(proc.pid)
        with self.ctx.db.session() as s:
            task = s.scalar(select(Task).where(Task.status == TaskStatus.RUNNING, Task.claimed_by == wid).limit(1))
            task_id, started = (task.id, task.started_at) if task is not None else (None, None)
            build = None if task is not None else s.scalar(
                select(KnowledgeBuild).where(KnowledgeBuild.status == TaskStatus.RUNNING,
                                             KnowledgeBuild.claimed_by == wid).limit(1))
            if build is not None:  # a knowledge build is held to the same limits
                task_id, started = build.id, build.started_at
        if task_id is None:  # an idle worker's memory is its own business: it recycles itself after a task
            return
        reason = None
        if rss is not None and rss > limit_mb:
            reason = exceeded("task_memory_limit_mb", "MiB of worker memory", limit_mb, int(rss)).message
        elif started is not None:
            limit_s = self.settings.task_time_limit_seconds
            if started.tzinfo is None:
                from datetime import UTC

                started = started.replace(tzinfo=UTC)
            ran = (utcnow() - started).total_seconds()
            if ran > limit_s + time_limit_grace(limit_s):
                reason = exceeded("task_time_limit_seconds", "seconds of work", limit_s, int(ran)).message
        if reason is None:
            return
        log.error("worker %s: %s; killing it", wid, reason)
        proc.kill()
        proc.join(10)
        with self.ctx.db.session() as s:
            if build is not None:  # what it stored stays: a new build goes on from there
                builds.fail(s, task_id, reason=f"{reason}; its worker was stopped (start the build again to go "
                                                "on from what it stored)")
            else:
                tasks.fail(s, task_id, reason=f"{reason}; its worker was stopped")
        if build is None:
            self._fail_versions([task_id])
        slot.last_exit = f"worker {slot.index} was killed: {reason}"
        self._forget(slot, reason="its worker was killed", count_attempt=True)
        slot.restarts += 1
        self._start(slot)

    def _fail_versions(self, task_ids: list[str]) -> None:
        if task_ids:
            from ragloom.worker import fail_lost_tasks

            fail_lost_tasks(self.ctx, task_ids)

    def _maybe_gc(self) -> None:
        interval = self.settings.gc_interval_seconds
        if not interval or time.monotonic() - self._last_gc < interval:
            return
        self._last_gc = time.monotonic()
        threading.Thread(target=self._gc, name="object-gc", daemon=True).start()

    def _gc(self) -> None:
        from ragloom.service.gc import collect_garbage

        # a task's page images are referenced only when the task commits them: never collect files
        # younger than the longest a task may run
        limit = self.settings.task_time_limit_seconds
        grace = max(self.settings.gc_grace_seconds, limit + time_limit_grace(limit))
        try:
            report = collect_garbage(self.ctx, grace_seconds=grace)
            log.info("object store: %s", report)
        except Exception:
            log.exception("object store garbage collection failed")
