"""Dataclasses passed between retrieval stages."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ragloom.dataflow import Candidate
from ragloom.schemas.options import RetrievalOptions


@dataclass(slots=True)
class Scope:
    """What the caller may search: resolved before relevance, applied as a pre-filter."""

    tenant_id: str
    kb_ids: list[str]
    embedding_model: str
    doc_ids: list[str] | None = None
    hidden_doc_ids: list[str] = field(default_factory=list)  # documents the caller may not read (source permissions)
    pageranks: dict[str, int] = field(default_factory=dict)  # kb_id -> 0..100
    synonym_groups: list[list[str]] = field(default_factory=list)  # the knowledge bases' own
    query_tags: dict[str, float] = field(default_factory=dict)  # the question's tags (tag sets, §5.5)
    languages: list[str] = field(default_factory=list)  # the knowledge bases' languages (the query's analyser)


@dataclass(slots=True)
class RetrievalParams:
    """What the stages run with: the caller's ``options`` (page, page size, mode: ``hybrid`` = full-text
    gate + KNN, fused; ``keyword`` = full text only; ``vector`` = KNN only) and the values that
    ``service.search`` resolves from them, the knowledge base and the settings."""

    options: RetrievalOptions = field(default_factory=RetrievalOptions)
    similarity_threshold: float = 0.2
    # the weight of the chosen fusion; search() fills it (service.search.vector_weight: 0.7 for normalized)
    vector_similarity_weight: float = 0.3
    candidate_window: int = 64
    rerank_window: int = 64  # how many of the best candidates a reranker rescores (its own setting)
    # "normalized": z-scores of term and vector similarity over the candidates, weighted, logistic — a
    # relative score with no threshold; "weighted": the reference's (1 − vsw)·term + vsw·cosine (fusion.py)
    fusion: str = "normalized"
    # chunks whose calibrated relevance (ragloom.retrieval.relevance) is lower are dropped; 0: none
    min_relevance: float = 0.0
    # the whole search returns nothing when the question's answerable probability is lower; 0: no gate
    min_answerable: float = 0.0

    @property
    def mode_vector_weight(self) -> float:
        """The vector side's weight in this mode: 0 keyword-only, 1 vector-only, else ``vector_similarity_weight``."""
        return {"keyword": 0.0, "vector": 1.0}.get(self.options.mode, self.vector_similarity_weight)


@dataclass(slots=True)
class ExplainRow:
    """Why one candidate ended where it did. ``stage`` is ``returned`` or the stage that
    dropped it: ``prune`` (its document was deleted or this is not the active version),
    ``threshold`` (final similarity below the threshold), ``relevance`` (calibrated
    relevance below ``min_relevance``) or ``page`` (ranked outside the
    requested page). ``passed_gate`` tells whether the full-text gate let it through
    (False = found by vector search only)."""

    chunk_id: str
    doc_id: str
    document_name: str
    stage: str
    reason: str
    passed_gate: bool
    kb_id: str = ""
    text_score: float | None = None
    term_similarity: float | None = None
    vector_similarity: float | None = None
    rank_feature: float = 0.0
    rerank_score: float | None = None
    similarity: float | None = None
    rank: int | None = None
    relevance: float | None = None


@dataclass(slots=True)
class RetrievalResult:
    chunks: list[Candidate]
    total: int
    keywords: list[tuple[str, float]] = field(default_factory=list)
    query_vector: np.ndarray | None = None
    embedding_model: str = ""
    explain: list[ExplainRow] | None = None
    # query-level facts when explaining: scope, analysed terms, gate, retries
    explain_query: dict[str, object] | None = None
    # with routing: every candidate knowledge base, {"kb_id", "name", "score", "chosen"}, best first
    routing: list[dict[str, object]] | None = None
    # with a scope (issue 27): the decision (ragloom.retrieval.scope.ScopeDecision.as_json)
    scope: dict[str, object] | None = None
    # every document with a match over the thresholds (not only on the page): (id, name, matches), most first
    documents: list[tuple[str, str, int]] = field(default_factory=list)
    # the searched knowledge bases' languages (the answer reads the evidence with their analyser)
    languages: list[str] = field(default_factory=list)
