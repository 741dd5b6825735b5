"""The worker registry on the metadata DB's ``worker`` table: who is alive, what it runs.

Every worker process registers itself when it starts, beats every
``worker_heartbeat_seconds`` (its row's ``last_seen`` and the heartbeat of the
task it runs) and removes its row when it stops. A worker whose last beat is
older than three beats counts as dead. The API's health check and the status
page read this table, so they see workers of every machine sharing the DB.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, delete, func, select, update
from sqlalchemy.orm import Session

from ragloom.config import Settings
from ragloom.db.models import Task, Worker, utcnow
from ragloom.states import TaskStatus

MISSED_BEATS = 3  # a worker silent for this many beats is dead
STALE_BEATS = 12  # a running task without a heartbeat for this many beats is taken back


def alive_within(settings: Settings) -> timedelta:
    return timedelta(seconds=MISSED_BEATS * settings.worker_heartbeat_seconds)


def stale_after(settings: Settings) -> timedelta:
    """How long a running task may go without a heartbeat before another worker takes it back: its lease,
    ``task_lease_seconds`` (a minute by default: a busy worker's beat thread may be late, never that late),
    and never less than twelve beats."""
    return timedelta(seconds=max(settings.task_lease_seconds, STALE_BEATS * settings.worker_heartbeat_seconds))


def register(session: Session, *, worker_id: str, host: str, pid: int, supervisor: str | None) -> None:
    now = utcnow()
    session.merge(Worker(id=worker_id, host=host, pid=pid, supervisor=supervisor, task_id=None, rss_mb=0.0,
                         started_at=now, last_seen=now))


def beat(session: Session, worker_id: str, *, task_id: str | None, rss_mb: float) -> None:
    """Say the worker is alive (re-registering it if its row was pruned) and keep its task's heartbeat."""
    now = utcnow()
    res = cast(CursorResult[Any], session.execute(  # an UPDATE's result is a CursorResult
        update(Worker).where(Worker.id == worker_id).values(last_seen=now, task_id=task_id, rss_mb=round(rss_mb, 1))))
    if not res.rowcount:
        host, _, rest = worker_id.partition(":")
        pid = int(rest.partition(":")[0] or 0) if rest.partition(":")[0].isdigit() else 0
        session.merge(Worker(id=worker_id, host=host, pid=pid, task_id=task_id, rss_mb=round(rss_mb, 1),
                             started_at=now, last_seen=now))
    if task_id is not None:  # every task it runs (a batch of small documents shares one run)
        session.execute(update(Task).where(Task.status == TaskStatus.RUNNING, Task.claimed_by == worker_id)
                        .values(heartbeat_at=now))


def unregister(session: Session, worker_id: str) -> None:
    session.execute(delete(Worker).where(Worker.id == worker_id))


@dataclass(slots=True)
class QueueState:
    queued: int
    running: int
    oldest_queued_seconds: float | None  # how long the oldest runnable task has waited


def alive(session: Session, settings: Settings, *, now: datetime | None = None) -> list[Worker]:
    """The workers that beat recently (any machine)."""
    now = now or utcnow()
    return list(session.scalars(select(Worker).where(Worker.last_seen >= now - alive_within(settings))
                                .order_by(Worker.id)))


def prune(session: Session, settings: Settings, *, now: datetime | None = None) -> int:
    """Remove the rows of workers dead for a while (their tasks are taken back by ``requeue_stale``)."""
    now = now or utcnow()
    res = cast(CursorResult[Any], session.execute(  # a DELETE's result is a CursorResult
        delete(Worker).where(Worker.last_seen < now - 2 * stale_after(settings))))
    return res.rowcount or 0


def queue_state(session: Session, *, now: datetime | None = None) -> QueueState:
    now = now or utcnow()
    counts = dict(session.execute(
        select(Task.status, func.count())
        .where(Task.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING))).group_by(Task.status)
    ).all())
    oldest = session.scalar(select(func.min(Task.created_at)).where(
        Task.status == TaskStatus.QUEUED, (Task.not_before.is_(None)) | (Task.not_before <= now)))
    if oldest is not None and oldest.tzinfo is None:  # SQLite returns naive datetimes for aggregates
        from datetime import UTC

        oldest = oldest.replace(tzinfo=UTC)
    age = (now - oldest).total_seconds() if oldest is not None else None
    return QueueState(queued=counts.get(TaskStatus.QUEUED, 0), running=counts.get(TaskStatus.RUNNING, 0),
                      oldest_queued_seconds=round(age, 1) if age is not None else None)
