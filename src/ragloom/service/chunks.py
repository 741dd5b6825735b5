"""Seeing what was parsed: a document's chunks in order, and a dry-run parse of one file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from ragloom.db.models import DocumentVersion
from ragloom.docstore.base import ChunkRecord, Filters
from ragloom.ingest.blocks import Chunk, ParsedDocument
from ragloom.service import documents
from ragloom.service.context import Context, Principal
from ragloom.service.views import positions_view, rounded_positions


@dataclass(slots=True)
class ChunkListing:
    method: str
    version_id: str | None
    chunks: list[ChunkRecord]
    total: int


def list_chunks(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                offset: int = 0, limit: int = 100, include_hidden: bool = False) -> ChunkListing:
    """The chunks of the document's active version in reading order (parents and other
    hidden rows only with ``include_hidden``). A document with no published version has none."""
    doc = documents.get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    if doc.active_version_id is None:
        return ChunkListing(method=doc.chunk_method or "", version_id=None, chunks=[], total=0)
    version = session.get(DocumentVersion, doc.active_version_id)
    assert version is not None
    filters = Filters(kb_ids=[doc.kb_id], doc_ids=[doc.id], version_ids=[version.id],
                      available_only=not include_hidden)
    rows, total = ctx.docstore.list_chunks(doc.tenant_id, filters, offset=offset, limit=limit)
    return ChunkListing(method=version.chunk_method, version_id=version.id, chunks=rows, total=total)


def record_view(record: ChunkRecord, method: str) -> dict[str, Any]:
    return {
        "chunk_id": record.id,
        "doc_id": record.doc_id,
        "version_id": record.version_id,
        "document_name": record.document_name,
        "order": record.order,
        "method": method,
        "kind": record.kind,
        "available": record.available,
        "heading_path": list(record.heading_path),
        "content": record.content,
        "positions": positions_view(record),
        "html": record.html,
        "parent_id": record.parent_id,
        "tag_keywords": list(record.tag_keywords),  # a tag set's row: its own tags
        "tags": dict(record.tags),  # tags given from the knowledge base's tag sets
    }


def parse_file(data: bytes, filename: str, *, method: str, parser_config: dict[str, Any],
               count_tokens: Callable[[str], int]) -> tuple[ParsedDocument, list[Chunk]]:
    """Parse and chunk one file without storing or indexing anything."""
    from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
    from ragloom.ingest.parsers import parse_document

    config = ChunkerConfig.parse({**parser_config, "method": method})
    parsed = parse_document(data, filename)
    return parsed, chunk_blocks(parsed.blocks, config, count_tokens)


def chunk_view(chunk: Chunk, count_tokens: Callable[[str], int]) -> dict[str, Any]:
    return {
        "order": chunk.order,
        "method": chunk.method,
        "kind": chunk.kind,
        "tokens": count_tokens(chunk.text),
        "heading_path": list(chunk.heading_path),
        "content": chunk.text,
        "positions": rounded_positions(chunk.positions),
        "html": chunk.html,
        "questions": chunk.questions,
        "parent_text": chunk.parent_text,
        "tag_keywords": chunk.tag_keywords,
    }


def block_view(parsed: ParsedDocument) -> list[dict[str, Any]]:
    return [
        {"kind": b.kind, "level": b.level, "heading_path": list(b.heading_path), "text": b.text,
         "positions": rounded_positions(b.positions()),
         "html": b.html, "meta": b.meta}
        for b in parsed.blocks
    ]
