"""Plain-dict views of domain objects: the one JSON shape the API and the CLI print."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ragloom.db.models import Document, KnowledgeBase
from ragloom.docstore.base import ChunkRecord
from ragloom.ingest.blocks import Position
from ragloom.retrieval.types import Candidate, RetrievalResult


def _iso(dt) -> str | None:  # type: ignore[no-untyped-def]
    return dt.isoformat() if dt is not None else None


def kb_view(kb: KnowledgeBase, document_count: int | None = None) -> dict[str, Any]:
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
