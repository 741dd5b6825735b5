"""The job queue of the metadata DB: one lifecycle for every kind of job the workers run.

A kind of job (document parsing tasks, knowledge builds, ...) is a declaration, :class:`JobKind`: its
table's model, the order and the fairness of its claims, the group of which at most one job runs at a
time, and the few rules in which kinds differ. Its rows share the queue columns (:class:`QueueRow`). The
lifecycle is written once, here, each function taking the kind: :func:`claim`, :func:`heartbeat`,
:func:`report`, :func:`finish`, :func:`fail`, :func:`hand_back`, :func:`request_cancel`,
:func:`mark_cancelled`, :func:`cancel_requested`, :func:`requeue_stale`, :func:`requeue_worker` and
:func:`requeue_lost`.

Claiming takes the runnable jobs in the kind's fair order (:func:`fair_scopes`): a candidate row is read
``FOR UPDATE SKIP LOCKED`` — on PostgreSQL, concurrent workers thus take different rows instead of all
trying the same one (SQLite, which has one writer at a time, ignores the clause) — and taken by a
conditional UPDATE (``WHERE id = ? AND status = 'queued'``), so two workers never run the same job, on
SQLite and PostgreSQL alike. A claim is a lease: the worker renews ``heartbeat_at`` while it runs the job,
and a job whose heartbeat is older than ``stale_after`` goes back to the queue (:func:`requeue_stale`), or
fails when its attempts are used up. Progress only moves forward; a failure keeps its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar, cast

from sqlalchemy import ColumnElement, CursorResult, func, or_, select, true, update
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased

from ragloom.db.models import utcnow
from ragloom.states import TaskStatus

STALE_AFTER = timedelta(minutes=5)  # a job whose worker sends no heartbeat for this long is taken back
MAX_GROUPS = 16  # groups of a fairness level a claim looks at (tenants, then documents of one of them)
TRIES = 5  # candidates of one group tried (taken by other workers meanwhile) before the next group

Column = InstrumentedAttribute[Any]


class QueueRow(Protocol):
    """A row of a queue table: the columns the lifecycle reads and writes."""

    id: str
    tenant_id: str
    status: str
    progress: float
    message: str
    attempts: int
    cancel_requested: bool
    claimed_by: str | None
    heartbeat_at: datetime | None
    started_at: datetime | None
    not_before: datetime | None
    created_at: datetime
    finished_at: datetime | None


class StagedRow(QueueRow, Protocol):
    """A queue row that also says its stage and its running counts (a knowledge build)."""

    stage: str
    stats: dict[str, Any]


J = TypeVar("J", bound=QueueRow)


@dataclass(frozen=True, slots=True)
class OneAtATime:
    """At most one job of a group runs at a time: the jobs whose ``per`` columns are equal (a knowledge
    base's builds of one kind, each rewriting what they share); the others wait. A claim locks the group's
    parent row first — the row whose ``parent`` column equals the candidate's ``via`` (PostgreSQL: ``FOR NO
    KEY UPDATE``) — so two workers claiming at once take turns, and the second sees the first's job running
    once the lock is its own."""

    per: tuple[Column, ...]
    parent: Column
    via: Column


@dataclass(frozen=True, slots=True)
class JobKind(Generic[J]):
    """A kind of job: what the lifecycle needs to know of it. The flags are the rules in which kinds
    differ (their defaults those of a knowledge build)."""

    model: type[J]
    noun: str  # what a job is called in its messages: "the task was tried 3 times ..."
    order: tuple[Column, ...]  # the claim order of a group's runnable jobs (oldest first)
    fair_by: tuple[Column, ...] = ()  # fairness levels (the tenant, then the document): the least busy first
    one_at_a_time: OneAtATime | None = None
    on_change: Callable[[Session, J], None] | None = None  # after each change of a job's state (a mirror)
    resumes: bool = False  # a re-queued job goes on from what its last run stored (its message says so)
    retry_says_when: bool = True  # a retry's message says when ("retrying in 5 s after: ...")
    cancel_stops_retry: bool = True  # a job whose cancel was requested fails instead of being retried
    cancel_again: bool = False  # mark_cancelled rewrites an already cancelled job (message, finish time)

    @property
    def table(self) -> Any:
        """The model, for SQL over its columns."""
        return self.model

    @property
    def staged(self) -> bool:
        """Its rows say their stage and running counts (:class:`StagedRow`)."""
        return hasattr(self.model, "stage") and hasattr(self.model, "stats")


def runnable(kind: JobKind[Any], now: datetime) -> ColumnElement[bool]:
    """The jobs a worker may claim now: queued, due, and (one at a time) none of their group running."""
    t = kind.table
    due: ColumnElement[bool] = (t.status == TaskStatus.QUEUED) & or_(t.not_before.is_(None), t.not_before <= now)
    return due & ~_group_busy(kind) if kind.one_at_a_time is not None else due


def _group_busy(kind: JobKind[Any]) -> ColumnElement[bool]:
    """A job of the same group (:class:`OneAtATime`) is running."""
    assert kind.one_at_a_time is not None
    busy: Any = aliased(kind.table)
    same = [getattr(busy, c.key) == c for c in kind.one_at_a_time.per]
    return select(busy.id).where(*same, busy.status == TaskStatus.RUNNING).exists()


def fair_scopes(kind: JobKind[Any], session: Session, *, now: datetime | None = None) -> Iterator[ColumnElement[bool]]:
    """Groups of runnable jobs in the order a worker should try them, fairly, as conditions: at each level
    of ``fair_by`` the group with the fewest running jobs first (ties: the one waiting longest), inside the
    group of the level above. Lazy: a level's groups are read when the ones before them are used up (at most
    ``MAX_GROUPS`` per level); nothing when the kind has no fairness.

    So one tenant's 2,000 page-range tasks never hold every worker while another tenant's one-page note
    waits, and inside a tenant a huge document shares the workers with small ones."""
    if kind.fair_by:
        yield from _fair_groups(kind, session, now or utcnow(), true(), kind.fair_by)


def _fair_groups(kind: JobKind[Any], session: Session, now: datetime, scope: ColumnElement[bool],
                 levels: tuple[Column, ...]) -> Iterator[ColumnElement[bool]]:
    """The groups of the first of ``levels`` inside ``scope`` in fair order (each split by the next levels)."""
    t, key = kind.table, levels[0]
    busy = select(key, func.count()).where(t.status == TaskStatus.RUNNING, scope).group_by(key)
    running: dict[Any, int] = dict(session.execute(busy).all())
    # the fair order is (running jobs, oldest waiting job, key): its first MAX_GROUPS groups are among the
    # first MAX_GROUPS + len(running) by (oldest waiting job, key), so only those are read — not every
    # waiting group (ten thousand queued documents were a tenth of each worker's time, read at each claim)
    first = func.min(t.created_at)
    waiting = session.execute(select(key, first).where(runnable(kind, now), scope).group_by(key)
                              .order_by(first, key).limit(MAX_GROUPS + len(running))).all()
    for value, _ in sorted(waiting, key=lambda row: (running.get(row[0], 0), row[1], row[0]))[:MAX_GROUPS]:
        group = scope & (key == value)
        if len(levels) > 1:
            yield from _fair_groups(kind, session, now, group, levels[1:])
        else:
            yield group


def claim(kind: JobKind[J], session: Session, *, worker_id: str) -> J | None:
    """Take the next runnable job (groups in the order of :func:`fair_scopes`, then any), or ``None``.
    Commits nothing itself: the row stays locked until the caller's transaction ends."""
    now = utcnow()
    for scope in fair_scopes(kind, session, now=now):
        job = _claim_among(kind, session, runnable(kind, now) & scope, worker_id, now)
        if job is not None:
            return job
    # every group looked at was taken meanwhile (or more than MAX_GROUPS per level wait), or no fairness: any
    return _claim_among(kind, session, runnable(kind, now), worker_id, now)


