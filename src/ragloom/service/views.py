"""The functions that build the resources ragloom shows from stored rows and pipeline results —
one builder per resource (``document_view(doc)``, ``retrieval_view(result)``, ...).

The models they build are the API's contracts, in :mod:`ragloom.schemas`: the API declares them as
its response models and the CLI prints the same JSON. Nothing else builds these resources. Every
timestamp is :func:`ragloom.schemas.base.iso_utc` text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ragloom.dataflow import Candidate, Chunk, ChunkKind, ChunkRecord, ParsedDocument, Position
from ragloom.db import models as db
from ragloom.ingest.coverage import measure
from ragloom.retrieval.types import RetrievalResult
from ragloom.schemas.accounts import UserView
from ragloom.schemas.answers import AnswerCitation, CitedAnswer, Reference
from ragloom.schemas.audit import AuditEventView, AuditLog
from ragloom.schemas.base import iso_utc
from ragloom.schemas.builds import GraphSettings, RaptorSettings
from ragloom.schemas.chunks import ParsedBlock, ParsedChunk, ParsePreview, StoredChunk, TableRows
from ragloom.schemas.datasets import Dataset, DatasetTags, TagCount, WeightedFusion
from ragloom.schemas.documents import CellDiff, ChunkDiff, Coverage, Document, Page, PageList, Version, VersionDiff
from ragloom.schemas.keys import ApiKeyInfo
from ragloom.schemas.retrieval import Explain, ExplainCandidate, Retrieval, RetrievedChunk, RoutingChoice, ScopeView
from ragloom.schemas.workspaces import InvitationView
from ragloom.states import VersionStatus

if TYPE_CHECKING:
    from ragloom.dataflow import Answer, Citation, Evidence
    from ragloom.service.documents.catalog import FileFacts, PageInfo


_iso = iso_utc

FUSION_NOTE = ("similarity_threshold and vector_similarity_weight apply only to the 'weighted' fusion; "
               "the 'normalized' fusion (z-scores of both sides) has no threshold and takes its vector "
               "weight from settings.fusion_vector_weight or the request; under any fusion, chunks whose "
               "relevance (the calibrated probability that they are relevant) is under min_relevance are "
               "dropped, and a request's similarity_threshold with the 'normalized' fusion cuts the relevance")


# --- knowledge bases (datasets) -------------------------------------------------------------------


def kb_view(kb: db.KnowledgeBase, document_count: int | None = None, *, fusion: str = "normalized",
            workspace_embedding_model: str | None = None) -> Dataset:
    """A knowledge base; ``fusion`` is the server's default hybrid scoring; ``workspace_embedding_model``,
    the model the workspace's new knowledge bases get (when given and another: a note how to move there)."""
    note = None
    if workspace_embedding_model is not None and workspace_embedding_model != kb.embedding_model:
        note = (f"the workspace's new knowledge bases get embedding model {workspace_embedding_model!r}; this one "
                f"keeps {kb.embedding_model!r}, the model its vectors were made with. To move it, re-embed every "
                f"document: POST /api/v1/datasets/{kb.id}/reindex")
    return Dataset(
        id=kb.id,
        name=kb.name,
        description=kb.description,
        language=kb.language,
        permission=kb.permission,
        chunk_method=kb.chunk_method,
        parser_config=kb.parser_config,
        embedding_model=kb.embedding_model,
        similarity_threshold=kb.similarity_threshold,
        vector_similarity_weight=kb.vector_similarity_weight,
        min_relevance=kb.min_relevance,
        review_versions=bool(kb.review_versions),
        fusion=fusion,
        fusion_note=FUSION_NOTE,
        weighted_fusion=WeightedFusion(similarity_threshold=kb.similarity_threshold,
                                       vector_similarity_weight=kb.vector_similarity_weight,
                                       applies=fusion == "weighted"),
        pagerank=kb.pagerank,
        synonyms=kb.synonyms or [],
        tag_kb_ids=kb.tag_kb_ids or [],
        topn_tags=kb.topn_tags,
        document_count=document_count,
        created_at=_iso(kb.created_at),
        raptor=RaptorSettings.parse((kb.build_config or {}).get("raptor"), strict=False),
        graphrag=GraphSettings.parse((kb.build_config or {}).get("graphrag"), strict=False),
        embedding_note=note,
    )


def tags_view(kb: db.KnowledgeBase, counts: Mapping[str, int], *, is_tag_set: bool) -> DatasetTags:
    """The tag counts of a knowledge base, most frequent first (then by tag)."""
    return DatasetTags(
        kb_id=kb.id, name=kb.name, is_tag_set=is_tag_set,
        tags=[TagCount(tag=t, count=c) for t, c in sorted(counts.items(), key=lambda p: (-p[1], p[0]))],
        total=len(counts),
    )


# --- documents ------------------------------------------------------------------------------------


THUMBNAIL_WIDTH = 240  # pixels: twice the list's thumbnail column, sharp on a dense screen


