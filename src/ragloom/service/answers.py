"""The answer use case: retrieve evidence in the caller's scope, then answer with citations."""

from __future__ import annotations

from collections.abc import Iterator

from ragloom.context import Context, Principal
from ragloom.dataflow import Answer, Evidence
from ragloom.retrieval.options import EvidenceOptions, RetrievalOptions
from ragloom.retrieval.types import RetrievalResult
from ragloom.service.search import search, term_similarity_fn


def _evidence(result: RetrievalResult) -> list[Evidence]:
    return [
        Evidence(
            index=i, chunk_id=c.record.id, doc_id=c.record.doc_id, document_name=c.record.document_name,
            content=c.record.content, positions=list(c.record.positions), version_id=c.record.version_id,
            similarity=c.similarity, vector=c.record.vector,
        )
        for i, c in enumerate(result.chunks)
    ]


def answer(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str, top_n: int = 6,
           options: EvidenceOptions | None = None) -> Answer:
    """A cited answer (``ragloom.generation.types.Answer``) from the ``top_n`` best chunks."""
    from ragloom.generation.answer import generate_answer

    opts = RetrievalOptions.of_answer(options or EvidenceOptions(), top_n)
    result = search(ctx, principal=principal, kb_ids=kb_ids, question=question, options=opts)
    embedder = ctx.embedder(result.embedding_model)
    return generate_answer(
        question, _evidence(result), embedder=embedder, chat_model=ctx.chat_model,
        count_tokens=embedder.count_tokens, max_context_tokens=ctx.settings.chat_max_context_tokens,
        term_similarity=term_similarity_fn(ctx),
    )


def answer_stream(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str, top_n: int = 6,
                  options: EvidenceOptions | None = None) -> Iterator[str | Answer]:
    """Text deltas (``str``) followed by the final Answer."""
    from ragloom.generation.answer import stream_answer

    opts = RetrievalOptions.of_answer(options or EvidenceOptions(), top_n)
    result = search(ctx, principal=principal, kb_ids=kb_ids, question=question, options=opts)
    embedder = ctx.embedder(result.embedding_model)
    yield from stream_answer(
        question, _evidence(result), embedder=embedder, chat_model=ctx.chat_model,
        count_tokens=embedder.count_tokens, max_context_tokens=ctx.settings.chat_max_context_tokens,
        term_similarity=term_similarity_fn(ctx),
    )
