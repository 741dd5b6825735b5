"""Dataclasses passed between retrieval stages."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ragloom.docstore.base import ChunkRecord


@dataclass(slots=True)
class Scope:
    """What the caller may search: resolved before relevance, applied as a pre-filter."""

    tenant_id: str
    kb_ids: list[str]
    embedding_model: str
    doc_ids: list[str] | None = None


@dataclass(slots=True)
class RetrievalParams:
    """``mode``: ``hybrid`` (full-text gate + KNN, fused), ``keyword`` (full text only,
    similarity = term similarity) or ``vector`` (KNN only, similarity = cosine)."""

    page: int = 1
    page_size: int = 6
    similarity_threshold: float = 0.2
    vector_similarity_weight: float = 0.3
    candidate_window: int = 64
    mode: str = "hybrid"


@dataclass(slots=True)
class Candidate:
    record: ChunkRecord
    term_similarity: float = 0.0
    vector_similarity: float = 0.0
    similarity: float = 0.0
    text_score: float | None = None

    @property
    def vector(self) -> np.ndarray:
        return self.record.vector


@dataclass(slots=True)
class RetrievalResult:
    chunks: list[Candidate]
    total: int
    keywords: list[tuple[str, float]] = field(default_factory=list)
    query_vector: np.ndarray | None = None
    embedding_model: str = ""
