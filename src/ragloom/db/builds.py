"""Knowledge builds: a kind of job of the queue (:mod:`ragloom.db.queue`) on the ``knowledge_build`` table.

A build (RAPTOR, knowledge graph) rewrites a knowledge base's tree or graph as a whole, so a knowledge
base runs at most one build of a kind at a time: a build whose knowledge base is busy with its kind
waits, and a claim locks the knowledge base's row before the build's (:class:`ragloom.db.queue.OneAtATime`).
Builds are claimed oldest first, with no fairness between workspaces; a build reports its stage and
running counts; a re-queued build resumes from what its last run stored; its own beat thread renews its
lease (:func:`heartbeat`). Besides the lifecycle (:data:`BUILDS`, bound below to the names callers use):
the open build that covers a document (:func:`open_build`).
"""

from __future__ import annotations

from functools import partial

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from ragloom.db import queue
from ragloom.db.models import KnowledgeBase, KnowledgeBuild
from ragloom.states import TaskStatus

__all__ = ["BUILDS", "OPEN", "claim", "fail", "finish", "hand_back", "heartbeat", "mark_cancelled", "open_build",
           "report", "request_cancel", "requeue_lost", "requeue_stale", "requeue_worker"]

OPEN = (TaskStatus.QUEUED, TaskStatus.RUNNING)

BUILDS = queue.JobKind(KnowledgeBuild, "build", order=(KnowledgeBuild.created_at, KnowledgeBuild.id),
                       one_at_a_time=queue.OneAtATime(per=(KnowledgeBuild.kb_id, KnowledgeBuild.kind),
                                                      parent=KnowledgeBase.id, via=KnowledgeBuild.kb_id),
                       resumes=True)

claim = partial(queue.claim, BUILDS)
heartbeat = partial(queue.heartbeat, BUILDS)
report = partial(queue.report, BUILDS)
finish = partial(queue.finish, BUILDS)
fail = partial(queue.fail, BUILDS)
hand_back = partial(queue.hand_back, BUILDS)
mark_cancelled = partial(queue.mark_cancelled, BUILDS)
request_cancel = partial(queue.request_cancel, BUILDS)
requeue_stale = partial(queue.requeue_stale, BUILDS)
requeue_worker = partial(queue.requeue_worker, BUILDS)
requeue_lost = partial(queue.requeue_lost, BUILDS)


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
