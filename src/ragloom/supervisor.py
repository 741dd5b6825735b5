"""The worker pool: starts worker processes, keeps them alive, enforces the hard limits.

``ragloom serve`` and ``ragloom worker`` own one :class:`WorkerPool`. Its monitor
thread checks every child twice a second:

- a child that **died** (killed, crashed) is replaced at once; the task it was
  running is re-queued at once with the attempt counted, and failed with that
  reason once it used up ``task_max_retries`` attempts (a file that kills its
  worker is not retried forever). A child that keeps dying right after its start
  is restarted with a growing delay (up to a minute).
- a child whose task ran past ``task_time_limit_seconds`` (plus a grace of a few
  seconds for the task to stop by itself at its next checkpoint), or whose resident
  memory is over ``task_memory_limit_mb``, is killed and replaced; its task fails with
  the limit named. Workers stop such tasks themselves between pages and batches; the
  pool is for a task stuck inside one call.
- a child still running a task (or build) ``cancel_grace_seconds`` after it was
  cancelled or its document deleted is killed and replaced: the slot is free again
  within seconds, whatever the task was doing.
- fairness between workspaces: when a workspace's task has waited
  ``workspace_fair_wait_seconds`` while another workspace holds more than its share
  of the pool's workers (the workers divided among the workspaces that want them),
  the pool asks one of that workspace's workers — the one whose task started last —
  to hand its task back (:class:`~ragloom.worker.SlotSignals`); it does at its next
  checkpoint, and is killed and replaced when it has not within the grace (the task
  is re-queued with the attempt counted, so a file that hangs its worker fails after
  ``task_max_retries``). The freed worker claims the waiting workspace's task first
  (claims take the workspace with the fewest running tasks first).

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
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db import builds, tasks, workers
from ragloom.db.models import KnowledgeBuild, SourceSync, Task, utcnow
from ragloom.ingest.guard import exceeded
from ragloom.states import TaskStatus
from ragloom.worker import SlotSignals, settle_cancelled_job

log = logging.getLogger(__name__)

CHECK_SECONDS = 0.5
STOP_SECONDS = 30.0  # how long stop() waits for children to hand their tasks back
QUICK_DEATH_SECONDS = 10.0  # a child dying sooner than this after its start is backed off
RECYCLE_FRACTION = 0.6  # a worker above this fraction of the memory limit after a task restarts itself


def time_limit_grace(limit: float) -> float:
    """Extra time the pool gives a task over its limit to stop by itself before killing its worker:
    a few seconds (5 to 15)."""
    return min(15.0, max(5.0, 0.01 * limit))


YIELD_GRACE_SECONDS = 5.0  # how long a worker asked to hand its task back may take before it is killed


@dataclass(slots=True)
class Slot:
    index: int
    process: mp.process.BaseProcess | None = None
    started: float = 0.0
    restarts: int = 0
    quick_deaths: int = 0
    next_start: float = 0.0
    last_exit: str = ""
    signals: SlotSignals | None = None
    cancel_seen: tuple[str, float] | None = None  # (job, when the pool first saw it cancelled)
    asked_back: tuple[str, float] | None = None  # (job, when the pool asked for it back)

    @property
    def worker_id(self) -> str | None:
        if self.process is None or self.process.pid is None:
            return None
        return f"{socket.gethostname()}:{self.process.pid}:{self.index}"


@dataclass(frozen=True, slots=True)
class _JobState:
    tenant: str
    cancelled: bool
    started: datetime | None


def _aware(at: datetime | None) -> datetime | None:
    """A time read from the DB with its zone (SQLite returns them naive, in UTC)."""
    return at.replace(tzinfo=UTC) if at is not None and at.tzinfo is None else at


@dataclass(slots=True)
class PoolStatus:
    expected: int
    alive: int
    restarts: int
    last_exits: list[str] = field(default_factory=list)


def _child_main(settings: Settings, index: int, supervisor: str, parent_pid: int,
                signals: SlotSignals | None = None) -> None:
    from ragloom.logs import setup_logging
    from ragloom.worker import die_with_parent, serve_forever

    die_with_parent()
    if os.getppid() != parent_pid:  # the pool died before we got here
        return
    if settings.worker_nice:  # questions first: the server's threads win the cores when both want them
        os.nice(settings.worker_nice)
    setup_logging(settings.log_level)
    serve_forever(settings, index=index, supervisor=supervisor, parent_pid=parent_pid,
                  recycle_above_mb=RECYCLE_FRACTION * settings.task_memory_limit_mb, signals=signals)


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
        self.supervisor_id = f"{socket.gethostname()}:{os.getpid()}"
        self._spawn = mp.get_context("spawn")
        self.slots = [Slot(i, signals=SlotSignals.create(self._spawn)) for i in range(count)]
        self._last_yield = time.monotonic()
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
            if not self._stopping.is_set():
                self._watch_jobs()
        self._maybe_gc()

    def _watch(self) -> None:
        while not self._stopping.wait(CHECK_SECONDS):
            try:
                self.check()
            except Exception:  # the DB may be busy for a moment: supervise again next round
                log.exception("worker pool check failed")

    def _start(self, slot: Slot) -> None:
        if slot.signals is not None:
            slot.signals.running(None)
            slot.signals.ask_back(None)
        slot.cancel_seen = slot.asked_back = None
        proc = self._spawn.Process(target=_child_main, name=f"ragloom-worker-{slot.index}",
                                   args=(self.settings, slot.index, self.supervisor_id, os.getpid(), slot.signals))
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

    # -- cancelled tasks and fairness between workspaces ----------------------------------------------

    def _watch_jobs(self) -> None:
        """Kill the workers that go on with a cancelled job past the grace, and ask one worker of a
        workspace over its share for its task back when another workspace waits (module docstring)."""
        busy: dict[str, Slot] = {}
        for slot in self.slots:
            job = slot.signals.running_now() if slot.signals is not None and slot.process is not None else None
            if job is None:
                slot.cancel_seen = slot.asked_back = None
            else:
                busy[job] = slot
        if not busy:
            return
        states = self._job_states(list(busy))
        now = time.monotonic()
        for job, slot in busy.items():
            state = states.get(job)
            if state is None or state.cancelled:
                if slot.cancel_seen is None or slot.cancel_seen[0] != job:
                    slot.cancel_seen = (job, now)
                elif now - slot.cancel_seen[1] > self.settings.cancel_grace_seconds:
                    self._kill(slot, f"it went on with a cancelled task for more than "
                               f"{self.settings.cancel_grace_seconds:g} s (RAGLOOM_CANCEL_GRACE_SECONDS)",
                               count_attempt=False, settle=job)
                    continue
            if slot.asked_back is not None:
                if slot.asked_back[0] != job:
                    slot.asked_back = None  # it handed that one back
                elif now - slot.asked_back[1] > YIELD_GRACE_SECONDS:
                    self._kill(slot, "it did not hand its task back within "
                               f"{YIELD_GRACE_SECONDS:g} s while another workspace's task waited", count_attempt=True)
        self._share_fairly({job: (slot, states[job]) for job, slot in busy.items()
                            if job in states and not states[job].cancelled and slot.process is not None}, now)

    def _job_states(self, ids: list[str]) -> dict[str, _JobState]:
        with self.ctx.db.session() as s:
            rows = list(s.execute(select(Task.id, Task.tenant_id, Task.status, Task.cancel_requested, Task.started_at)
                                  .where(Task.id.in_(ids))))
            rows += list(s.execute(select(KnowledgeBuild.id, KnowledgeBuild.tenant_id, KnowledgeBuild.status,
                                          KnowledgeBuild.cancel_requested, KnowledgeBuild.started_at)
                                   .where(KnowledgeBuild.id.in_(ids))))
            rows += list(s.execute(select(SourceSync.id, SourceSync.tenant_id, SourceSync.status,
                                          SourceSync.cancel_requested, SourceSync.started_at)
                                   .where(SourceSync.id.in_(ids))))
        return {r[0]: _JobState(tenant=r[1], cancelled=bool(r[3]) or r[2] == TaskStatus.CANCELLED,
                                started=_aware(r[4])) for r in rows}

    def _share_fairly(self, running: dict[str, tuple[Slot, _JobState]], now: float) -> None:
        wait = self.settings.workspace_fair_wait_seconds
        if wait <= 0 or len(self.slots) < 2 or now - self._last_yield < wait:
            return
        if any(slot.asked_back is not None for slot, _ in running.values()):
            return  # one hand-back at a time
        held: dict[str, list[tuple[Slot, _JobState]]] = {}
        for slot, state in running.values():
            held.setdefault(state.tenant, []).append((slot, state))
        with self.ctx.db.session() as s:
            waiting = tasks.waiting_since(s)
        wanting = set(held) | set(waiting)
        share = max(1, len(self.slots) // max(1, len(wanting)))
        cutoff = utcnow() - timedelta(seconds=wait)
        starved = [t for t, since in waiting.items() if since <= cutoff and len(held.get(t, ())) < share]
        over = [jobs for t, jobs in held.items() if len(jobs) > share]
        if not starved or not over:
            return
        jobs = max(over, key=len)
        slot, state = max(jobs, key=lambda j: j[1].started or utcnow())  # the one that started last loses least
        job = slot.signals.running_now() if slot.signals is not None else None
        if slot.signals is None or job is None:
            return
        log.warning("worker %s: asking for task %s of workspace %s back: %d of %d workers are that workspace's "
                    "while another has waited over %.0f s", slot.worker_id, job, state.tenant, len(jobs),
                    len(self.slots), wait)
        slot.signals.ask_back(job)
        slot.asked_back = (job, now)
        self._last_yield = now

    def _kill(self, slot: Slot, why: str, *, count_attempt: bool, settle: str | None = None) -> None:
        """Kill the slot's worker and start another; ``settle``: a cancelled job it ran, marked cancelled
        before the worker's other tasks are handed back."""
        proc = slot.process
        if proc is None:
            return
        log.error("worker %s: %s; killing it", slot.worker_id, why)
        proc.kill()
        proc.join(10)
        if settle is not None:
            settle_cancelled_job(self.ctx, settle)
        slot.last_exit = f"worker {slot.index} was killed: {why}"
        self._forget(slot, reason=f"its worker was stopped: {why}", count_attempt=count_attempt)
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
        from ragloom.service.documents.gc import collect_garbage

        # a task's page images are referenced only when the task commits them: never collect files
        # younger than the longest a task may run
        limit = self.settings.task_time_limit_seconds
        grace = max(self.settings.gc_grace_seconds, limit + time_limit_grace(limit))
        try:
            report = collect_garbage(self.ctx, grace_seconds=grace)
            log.info("object store: %s", report)
        except Exception:
            log.exception("object store garbage collection failed")