def _claim_among(kind: JobKind[J], session: Session, where: ColumnElement[bool], worker_id: str,
                 now: datetime) -> J | None:
    """Take the first of the jobs matching ``where`` (in the kind's order) no other worker takes, trying up
    to ``TRIES`` of them. One at a time: the candidates are read first, and for each its group's parent row
    is locked before its own row (:class:`OneAtATime`)."""
    t, group = kind.table, kind.one_at_a_time
    if group is None:
        for _ in range(TRIES):
            job_id = session.scalar(select(t.id).where(where).order_by(*kind.order).limit(1)
                                    .with_for_update(skip_locked=True, of=t))
            if job_id is None:
                return None
            job = take(kind, session, job_id, worker_id, now)
            if job is not None:
                return job
        return None
    candidates = session.execute(select(t.id, group.via).where(where).order_by(*kind.order).limit(TRIES)).all()
    for job_id, parent in candidates:
        session.execute(select(group.parent).where(group.parent == parent).with_for_update(key_share=True))
        locked = session.scalar(select(t.id).where(t.id == job_id, where).with_for_update(skip_locked=True, of=t))
        job = take(kind, session, job_id, worker_id, now) if locked is not None else None
        if job is not None:
            return job
    return None


def take(kind: JobKind[J], session: Session, job_id: str, worker_id: str, now: datetime) -> J | None:
    """Claim one job by a conditional UPDATE (still queued; one at a time: its group still idle)."""
    t = kind.table
    still = (t.id == job_id) & (t.status == TaskStatus.QUEUED)
    if kind.one_at_a_time is not None:  # checked again: another worker may have claimed one of the group
        still = still & ~_group_busy(kind)
    res = cast(CursorResult[Any], session.execute(  # an UPDATE's result is a CursorResult
        update(t).where(still).values(status=TaskStatus.RUNNING, claimed_by=worker_id, heartbeat_at=now,
                                      started_at=now, attempts=t.attempts + 1)))
    if res.rowcount != 1:
        return None
    job = session.get(kind.model, job_id)
    assert job is not None
    session.refresh(job)
    _changed(kind, session, job)
    return job


