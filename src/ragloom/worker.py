"""Worker processes: claim tasks from the metadata DB and run them.

``ragloom worker`` runs one worker in the foreground; ``ragloom serve`` starts
``settings.workers`` of them as child processes. Several workers (on one or
many machines sharing the DB) never run the same task twice at once.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
import traceback
from collections.abc import Callable

from ragloom.config import Settings
from ragloom.db.models import Task, utcnow
from ragloom.ingest.pipeline import run_task
from ragloom.service import tasks
from ragloom.service.context import Context

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 20.0


def _heartbeat(ctx: Context, task_id: str, stop: threading.Event) -> None:
    while not stop.wait(HEARTBEAT_SECONDS):
        with ctx.db.session() as s:
            task = s.get(Task, task_id)
            if task is None or task.status != "running":
                return
            task.heartbeat_at = utcnow()


def run_one(ctx: Context, worker_id: str) -> str | None:
    """Claim and run one task; returns its id, or ``None`` when the queue is empty."""
    with ctx.db.session() as s:
        tasks.requeue_stale(s)
        task = tasks.claim(s, worker_id=worker_id)
        task_id = task.id if task else None
    if task_id is None:
        return None
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(ctx, task_id, stop), daemon=True)
    beat.start()
    try:
        status = run_task(ctx, task_id)
        log.info("task %s: %s", task_id, status)
    except Exception as exc:  # a bug, not a document problem: keep the worker alive, fail the task
        log.error("task %s crashed:\n%s", task_id, traceback.format_exc())
        with ctx.db.session() as s:
            tasks.fail(s, task_id, reason=f"internal error: {type(exc).__name__}: {exc}")
    finally:
        stop.set()
    return task_id


def run_until(ctx: Context, done: Callable[[], bool], *, worker_id: str | None = None,
              poll: float | None = None) -> None:
    """Run tasks in this process until ``done()`` is true."""
    wid = worker_id or f"{socket.gethostname()}:{os.getpid()}:inline"
    delay = poll or ctx.settings.worker_poll_seconds
    while not done():
        if run_one(ctx, wid) is None:
            time.sleep(delay)


def serve_forever(settings: Settings, stop: threading.Event | None = None, index: int = 0) -> None:
    """The worker loop; returns when ``stop`` is set or on SIGTERM/SIGINT."""
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, lambda *_: stop.set())
    ctx = Context(settings)
    wid = f"{socket.gethostname()}:{os.getpid()}:{index}"
    log.info("worker %s started", wid)
    try:
        while not stop.is_set():
            if run_one(ctx, wid) is None:
                stop.wait(settings.worker_poll_seconds)
    finally:
        ctx.close()
        log.info("worker %s stopped", wid)


def _child_main(settings: Settings, index: int) -> None:
    from ragloom.logs import setup_logging

    setup_logging(settings.log_level)
    serve_forever(settings, index=index)


def start_workers(settings: Settings, count: int) -> list[mp.process.BaseProcess]:
    """Start ``count`` worker processes (spawned, so each has its own engines)."""
    spawn = mp.get_context("spawn")
    if settings.embedding_threads is None and count > 0:
        # share the cores: OpenMP threads of several processes on the same cores slow each other down
        settings = settings.model_copy(update={"embedding_threads": max(1, (os.cpu_count() or 1) // count)})
    procs = []
    for i in range(count):
        p = spawn.Process(target=_child_main, args=(settings, i), name=f"ragloom-worker-{i}")
        p.start()
        procs.append(p)
    return procs


def stop_workers(procs: list[mp.process.BaseProcess], timeout: float = 30.0) -> None:
    for p in procs:
        if p.is_alive() and p.pid:
            os.kill(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join()
