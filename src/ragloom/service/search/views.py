"""The builders of the search resources ragloom shows — a retrieval with its chunks, explanation, routing
and scope, an answer with its references and citations, a knowledge base's tag counts — from pipeline
results (the conventions of :mod:`ragloom.service.views`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ragloom.dataflow import Candidate, ChunkKind
from ragloom.db import models as db
from ragloom.retrieval.types import RetrievalResult
from ragloom.schemas.answers import AnswerCitation, CitedAnswer, Reference
from ragloom.schemas.datasets import DatasetTags, TagCount
from ragloom.schemas.retrieval import Explain, ExplainCandidate, Retrieval, RetrievedChunk, RoutingChoice, ScopeView
from ragloom.service.views import figure_link, positions_view, summary_fields

if TYPE_CHECKING:
    from ragloom.dataflow import Answer, Citation, Evidence


def tags_view(kb: db.KnowledgeBase, counts: Mapping[str, int], *, is_tag_set: bool) -> DatasetTags:
    """The tag counts of a knowledge base, most frequent first (then by tag)."""
    return DatasetTags(
        kb_id=kb.id, name=kb.name, is_tag_set=is_tag_set,
        tags=[TagCount(tag=t, count=c) for t, c in sorted(counts.items(), key=lambda p: (-p[1], p[0]))],
        total=len(counts),
    )


def scope_view(decision: Mapping[str, Any]) -> ScopeView:
    return ScopeView.model_validate(decision)


def chunk_view(c: Candidate) -> RetrievedChunk:
    r = c.record
    return RetrievedChunk(
        chunk_id=r.id,
        doc_id=r.doc_id,
        kb_id=r.kb_id,
        version_id=r.version_id,
        document_name=r.document_name,
        content=r.content,
        similarity=round(c.similarity, 6),
        term_similarity=round(c.term_similarity, 6),
        vector_similarity=round(c.vector_similarity, 6),
        rank_feature=round(c.rank_feature, 6),
        rerank_score=None if c.rerank_score is None else round(c.rerank_score, 6),
        relevance=None if c.relevance is None else round(c.relevance, 6),
        tags=dict(r.tags),
        important_keywords=list(r.important_keywords),
        positions=positions_view(r),
        **summary_fields(r),
        **({"figure": figure_link(r.kb_id, r.doc_id, r.id)} if r.kind == ChunkKind.FIGURE else {}),
    )


def explain_view(result: RetrievalResult) -> Explain | None:
    if result.explain is None:
        return None
    rows = []
    for row in result.explain:
        d = asdict(row)
        for key in ("text_score", "term_similarity", "vector_similarity", "rerank_score", "similarity", "relevance"):
            if d[key] is not None:
                d[key] = round(d[key], 6)
        rows.append(ExplainCandidate(**d))
    return Explain(query=result.explain_query, candidates=rows)


def retrieval_view(result: RetrievalResult) -> Retrieval:
    routing = None if result.routing is None else [RoutingChoice.model_validate(r) for r in result.routing]
    return Retrieval(chunks=[chunk_view(c) for c in result.chunks], total=result.total,
                     explain=explain_view(result), routing=routing,
                     scope=scope_view(result.scope) if result.scope is not None else None)


def reference_view(ev: Evidence) -> Reference:
    """The form an answer's evidence is shown in (no vector)."""
    return Reference(id=ev.index, chunk_id=ev.chunk_id, doc_id=ev.doc_id, version_id=ev.version_id,
                     document_name=ev.document_name, content=ev.content, positions=[list(p) for p in ev.positions],
                     figure=figure_link(ev.kb_id, ev.doc_id, ev.chunk_id) if ev.kind == ChunkKind.FIGURE else None)



def citation_view(c: Citation, sentences: Sequence[str]) -> AnswerCitation:
    return AnswerCitation(sentence=c.sentence, text=sentences[c.sentence] if 0 <= c.sentence < len(sentences) else "",
                          id=c.index, verdict=c.verdict, support=c.support,
                          supporting_sentence=c.supporting_sentence, inserted=c.inserted)


def answer_view(answer: Answer) -> CitedAnswer:
    return CitedAnswer(answer=answer.text, model=answer.model, insufficient=answer.insufficient,
                       truncated=answer.truncated,
                       references=[reference_view(ev) for ev in answer.references], mode=answer.mode,
                       citations=[citation_view(c, answer.sentences) for c in answer.citations])