def _changed(kind: JobKind[J], session: Session, job: J) -> None:
    """Tell the kind a job's state changed (a task's document mirrors it)."""
    if kind.on_change is not None:
        kind.on_change(session, job)


def _record(kind: JobKind[J], job: J, *, stage: str | None = None, stats: dict[str, Any] | None = None) -> None:
    """Set a staged job's stage and running counts (those given)."""
    if stage is None and stats is None:
        return
    assert kind.staged, f"a {kind.noun} has no stage or stats"
    row = cast(StagedRow, job)
    if stage is not None:
        row.stage = stage
    if stats is not None:
        row.stats = dict(stats)


def heartbeat(kind: JobKind[Any], session: Session, job_id: str) -> None:
    """Renew a running job's lease."""
    t = kind.table
    session.execute(update(t).where(t.id == job_id, t.status == TaskStatus.RUNNING).values(heartbeat_at=utcnow()))


def report(kind: JobKind[J], session: Session, job_id: str, *, progress: float | None = None,
           message: str | None = None, stage: str | None = None, stats: dict[str, Any] | None = None) -> bool:
    """Record progress (never backwards, below 1 until finished), a message, and (a staged job) its stage
    and running counts; a heartbeat too. Returns False when its cancel was requested (or it no longer runs)."""
    job = session.get(kind.model, job_id)
    if job is None:
        return False
    job.heartbeat_at = utcnow()
    if job.cancel_requested or job.status != TaskStatus.RUNNING:
        return False
    if progress is not None and progress > job.progress:
        job.progress = min(progress, 0.99)
    if message is not None:
        job.message = message
    _record(kind, job, stage=stage, stats=stats)
    _changed(kind, session, job)
    return True


def finish(kind: JobKind[J], session: Session, job_id: str, *, message: str = TaskStatus.DONE,
           stats: dict[str, Any] | None = None) -> None:
    """A job done (a staged one at its stage "done")."""
    job = session.get(kind.model, job_id)
    if job is None:
        return
    job.status, job.progress, job.message, job.finished_at = TaskStatus.DONE, 1.0, message, utcnow()
    _record(kind, job, stage="done" if kind.staged else None, stats=stats)
    _changed(kind, session, job)


def fail(kind: JobKind[J], session: Session, job_id: str, *, reason: str, retry_in: timedelta | None = None,
         max_attempts: int = 3, stats: dict[str, Any] | None = None) -> bool:
    """Fail a job; with ``retry_in`` (a transient fault) it is re-queued until its attempts run out.
    Returns True when it was re-queued."""
    job = session.get(kind.model, job_id)
    if job is None:
        return False
    _record(kind, job, stats=stats)
    if retry_in is not None and job.attempts < max_attempts and not (kind.cancel_stops_retry and job.cancel_requested):
        job.status, job.not_before, job.claimed_by = TaskStatus.QUEUED, utcnow() + retry_in, None
        when = f" in {retry_in.total_seconds():.0f} s" if kind.retry_says_when else ""
        job.message = f"retrying{when} after: {reason}"
        _changed(kind, session, job)
        return True
    job.status, job.message, job.finished_at = TaskStatus.FAILED, reason, utcnow()
    _changed(kind, session, job)
    return False


def hand_back(kind: JobKind[J], session: Session, job_id: str, *,
              message: str = "the worker stopped; waiting for another", count_attempt: bool = False) -> None:
    """Put a running job back in the queue (its worker is stopping; a build that ran out of time after
    storing something resumes from there); the attempt is not counted unless asked."""
    job = session.get(kind.model, job_id)
    if job is None or job.status != TaskStatus.RUNNING:
        return
    job.status, job.claimed_by, job.message = TaskStatus.QUEUED, None, message
    if not count_attempt:
        job.attempts = max(0, job.attempts - 1)
    _changed(kind, session, job)


