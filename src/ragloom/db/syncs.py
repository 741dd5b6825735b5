"""Source syncs: a kind of job of the queue (:mod:`ragloom.db.queue`) on the ``source_sync`` table.

A sync lists a source and brings its knowledge base's documents in step with it
(:mod:`ragloom.service.sources.sync`). At most one sync of a source runs at a time: a claim locks the
source's row before the sync's (:class:`ragloom.db.queue.OneAtATime`). Syncs are claimed oldest first;
a sync reports its stage and running counts; a re-queued sync resumes (what its last run did is in
``source_item``, so it is not done again). Besides the lifecycle (:data:`SYNCS`, bound below to the
names callers use): the open sync of a source (:func:`open_sync`).
"""

from __future__ import annotations

from functools import partial

from sqlalchemy import select
from sqlalchemy.orm import Session

from ragloom.db import queue
from ragloom.db.models import Source, SourceSync
from ragloom.states import TaskStatus

__all__ = ["OPEN", "SYNCS", "claim", "fail", "finish", "hand_back", "heartbeat", "mark_cancelled", "open_sync",
           "report", "request_cancel", "requeue_lost", "requeue_stale", "requeue_worker"]

OPEN = (TaskStatus.QUEUED, TaskStatus.RUNNING)

SYNCS = queue.JobKind(SourceSync, "sync", order=(SourceSync.created_at, SourceSync.id),
                      one_at_a_time=queue.OneAtATime(per=(SourceSync.source_id,), parent=Source.id,
                                                     via=SourceSync.source_id),
                      resumes=True)

claim = partial(queue.claim, SYNCS)
heartbeat = partial(queue.heartbeat, SYNCS)
report = partial(queue.report, SYNCS)
finish = partial(queue.finish, SYNCS)
fail = partial(queue.fail, SYNCS)
hand_back = partial(queue.hand_back, SYNCS)
mark_cancelled = partial(queue.mark_cancelled, SYNCS)
request_cancel = partial(queue.request_cancel, SYNCS)
requeue_stale = partial(queue.requeue_stale, SYNCS)
requeue_worker = partial(queue.requeue_worker, SYNCS)
requeue_lost = partial(queue.requeue_lost, SYNCS)


def open_sync(session: Session, source_id: str, statuses: tuple[str, ...] = OPEN) -> SourceSync | None:
    """The source's oldest sync in one of ``statuses`` (queued or running by default), or None."""
    return session.scalars(select(SourceSync).where(SourceSync.source_id == source_id,
                                                    SourceSync.status.in_(statuses))
                           .order_by(SourceSync.created_at).limit(1)).first()
