"""The task queue on the metadata DB's ``task`` table.

Claiming takes the runnable tasks in a fair order (:func:`fair_documents`): the candidate row is read
``FOR UPDATE SKIP LOCKED`` — on PostgreSQL, concurrent workers thus take different rows instead of
all trying the same one (SQLite, which has one writer at a time, ignores the clause) — and taken by a
conditional UPDATE (``WHERE id = ? AND status = 'queued'``), so two workers never run the same task,
on SQLite and PostgreSQL alike. A claim is a lease: the worker renews ``heartbeat_at`` while it runs
the task (:func:`report`, :func:`ragloom.db.workers.beat`), and a task whose heartbeat is older than
``stale_after`` goes back to the queue (:func:`requeue_stale`). Progress only moves forward; a failure
keeps its reason; the document row mirrors its latest version's task.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, func, or_, select, update
from sqlalchemy.orm import Session

from ragloom.db import builds
from ragloom.db.models import Document, DocumentVersion, Task, utcnow
from ragloom.states import TaskStatus

STALE_AFTER = timedelta(minutes=5)  # a task whose worker sends no heartbeat for this long is taken back
MAX_TENANTS = 16  # tenants a claim looks at before it takes the oldest runnable task of any
MAX_DOCUMENTS = 16  # documents per tenant a claim looks at (all of them being taken at once is rare)
TRIES_PER_DOCUMENT = 5  # candidates of one document tried before the next document


def _runnable(now: datetime) -> ColumnElement[bool]:
    return (Task.status == TaskStatus.QUEUED) & or_(Task.not_before.is_(None), Task.not_before <= now)


def fair_documents(session: Session, *, now: datetime | None = None) -> Iterator[str]:
    """Ids of the documents with runnable tasks in the order a worker should try them, fairly: the
    tenant with the fewest running tasks first (ties: the one waiting longest), then, inside it, the
    document with the fewest running tasks (ties: the one waiting longest). Lazy: a tenant's documents
    are read when the ones before them are used up (at most ``MAX_TENANTS`` x ``MAX_DOCUMENTS``).

    So one tenant's 2,000 page-range tasks never hold every worker while another tenant's
    one-page note waits, and inside a tenant a huge document shares the workers with small ones.
    """
    now = now or utcnow()
    waiting = session.execute(
        select(Task.tenant_id, func.min(Task.created_at)).where(_runnable(now)).group_by(Task.tenant_id)
    ).all()
    if not waiting:
        return
    running = dict(session.execute(
        select(Task.tenant_id, func.count()).where(Task.status == TaskStatus.RUNNING).group_by(Task.tenant_id)
    ).all())
    tenants = sorted(waiting, key=lambda row: (running.get(row[0], 0), row[1], row[0]))
    for tenant, _ in tenants[:MAX_TENANTS]:
        in_tenant = _runnable(now) & (Task.tenant_id == tenant)
        docs = session.execute(
            select(Task.document_id, func.min(Task.created_at)).where(in_tenant).group_by(Task.document_id)
        ).all()
        running_docs = dict(session.execute(
            select(Task.document_id, func.count())
            .where(Task.status == TaskStatus.RUNNING, Task.tenant_id == tenant).group_by(Task.document_id)
        ).all())
        for doc, _ in sorted(docs, key=lambda row: (running_docs.get(row[0], 0), row[1], row[0]))[:MAX_DOCUMENTS]:
            yield doc


def waiting_since(session: Session, *, now: datetime | None = None) -> dict[str, datetime]:
    """Workspaces with runnable tasks, each with the time its longest-waiting one became runnable (its
    ``not_before`` when set, else its creation), in UTC."""
    now = now or utcnow()
    rows = session.execute(select(Task.tenant_id, func.min(func.coalesce(Task.not_before, Task.created_at)))
                           .where(_runnable(now)).group_by(Task.tenant_id)).all()
    out: dict[str, datetime] = {}
    for tenant, since in rows:
        if isinstance(since, str):  # SQLite gives coalesce()'s datetime back as text
            since = datetime.fromisoformat(since)
        out[tenant] = since.replace(tzinfo=UTC) if since.tzinfo is None else since
    return out


def _lock_next(session: Session, where: ColumnElement[bool]) -> str | None:
    """The id of the first runnable task matching ``where`` (oldest, then page order) that no other
    transaction holds, locked until this one ends (PostgreSQL: ``FOR UPDATE SKIP LOCKED``; SQLite
    ignores the clause and relies on the conditional UPDATE of :func:`_take`)."""
    return session.scalar(
        select(Task.id).where(where).order_by(Task.created_at, Task.from_page, Task.id).limit(1)
        .with_for_update(skip_locked=True)
    )


def claim(session: Session, *, worker_id: str) -> Task | None:
    """Take the next runnable task (documents in the order of :func:`fair_documents`), or ``None``.
    Commits nothing itself: the row stays locked until the caller's transaction ends."""
    now = utcnow()
    for doc in fair_documents(session, now=now):
        for _ in range(TRIES_PER_DOCUMENT):  # a candidate another worker took meanwhile: the next one
            task_id = _lock_next(session, _runnable(now) & (Task.document_id == doc))
            if task_id is None:
                break
            task = _take(session, task_id, worker_id, now)
            if task is not None:
                return task
    # every document looked at was taken meanwhile (or more than MAX_TENANTS x MAX_DOCUMENTS wait): any task
    for _ in range(TRIES_PER_DOCUMENT):
        task_id = _lock_next(session, _runnable(now))
        if task_id is None:
            return None
        task = _take(session, task_id, worker_id, now)
        if task is not None:
            return task
    return None


