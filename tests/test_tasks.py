"""The DB task queue: claiming is exclusive, progress only moves forward, failures keep reasons."""

from __future__ import annotations

import threading

from sqlalchemy import select

from ragloom.db import tasks
from ragloom.db.models import Document, Task
from ragloom.schemas.datasets import KBCreate
from ragloom.service import documents, knowledgebases


def _queue(ctx, principal, n):
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="kb"))
    with ctx.db.session() as s:
        ups = [documents.Upload(filename=f"f{i}.txt", data=f"text {i}".encode()) for i in range(n)]
        return [d.id for d in documents.add_documents(ctx, s, principal=principal, kb_id="kb", uploads=ups)]


def test_each_task_is_claimed_once_by_concurrent_workers(ctx, principal):
    _queue(ctx, principal, 20)
    claimed: list[str] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        while True:
            with ctx.db.session() as s:
                t = tasks.claim(s, worker_id=f"w{i}")
                tid = t.id if t else None
            if tid is None:
                return
            with lock:
                claimed.append(tid)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(claimed) == 20 and len(set(claimed)) == 20


def test_progress_never_goes_back_and_failure_keeps_reason(ctx, principal):
    (doc_id,) = _queue(ctx, principal, 1)
    with ctx.db.session() as s:
        t = tasks.claim(s, worker_id="w")
        tid = t.id
    with ctx.db.session() as s:
        assert tasks.report(s, tid, progress=0.5, message="half")
        assert tasks.report(s, tid, progress=0.2, message="late")
    with ctx.db.session() as s:
        assert s.get(Task, tid).progress == 0.5
        tasks.fail(s, tid, reason="the file is empty")
    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        assert doc.status == "failed" and doc.message == "the file is empty"


def test_cancel_request_is_seen_by_the_running_task(ctx, principal):
    (doc_id,) = _queue(ctx, principal, 1)
    with ctx.db.session() as s:
        tid = tasks.claim(s, worker_id="w").id
    with ctx.db.session() as s:
        documents.cancel(s, principal=principal, kb_id="kb", doc_id=doc_id)
    with ctx.db.session() as s:
        assert tasks.report(s, tid, progress=0.6) is False
        assert s.scalar(select(Document.status).where(Document.id == doc_id)) == "cancelled"
