"""A search page over an assistant (issue 33; the reference system's "search app"): one question, the
answer with its citations (the assistant's chat model, or extractive), and below it the results —
each chunk with its document, the spans that state the question's terms, and where its pages are.
Nothing is stored: a search page keeps no session. Signed-in users reach it by the assistant
(``POST /chats/{id}/search``), visitors by a share link of kind ``search``."""

from __future__ import annotations

from collections.abc import Callable

from ragloom.context import Context, Principal
from ragloom.generation.keyterms import default_analyzer
from ragloom.nlp.highlight import spans
from ragloom.retrieval.graph_evidence import is_kg_id
from ragloom.schemas.chats import ChatReference, CompletionRequest
from ragloom.schemas.shares import SearchHit, SearchResults
from ragloom.service.chat import completion

MAX_RESULTS = 10


def search(ctx: Context, *, principal: Principal, assistant_id: str, question: str,
           pages_of: Callable[[str, str, str], str | None],
           reference: Callable[[ChatReference], ChatReference] = lambda r: r) -> SearchResults:
    """The answer and the results; ``pages_of(kb_id, doc_id, version_id)`` gives a result's pages link
    (None: none to show) and ``reference`` how a citation is shown (a visitor's: through the link)."""
    prepared = completion.prepare(ctx, principal=principal, assistant_id=assistant_id,
                                  request=CompletionRequest(question=question))
    answer = completion.reply(ctx, prepared=prepared)
    hits: list[SearchHit] = []
    if prepared.result is not None:
        terms = [t for t, _ in prepared.result.keywords]
        analyzer = default_analyzer()
        for c in prepared.result.chunks:
            rec = c.record
            if is_kg_id(rec.doc_id) or not rec.document_name:
                continue  # a knowledge graph's or a summary tree's row: no document to open
            hits.append(SearchHit(
                chunk_id=rec.id, doc_id=rec.doc_id, document_name=rec.document_name, content=rec.content,
                highlights=[[a, b] for a, b in spans(rec.content, terms, analyzer)],
                positions=[[float(v) for v in p] for p in rec.positions], pages=pages_of(rec.kb_id, rec.doc_id,
                                                                                         rec.version_id),
                similarity=round(float(c.similarity), 6),
                relevance=None if c.relevance is None else round(float(c.relevance), 6)))
            if len(hits) >= MAX_RESULTS:
                break
    return SearchResults(answer=answer.answer, insufficient=answer.insufficient, model=answer.model,
                         references=[reference(r) for r in answer.references], citations=answer.citations,
                         results=hits)
