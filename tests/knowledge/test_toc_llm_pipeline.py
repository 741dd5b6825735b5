"""End to end: a document without headings gets its table of contents from the chat model
(a real OpenAI-wire test server on loopback), stored hidden, and TOC enhancement uses it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.config import Settings
from ragloom.context import Context
from ragloom.docstore.ids import toc_id
from ragloom.knowledge.toc import load_toc
from ragloom.schemas.datasets import KBCreate
from ragloom.schemas.options import RetrievalOptions
from ragloom.service import knowledgebases
from ragloom.service.documents import catalog
from ragloom.service.search.retrieval import search
from ragloom.worker import run_until
from tests.fakes.openai_server import FakeOpenAIServer
from tests.knowledge.test_toc_llm import script_toc

MANUAL = """Espresso machine guide for the home barista

Descaling
Run a citric acid solution through the boiler every month. Rinse twice with clean water afterwards.

Warranty terms
Claims are accepted for two years after the date on the receipt. Keep the receipt in a safe place.

Cleaning the steam wand
Wipe the wand after every use and purge it briefly to clear milk residue from the tip.
"""
TITLES = {"home barista": "Espresso machine guide", "Descaling": "Descaling", "Warranty terms": "Warranty terms",
          "Cleaning the steam wand": "Cleaning the steam wand"}
LEVELS = {"Espresso machine guide": 1}


def rate_or_script(body: dict) -> str:
    """Title ratings for the question (5 for the warranty section), else the TOC script."""
    prompt = body["messages"][-1]["content"]
    if "Rate how likely" in prompt:
        listing = re.findall(r"^(\d+)\. (.+)$", prompt.split("Sections of a document:")[1], re.M)
        return "\n".join(f"{i}: {5 if 'Warranty' in t else 0}" for i, t in listing)
    return script_toc(TITLES, LEVELS)(body)


@pytest.fixture
def llm() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=rate_or_script) as server:
        yield server


@pytest.fixture
def settings(tmp_path: Path, llm: FakeOpenAIServer) -> Settings:
    return Settings(home=tmp_path / "home", workers=0, worker_poll_seconds=0.05, chat_base_url=llm.base_url,
                    chat_model="fake-chat", _env_file=None)


def _ingest(ctx: Context, principal, text: str, parser_config: dict):  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="manuals", parser_config=parser_config))
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="manuals",
                                         uploads=[catalog.Upload(filename="espresso.txt", data=text.encode())])
        doc_id = doc.id

    def done() -> bool:
        with ctx.db.session() as s:
            return catalog.get(s, principal=principal, kb_id="manuals", doc_id=doc_id).status in (
                "done", "failed")

    run_until(ctx, done, poll=0.01)
    with ctx.db.session() as s:
        doc = catalog.get(s, principal=principal, kb_id="manuals", doc_id=doc_id)
        return doc.status, doc.message, doc.active_version_id


def _toc_rows(ctx: Context, principal, version: str):  # type: ignore[no-untyped-def]
    return ctx.docstore.get(principal.tenant_id, [toc_id(version, 0)])


def test_the_chat_model_builds_a_toc_that_enhancement_uses(ctx, principal, llm) -> None:
    status, message, version = _ingest(ctx, principal, MANUAL, {"toc_extraction": True, "chunk_token_num": 24})
    assert status == "done" and "TOC: 4 entries built by the chat model" in message
    (row,) = _toc_rows(ctx, principal, version)
    assert row.available is False and row.kind == "toc"
    entries = load_toc(row.content)
    assert [(e.level, e.title) for e in entries] == [
        (1, "Espresso machine guide"), (1, "Descaling"), (1, "Warranty terms"), (1, "Cleaning the steam wand")]
    warranty = entries[2]
    visible = [c for c in ctx.docstore.get(principal.tenant_id, list(warranty.ids))]
    assert visible and any("two years" in c.content for c in visible)

    question = "what if my machine breaks down"
    opts = {"similarity_threshold": 0.0, "page_size": 6}
    plain = search(ctx, principal=principal, kb_ids=["manuals"], question=question, options=RetrievalOptions(**opts))
    boosted = search(ctx, principal=principal, kb_ids=["manuals"], question=question,
                     options=RetrievalOptions(toc_enhance=True, **opts))
    before = {c.record.id: c.similarity for c in plain.chunks}
    assert plain.chunks[0].record.id not in warranty.ids  # without the TOC another section wins
    assert {c.record.id for c in boosted.chunks[: len(warranty.ids)]} == set(warranty.ids)  # the section first
    claims = next(c for c in boosted.chunks if "two years" in c.record.content)
    assert claims.similarity > before.get(claims.record.id, 0.0) + 0.5  # rated 5/5 by the model: +1.0


def test_malformed_replies_never_fail_the_document(ctx, principal, llm) -> None:
    llm.responder = lambda body: "no JSON here, sorry"
    status, message, version = _ingest(ctx, principal, MANUAL, {"toc_extraction": True, "chunk_token_num": 24})
    assert status == "done" and "found no section titles" in message and "batches skipped" in message
    assert _toc_rows(ctx, principal, version) == []


def test_a_failing_chat_model_leaves_the_document_without_toc(ctx, principal, llm) -> None:
    for _ in range(3):
        llm.fail_next(500)
    status, message, version = _ingest(ctx, principal, MANUAL, {"toc_extraction": True})
    assert status == "done" and "no TOC: the chat model failed" in message
    assert _toc_rows(ctx, principal, version) == []


def test_without_a_chat_model_there_is_no_toc_and_the_reason_is_recorded(tmp_path: Path) -> None:
    from ragloom.service.accounts import identity

    c = Context(Settings(home=tmp_path / "plain", workers=0, _env_file=None))
    c.init_storage()
    try:
        with c.db.session() as s:
            principal = identity.bootstrap(s).principal
        status, message, version = _ingest(c, principal, MANUAL, {"toc_extraction": True})
        assert status == "done" and "no TOC: toc_extraction needs a chat model" in message
        assert _toc_rows(c, principal, version) == []
    finally:
        c.close()


def test_a_document_with_headings_needs_no_model(ctx, principal, llm) -> None:
    text = "# Guide\n\n## Descaling\n\nRun citric acid through the boiler.\n\n## Warranty\n\nTwo years.\n"
    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(
            name="md", parser_config={"toc_extraction": True}))
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="md",
                                         uploads=[catalog.Upload(filename="guide.md", data=text.encode())])
        doc_id = doc.id
    run_until(ctx, lambda: _status(ctx, principal, "md", doc_id) in ("done", "failed"), poll=0.01)
    with ctx.db.session() as s:
        version = catalog.get(s, principal=principal, kb_id="md", doc_id=doc_id).active_version_id
    (row,) = _toc_rows(ctx, principal, version)
    assert [e.title for e in load_toc(row.content)] == ["Guide", "Descaling", "Warranty"]
    assert not any(r.path.endswith("/chat/completions") for r in llm.requests)


def _status(ctx: Context, principal, kb: str, doc_id: str) -> str:  # type: ignore[no-untyped-def]
    with ctx.db.session() as s:
        return catalog.get(s, principal=principal, kb_id=kb, doc_id=doc_id).status


def test_toc_extraction_parses_a_long_pdf_as_one_task(tmp_path: Path) -> None:
    from ragloom.service.documents.catalog import WHOLE, page_ranges
    from tests.ingest.docgen import make_pdf

    pdf = tmp_path / "long.pdf"
    make_pdf(pdf, [[f"Page {n} text."] for n in range(1, 15)])
    assert len(page_ranges(pdf.read_bytes(), "long.pdf", "naive", {})) == 2
    assert page_ranges(pdf.read_bytes(), "long.pdf", "naive", {"toc_extraction": True}) == [WHOLE]
