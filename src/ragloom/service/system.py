"""System use cases: the workers' and queue's health, one workspace's counts."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from ragloom.context import Context
from ragloom.db import workers
from ragloom.db.models import Document, KnowledgeBase, KnowledgeBuild, Task
from ragloom.states import TaskStatus


@dataclass(frozen=True, slots=True)
class WorkerHealth:
    """Workers alive (heartbeat within their timeout), how many of them run a task, and the queue."""

    alive: int
    busy: int
    queued: int
    running: int
    oldest_queued_seconds: float | None
    builds_queued: int = 0
    builds_running: int = 0


def worker_health(ctx: Context) -> WorkerHealth:
    """Liveness of the ingestion workers of every machine sharing the DB; no tenant data."""
    with ctx.db.session() as s:
        alive = workers.alive(s, ctx.settings)
        queue = workers.queue_state(s)
        built = dict(s.execute(select(KnowledgeBuild.status, func.count())
                               .where(KnowledgeBuild.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING)))
                               .group_by(KnowledgeBuild.status)).all())
    return WorkerHealth(alive=len(alive), busy=sum(1 for w in alive if w.task_id), queued=queue.queued,
                        running=queue.running, oldest_queued_seconds=queue.oldest_queued_seconds,
                        builds_queued=built.get(TaskStatus.QUEUED, 0), builds_running=built.get(TaskStatus.RUNNING, 0))


def workspace_counts(session: Session, tenant_id: str) -> dict[str, object]:
    """Counts of one tenant only: knowledge bases, documents and tasks by status."""
    tasks = dict(session.execute(select(Task.status, func.count()).where(Task.tenant_id == tenant_id)
                                 .group_by(Task.status)).all())
    docs = dict(session.execute(select(Document.status, func.count()).where(Document.tenant_id == tenant_id)
                                .group_by(Document.status)).all())
    kbs = session.scalar(select(func.count()).select_from(KnowledgeBase)
                         .where(KnowledgeBase.tenant_id == tenant_id)) or 0
    return {"knowledge_bases": kbs, "documents": docs, "tasks": tasks}
