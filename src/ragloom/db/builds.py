"""The queue of knowledge builds on the metadata DB's ``knowledge_build`` table.

The same rules as the ingestion queue (:mod:`ragloom.db.tasks`): a claim locks its candidate ``FOR
UPDATE SKIP LOCKED`` (PostgreSQL) and takes it with a conditional UPDATE, so two workers never run the
same build; progress only moves forward; a worker that stops beating loses its build to another
(re-queued, or failed when its attempts are used up). One rule of its own: a knowledge base runs at
most one build of a kind at a time (a build rewrites the knowledge base's tree or graph as a whole),
so a build whose knowledge base is busy with its kind waits.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, or_, select, update
from sqlalchemy.orm import Session, aliased

from ragloom.db.models import KnowledgeBase, KnowledgeBuild, utcnow
from ragloom.states import TaskStatus

OPEN = (TaskStatus.QUEUED, TaskStatus.RUNNING)


def _kb_busy() -> ColumnElement[bool]:
    """A build of the same knowledge base and kind is running."""
    busy = aliased(KnowledgeBuild)
    return (select(busy.id).where(busy.kb_id == KnowledgeBuild.kb_id, busy.kind == KnowledgeBuild.kind,
                                  busy.status == TaskStatus.RUNNING).exists())


def _runnable(now: datetime) -> ColumnElement[bool]:
    return and_(KnowledgeBuild.status == TaskStatus.QUEUED,
                or_(KnowledgeBuild.not_before.is_(None), KnowledgeBuild.not_before <= now), ~_kb_busy())


def claim(session: Session, *, worker_id: str, limit: int = 5) -> KnowledgeBuild | None:
    """Take the oldest runnable build, or ``None``. Commits nothing itself.

    For each candidate, its knowledge base's row is locked first (PostgreSQL: ``FOR NO KEY UPDATE``,
    so two workers never start two builds of one knowledge base and kind: the second sees the first's
    once it gets the lock), then the build's own row ``FOR UPDATE SKIP LOCKED``, then the conditional
    UPDATE takes it. SQLite, with one writer at a time, ignores both locks."""
    now = utcnow()
    candidates = session.execute(select(KnowledgeBuild.id, KnowledgeBuild.kb_id).where(_runnable(now))
                                 .order_by(KnowledgeBuild.created_at, KnowledgeBuild.id).limit(limit)).all()
    for build_id, kb_id in candidates:
        session.execute(select(KnowledgeBase.id).where(KnowledgeBase.id == kb_id).with_for_update(key_share=True))
        locked = session.scalar(select(KnowledgeBuild.id).where(KnowledgeBuild.id == build_id, _runnable(now))
                                .with_for_update(skip_locked=True, of=KnowledgeBuild))
        if locked is None:
            continue
        res = cast(CursorResult[Any], session.execute(  # checked again: another worker may have claimed one
            update(KnowledgeBuild).where(KnowledgeBuild.id == build_id, KnowledgeBuild.status == TaskStatus.QUEUED,
                                         ~_kb_busy())
            .values(status=TaskStatus.RUNNING, claimed_by=worker_id, heartbeat_at=now, started_at=now,
                    attempts=KnowledgeBuild.attempts + 1)))
        if res.rowcount == 1:
            build = session.get(KnowledgeBuild, build_id)
            assert build is not None
            session.refresh(build)
            return build
    return None


def heartbeat(session: Session, build_id: str) -> None:
    session.execute(update(KnowledgeBuild).where(KnowledgeBuild.id == build_id,
                                                 KnowledgeBuild.status == TaskStatus.RUNNING)
                    .values(heartbeat_at=utcnow()))


def report(session: Session, build_id: str, *, progress: float | None = None, message: str | None = None,
           stage: str | None = None, stats: dict[str, Any] | None = None) -> bool:
    """Record progress (never backwards), the stage, a message and the running counts; a heartbeat too.
    Returns False when the build was cancelled (or is no longer this run's)."""
    build = session.get(KnowledgeBuild, build_id)
    if build is None:
        return False
    build.heartbeat_at = utcnow()
    if build.cancel_requested or build.status != TaskStatus.RUNNING:
        return False
    if progress is not None and progress > build.progress:
        build.progress = min(progress, 0.99)
    if message is not None:
        build.message = message
    if stage is not None:
        build.stage = stage
    if stats is not None:
        build.stats = dict(stats)
    return True


def finish(session: Session, build_id: str, *, message: str, stats: dict[str, Any] | None = None) -> None:
    build = session.get(KnowledgeBuild, build_id)
    if build is None:
        return
    build.status, build.progress, build.stage, build.message = TaskStatus.DONE, 1.0, "done", message
    build.finished_at = utcnow()
    if stats is not None:
        build.stats = dict(stats)


def fail(session: Session, build_id: str, *, reason: str, retry_in: timedelta | None = None,
         max_attempts: int = 3, stats: dict[str, Any] | None = None) -> bool:
    """Fail a build; with ``retry_in`` (a transient fault) it is re-queued until its attempts run out.
    Returns True when it was re-queued."""
    build = session.get(KnowledgeBuild, build_id)
    if build is None:
        return False
    if stats is not None:
        build.stats = dict(stats)
    if retry_in is not None and build.attempts < max_attempts and not build.cancel_requested:
        build.status, build.not_before, build.claimed_by = TaskStatus.QUEUED, utcnow() + retry_in, None
        build.message = f"retrying in {retry_in.total_seconds():.0f} s after: {reason}"
        return True
    build.status, build.message, build.finished_at = TaskStatus.FAILED, reason, utcnow()
    return False


def hand_back(session: Session, build_id: str, *, message: str, count_attempt: bool = False) -> None:
    """Put a running build back in the queue (its worker is stopping, or it ran out of time after
    storing something: the next run resumes from there); the attempt is not counted unless asked."""
    build = session.get(KnowledgeBuild, build_id)
    if build is None or build.status != TaskStatus.RUNNING:
        return
    build.status, build.claimed_by, build.message = TaskStatus.QUEUED, None, message
    if not count_attempt:
        build.attempts = max(0, build.attempts - 1)


def mark_cancelled(session: Session, build_id: str, message: str = "cancelled by user",
                   stats: dict[str, Any] | None = None) -> None:
    build = session.get(KnowledgeBuild, build_id)
    if build is None or build.status in (TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED):
        return
    build.status, build.message, build.finished_at = TaskStatus.CANCELLED, message, utcnow()
    if stats is not None:
        build.stats = dict(stats)


def request_cancel(session: Session, build: KnowledgeBuild) -> None:
    """Cancel a build: a queued one at once, a running one at its next checkpoint."""
    if build.status == TaskStatus.QUEUED:
        mark_cancelled(session, build.id)
    elif build.status == TaskStatus.RUNNING:
        build.cancel_requested = True
        build.message = "cancelling"


def requeue_stale(session: Session, *, stale_after: timedelta, max_attempts: int = 3,
                  now: datetime | None = None) -> list[str]:
    """Take back running builds whose worker stopped beating: re-queued (the next run resumes from what
    the last one stored), or failed after ``max_attempts``. Returns the ids of those that failed."""
    now = now or utcnow()
    stale = session.scalars(select(KnowledgeBuild).where(KnowledgeBuild.status == TaskStatus.RUNNING,
                                                         KnowledgeBuild.heartbeat_at < now - stale_after)
                            .order_by(KnowledgeBuild.id).with_for_update(skip_locked=True)
                            .execution_options(populate_existing=True)).all()
    return [b.id for b in stale
            if not requeue_lost(session, b, reason="its worker stopped sending heartbeats", max_attempts=max_attempts)]


def requeue_worker(session: Session, worker_id: str, *, reason: str, max_attempts: int = 3,
                   count_attempt: bool = True) -> list[str]:
    """Take back the builds a worker was running when it died or stopped. Returns those that failed."""
    running = session.scalars(select(KnowledgeBuild).where(KnowledgeBuild.status == TaskStatus.RUNNING,
                                                           KnowledgeBuild.claimed_by == worker_id)
                              .order_by(KnowledgeBuild.id).with_for_update()
                              .execution_options(populate_existing=True)).all()
    failed = []
    for build in running:
        if not count_attempt:
            hand_back(session, build.id, message=f"{reason}; waiting for another worker")
        elif not requeue_lost(session, build, reason=reason, max_attempts=max_attempts):
            failed.append(build.id)
    return failed


def requeue_lost(session: Session, build: KnowledgeBuild, *, reason: str, max_attempts: int) -> bool:
    if build.attempts >= max(1, max_attempts):
        build.status, build.finished_at = TaskStatus.FAILED, utcnow()
        build.message = (f"{reason}; the build was tried {build.attempts} times and failed each time "
                         "(RAGLOOM_TASK_MAX_RETRIES)")
        return False
    build.status, build.claimed_by = TaskStatus.QUEUED, None
    build.message = f"{reason}; re-queued (attempt {build.attempts} of {max(1, max_attempts)}), resumes from what " \
                    "is stored"
    return True


def open_build(session: Session, *, kb_id: str, kind: str, document_id: str | None,
               statuses: tuple[str, ...] = (TaskStatus.QUEUED,)) -> KnowledgeBuild | None:
    """A build of the knowledge base of this kind in one of ``statuses`` that covers ``document_id``
    (a knowledge-base-wide one covers every document), oldest first."""
    scope: ColumnElement[bool] = KnowledgeBuild.document_id.is_(None)
    if document_id is not None:
        scope = or_(scope, KnowledgeBuild.document_id == document_id)
    return session.scalars(select(KnowledgeBuild).where(
        KnowledgeBuild.kb_id == kb_id, KnowledgeBuild.kind == kind, KnowledgeBuild.status.in_(statuses), scope)
        .order_by(KnowledgeBuild.created_at).limit(1)).first()