def mark_cancelled(kind: JobKind[J], session: Session, job_id: str, message: str = "cancelled by user",
                   stats: dict[str, Any] | None = None) -> None:
    """A job cancelled (a finished one stays as it is)."""
    job = session.get(kind.model, job_id)
    settled = (TaskStatus.DONE, TaskStatus.FAILED) if kind.cancel_again else \
        (TaskStatus.DONE, TaskStatus.FAILED, TaskStatus.CANCELLED)
    if job is None or job.status in settled:
        return
    job.status, job.message, job.finished_at = TaskStatus.CANCELLED, message, utcnow()
    _record(kind, job, stats=stats)
    _changed(kind, session, job)


def request_cancel(kind: JobKind[J], session: Session, job: J) -> None:
    """Cancel a job: a queued one at once, a running one at its next checkpoint."""
    if job.status == TaskStatus.QUEUED:
        mark_cancelled(kind, session, job.id)
    elif job.status == TaskStatus.RUNNING:
        job.cancel_requested = True
        job.message = "cancelling"
        _changed(kind, session, job)


def cancel_requested(kind: JobKind[Any], session: Session, job_id: str) -> bool:
    """The job's cancel was requested, or it is cancelled, or gone: its run should stop."""
    t = kind.table
    row = session.execute(select(t.cancel_requested, t.status).where(t.id == job_id)).first()
    return row is None or bool(row[0]) or row[1] == TaskStatus.CANCELLED


def requeue_stale(kind: JobKind[J], session: Session, *, now: datetime | None = None,
                  stale_after: timedelta = STALE_AFTER, max_attempts: int = 3) -> list[str]:
    """Take back running jobs whose worker stopped sending heartbeats (it died, or its machine did):
    re-queued, or failed when the job already had ``max_attempts`` attempts (a file that kills its worker
    each time must not be retried forever). Returns the ids of the jobs that failed."""
    now = now or utcnow()
    t = kind.table
    # locked, and those another worker is taking back right now skipped: each is taken back once, and
    # a job claimed again meanwhile (a fresh heartbeat) no longer matches once its row is locked
    stale = session.scalars(
        select(t).where(t.status == TaskStatus.RUNNING, t.heartbeat_at < now - stale_after)
        .order_by(t.id).with_for_update(skip_locked=True).execution_options(populate_existing=True)
    ).all()
    return [job.id for job in stale
            if not requeue_lost(kind, session, job, reason="its worker stopped sending heartbeats",
                                max_attempts=max_attempts)]


def requeue_worker(kind: JobKind[J], session: Session, worker_id: str, *, reason: str, max_attempts: int = 3,
                   count_attempt: bool = True) -> list[str]:
    """Take back at once the jobs a worker was running when it died or stopped (``reason`` says how).
    With ``count_attempt`` False (the worker was stopped on purpose) the attempt is not counted.
    Returns the ids of the jobs that failed for good (attempts used up)."""
    t = kind.table
    running = session.scalars(select(t).where(t.status == TaskStatus.RUNNING, t.claimed_by == worker_id)
                              .order_by(t.id).with_for_update()
                              .execution_options(populate_existing=True)).all()
    failed = []
    for job in running:
        if not count_attempt:
            hand_back(kind, session, job.id, message=f"{reason}; waiting for another worker")
        elif not requeue_lost(kind, session, job, reason=reason, max_attempts=max_attempts):
            failed.append(job.id)
    return failed


def requeue_lost(kind: JobKind[J], session: Session, job: J, *, reason: str, max_attempts: int) -> bool:
    """Re-queue a job whose worker was lost; False (and the job failed) when its attempts are used up."""
    if job.attempts >= max(1, max_attempts):
        job.status, job.finished_at = TaskStatus.FAILED, utcnow()
        job.message = (f"{reason}; the {kind.noun} was tried {job.attempts} times and failed each time "
                       "(RAGLOOM_TASK_MAX_RETRIES)")
        _changed(kind, session, job)
        return False
    job.status, job.claimed_by = TaskStatus.QUEUED, None
    resumes = ", resumes from what is stored" if kind.resumes else ""
    job.message = f"{reason}; re-queued (attempt {job.attempts} of {max(1, max_attempts)}){resumes}"
    _changed(kind, session, job)
    return True
