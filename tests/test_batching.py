"""Small documents ingested together: one claim takes several, their chunks share model batches and
one search-store write, and each document still succeeds, fails or is cancelled on its own."""

from __future__ import annotations

import numpy as np

from ragloom.db import tasks
from ragloom.db.models import Document, Task
from ragloom.docstore.base import Filters
from ragloom.ingest.pipeline import embed_step
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.service.documents.ingestion import BatchProgress, run_task, run_tasks
from ragloom.worker import run_one


def _kb(ctx, principal, name: str) -> str:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name=name)).id


def _upload(ctx, principal, kb_id: str, files: dict[str, bytes]) -> list[str]:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        docs = catalog.add_documents(ctx, s, principal=principal, kb_id=kb_id,
                                       uploads=[catalog.Upload(filename=n, data=d) for n, d in files.items()])
        return [d.id for d in docs]


def _docs(ctx, ids: list[str]) -> dict[str, Document]:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return {i: s.get(Document, i) for i in ids}


NOTES = {f"note-{i}.txt": f"Maintenance note {i}: the pump number {i} needs grease every {i + 2} hours.".encode()
         for i in range(6)}


def test_one_claim_ingests_every_small_document_waiting_in_the_knowledge_base(ctx, principal) -> None:
    kb_id = _kb(ctx, principal, "notes")
    ids = _upload(ctx, principal, kb_id, NOTES)
    assert run_one(ctx, "w:1:0") is not None
    docs = _docs(ctx, ids)
    assert all(d.status == "done" and d.chunk_count == 1 for d in docs.values()), [
        (d.status, d.message) for d in docs.values()]
    with ctx.db.session() as s:
        assert {t.claimed_by for t in s.query(Task).all()} == {"w:1:0"}
    for i, doc_id in enumerate(ids):  # every document's own text under its own id
        rows, total = ctx.docstore.list_chunks(principal.tenant_id, Filters(kb_ids=[kb_id], doc_ids=[doc_id]))
        assert total == 1 and f"pump number {i} " in rows[0].content


def test_vectors_of_a_batch_are_those_each_document_gets_alone(ctx, principal) -> None:
    alone, together = _kb(ctx, principal, "alone"), _kb(ctx, principal, "together")
    alone_ids = _upload(ctx, principal, alone, NOTES)
    for _ in alone_ids:
        with ctx.db.session() as s:
            task_id = tasks.claim(s, worker_id="one").id
        assert run_task(ctx, task_id) == "done"
    together_ids = _upload(ctx, principal, together, NOTES)
    assert run_one(ctx, "w:1:0") is not None
    tenant = principal.tenant_id
    for a, b in zip(alone_ids, together_ids, strict=True):
        (ra,), _ = ctx.docstore.list_chunks(tenant, Filters(kb_ids=[alone], doc_ids=[a]))
        (rb,), _ = ctx.docstore.list_chunks(tenant, Filters(kb_ids=[together], doc_ids=[b]))
        assert ra.content == rb.content
        np.testing.assert_allclose(np.asarray(ra.vector), np.asarray(rb.vector), atol=2e-3)
        assert float(np.dot(ra.vector, rb.vector)) > 0.9999


def test_a_bad_file_in_a_batch_fails_alone_with_its_reason(ctx, principal) -> None:
    kb_id = _kb(ctx, principal, "mixed")
    good = _upload(ctx, principal, kb_id, {"a.txt": NOTES["note-1.txt"]})
    bad = _upload(ctx, principal, kb_id, {"broken.pdf": b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage"})
    more = _upload(ctx, principal, kb_id, {"b.txt": NOTES["note-2.txt"]})
    run_one(ctx, "w:1:0")
    docs = _docs(ctx, good + bad + more)
    assert docs[bad[0]].status == "failed" and "pdf" in docs[bad[0]].message.lower()
    assert docs[good[0]].status == "done" and docs[more[0]].status == "done"


def test_a_document_cancelled_in_a_batch_is_cancelled_and_the_others_published(ctx, principal) -> None:
    kb_id = _kb(ctx, principal, "cancel")
    ids = _upload(ctx, principal, kb_id, dict(list(NOTES.items())[:3]))
    with ctx.db.session() as s:
        first = tasks.claim(s, worker_id="w")
        batch = [first.id] + [t.id for t in tasks.claim_more(s, first, worker_id="w", limit=15, max_bytes=32_768)]
    assert len(batch) == 3
    with ctx.db.session() as s:
        catalog.cancel(s, principal=principal, kb_id=kb_id, doc_id=ids[1])
    outcomes = run_tasks(ctx, batch)
    assert sorted(outcomes.values()) == ["cancelled", "done", "done"]
    docs = _docs(ctx, ids)
    assert [d.status for d in docs.values()] == ["done", "cancelled", "done"]
    assert ctx.docstore.count(principal.tenant_id, Filters(kb_ids=[kb_id], doc_ids=[ids[1]])) == 0


def test_large_files_page_ranges_and_other_knowledge_bases_are_not_batched(ctx, principal) -> None:
    kb_id, other = _kb(ctx, principal, "big"), _kb(ctx, principal, "other")
    _upload(ctx, principal, kb_id, {"small.txt": NOTES["note-0.txt"]})
    _upload(ctx, principal, kb_id, {"large.txt": b"A long line of plain words. " * 2000})
    _upload(ctx, principal, other, {"elsewhere.txt": NOTES["note-3.txt"]})
    _upload(ctx, principal, kb_id, {"small2.txt": NOTES["note-4.txt"]})
    with ctx.db.session() as s:
        first = tasks.claim(s, worker_id="w")
        more = tasks.claim_more(s, first, worker_id="w", limit=15, max_bytes=32_768)
        names = {s.get(Document, t.document_id).name for t in [first, *more]}
    assert names == {"small.txt", "small2.txt"}


def test_a_batch_leaves_the_other_workers_their_share(ctx, principal) -> None:
    kb_id = _kb(ctx, principal, "shared")
    _upload(ctx, principal, kb_id, {f"n{i}.txt": f"Note {i} about valves.".encode() for i in range(8)})
    with ctx.db.session() as s:
        first = tasks.claim(s, worker_id="w1")
        mine = tasks.claim_more(s, first, worker_id="w1", limit=15, max_bytes=32_768, workers=2)
    with ctx.db.session() as s:
        second = tasks.claim(s, worker_id="w2")
        theirs = tasks.claim_more(s, second, worker_id="w2", limit=15, max_bytes=32_768, workers=2)
    assert (1 + len(mine), 1 + len(theirs)) == (4, 2)  # half of 8, then half of the 4 left


def test_the_shared_steps_of_a_batch_move_every_task_s_progress(ctx, principal) -> None:
    kb_id = _kb(ctx, principal, "moving")
    _upload(ctx, principal, kb_id, dict(list(NOTES.items())[:3]))
    with ctx.db.session() as s:
        first = tasks.claim(s, worker_id="w")
        batch = [first.id] + [t.id for t in tasks.claim_more(s, first, worker_id="w", limit=15, max_bytes=32_768)]
    progress = BatchProgress(ctx, batch)
    progress(0.6, "embedded 16/32 chunks")
    progress(0.7, "embedded 24/32 chunks")  # within a second: not written
    with ctx.db.session() as s:
        rows = [s.get(Task, t) for t in batch]
        assert [(t.progress, t.message) for t in rows] == [(0.6, "embedded 16/32 chunks, in a batch of 3 parts")] * 3
    assert [embed_step(n) for n in (1, 31, 100, 1000)] == [8, 8, 13, 32]  # a few dozen chunks: several steps
