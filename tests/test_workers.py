"""Two worker processes ingesting into one tenant index at once lose and duplicate nothing."""

from __future__ import annotations

import os
import time

import pytest

from ragloom.docstore.base import Filters
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.supervisor import WorkerPool
from tests.ingest.docgen import paragraph

pytestmark = pytest.mark.slow


def test_two_worker_processes_ingest_together(ctx, principal, settings) -> None:
    import random

    rng = random.Random(5)
    with ctx.db.session() as s:
        kb = knowledgebases.create(ctx, s, principal=principal,
                                   spec=KBCreate(name="shared", parser_config={"chunk_token_num": 64}))
        kb_id = kb.id
    texts = {f"doc{i}.md": f"# Doc {i}\n\n" + "\n\n".join(paragraph(rng, 4) for _ in range(6)) for i in range(8)}
    with ctx.db.session() as s:
        ups = [catalog.Upload(filename=n, data=t.encode()) for n, t in texts.items()]
        catalog.add_documents(ctx, s, principal=principal, kb_id=kb_id, uploads=ups)
    pool = WorkerPool(settings, 2).start()
    try:
        deadline = time.monotonic() + 300
        own = os.getpriority(os.PRIO_PROCESS, 0)
        while any(slot.process is None for slot in pool.slots):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # questions first: the workers run below the server's priority (RAGLOOM_WORKER_NICE, 10 by default)
        for slot in pool.slots:
            assert slot.process is not None and slot.process.pid is not None
            while os.getpriority(os.PRIO_PROCESS, slot.process.pid) == own and slot.process.is_alive():
                assert time.monotonic() < deadline  # the child renices itself once it has started
                time.sleep(0.05)
            assert os.getpriority(os.PRIO_PROCESS, slot.process.pid) == min(19, own + settings.worker_nice)
        while True:
            with ctx.db.session() as s:
                docs, _ = catalog.list_documents(s, principal=principal, kb_id=kb_id)
                state = [(d.id, d.status, d.chunk_count, d.message) for d in docs]
            if all(st in ("done", "failed") for _, st, _, _ in state):
                break
            assert time.monotonic() < deadline, state
            time.sleep(0.2)
    finally:
        pool.stop()
    assert all(st == "done" for _, st, _, _ in state), state
    with ctx.db.session() as s:
        from ragloom.db.models import Task

        claimed_by = {t.claimed_by for t in s.query(Task).all()}
    assert len(claimed_by) == 2  # both processes did work
    expected = sum(n for _, _, n, _ in state)
    assert ctx.docstore.count(principal.tenant_id, Filters(kb_ids=[kb_id])) == expected
    for doc_id, _, n, _ in state:
        rows, total = ctx.docstore.list_chunks(principal.tenant_id, Filters(kb_ids=[kb_id], doc_ids=[doc_id]),
                                               limit=1000)
        assert total == n and sorted(r.order for r in rows) == list(range(n))
        assert len({r.id for r in rows}) == n
