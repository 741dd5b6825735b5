"""A worker: claims tasks from the metadata DB and runs them, one at a time.

``ragloom serve`` and ``ragloom worker`` run workers as child processes of a
:class:`ragloom.supervisor.WorkerPool`, which restarts them when they die and
enforces the hard limits; tests also run :func:`serve_forever` in a thread, or
:func:`run_until` inline. Several workers (on one or many machines sharing the
DB) never run the same task twice at once.

Each task runs under a :class:`~ragloom.ingest.guard.TaskGuard`: between pages
and batches it stops the task when it is cancelled, over its wall time or its
worker over its memory limit (the task fails, the limit named), or when the
worker is stopping (the task goes back to the queue). A beat thread keeps the
worker's registry row and its task's heartbeat fresh and notices when the
supervisor died.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.db import builds, queue, syncs, tasks, workers
from ragloom.db.models import Task
from ragloom.ingest.guard import IngestLimits, TaskGuard, guarded, rss_mb
from ragloom.service.builds.lifecycle import run_build
from ragloom.service.documents.ingestion import fail_version, load_job, run_tasks, settle_cancelled
from ragloom.service.sources.sync import queue_due, run_sync
from ragloom.states import TaskStatus

log = logging.getLogger(__name__)

ORPHAN_GRACE_SECONDS = 5.0
"""How long a worker whose supervisor died may take to stop by itself before it exits."""


JOB_ID_BYTES = 64  # room for a task's or a build's id in :class:`SlotSignals`


@dataclass(frozen=True)
class SlotSignals:
    """What a worker process shares with the pool that supervises it (shared memory, no database):
    the task or build it runs now, and the one the pool asks it to hand back (another workspace's task
    waits). The pool reads ``current`` twice a second; the worker's checkpoints read ``hand_back``."""

    current: Any  # multiprocessing Array("c", JOB_ID_BYTES)
    hand_back: Any  # multiprocessing Array("c", JOB_ID_BYTES)

    @classmethod
    def create(cls, mp_context: Any) -> SlotSignals:
        return cls(mp_context.Array("c", JOB_ID_BYTES), mp_context.Array("c", JOB_ID_BYTES))

    def running(self, job_id: str | None) -> None:
        self.current.value = (job_id or "").encode()[:JOB_ID_BYTES]

    def running_now(self) -> str | None:
        return self.current.value.decode() or None

    def ask_back(self, job_id: str | None) -> None:
        self.hand_back.value = (job_id or "").encode()[:JOB_ID_BYTES]

    def asked_back(self) -> bool:
        """Whether the pool wants the job running now back."""
        asked = self.hand_back.value
        return bool(asked) and asked == self.current.value


def worker_id(index: int | str = 0) -> str:
    """``host:pid:index`` — written as ``claimed_by`` on the tasks this worker runs."""
    return f"{socket.gethostname()}:{os.getpid()}:{index}"


