"""A retrieval: the request (a question, the datasets, the options of :mod:`ragloom.schemas.options`
and a scope) and its result — the chunks found, why each candidate ended where it did, the knowledge
bases routed to and the applicability scope decided."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Positions, Request, View, absent_unless
from ragloom.schemas.options import RetrievalOptions
from ragloom.schemas.scope import ScopeRequest


class RetrievedChunk(View):
    chunk_id: str
    doc_id: str
    kb_id: str
    version_id: str
    document_name: str
    content: str
    similarity: Number = Field(description="the final score (0..1) the results are ranked by")
    term_similarity: Number
    vector_similarity: Number
    rank_feature: Number
    rerank_score: Number | None = Field(description="the reranker's score (0..1); null when none re-scored it")
    relevance: Number | None = Field(description="the calibrated probability (0..1) that the chunk is relevant to "
                                     "the question: the same scale whatever the fusion, mode and question; null "
                                     "when not scored (a table-of-contents or knowledge-graph item)")
    tags: dict[str, Number]
    important_keywords: list[str] = Field(default_factory=list, description="the chunk's important keywords "
                                          "(normalised), matched beside its text")
    positions: Positions
    layer: int | SkipJsonSchema[None] = absent_unless("a RAPTOR summary: its layer (1 = summaries of chunks)")
    source_ids: list[str] | SkipJsonSchema[None] = absent_unless(
        "a RAPTOR summary: the rows it summarises (chunks of its document, or summaries of the layer below)")
    built_by: str | SkipJsonSchema[None] = absent_unless(
        "a RAPTOR summary: raptor:extractive (sentences of its sources) or raptor:llm:<model>")
    figure: str | SkipJsonSchema[None] = absent_unless(
        "a figure: its picture (GET it with the same credentials); its text is the caption, the vision model's "
        "description, the text read in it and the paragraphs around it")


class ExplainCandidate(View):
    """Why one recalled candidate ended where it did."""

    chunk_id: str
    doc_id: str
    kb_id: str
    document_name: str
    stage: str = Field(description="'returned' or the stage that dropped it: prune, threshold, relevance "
                       "(under min_relevance) or page")
    reason: str
    passed_gate: bool = Field(description="false = found by vector search only")
    text_score: Number | None
    term_similarity: Number | None
    vector_similarity: Number | None
    rank_feature: Number
    rerank_score: Number | None
    similarity: Number | None
    rank: int | None
    relevance: Number | None = Field(description="the calibrated probability (0..1) that the chunk is relevant")


class Explain(View):
    query: dict[str, Any] | None = Field(
        description="query-level facts: scope, analysed keywords, gate, threshold, fusion, retries, routing, "
                    "query_tags (keys depend on the path the query took)")
    candidates: list[ExplainCandidate]


class RoutingChoice(View):
    """How well one candidate knowledge base's description fits the question."""

    kb_id: str
    name: str
    score: Number | None = Field(description="null when there was nothing to choose between")
    chosen: bool


class ScopeView(View):
    """The applicability scope decided before retrieval (``ragloom.retrieval.scope``)."""

    status: Literal["none", "scoped", "clarify", "gap"] = Field(
        description="scoped: retrieval was restricted to the matching documents; clarify: a value is missing "
        "and the reply asks for it; gap: no document carries a value, nothing was retrieved; none: no scope")
    values: dict[str, str] = Field(description="key -> the value decided (as the documents spell it)")
    sources: dict[str, str] = Field(description="key -> where the value came from: question, conversation, "
                                    "request (alias when it was an alias)")
    missing: list[str] = Field(description="keys without a value (clarify)")
    unknown: dict[str, str] = Field(description="key -> a value no document carries (gap)")
    known: dict[str, list[str]] = Field(description="key -> the values the documents carry")
    documents: int | None = Field(description="how many documents the answer may come from")
    reason: str
    message: str | None = Field(description="clarify: the question asking for the missing values; gap: the reply "
                                "naming the value no document carries; null otherwise")


class Retrieval(View):
    chunks: list[RetrievedChunk]
    total: int = Field(description="matches over the threshold (within the result window)")
    explain: Explain | SkipJsonSchema[None] = absent_unless("the request set explain")
    routing: list[RoutingChoice] | SkipJsonSchema[None] = absent_unless("the request set route: every "
                                                                         "candidate knowledge base, best first")
    scope: ScopeView | SkipJsonSchema[None] = absent_unless("the request set scope: the scope decided before "
                                                           "retrieval (clarify and gap retrieve nothing)")


MAX_DATASETS = 100  # knowledge bases searched by one request


class Question(Request):
    """The question and where to look: the first fields of the retrieval and answer bodies."""

    question: str = Field(min_length=1, max_length=4000)
    dataset_ids: list[str] = Field(default_factory=list, max_length=MAX_DATASETS,
                                   description="required unless route is true")


class RetrievalRequest(RetrievalOptions, Question):
    """A question, the datasets to search, and how to search them."""

    scope: ScopeRequest | None = Field(None, description="the applicability scope, decided before retrieval: "
                                       "the documents whose metadata match the values (given, or read from the "
                                       "question); a missing value (clarify) or one no document carries (gap) "
                                       "retrieves nothing — the response's scope says which and why")
