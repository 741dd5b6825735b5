"""Ingestion tasks: a document's cancel is seen by its running task. (The queue's lifecycle, for tasks and
builds alike, is tested in ``test_queue.py``.)"""

from __future__ import annotations

from sqlalchemy import select

from ragloom.db import tasks
from ragloom.db.models import Document
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog


def _queue(ctx, principal, n):
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="kb"))
    with ctx.db.session() as s:
        ups = [catalog.Upload(filename=f"f{i}.txt", data=f"text {i}".encode()) for i in range(n)]
        return [d.id for d in catalog.add_documents(ctx, s, principal=principal, kb_id="kb", uploads=ups)]


def test_cancel_request_is_seen_by_the_running_task(ctx, principal):
    (doc_id,) = _queue(ctx, principal, 1)
    with ctx.db.session() as s:
        tid = tasks.claim(s, worker_id="w").id
    with ctx.db.session() as s:
        catalog.cancel(s, principal=principal, kb_id="kb", doc_id=doc_id)
    with ctx.db.session() as s:
        assert tasks.report(s, tid, progress=0.6) is False
        assert s.scalar(select(Document.status).where(Document.id == doc_id)) == "cancelled"
