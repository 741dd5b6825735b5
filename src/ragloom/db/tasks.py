"""Document parsing tasks: a kind of job of the queue (:mod:`ragloom.db.queue`) on the ``task`` table.

A task parses a page range of one document version. Claims are fair by workspace, then by document
(:func:`ragloom.db.queue.fair_scopes`), a document's ranges in page order; the document row mirrors the
state of its latest version's tasks (:func:`_mirror`, after every change). Besides the lifecycle
(:data:`TASKS`, bound below to the names callers use): batched claims of small documents
(:func:`claim_more`), how long each workspace has waited (:func:`waiting_since`), and taking back a
stopped worker's tasks and builds at once (:func:`requeue_worker`). The rules in which tasks differ from
builds are the flags of :data:`TASKS`: a retry's message does not say when; a task whose cancel was
requested is still retried after a transient fault (its next run sees the cancel); a cancelled task is
marked cancelled again when asked; the worker registry's beat renews its lease
(:func:`ragloom.db.workers.beat`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.db import builds, queue, syncs
from ragloom.db.models import Document, DocumentVersion, Task, utcnow
from ragloom.db.queue import STALE_AFTER, runnable
from ragloom.states import TaskStatus

__all__ = ["STALE_AFTER", "TASKS", "claim", "claim_more", "fail", "finish", "hand_back", "mark_cancelled",
           "report", "requeue_lost", "requeue_stale", "requeue_worker", "waiting_since"]


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


TASKS = queue.JobKind(Task, "task", order=(Task.created_at, Task.from_page, Task.id),
                       fair_by=(Task.tenant_id, Task.document_id), on_change=_mirror,
                       retry_says_when=False, cancel_stops_retry=False, cancel_again=True)

claim = partial(queue.claim, TASKS)
report = partial(queue.report, TASKS)
finish = partial(queue.finish, TASKS)
fail = partial(queue.fail, TASKS)
hand_back = partial(queue.hand_back, TASKS)
mark_cancelled = partial(queue.mark_cancelled, TASKS)
requeue_stale = partial(queue.requeue_stale, TASKS)
requeue_lost = partial(queue.requeue_lost, TASKS)


def requeue_worker(session: Session, worker_id: str, *, reason: str, max_attempts: int = 3,
                   count_attempt: bool = True) -> list[str]:
    """Take back at once the tasks a worker was running when it died or stopped, and its knowledge builds
    and its source syncs (:func:`ragloom.db.queue.requeue_worker`). Returns the ids of the tasks that failed
    for good (not the builds' or syncs': no document version fails with them)."""
    queue.requeue_worker(builds.BUILDS, session, worker_id, reason=reason, max_attempts=max_attempts,
                         count_attempt=count_attempt)
    queue.requeue_worker(syncs.SYNCS, session, worker_id, reason=reason, max_attempts=max_attempts,
                         count_attempt=count_attempt)
    return queue.requeue_worker(TASKS, session, worker_id, reason=reason, max_attempts=max_attempts,
                                count_attempt=count_attempt)


def waiting_since(session: Session, *, now: datetime | None = None) -> dict[str, datetime]:
    """Workspaces with runnable tasks, each with the time its longest-waiting one became runnable (its
    ``not_before`` when set, else its creation), in UTC."""
    now = now or utcnow()
    rows = session.execute(select(Task.tenant_id, func.min(func.coalesce(Task.not_before, Task.created_at)))
                           .where(runnable(TASKS, now)).group_by(Task.tenant_id)).all()
    out: dict[str, datetime] = {}
    for tenant, since in rows:
        if isinstance(since, str):  # SQLite gives coalesce()'s datetime back as text
            since = datetime.fromisoformat(since)
        out[tenant] = since.replace(tzinfo=UTC) if since.tzinfo is None else since
    return out


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
             .where(runnable(TASKS, now), Task.kb_id == first.kb_id, Task.from_page == 0,
                    DocumentVersion.size <= max_bytes))
    if workers > 1:
        waiting = session.scalar(select(func.count()).select_from(small.subquery())) or 0
        limit = min(limit, -(-(waiting + 1) // workers) - 1)  # ceil(all small ones / workers), minus the first
    if limit <= 0:
        return []
    # rows other workers are taking are skipped (PostgreSQL), and only the task rows are locked
    ids = session.scalars(small.order_by(Task.created_at, Task.id).limit(limit)
                          .with_for_update(skip_locked=True, of=Task)).all()
    return [t for t in (queue.take(TASKS, session, task_id, worker_id, now) for task_id in ids) if t is not None]


def _is_small(session: Session, version_id: str, max_bytes: int) -> bool:
    size = session.scalar(select(DocumentVersion.size).where(DocumentVersion.id == version_id))
    return size is not None and size <= max_bytes