def document_view(doc: db.Document, facts: Mapping[str, FileFacts] | None = None) -> Document:
    """The API's view of a document; ``facts`` (documents.file_facts of a page of the list) saves a
    query per document, else they are read in the document's own session."""
    if facts is None:
        from sqlalchemy.orm import object_session

        from ragloom.service.documents.catalog import file_facts

        session = object_session(doc)
        facts = file_facts(session, [doc]) if session is not None else {}
    fact = facts.get(doc.id)
    shown = doc.active_version_id or doc.latest_version_id
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
        created_at=_iso(doc.created_at),
        updated_at=_iso(doc.updated_at),
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
                   size=v.size, content_hash=v.content_hash, error=v.error, created_at=_iso(v.created_at),
                   published_at=_iso(v.published_at), reason=v.reason, created_by=v.created_by,
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


def view_link(base: str, version_id: str, positions: Sequence[Sequence[float]]) -> str | None:
    """The link that opens a version's HTML view at the blocks of ``positions`` (positions on page 0,
    :mod:`ragloom.ingest.preview`), those blocks marked; None when no position is in the view.
    ``base`` is the document's URL."""
    from ragloom.ingest.preview import anchors

    blocks = anchors(positions)
    if not blocks:
        return None
    return f"{base}/preview?version_id={version_id}&highlight={','.join(map(str, blocks))}#b{blocks[0]}"


def pages_view(rows: Sequence[PageInfo], *, base: str, version_id: str | None) -> PageList:
    """Page sizes and preview links; ``base`` is the pages' URL (``.../documents/{id}/pages``)."""
    query = f"?version_id={version_id}" if version_id else ""
    return PageList(pages=[Page(page=p.page, width=p.width, height=p.height,
                                image=f"{base}/{p.page}.png{query}" if p.image_key else None) for p in rows])


# --- chunks ---------------------------------------------------------------------------------------

def positions_view(record: ChunkRecord) -> list[list[float]]:
    return rounded_positions(record.positions)


def rounded_positions(positions: Sequence[Position]) -> list[list[float]]:
    """``[[page, left, right, top, bottom], ...]`` in PDF points, to 2 decimals."""
    return [[int(p[0]), round(p[1], 2), round(p[2], 2), round(p[3], 2), round(p[4], 2)] for p in positions]


def table_rows_view(table: dict[str, Any] | None) -> TableRows | None:
    return TableRows.model_validate(table) if table is not None else None


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
        tags=dict(record.tags),
        edited=edited,
        table=table_rows_view(record.table),
        **summary_fields(record),
    )


def summary_fields(record: ChunkRecord) -> dict[str, Any]:
    """``layer``, ``source_ids`` and ``built_by`` of a summary row; nothing for any other row."""
    if record.kind != ChunkKind.SUMMARY:
        return {}
    return {"layer": record.layer, "source_ids": list(record.source_ids), "built_by": record.built_by}


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


# --- retrieval ------------------------------------------------------------------------------------


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
        positions=positions_view(r),
        **summary_fields(r),
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


# --- answers --------------------------------------------------------------------------------------


def reference_view(ev: Evidence) -> Reference:
    """The form an answer's evidence is shown in (no vector)."""
    return Reference(id=ev.index, chunk_id=ev.chunk_id, doc_id=ev.doc_id, version_id=ev.version_id,
                     document_name=ev.document_name, content=ev.content, positions=[list(p) for p in ev.positions])


def citation_view(c: Citation, sentences: Sequence[str]) -> AnswerCitation:
    return AnswerCitation(sentence=c.sentence, text=sentences[c.sentence] if 0 <= c.sentence < len(sentences) else "",
                          id=c.index, verdict=c.verdict, support=c.support,
                          supporting_sentence=c.supporting_sentence, inserted=c.inserted)


def answer_view(answer: Answer) -> CitedAnswer:
    return CitedAnswer(answer=answer.text, model=answer.model, insufficient=answer.insufficient,
                       truncated=answer.truncated,
                       references=[reference_view(ev) for ev in answer.references], mode=answer.mode,
                       citations=[citation_view(c, answer.sentences) for c in answer.citations])


# --- API keys -------------------------------------------------------------------------------------


def key_view(row: db.ApiKey, state: str) -> ApiKeyInfo:
    return ApiKeyInfo(id=row.id, name=row.name, prefix=row.prefix, scope=row.scope, state=state, user_id=row.user_id,
                      created_at=iso_utc(row.created_at), last_used_at=iso_utc(row.last_used_at),
                      expires_at=iso_utc(row.expires_at), revoked_at=iso_utc(row.revoked_at))


# --- audit log ------------------------------------------------------------------------------------


def audit_view(rows: Sequence[db.AuditEvent], total: int) -> AuditLog:
    return AuditLog(events=[AuditEventView(id=r.id, action=r.action, user_id=r.user_id, target=r.target,
                                           detail=r.detail, origin=r.origin, created_at=iso_utc(r.created_at))
                            for r in rows], total=total)


# --- people and workspaces ------------------------------------------------------------------------


def user_view(row: db.User) -> UserView:
    return UserView(id=row.id, email=row.email, name=row.name, is_admin=row.is_superuser)


def invitation_view(row: db.Invitation, state: str) -> InvitationView:
    return InvitationView(id=row.id, role=row.role, email=row.email, state=state, created_by=row.created_by,
                          created_at=iso_utc(row.created_at), expires_at=iso_utc(row.expires_at),
                          accepted_by=row.accepted_by)