def claim_more(session: Session, first: Task, *, worker_id: str, limit: int, max_bytes: int,
               workers: int = 1) -> list[Task]:
    """Small whole-document tasks of ``first``'s knowledge base to run in one batch with it (shared
    model batches, one search-store commit): none unless ``first`` is such a task itself; at most
    ``limit`` more, each of a file of at most ``max_bytes``, oldest first — and no more than this
    worker's share when ``workers`` share the queue (the others get work too). Commits nothing itself."""
    if limit <= 0 or first.from_page != 0 or not _is_small(session, first.version_id, max_bytes):
        return []
    now = utcnow()
    small = (select(Task.id).join(DocumentVersion, DocumentVersion.id == Task.version_id)
             .where(_runnable(now), Task.kb_id == first.kb_id, Task.from_page == 0, DocumentVersion.size <= max_bytes))
    if workers > 1:
        waiting = session.scalar(select(func.count()).select_from(small.subquery())) or 0
        limit = min(limit, -(-(waiting + 1) // workers) - 1)  # ceil(all small ones / workers), minus the first
    if limit <= 0:
        return []
    # rows other workers are taking are skipped (PostgreSQL), and only the task rows are locked
    ids = session.scalars(small.order_by(Task.created_at, Task.id).limit(limit)
                          .with_for_update(skip_locked=True, of=Task)).all()
    return [t for t in (_take(session, task_id, worker_id, now) for task_id in ids) if t is not None]


def _is_small(session: Session, version_id: str, max_bytes: int) -> bool:
    size = session.scalar(select(DocumentVersion.size).where(DocumentVersion.id == version_id))
    return size is not None and size <= max_bytes


def _take(session: Session, task_id: str, worker_id: str, now: datetime) -> Task | None:
    res = cast(CursorResult[Any], session.execute(  # an UPDATE's result is a CursorResult
        update(Task)
        .where(Task.id == task_id, Task.status == TaskStatus.QUEUED)
        .values(status=TaskStatus.RUNNING, claimed_by=worker_id, heartbeat_at=now, started_at=now,
                attempts=Task.attempts + 1)
    ))
    if res.rowcount != 1:
        return None
    task = session.get(Task, task_id)
    assert task is not None
    session.refresh(task)
    _mirror(session, task)
    return task


def requeue_stale(session: Session, *, now: datetime | None = None, stale_after: timedelta = STALE_AFTER,
                  max_attempts: int = 3) -> list[str]:
    """Take back tasks whose worker stopped sending heartbeats (it died, or its machine did):
    re-queued, or failed when the task already had ``max_attempts`` attempts (a file that kills
    its worker each time must not be retried forever). Returns the ids of the tasks that failed."""
    now = now or utcnow()
    # locked, and those another worker is taking back right now skipped: each is taken back once, and
    # a task claimed again meanwhile (a fresh heartbeat) no longer matches once its row is locked
    stale = session.scalars(
        select(Task).where(Task.status == TaskStatus.RUNNING, Task.heartbeat_at < now - stale_after)
        .order_by(Task.id).with_for_update(skip_locked=True).execution_options(populate_existing=True)
    ).all()
    return [t.id for t in stale
            if not requeue_lost(session, t, reason="its worker stopped sending heartbeats",
                                max_attempts=max_attempts)]


def requeue_worker(session: Session, worker_id: str, *, reason: str, max_attempts: int = 3,
                   count_attempt: bool = True) -> list[str]:
    """Take back at once the tasks a worker was running when it died (``reason`` says how).
    With ``count_attempt`` False (the worker was stopped on purpose) the attempt is not counted.
    Returns the ids of the tasks that failed for good (attempts used up). The knowledge builds it was
    running are taken back too (:func:`ragloom.db.builds.requeue_worker`; not in the returned ids: no
    document version fails with them)."""
    builds.requeue_worker(session, worker_id, reason=reason, max_attempts=max_attempts, count_attempt=count_attempt)
    running = session.scalars(select(Task).where(Task.status == TaskStatus.RUNNING, Task.claimed_by == worker_id)
                              .order_by(Task.id).with_for_update()
                              .execution_options(populate_existing=True)).all()
    failed = []
    for task in running:
        if not count_attempt:
            hand_back(session, task.id, message=f"{reason}; waiting for another worker")
        elif not requeue_lost(session, task, reason=reason, max_attempts=max_attempts):
            failed.append(task.id)
    return failed


def requeue_lost(session: Session, task: Task, *, reason: str, max_attempts: int) -> bool:
    """Re-queue a task whose worker was lost; False (and the task failed) when its attempts are used up."""
    if task.attempts >= max(1, max_attempts):
        task.status, task.finished_at = TaskStatus.FAILED, utcnow()
        task.message = (f"{reason}; the task was tried {task.attempts} times and failed each time "
                        "(RAGLOOM_TASK_MAX_RETRIES)")
        _mirror(session, task)
        return False
    task.status, task.claimed_by = TaskStatus.QUEUED, None
    task.message = f"{reason}; re-queued (attempt {task.attempts} of {max(1, max_attempts)})"
    _mirror(session, task)
    return True


def hand_back(session: Session, task_id: str, *, message: str = "the worker stopped; waiting for another") -> None:
    """Put a running task back in the queue without counting the attempt (its worker is shutting down)."""
    task = session.get(Task, task_id)
    if task is None or task.status != TaskStatus.RUNNING:
        return
    task.status, task.claimed_by, task.message = TaskStatus.QUEUED, None, message
    task.attempts = max(0, task.attempts - 1)
    _mirror(session, task)


def report(session: Session, task_id: str, *, progress: float | None = None, message: str | None = None) -> bool:
    """Record progress (never backwards) and a heartbeat. Returns False when cancel was requested."""
    task = session.get(Task, task_id)
    if task is None:
        return False
    task.heartbeat_at = utcnow()
    if task.cancel_requested or task.status != TaskStatus.RUNNING:
        return False
    if progress is not None and progress > task.progress:
        task.progress = min(progress, 0.99)
    if message is not None:
        task.message = message
    _mirror(session, task)
    return True


def finish(session: Session, task_id: str, *, message: str = TaskStatus.DONE) -> None:
    task = session.get(Task, task_id)
    if task is None:
        return
    task.status, task.progress, task.message, task.finished_at = TaskStatus.DONE, 1.0, message, utcnow()
    _mirror(session, task)


def fail(session: Session, task_id: str, *, reason: str, retry_in: timedelta | None = None,
         max_attempts: int = 3) -> None:
    """Fail a task; with ``retry_in`` (transient fault) it is re-queued until attempts run out."""
    task = session.get(Task, task_id)
    if task is None:
        return
    if retry_in is not None and task.attempts < max_attempts:
        task.status, task.not_before, task.claimed_by = TaskStatus.QUEUED, utcnow() + retry_in, None
        task.message = f"retrying after: {reason}"
    else:
        task.status, task.message, task.finished_at = TaskStatus.FAILED, reason, utcnow()
    _mirror(session, task)


def mark_cancelled(session: Session, task_id: str) -> None:
    task = session.get(Task, task_id)
    if task is None or task.status in (TaskStatus.DONE, TaskStatus.FAILED):
        return
    task.status, task.message, task.finished_at = TaskStatus.CANCELLED, "cancelled by user", utcnow()
    _mirror(session, task)


def _mirror(session: Session, task: Task) -> None:
    """Copy the state of the latest version's tasks to their document.

    Several tasks (page ranges of one PDF) make one version: progress is their
    mean, the status the most telling one (failed > cancelled > running > queued
    > done), the message the task's own, prefixed with its pages when split — or, when no range
    runs and some wait, how many are done and that the rest waits for a worker.
    """
    session.flush()
    # the document row locked before its tasks are read (PostgreSQL: a sibling changed by a transaction
    # that commits meanwhile is seen once the lock is ours; SQLite has one writer at a time anyway)
    doc = session.get(Document, task.document_id, with_for_update=True)
    if doc is None or doc.latest_version_id != task.version_id:
        return
    siblings = list(session.scalars(select(Task).where(Task.version_id == task.version_id)))
    statuses = {t.status for t in siblings}
    for status in (TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.RUNNING, TaskStatus.QUEUED, TaskStatus.DONE):
        if status in statuses:
            doc.status = status
            break
    doc.progress = sum(1.0 if t.status == TaskStatus.DONE else t.progress for t in siblings) / len(siblings)
    if doc.status == TaskStatus.QUEUED and len(siblings) > 1:  # ranges done, the rest not yet claimed
        done = sum(t.status == TaskStatus.DONE for t in siblings)
        doc.message = f"{done} of {len(siblings)} page ranges done; waiting for a worker"
    elif len(siblings) > 1 and task.status != TaskStatus.FAILED:
        doc.message = f"pages {task.from_page}-{task.to_page}: {task.message}"
    else:
        doc.message = task.message
