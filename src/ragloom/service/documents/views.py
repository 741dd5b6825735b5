"""The builders of the document resources ragloom shows — documents, their versions and the differences
between two, page lists, stored chunks and the chunking preview — from stored rows and pipeline results
(the conventions of :mod:`ragloom.service.views`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragloom.dataflow import Chunk, ChunkRecord, ParsedDocument
from ragloom.db import models as db
from ragloom.ingest.coverage import measure
from ragloom.schemas.base import iso_utc
from ragloom.schemas.chunks import ParsedBlock, ParsedChunk, ParsePreview, StoredChunk
from ragloom.schemas.documents import CellDiff, ChunkDiff, Coverage, Document, Page, PageList, Version, VersionDiff
from ragloom.service.views import positions_view, rounded_positions, summary_fields, table_rows_view
from ragloom.states import VersionStatus

if TYPE_CHECKING:
    from ragloom.service.documents.catalog import FileFacts, PageInfo

THUMBNAIL_WIDTH = 240  # pixels: twice the list's thumbnail column, sharp on a dense screen


def document_view(doc: db.Document, facts: Mapping[str, FileFacts] | None = None) -> Document:
    """The API's view of a document; ``facts`` (catalog.file_facts of a page of the list) saves a
    query per document, else they are read in the document's own session."""
    if facts is None:
        from sqlalchemy.orm import object_session

        from ragloom.service.documents.catalog import file_facts

        session = object_session(doc)
        facts = file_facts(session, [doc]) if session is not None else {}
    fact = facts.get(doc.id)
    from ragloom.service.documents.catalog import shown_version_id

    shown = shown_version_id(doc)
    thumbnail = (f"/api/v1/datasets/{doc.kb_id}/documents/{doc.id}/pages/1.png?version_id={shown}"
                 f"&width={THUMBNAIL_WIDTH}") if fact is not None and fact.thumbnail else None
    suffix = doc.name.rsplit(".", 1)[1].lower() if "." in doc.name.strip(".") else ""
    return Document(
        id=doc.id,
        kb_id=doc.kb_id,
        name=doc.name,
        status=doc.status,
        progress=round(doc.progress, 4),
        message=doc.message,
        chunk_count=doc.chunk_count,
        coverage=Coverage.model_validate(doc.coverage) if doc.coverage else None,
        chunk_method=doc.chunk_method,
        parser_config=doc.parser_config,
        metadata=doc.meta or {},
        active_version_id=doc.active_version_id,
        latest_version_id=doc.latest_version_id,
        created_at=iso_utc(doc.created_at),
        updated_at=iso_utc(doc.updated_at),
        file_type=suffix if suffix.isalnum() and len(suffix) <= 16 else "",
        size=fact.size if fact is not None else None,
        page_count=fact.page_count if fact is not None else None,
        thumbnail=thumbnail,
    )


def version_view(v: db.DocumentVersion, doc: db.Document, users: Mapping[str, str] | None = None) -> Version:
    """A version's view; ``users`` names the users by id (else only their ids are shown)."""
    return Version(id=v.id, number=v.number, status=v.status, active=v.id == doc.active_version_id,
                   latest=v.id == doc.latest_version_id, chunk_method=v.chunk_method,
                   parser_config=v.parser_config or {}, chunk_count=v.chunk_count, page_count=v.page_count,
                   size=v.size, content_hash=v.content_hash, error=v.error, created_at=iso_utc(v.created_at),
                   published_at=iso_utc(v.published_at), reason=v.reason, created_by=v.created_by,
                   created_by_name=(users or {}).get(v.created_by or ""), published_by=v.published_by,
                   staged=bool(v.staged),
                   coverage=v.coverage,
                   kept=bool(v.indexed) and v.status in (VersionStatus.READY, VersionStatus.SUPERSEDED))


def version_diff_view(d: Any) -> VersionDiff:
    """The view of a :class:`ragloom.service.documents.versions.VersionDiff`."""
    rows = []
    for c in d.changes:
        shown = c.after or c.before
        rows.append(ChunkDiff(
            change=c.kind, before_id=c.before.id if c.before else None, after_id=c.after.id if c.after else None,
            before=c.before.content if c.before else None, after=c.after.content if c.after else None,
            marked=c.marked or None, similarity=c.similarity if c.kind == "changed" else None,
            pages=sorted({int(p[0]) for p in shown.positions if p and p[0] > 0}),
            cells=[CellDiff(row=x.row, column=x.column, before=x.before, after=x.after) for x in c.cells]))
    count = {k: sum(1 for c in d.changes if c.kind == k) for k in ("added", "removed", "changed")}
    return VersionDiff(document_id=d.doc.id, from_version=d.before.number if d.before else 0, to_version=d.after.number,
                       added=count["added"], removed=count["removed"], changed=count["changed"],
                       unchanged=d.unchanged, changes=rows)


def pages_view(rows: Sequence[PageInfo], *, base: str, version_id: str | None) -> PageList:
    """Page sizes and preview links; ``base`` is the pages' URL (``.../documents/{id}/pages``)."""
    query = f"?version_id={version_id}" if version_id else ""
    return PageList(pages=[Page(page=p.page, width=p.width, height=p.height,
                                image=f"{base}/{p.page}.png{query}" if p.image_key else None) for p in rows])


def stored_chunk_view(record: ChunkRecord, method: str, *, edited: bool = False) -> StoredChunk:
    return StoredChunk(
        chunk_id=record.id,
        doc_id=record.doc_id,
        version_id=record.version_id,
        document_name=record.document_name,
        order=record.order,
        method=method,
        kind=record.kind,
        available=record.available,
        heading_path=list(record.heading_path),
        content=record.content,
        positions=positions_view(record),
        html=record.html,
        parent_id=record.parent_id,
        tag_keywords=list(record.tag_keywords),
        important_keywords=list(record.important_keywords),
        questions=list(record.questions),
        tags=dict(record.tags),
        edited=edited,
        table=table_rows_view(record.table),
        **summary_fields(record),
    )


def parsed_chunk_view(chunk: Chunk, count_tokens: Callable[[str], int]) -> ParsedChunk:
    return ParsedChunk(
        order=chunk.order,
        method=chunk.method,
        kind=chunk.kind,
        tokens=count_tokens(chunk.text),
        heading_path=list(chunk.heading_path),
        content=chunk.text,
        positions=rounded_positions(chunk.positions),
        html=chunk.html,
        questions=chunk.questions,
        parent_text=chunk.parent_text,
        tag_keywords=chunk.tag_keywords,
        table=table_rows_view(chunk.table),
    )


def parse_preview_view(filename: str, parsed: ParsedDocument, chunks: Sequence[Chunk],
                       count_tokens: Callable[[str], int]) -> ParsePreview:
    blocks = [ParsedBlock(kind=b.kind, level=b.level, heading_path=list(b.heading_path), text=b.text,
                          positions=rounded_positions(b.positions()), html=b.html, meta=b.meta)
              for b in parsed.blocks]
    kept = measure(parsed.blocks, chunks, parsed.removed, method=chunks[0].method if chunks else None)
    return ParsePreview(file=filename, mime_type=parsed.metadata.get("mime_type"), page_count=parsed.page_count,
                        blocks=blocks, chunks=[parsed_chunk_view(c, count_tokens) for c in chunks],
                        coverage=Coverage.model_validate(kept.as_dict()))