class _Beat:
    """The worker's beat thread: registry row, running task's heartbeat, supervisor's death."""

    def __init__(self, ctx: Context, wid: str, stop: threading.Event, parent_pid: int | None) -> None:
        self.ctx, self.wid, self.stop, self.parent_pid = ctx, wid, stop, parent_pid
        self.task_id: str | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"beat-{wid}", daemon=True)
        # its own thread: a beat may wait on a busy database, the supervisor's death must not
        self._watch = threading.Thread(target=self._watch_parent, name=f"orphan-watch-{wid}", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if self.parent_pid is not None:
            self._watch.start()

    def close(self) -> None:
        self._done.set()
        self._thread.join(5)

    def _run(self) -> None:
        period = self.ctx.settings.worker_heartbeat_seconds
        while not self._done.wait(period):
            try:
                with self.ctx.db.session() as s:
                    workers.beat(s, self.wid, task_id=self.task_id, rss_mb=rss_mb())
            except Exception as exc:  # the DB may be busy or gone for a moment: beat again next time
                log.warning("worker %s: heartbeat failed: %s", self.wid, exc)

    def _watch_parent(self) -> None:
        while not self._done.wait(min(1.0, self.ctx.settings.worker_heartbeat_seconds)):
            if os.getppid() != self.parent_pid:
                self._orphaned()
                return

    def _orphaned(self) -> None:
        """The supervisor died (even by SIGKILL): stop at the next checkpoint, or — when the task is in a
        long model call or the shutdown hangs — exit after ``ORPHAN_GRACE_SECONDS``; nobody would stop
        this worker otherwise, and the next supervisor re-queues its task."""
        log.warning("worker %s: its supervisor died; stopping", self.wid)
        self.stop.set()
        timer = threading.Timer(ORPHAN_GRACE_SECONDS, _exit_now, args=(self.wid,))
        timer.daemon = True
        timer.start()


def _exit_now(wid: str) -> None:
    log.warning("worker %s: still running %.0f s after its supervisor died; exiting now", wid, ORPHAN_GRACE_SECONDS)
    os._exit(1)


def run_one(ctx: Context, wid: str, *, stop: threading.Event | None = None,
            on_claim: Callable[[str | None], None] | None = None,
            yielding: Callable[[], bool] | None = None, own_process: bool = False) -> str | None:
    """Claim and run one task — with it, small documents of the same knowledge base waiting
    behind it (``ingest_batch_documents``) — or, when no task waits, one source sync (the sources whose
    scheduled sync is due get one first), or else one knowledge build; returns the
    first task's (or the build's) id, or ``None`` when both queues are empty. ``own_process``: this process
    is a worker of its own, whose whole memory the task memory limit holds; else (in the API server, the CLI
    or a test) the limit holds what the task adds to the process."""
    s_ = ctx.settings
    with ctx.db.session() as s:
        lost = tasks.requeue_stale(s, stale_after=workers.stale_after(s_), max_attempts=s_.task_max_retries)
        task = tasks.claim(s, worker_id=wid)
        batch = [task.id] if task else []
        if task is not None:
            batch += [t.id for t in tasks.claim_more(s, task, worker_id=wid, limit=s_.ingest_batch_documents - 1,
                                                     max_bytes=s_.ingest_batch_max_bytes,
                                                     workers=max(s_.workers, len(workers.alive(s, s_))))]
    fail_lost_tasks(ctx, lost)
    if not batch:
        synced = run_one_sync(ctx, wid, stop=stop, on_claim=on_claim, yielding=yielding)
        if synced is not None:
            return synced
        return run_one_build(ctx, wid, stop=stop, on_claim=on_claim, yielding=yielding, own_process=own_process)
    task_id = batch[0]
    if on_claim is not None:
        on_claim(task_id)
    # one task: the guard watches its cancel flag; a batch: each task is checked as it goes
    guard = TaskGuard(IngestLimits.from_settings(s_), time_limit=s_.task_time_limit_seconds,
                      memory_limit_mb=s_.task_memory_limit_mb, memory_baseline_mb=None if own_process else rss_mb(),
                      is_cancelled=_cancel_requested(ctx, tasks.TASKS, task_id) if len(batch) == 1 else None,
                      stopping=stop.is_set if stop is not None else None, yielding=yielding)
    try:
        with guarded(guard):
            outcomes = run_tasks(ctx, batch)
        if len(outcomes) == 1:
            log.info("task %s: %s in %.1f s", task_id, outcomes[task_id], guard.elapsed)
        else:
            counts = Counter(outcomes.values())
            log.info("%d small documents from task %s on: %s in %.1f s", len(outcomes), task_id,
                     ", ".join(f"{n} {o}" for o, n in counts.items()), guard.elapsed)
    except Exception as exc:  # a bug outside any task's steps: keep the worker alive, fail the tasks
        log.error("tasks %s crashed:\n%s", ", ".join(batch), traceback.format_exc())
        with ctx.db.session() as s:
            for t in s.scalars(select(Task.id).where(Task.id.in_(batch), Task.status == TaskStatus.RUNNING)).all():
                tasks.fail(s, t, reason=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        if on_claim is not None:
            on_claim(None)
    return task_id


def run_one_sync(ctx: Context, wid: str, *, stop: threading.Event | None = None,
                 on_claim: Callable[[str | None], None] | None = None,
                 yielding: Callable[[], bool] | None = None) -> str | None:
    """Queue the syncs of sources whose schedule is due, then claim and run one source sync
    (:mod:`ragloom.service.sources.sync`) — when no ingestion task waits. Returns its id, or ``None``."""
    s_ = ctx.settings
    queue_due(ctx)
    with ctx.db.session() as s:
        syncs.requeue_stale(s, stale_after=workers.stale_after(s_), max_attempts=s_.task_max_retries)
        job = syncs.claim(s, worker_id=wid)
        sync_id = job.id if job is not None else None
    if sync_id is None:
        return None
    # no time limit: a sync of a large source is long, item by item; its memory stays that of one item
    guard = TaskGuard(IngestLimits.from_settings(s_), is_cancelled=_cancel_requested(ctx, syncs.SYNCS, sync_id),
                      stopping=stop.is_set if stop is not None else None, yielding=yielding)
    return _run_claimed(ctx, syncs.SYNCS, sync_id, guard, run_sync, syncs.fail, on_claim)


def run_one_build(ctx: Context, wid: str, *, stop: threading.Event | None = None,
                  on_claim: Callable[[str | None], None] | None = None,
                  yielding: Callable[[], bool] | None = None, own_process: bool = False) -> str | None:
    """Claim and run one knowledge build (:mod:`ragloom.service.builds.lifecycle`) — when no ingestion task waits:
    documents are parsed before knowledge is built over them. Returns its id, or ``None``."""
    s_ = ctx.settings
    with ctx.db.session() as s:
        builds.requeue_stale(s, stale_after=workers.stale_after(s_), max_attempts=s_.task_max_retries)
        build = builds.claim(s, worker_id=wid)
        build_id = build.id if build is not None else None
    if build_id is None:
        return None
    guard = TaskGuard(IngestLimits.from_settings(s_), time_limit=s_.task_time_limit_seconds,
                      memory_limit_mb=s_.task_memory_limit_mb, memory_baseline_mb=None if own_process else rss_mb(),
                      is_cancelled=_cancel_requested(ctx, builds.BUILDS, build_id),
                      stopping=stop.is_set if stop is not None else None, yielding=yielding)
    return _run_claimed(ctx, builds.BUILDS, build_id, guard, run_build, builds.fail, on_claim)


def _run_claimed(ctx: Context, kind: queue.JobKind[Any], job_id: str, guard: TaskGuard,
                 run: Callable[[Context, str], object], fail: Callable[..., object],
                 on_claim: Callable[[str | None], None] | None) -> str:
    """Run a claimed build or sync under ``guard`` with its heartbeat kept fresh; a bug outside its steps
    fails it with the reason and keeps the worker alive."""
    if on_claim is not None:
        on_claim(job_id)
    try:
        with guarded(guard), _JobBeat(ctx, kind, job_id):
            outcome = run(ctx, job_id)
        log.info("%s %s: %s in %.1f s", kind.noun, job_id, outcome, guard.elapsed)
    except Exception as exc:
        log.error("%s %s crashed:\n%s", kind.noun, job_id, traceback.format_exc())
        with ctx.db.session() as s:
            fail(s, job_id, reason=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        if on_claim is not None:
            on_claim(None)
    return job_id


class _JobBeat:
    """Keeps a running build's or sync's heartbeat fresh while it runs (a long chat-model call, a slow
    download included), so no other worker takes it back."""

    def __init__(self, ctx: Context, kind: queue.JobKind[Any], job_id: str) -> None:
        self.ctx, self.kind, self.job_id = ctx, kind, job_id
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"{kind.noun}-beat-{job_id}", daemon=True)

    def __enter__(self) -> _JobBeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(5)

    def _run(self) -> None:
        while not self._done.wait(self.ctx.settings.worker_heartbeat_seconds):
            try:
                with self.ctx.db.session() as s:
                    queue.heartbeat(self.kind, s, self.job_id)
            except Exception as exc:  # the DB may be busy for a moment: beat again next time
                log.warning("%s %s: heartbeat failed: %s", self.kind.noun, self.job_id, exc)


def _cancel_requested(ctx: Context, kind: queue.JobKind[Any], job_id: str) -> Callable[[], bool]:
    """Whether the job's cancel was asked (or it is gone), read afresh each time: a guard's check."""
    def asked() -> bool:
        with ctx.db.session() as s:
            return queue.cancel_requested(kind, s, job_id)

    return asked


def fail_lost_tasks(ctx: Context, task_ids: list[str], reason: str | None = None) -> None:
    """Tasks failed for good by the queue (a lost worker, a limit): fail their versions too
    (sibling page ranges stop, the version's chunks are dropped)."""
    for task_id in task_ids:
        with ctx.db.session() as s:
            task = s.get(Task, task_id)
            message = reason or (task.message if task is not None else "failed")
        try:
            fail_version(ctx, load_job(ctx, task_id), message)
        except AssertionError:  # the document was deleted meanwhile
            continue


def settle_cancelled_job(ctx: Context, job_id: str) -> None:
    """A cancelled task, build or sync whose worker was killed before it stopped by itself: marked cancelled
    (a task's version too, and what it indexed dropped), so it is never handed back to the queue."""
    settle_cancelled(ctx, job_id)
    with ctx.db.session() as s:
        builds.mark_cancelled(s, job_id, message="cancelled by user; its worker was stopped")
        syncs.mark_cancelled(s, job_id, message="cancelled by user; its worker was stopped")


def run_until(ctx: Context, done: Callable[[], bool], *, worker_id: str | None = None,
              poll: float | None = None) -> None:
    """Run tasks in this process until ``done()`` is true."""
    wid = worker_id or f"{socket.gethostname()}:{os.getpid()}:inline"
    delay = poll or ctx.settings.worker_poll_seconds
    while not done():
        if run_one(ctx, wid) is None:
            time.sleep(delay)


def serve_forever(settings: Settings, stop: threading.Event | None = None, index: int | str = 0, *,
                  supervisor: str | None = None, parent_pid: int | None = None,
                  recycle_above_mb: float | None = None, signals: SlotSignals | None = None) -> None:
    """The worker loop; returns when ``stop`` is set, on SIGTERM/SIGINT (in a main thread), when the
    process ``parent_pid`` is gone, or — with ``recycle_above_mb`` — after a task that left the
    process above that much memory (its supervisor starts a fresh one). ``signals``: shared with the
    supervising pool (:class:`SlotSignals`)."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    ctx = Context(settings)
    wid = worker_id(index)
    with ctx.db.session() as s:
        workers.register(s, worker_id=wid, host=socket.gethostname(), pid=os.getpid(), supervisor=supervisor)
    beat = _Beat(ctx, wid, stop, parent_pid)
    beat.start()
    log.info("worker %s started", wid)

    def on_claim(task_id: str | None) -> None:
        beat.task_id = task_id
        if signals is not None:
            signals.running(task_id)

    yielding = signals.asked_back if signals is not None else None
    try:
        while not stop.is_set():
            if run_one(ctx, wid, stop=stop, on_claim=on_claim, yielding=yielding,
                       own_process=supervisor is not None) is None:
                stop.wait(settings.worker_poll_seconds)
                continue
            release_memory()
            if recycle_above_mb is not None and (used := rss_mb()) > recycle_above_mb:
                log.info("worker %s: %.0f MiB after its task; restarting to give the memory back", wid, used)
                break
    finally:
        beat.close()
        with ctx.db.session() as s:
            workers.unregister(s, wid)
        ctx.close()
        log.info("worker %s stopped", wid)


def release_memory() -> None:
    """Give freed heap memory back to the system (glibc keeps it otherwise)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def die_with_parent() -> None:
    """Linux: receive SIGTERM when the parent process dies, even by SIGKILL (no orphaned workers)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere the beat thread notices the parent's death within one beat
