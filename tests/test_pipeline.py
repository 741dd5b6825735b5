"""The ingestion task executor: cancellation and failures leave the active version untouched."""

from __future__ import annotations

from ragloom.db import tasks
from ragloom.db.models import Document, DocumentVersion, Task
from ragloom.docstore.base import Filters
from ragloom.schemas.datasets import KBCreate
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.service.documents.ingestion import run_task


def _upload(ctx, principal, name: str, data: bytes) -> str:
    with ctx.db.session() as s:
        if not knowledgebases.list_visible(s, principal=principal):
            knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="kb"))
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="kb",
                                         uploads=[catalog.Upload(filename=name, data=data)])
        return doc.id


def _claim(ctx) -> str:
    with ctx.db.session() as s:
        return tasks.claim(s, worker_id="test").id


def test_cancelled_task_discards_its_chunks_and_keeps_the_active_version(ctx, principal) -> None:
    doc_id = _upload(ctx, principal, "a.md", b"# A\n\nThe first version says alpha.\n")
    assert run_task(ctx, _claim(ctx)) == "done"
    with ctx.db.session() as s:
        v1 = s.get(Document, doc_id).active_version_id
    _upload(ctx, principal, "a.md", b"# A\n\nThe second version says omega.\n")
    task_id = _claim(ctx)
    with ctx.db.session() as s:
        catalog.cancel(s, principal=principal, kb_id="kb", doc_id=doc_id)
    assert run_task(ctx, task_id) == "cancelled"
    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        task = s.get(Task, task_id)
        assert doc.active_version_id == v1 and doc.status == "cancelled"
        assert task.status == "cancelled"
        assert s.get(DocumentVersion, task.version_id).status == "cancelled"
        new_version = task.version_id
    tenant = principal.tenant_id
    kb_ids = [doc.kb_id]
    assert ctx.docstore.count(tenant, Filters(kb_ids=kb_ids, version_ids=[new_version])) == 0
    assert ctx.docstore.count(tenant, Filters(kb_ids=kb_ids, version_ids=[v1])) == 1


def test_parse_failure_keeps_reason_and_previous_version(ctx, principal) -> None:
    doc_id = _upload(ctx, principal, "b.md", b"# B\n\nA good first version.\n")
    assert run_task(ctx, _claim(ctx)) == "done"
    _upload(ctx, principal, "b.md", b"")
    task_id = _claim(ctx)
    assert run_task(ctx, task_id) == "failed"
    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        task = s.get(Task, task_id)
        assert doc.status == "failed" and "empty" in doc.message
        assert doc.active_version_id is not None and doc.active_version_id != task.version_id
        assert "empty" in s.get(DocumentVersion, task.version_id).error


def test_large_pdf_is_split_into_page_range_tasks(ctx, principal, tmp_path) -> None:
    from sqlalchemy import select

    from ragloom.service.search.retrieval import search
    from ragloom.worker import run_one
    from tests.ingest.docgen import make_pdf

    pages = [[f"## Page {n}", f"This page talks about topic number {n} and the code word is W{n}Z."]
             for n in range(1, 31)]
    pdf = tmp_path / "big.pdf"
    make_pdf(pdf, pages)
    with ctx.db.session() as s:  # a small budget: every page is a chunk of its own
        knowledgebases.create(ctx, s, principal=principal,
                              spec=KBCreate(name="kb", parser_config={"chunk_token_num": 32}))
    doc_id = _upload(ctx, principal, "big.pdf", pdf.read_bytes())
    with ctx.db.session() as s:
        ranges = sorted((t.from_page, t.to_page) for t in s.scalars(select(Task).where(Task.document_id == doc_id)))
    assert ranges == [(1, 12), (13, 24), (25, 30)]
    with ctx.db.session() as s:
        tid = tasks.claim(s, worker_id="a").id
    assert run_task(ctx, tid) == "done"
    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        assert doc.status == "queued" and 0.3 < doc.progress < 0.4 and doc.active_version_id is None
        assert doc.message == "1 of 3 page ranges done; waiting for a worker"
    while run_one(ctx, "b"):
        pass
    with ctx.db.session() as s:
        doc = s.get(Document, doc_id)
        assert doc.status == "done" and doc.progress == 1.0 and doc.active_version_id == doc.latest_version_id
        version = s.get(DocumentVersion, doc.active_version_id)
        assert version.status == "ready" and version.chunk_count == doc.chunk_count > 0
        task_words = [t.coverage["words"] for t in s.scalars(select(Task).where(Task.document_id == doc_id))]
        assert doc.coverage == version.coverage and version.coverage["words"] == sum(task_words) > 0
        assert version.coverage["ratio"] == 1.0
    rows, total = ctx.docstore.list_chunks(principal.tenant_id, Filters(kb_ids=[doc.kb_id], doc_ids=[doc_id]),
                                           limit=1000)
    assert total == doc.chunk_count
    first_pages = [r.positions[0][0] for r in rows]
    assert first_pages == sorted(first_pages) and first_pages[-1] == 30 and len(set(first_pages)) == 30
    hit = search(ctx, principal=principal, kb_ids=["kb"], question="code word W25Z").chunks[0]
    assert "W25Z" in hit.record.content and {p[0] for p in hit.record.positions} == {25}


def test_reindex_rebuilds_the_search_store_from_the_stored_files(ctx, principal) -> None:
    from ragloom.service.search.retrieval import search
    from ragloom.worker import run_one

    doc_id = _upload(ctx, principal, "r.md", b"# R\n\nThe ferry to the island leaves at seven fifteen.\n")
    assert run_task(ctx, _claim(ctx)) == "done"
    with ctx.db.session() as s:
        (doc,) = catalog.reindex(ctx, s, principal=principal, drop=True)
        assert doc.id == doc_id
    assert search(ctx, principal=principal, kb_ids=["kb"], question="when does the ferry leave").chunks == []
    while run_one(ctx, "w"):
        pass
    hit = search(ctx, principal=principal, kb_ids=["kb"], question="when does the ferry leave").chunks[0]
    assert "seven fifteen" in hit.record.content


def test_a_long_pdfs_ranges_share_the_workers_with_later_uploads(ctx, principal, tmp_path) -> None:
    import random

    from tests.ingest.docgen import make_pdf, paragraph

    pdf = tmp_path / "long.pdf"
    rng = random.Random(4)
    make_pdf(pdf, [[paragraph(rng, 3)] for _ in range(30)])
    long_id = _upload(ctx, principal, "long.pdf", pdf.read_bytes())
    small = [_upload(ctx, principal, f"note-{i}.md", f"# Note {i}\n\nSmall note number {i}.\n".encode())
             for i in range(4)]
    order = []
    for _ in range(3):  # two workers: each claims while the other's task still runs
        with ctx.db.session() as s:
            first, second = tasks.claim(s, worker_id="a"), tasks.claim(s, worker_id="b")
            order += [first.document_id, second.document_id]
        for task in (first, second):
            outcome = run_task(ctx, task.id)
            with ctx.db.session() as s:
                assert outcome == "done", s.get(Task, task.id).message
    assert order == [long_id, small[0], long_id, small[1], long_id, small[2]]  # a range in every round
