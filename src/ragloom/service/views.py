"""Plain-dict views of domain objects: the one JSON shape the API and the CLI print."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from ragloom.db.models import Document, KnowledgeBase
from ragloom.docstore.base import ChunkRecord
from ragloom.ingest.blocks import Position
from ragloom.retrieval.types import Candidate, RetrievalResult


def iso_utc(dt: datetime | None) -> str | None:
    """Every timestamp the API and the CLI show: ISO 8601 in UTC with an explicit offset
    (``2026-01-02T03:04:05.123456+00:00``). SQLite gives back naive datetimes (stored as UTC by
    :func:`ragloom.db.models.utcnow`), so a naive one is taken as UTC."""
    if dt is None:
        return None
    return (dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)).isoformat()


_iso = iso_utc

FUSION_NOTE = ("similarity_threshold and vector_similarity_weight apply only to the 'weighted' fusion; "
               "the 'normalized' fusion (z-scores of both sides) has no threshold and takes its vector "
               "weight from settings.fusion_vector_weight or the request")


def kb_view(kb: KnowledgeBase, document_count: int | None = None, *, fusion: str = "normalized") -> dict[str, Any]:
    """A knowledge base. ``fusion`` is the server's default hybrid scoring (``settings.fusion``; a
    retrieval request may choose another): the knowledge base's ``similarity_threshold`` and
    ``vector_similarity_weight`` (kept at the top level for compatibility, and repeated under
    ``weighted_fusion``) apply only to the ``weighted`` fusion."""
    return {
        "id": kb.id,
        "name": kb.name,
        "description": kb.description,
        "language": kb.language,
        "permission": kb.permission,
        "chunk_method": kb.chunk_method,
        "parser_config": kb.parser_config,
        "embedding_model": kb.embedding_model,
        "similarity_threshold": kb.similarity_threshold,
        "vector_similarity_weight": kb.vector_similarity_weight,
        "fusion": fusion,
        "fusion_note": FUSION_NOTE,
        "weighted_fusion": {"similarity_threshold": kb.similarity_threshold,
                            "vector_similarity_weight": kb.vector_similarity_weight,
                            "applies": fusion == "weighted"},
        "pagerank": kb.pagerank,
        "synonyms": kb.synonyms or [],
        "tag_kb_ids": kb.tag_kb_ids or [],
        "topn_tags": kb.topn_tags,
        "document_count": document_count,
        "created_at": _iso(kb.created_at),
    }


def document_view(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "kb_id": doc.kb_id,
        "name": doc.name,
        "status": doc.status,
        "progress": round(doc.progress, 4),
        "message": doc.message,
        "chunk_count": doc.chunk_count,
        "chunk_method": doc.chunk_method,
        "parser_config": doc.parser_config,
        "metadata": doc.meta or {},
        "active_version_id": doc.active_version_id,
        "latest_version_id": doc.latest_version_id,
        "created_at": _iso(doc.created_at),
        "updated_at": _iso(doc.updated_at),
    }


def positions_view(record: ChunkRecord) -> list[list[float]]:
    return rounded_positions(record.positions)


def rounded_positions(positions: list[Position]) -> list[list[float]]:
    """``[[page, left, right, top, bottom], ...]`` in PDF points, to 2 decimals."""
    return [[int(p[0]), round(p[1], 2), round(p[2], 2), round(p[3], 2), round(p[4], 2)] for p in positions]


def chunk_view(c: Candidate) -> dict[str, Any]:
    r = c.record
    return {
        "chunk_id": r.id,
        "doc_id": r.doc_id,
        "kb_id": r.kb_id,
        "version_id": r.version_id,
        "document_name": r.document_name,
        "content": r.content,
        "similarity": round(c.similarity, 6),
        "term_similarity": round(c.term_similarity, 6),
        "vector_similarity": round(c.vector_similarity, 6),
        "rank_feature": round(c.rank_feature, 6),
        "tags": dict(r.tags),
        "positions": positions_view(r),
    }


def explain_view(result: RetrievalResult) -> dict[str, Any] | None:
    if result.explain is None:
        return None
    rows = []
    for row in result.explain:
        d = asdict(row)
        for key in ("text_score", "term_similarity", "vector_similarity", "rerank_score", "similarity"):
            if d[key] is not None:
                d[key] = round(d[key], 6)
        rows.append(d)
    return {"query": result.explain_query, "candidates": rows}


def retrieval_view(result: RetrievalResult) -> dict[str, Any]:
    out: dict[str, Any] = {"chunks": [chunk_view(c) for c in result.chunks], "total": result.total}
    explained = explain_view(result)
    if explained is not None:
        out["explain"] = explained
    if result.routing is not None:
        out["routing"] = result.routing
    return out
