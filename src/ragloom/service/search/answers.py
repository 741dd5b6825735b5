"""The answer use case: retrieve evidence in the caller's scope, then answer with citations.

:func:`answer` and :func:`answer_stream` serve ``/answer``; chat assistants (``service/chat/completion.py``)
take the same two steps — :func:`find_evidence`, then :func:`write` or :func:`write_stream` — with
their own retrieval options and :class:`Writing`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ragloom.context import Context, Principal
from ragloom.dataflow import Answer, Evidence
from ragloom.generation.extractive import DEFAULT_EMPTY_RESPONSE
from ragloom.generation.prompt import DEFAULT_SYSTEM_PROMPT
from ragloom.models.chat import ChatModel, Sampling
from ragloom.retrieval.types import RetrievalResult
from ragloom.schemas.options import EvidenceOptions, RetrievalOptions
from ragloom.service.accounts import workspace_models
from ragloom.service.search.retrieval import search, term_similarity_fn


@dataclass(frozen=True, slots=True)
class Writing:
    """How an answer is written (the defaults are ``/answer``'s): the system prompt (evidence goes
    at its ``{knowledge}``), the reply when nothing answers, and the chat model's settings."""

    system_prompt: str = DEFAULT_SYSTEM_PROMPT
    empty_response: str = DEFAULT_EMPTY_RESPONSE
    temperature: float = 0.1
    answer_tokens: int = 1024
    sampling: Sampling | None = None


def _evidence(result: RetrievalResult) -> list[Evidence]:
    return [
        Evidence(
            index=i, chunk_id=c.record.id, doc_id=c.record.doc_id, document_name=c.record.document_name,
            content=c.record.content, positions=list(c.record.positions), version_id=c.record.version_id,
            similarity=c.similarity, vector=c.record.vector, table=c.record.table,
            vector_similarity=c.vector_similarity, term_similarity=c.term_similarity, kind=c.record.kind,
            kb_id=c.record.kb_id,
        )
        for i, c in enumerate(result.chunks)
    ]


def find_evidence(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str,
                  options: RetrievalOptions, rerank: bool = True) -> tuple[RetrievalResult, list[Evidence]]:
    """The retrieval an answer runs (its page of chunks) and that page as numbered evidence."""
    result = search(ctx, principal=principal, kb_ids=kb_ids, question=question, options=options, rerank=rerank)
    return result, _evidence(result)


def _chat_model(ctx: Context, tenant_id: str | None) -> ChatModel | None:
    return workspace_models.chat_model(ctx, tenant_id) if tenant_id is not None else ctx.chat_model


def write(ctx: Context, result: RetrievalResult, evidence: list[Evidence], question: str,
          writing: Writing = Writing(), *, tenant_id: str | None = None) -> Answer:
    """A cited answer to ``question`` from ``evidence`` (found by ``result``), written by the chat model
    of workspace ``tenant_id`` (:func:`ragloom.service.accounts.workspace_models.chat_model`; None: the server's)."""
    from ragloom.generation.answer import generate_answer

    embedder = workspace_models.embedder(ctx, result.embedding_model)
    return generate_answer(
        question, evidence, embedder=embedder, chat_model=_chat_model(ctx, tenant_id),
        count_tokens=embedder.count_tokens, max_context_tokens=ctx.settings.chat_max_context_tokens,
        answer_tokens=writing.answer_tokens, term_similarity=term_similarity_fn(ctx),
        temperature=writing.temperature, sampling=writing.sampling, system_prompt=writing.system_prompt,
        empty_response=writing.empty_response, analyzer=ctx.analyzers.for_query(question, result.languages),
    )


def write_stream(ctx: Context, result: RetrievalResult, evidence: list[Evidence], question: str,
                 writing: Writing = Writing(), *, tenant_id: str | None = None) -> Iterator[str | Answer]:
    """Text deltas (``str``) followed by the final Answer (``tenant_id`` as in :func:`write`)."""
    from ragloom.generation.answer import stream_answer

    embedder = workspace_models.embedder(ctx, result.embedding_model)
    yield from stream_answer(
        question, evidence, embedder=embedder, chat_model=_chat_model(ctx, tenant_id),
        count_tokens=embedder.count_tokens, max_context_tokens=ctx.settings.chat_max_context_tokens,
        answer_tokens=writing.answer_tokens, term_similarity=term_similarity_fn(ctx),
        temperature=writing.temperature, sampling=writing.sampling, system_prompt=writing.system_prompt,
        empty_response=writing.empty_response, analyzer=ctx.analyzers.for_query(question, result.languages),
    )


def answer(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str, top_n: int = 6,
           options: EvidenceOptions | None = None) -> Answer:
    """A cited answer (``ragloom.generation.types.Answer``) from the ``top_n`` best chunks."""
    opts = RetrievalOptions.of_answer(options or EvidenceOptions(), top_n)
    result, evidence = find_evidence(ctx, principal=principal, kb_ids=kb_ids, question=question, options=opts)
    return write(ctx, result, evidence, question, tenant_id=principal.tenant_id)


def answer_stream(ctx: Context, *, principal: Principal, kb_ids: list[str], question: str, top_n: int = 6,
                  options: EvidenceOptions | None = None) -> Iterator[str | Answer]:
    """Text deltas (``str``) followed by the final Answer."""
    opts = RetrievalOptions.of_answer(options or EvidenceOptions(), top_n)
    result, evidence = find_evidence(ctx, principal=principal, kb_ids=kb_ids, question=question, options=opts)
    yield from write_stream(ctx, result, evidence, question, tenant_id=principal.tenant_id)
