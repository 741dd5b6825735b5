"""The task queue on the metadata DB's ``task`` table.

Claiming is a conditional UPDATE (``WHERE id = ? AND status = 'queued'``), so
two workers never run the same task, on SQLite and PostgreSQL alike. Progress
only moves forward; a failure keeps its reason; the document row mirrors its
latest version's task.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from ragloom.db.models import Document, Task, utcnow

STALE_AFTER = timedelta(minutes=5)


def claim(session: Session, *, worker_id: str) -> Task | None:
    """Take the oldest runnable task, or ``None``. Commits nothing itself."""
    now = utcnow()
    candidates = session.scalars(
        select(Task.id)
        .where(Task.status == "queued", or_(Task.not_before.is_(None), Task.not_before <= now))
        .order_by(Task.created_at)
        .limit(5)
    ).all()
    for task_id in candidates:
        res = session.execute(
            update(Task)
            .where(Task.id == task_id, Task.status == "queued")
            .values(status="running", claimed_by=worker_id, heartbeat_at=now, attempts=Task.attempts + 1)
        )
        if res.rowcount == 1:  # type: ignore[attr-defined]
            task = session.get(Task, task_id)
            assert task is not None
            session.refresh(task)
            _mirror(session, task)
            return task
    return None


def requeue_stale(session: Session, *, now=None) -> int:  # type: ignore[no-untyped-def]
    """Put back tasks whose worker stopped sending heartbeats (it died)."""
    now = now or utcnow()
    res = session.execute(
        update(Task)
        .where(Task.status == "running", Task.heartbeat_at < now - STALE_AFTER)
        .values(status="queued", claimed_by=None, message="worker stopped; re-queued")
    )
    return res.rowcount or 0  # type: ignore[attr-defined]


def hand_back(session: Session, task_id: str, *, message: str = "the worker stopped; waiting for another") -> None:
    """Put a running task back in the queue without counting the attempt (its worker is shutting down)."""
    task = session.get(Task, task_id)
    if task is None or task.status != "running":
        return
    task.status, task.claimed_by, task.message = "queued", None, message
    task.attempts = max(0, task.attempts - 1)
    _mirror(session, task)


def report(session: Session, task_id: str, *, progress: float | None = None, message: str | None = None) -> bool:
    """Record progress (never backwards) and a heartbeat. Returns False when cancel was requested."""
    task = session.get(Task, task_id)
    if task is None:
        return False
    task.heartbeat_at = utcnow()
    if task.cancel_requested or task.status != "running":
        return False
    if progress is not None and progress > task.progress:
        task.progress = min(progress, 0.99)
    if message is not None:
        task.message = message
    _mirror(session, task)
    return True


def finish(session: Session, task_id: str, *, message: str = "done") -> None:
    task = session.get(Task, task_id)
    if task is None:
        return
    task.status, task.progress, task.message, task.finished_at = "done", 1.0, message, utcnow()
    _mirror(session, task)


def fail(session: Session, task_id: str, *, reason: str, retry_in: timedelta | None = None,
         max_attempts: int = 3) -> None:
    """Fail a task; with ``retry_in`` (transient fault) it is re-queued until attempts run out."""
    task = session.get(Task, task_id)
    if task is None:
        return
    if retry_in is not None and task.attempts < max_attempts:
        task.status, task.not_before, task.claimed_by = "queued", utcnow() + retry_in, None
        task.message = f"retrying after: {reason}"
    else:
        task.status, task.message, task.finished_at = "failed", reason, utcnow()
    _mirror(session, task)


def mark_cancelled(session: Session, task_id: str) -> None:
    task = session.get(Task, task_id)
    if task is None:
        return
    task.status, task.message, task.finished_at = "cancelled", "cancelled by user", utcnow()
    _mirror(session, task)


def _mirror(session: Session, task: Task) -> None:
    """Copy the state of the latest version's tasks to their document.

    Several tasks (page ranges of one PDF) make one version: progress is their
    mean, the status the most telling one (failed > cancelled > running > queued
    > done), the message the task's own, prefixed with its pages when split.
    """
    doc = session.get(Document, task.document_id)
    if doc is None or doc.latest_version_id != task.version_id:
        return
    session.flush()
    siblings = list(session.scalars(select(Task).where(Task.version_id == task.version_id)))
    statuses = {t.status for t in siblings}
    for status in ("failed", "cancelled", "running", "queued", "done"):
        if status in statuses:
            doc.status = status
            break
    doc.progress = sum(1.0 if t.status == "done" else t.progress for t in siblings) / len(siblings)
    if len(siblings) > 1 and task.status != "failed":
        doc.message = f"pages {task.from_page}-{task.to_page}: {task.message}"
    else:
        doc.message = task.message
