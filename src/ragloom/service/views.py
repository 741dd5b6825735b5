"""The resources ragloom shows — one pydantic model per resource and the one function that builds it.

These are the service's output: the API declares them as its response models (so ``/openapi.json``
describes every body) and the CLI prints the same JSON (``model_dump(mode="json")``). Nothing else
builds a dict of these resources. The models forbid unknown fields, so a builder cannot add a key
the schema does not describe; fields marked *absent unless ...* are left out of the JSON (not
``null``) when they do not apply. Every timestamp is :func:`iso_utc` text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from ragloom.dataflow import Candidate, Chunk, ChunkKind, ChunkRecord, ParsedDocument, Position
from ragloom.db import models as db
from ragloom.ingest.coverage import measure
from ragloom.knowledge.raptor.settings import RaptorSettings
from ragloom.retrieval.types import RetrievalResult
from ragloom.service.graph_settings import GraphSettings
from ragloom.states import VersionStatus

if TYPE_CHECKING:
    from ragloom.dataflow import Answer, Citation, Evidence
    from ragloom.service.documents import FileFacts, PageInfo


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
               "weight from settings.fusion_vector_weight or the request; under any fusion, chunks whose "
               "relevance (the calibrated probability that they are relevant) is under min_relevance are "
               "dropped, and a request's similarity_threshold with the 'normalized' fusion cuts the relevance")

# A JSON number kept as given: an int stays an int (``3``, not ``3.0``), as the API always sent it.
Number = Annotated[int | float, WithJsonSchema({"type": "number"})]
# ISO 8601 in UTC with an explicit offset (iso_utc)
Timestamp = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
# [[page, left, right, top, bottom], ...] in PDF points (page 1-based)
Positions = Annotated[list[list[Number]], Field(description="[[page, left, right, top, bottom], ...] in PDF points")]


def _is_none(value: object) -> bool:
    return value is None


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


def absent_unless(description: str) -> Any:
    """A field left out of the JSON (rather than sent as ``null``) when it is None; the schema shows
    it as optional, never as nullable."""
    return Field(None, exclude_if=_is_none, description=f"absent unless {description}",
                 json_schema_extra=_no_default)


class View(BaseModel):
    """A response body: exactly the declared fields."""

    model_config = ConfigDict(extra="forbid")


# --- knowledge bases (datasets) -------------------------------------------------------------------

class WeightedFusion(View):
    similarity_threshold: Number
    vector_similarity_weight: Number
    applies: bool = Field(description="whether the server's default fusion is 'weighted'")


class Dataset(View):
    """A knowledge base. ``fusion`` is the server's default hybrid scoring (``settings.fusion``; a
    retrieval request may choose another): ``similarity_threshold`` and ``vector_similarity_weight``
    (kept at the top level for compatibility, and repeated under ``weighted_fusion``) apply only to
    the ``weighted`` fusion."""

    id: str
    name: str
    description: str
    language: str
    permission: str
    chunk_method: str
    parser_config: dict[str, Any]
    embedding_model: str = Field(description="the model its vectors were made with, kept: changing it means "
                                 "re-embedding every document (POST /api/v1/datasets/{id}/reindex)")
    similarity_threshold: Number
    vector_similarity_weight: Number
    min_relevance: Number | None = Field(description="chunks whose relevance (calibrated probability, 0..1) is "
                                         "lower are dropped, whatever the fusion; null: the server's default "
                                         "(RAGLOOM_MIN_RELEVANCE)")
    review_versions: bool = Field(description="new versions of its documents wait, built, for a reviewer to "
                                  "publish them; false: published when built")
    fusion: str
    fusion_note: str
    weighted_fusion: WeightedFusion
    pagerank: int
    synonyms: list[list[str]]
    tag_kb_ids: list[str]
    topn_tags: int
    document_count: int | None
    created_at: Timestamp | None
    raptor: RaptorSettings = Field(description="how its RAPTOR summary trees are built (POST .../builds)")
    graphrag: GraphSettings = Field(description="how its knowledge graph is built (POST .../builds, kind graph)")
    embedding_note: str | SkipJsonSchema[None] = absent_unless(
        "the workspace's new knowledge bases get another embedding model than this one: how to move it there")


class DatasetList(View):
    datasets: list[Dataset]
    total: int


class TagCount(View):
    tag: str
    count: int


class DatasetTags(View):
    """How many chunks carry each tag, most frequent first."""

    kb_id: str
    name: str
    is_tag_set: bool
    tags: list[TagCount]
    total: int


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

class Coverage(View):
    """Words of a document's parsed text, and how many of them its chunks keep."""

    words: int = Field(description="words of the parsed text (each CJK character counts as one)")
    kept: int = Field(description="of them, the words some chunk holds")
    ratio: Number = Field(description="kept / words; 1.0 = nothing lost")
    removed: dict[str, int] = Field(description="characters the parser left out on purpose, by reason "
                                    "(running_header, page_number, ...)")
    missing: list[str] = Field(description="some of the words no chunk holds")


class Document(View):
    id: str
    kb_id: str
    name: str
    status: str = Field(description="queued, running, done, failed or cancelled")
    progress: Number
    message: str
    chunk_count: int
    coverage: Coverage | None = Field(description="how much of the parsed text the active version's chunks "
                                      "keep; null before the first publish")
    chunk_method: str | None = Field(description="the document's own chunk method; null = the dataset's")
    parser_config: dict[str, Any] | None
    metadata: dict[str, Any]
    active_version_id: str | None = Field(description="the published version searches see")
    latest_version_id: str | None
    created_at: Timestamp | None
    updated_at: Timestamp | None
    file_type: str = Field("", description="the name's extension, lower case (pdf, docx); empty without one")
    size: int | None = Field(None, description="bytes of the file of the version a reader sees")
    page_count: int | None = Field(None, description="pages of that version (a paginated format's); null "
                                   "for a flowing one")
    thumbnail: str | None = Field(None, description="a small image of its first page (a PNG link), null when "
                                  "it has none")


class DocumentList(View):
    documents: list[Document]
    total: int


class UploadedDocuments(View):
    """The documents an upload created, queued for parsing."""

    documents: list[Document]


class DeletedDocuments(View):
    deleted: int


class Page(View):
    page: int
    width: Number = Field(description="PDF points")
    height: Number = Field(description="PDF points")
    image: str | None = Field(description="the page's preview image (a PNG link), null when there is none")


class PageList(View):
    pages: list[Page]


THUMBNAIL_WIDTH = 240  # pixels: twice the list's thumbnail column, sharp on a dense screen


def document_view(doc: db.Document, facts: Mapping[str, FileFacts] | None = None) -> Document:
    """The API's view of a document; ``facts`` (documents.file_facts of a page of the list) saves a
    query per document, else they are read in the document's own session."""
    if facts is None:
        from sqlalchemy.orm import object_session

        from ragloom.service.documents import file_facts

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


class Version(View):
    """One version of a document: a file (uploaded, or the same file re-parsed) and its chunks."""

    id: str
    number: int = Field(description="1, 2, ... in order of creation")
    status: str = Field(description="building, ready (published), failed, superseded or cancelled")
    active: bool = Field(description="the version searches see")
    latest: bool = Field(description="the newest version (being built while it differs from the active one)")
    chunk_method: str
    parser_config: dict[str, Any]
    chunk_count: int
    page_count: int | None
    size: int = Field(description="bytes of the file")
    content_hash: str = Field(description="SHA-256 of the file")
    error: str
    created_at: Timestamp | None
    published_at: Timestamp | None
    reason: str = Field(description="why it was made: upload, reparse, settings (the document's chunking "
                        "changed) or reindex")
    created_by: str | None = Field(description="the user who made it (null: the system)")
    created_by_name: str | None = Field(None, description="that user's display name or e-mail")
    published_by: str | None = Field(None, description="the user who made it live by hand (a rollback, or the "
                                     "publish of a staged version); null: published when built")
    staged: bool = Field(False, description="made to wait for review: when built it stays ready, not live, until "
                         "it is published (.../activate) or discarded")
    coverage: dict[str, Any] | None = Field(None, description="words of the parsed text its chunks keep")
    kept: bool = Field(description="its chunks are still in the search store: it can be rolled back to and "
                       "compared (the last RAGLOOM_KEEP_VERSIONS versions)")


class VersionList(View):
    versions: list[Version]
    active_version_id: str | None


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


class CellDiff(View):
    """A table cell that changed between two versions (null: the cell is not in that version)."""

    row: str = Field(description="the row: its stub (row header) cells, else its number in the chunk")
    column: str = Field(description="the column's header path, joined with ' / '")
    before: str | None
    after: str | None


class ChunkDiff(View):
    """A chunk added, removed or changed between two versions."""

    change: str = Field(description="added, removed or changed")
    before_id: str | None = Field(description="the chunk's row in the older version")
    after_id: str | None = Field(description="the chunk's row in the newer version")
    before: str | None = Field(description="its text in the older version")
    after: str | None = Field(description="its text in the newer version")
    marked: str | None = Field(description="a changed chunk's text with the words it lost marked [-...-] and the "
                               "words it gained {+...+}")
    similarity: float | None = Field(description="a changed chunk's word similarity, 0..1")
    pages: list[int] = Field(description="pages it is on (of the newer version when it is there)")
    cells: list[CellDiff] = Field(description="a table chunk's cells that changed")


class VersionDiff(View):
    """What changed in a document's chunks from one version to another."""

    document_id: str
    from_version: int = Field(description="the older version's number (0: none, every chunk is added)")
    to_version: int
    added: int
    removed: int
    changed: int
    unchanged: int
    changes: list[ChunkDiff]


def version_diff_view(d: Any) -> VersionDiff:
    """The view of a :class:`ragloom.service.versions.VersionDiff`."""
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


class TableRows(View):
    """A table's chunk: its rows with their columns' header paths, for a client to render the table."""

    header_paths: list[list[str]] = Field(description="per column, its header cells outermost first "
                                          "(['Pre-Pawn', 'Handgun']); [] for a column without a header")
    stub_columns: int = Field(description="the first columns name their row (a state, a model, a year)")
    rows: list[list[str]] = Field(description="this chunk's body rows, one cell per column (a spanning cell "
                                  "repeated in each column it covers)")
    caption: str = Field(description="the table's caption (on its first chunk)")
    notes: list[str] = Field(description="footnotes and source lines printed with the table (on its last chunk)")


def table_rows_view(table: dict[str, Any] | None) -> TableRows | None:
    return TableRows.model_validate(table) if table is not None else None


class StoredChunk(View):
    """A chunk as stored: a document's chunks in reading order."""

    chunk_id: str
    doc_id: str
    version_id: str
    document_name: str
    order: int
    method: str
    kind: str
    available: bool = Field(description="false for rows never matched (parents, TOC entries)")
    heading_path: list[str]
    content: str
    positions: Positions
    html: str | None
    parent_id: str | None
    tag_keywords: list[str] = Field(description="a tag set's row: its own tags")
    tags: dict[str, Number] = Field(description="tags given from the knowledge base's tag sets, with weights")
    edited: bool = Field(False, description="true when a manual edit (text, disabled, added) applies to it")
    layer: int | SkipJsonSchema[None] = absent_unless("a summary (kind summary): its layer, 1 = summaries of "
                                                      "chunks")
    source_ids: list[str] | SkipJsonSchema[None] = absent_unless(
        "a summary: the chunks (or summaries of the layer below) it summarises; open them to see its sources")
    built_by: str | SkipJsonSchema[None] = absent_unless(
        "a summary: what wrote it, raptor:extractive (sentences of its sources) or raptor:llm:<model>")
    table: TableRows | SkipJsonSchema[None] = absent_unless(
        "a table's chunk (kind table): its rows with their columns' header paths")


class ChunkList(View):
    chunks: list[StoredChunk]
    total: int
    version_id: str | None = Field(description="the active version listed; null when none is published")
    method: str


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


class ParsedBlock(View):
    kind: str
    level: int
    heading_path: list[str]
    text: str
    positions: Positions
    html: str | None
    meta: dict[str, Any]


class ParsedChunk(View):
    order: int
    method: str
    kind: str
    tokens: int
    heading_path: list[str]
    content: str
    positions: Positions
    html: str | None
    questions: list[str]
    parent_text: str | None
    tag_keywords: list[str]
    table: TableRows | SkipJsonSchema[None] = absent_unless(
        "a table's chunk (kind table): its rows with their columns' header paths")


class ParsePreview(View):
    """A dry-run parse of one file (``ragloom doc parse``): its blocks and the chunks made of them."""

    file: str
    mime_type: str | None
    page_count: int | None
    blocks: list[ParsedBlock]
    chunks: list[ParsedChunk]
    coverage: Coverage = Field(description="how much of the parsed text the chunks keep")


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
    positions: Positions
    layer: int | SkipJsonSchema[None] = absent_unless("a RAPTOR summary: its layer (1 = summaries of chunks)")
    source_ids: list[str] | SkipJsonSchema[None] = absent_unless(
        "a RAPTOR summary: the rows it summarises (chunks of its document, or summaries of the layer below)")
    built_by: str | SkipJsonSchema[None] = absent_unless(
        "a RAPTOR summary: raptor:extractive (sentences of its sources) or raptor:llm:<model>")


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


def scope_view(decision: Mapping[str, Any]) -> ScopeView:
    return ScopeView.model_validate(decision)


class Retrieval(View):
    chunks: list[RetrievedChunk]
    total: int = Field(description="matches over the threshold (within the result window)")
    explain: Explain | SkipJsonSchema[None] = absent_unless("the request set explain")
    routing: list[RoutingChoice] | SkipJsonSchema[None] = absent_unless("the request set route: every "
                                                                         "candidate knowledge base, best first")
    scope: ScopeView | SkipJsonSchema[None] = absent_unless("the request set scope: the scope decided before "
                                                           "retrieval (clarify and gap retrieve nothing)")


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

class Reference(View):
    """One piece of evidence an answer cites as ``[ID:id]``."""

    id: int = Field(description="the number cited in the answer text as [ID:id]")
    chunk_id: str
    doc_id: str
    version_id: str
    document_name: str
    content: str
    positions: Positions


class AnswerCitation(View):
    """One ``[ID:id]`` marker of an answer sentence and how well the cited chunk supports it."""

    sentence: int = Field(description="the answer sentence it belongs to (0-based, in reading order)")
    text: str = Field(description="that answer sentence, without markers")
    id: int = Field(description="the evidence cited; among the references unless the verdict is 'unsupported' "
                                "(then the marker was removed from the answer)")
    verdict: str | None = Field(description="supported, weak (kept, but the chunk only shares the sentence's topic) "
                                            "or unsupported (removed); null when not verified")
    support: Number | None = Field(description="the verification score (0..1): 0.5 x calibrated vector similarity "
                                                "+ 0.5 x term similarity to the cited chunk; null when not verified")
    supporting_sentence: str | None = Field(description="the sentence of the cited chunk that best matches the "
                                                        "answer sentence")
    inserted: bool = Field(description="the marker was added by similarity, not written by the model")


class CitedAnswer(View):
    """An answer with the evidence it cites (only the cited evidence, by id)."""

    answer: str = Field(description="the answer text with [ID:n] citation markers")
    model: str = Field(description="the chat model that wrote it; 'extractive' without one")
    insufficient: bool = Field(description="the evidence does not support an answer")
    truncated: bool = Field(False, description="the chat model stopped at its token limit: the answer may end "
                            "mid-sentence")
    references: list[Reference]
    mode: str = Field(description="'extractive' (sentences quoted from the documents, no chat model) or 'model'")
    citations: list[AnswerCitation] = Field(description="every citation checked, with its verdict")
    scope: ScopeView | SkipJsonSchema[None] = absent_unless("the request set scope: the scope decided before "
                                                           "retrieval (clarify and gap: the answer asks or names it)")


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

class ApiKeyInfo(View):
    """An API key as listed: never its secret."""

    id: str
    name: str
    prefix: str = Field(description="the key's first characters, to recognise it")
    scope: str
    state: str = Field(description="active, revoked or expired")
    user_id: str
    created_at: str | None
    last_used_at: str | None
    expires_at: str | None
    revoked_at: str | None


class ApiKeyList(View):
    keys: list[ApiKeyInfo]
    total: int


class NewApiKey(ApiKeyInfo):
    key: str = Field(description="the secret: shown this once, stored only as a hash")


def key_view(row: db.ApiKey, state: str) -> ApiKeyInfo:
    return ApiKeyInfo(id=row.id, name=row.name, prefix=row.prefix, scope=row.scope, state=state, user_id=row.user_id,
                      created_at=iso_utc(row.created_at), last_used_at=iso_utc(row.last_used_at),
                      expires_at=iso_utc(row.expires_at), revoked_at=iso_utc(row.revoked_at))


# --- audit log ------------------------------------------------------------------------------------

class AuditEventView(View):
    id: str
    action: str = Field(description="auth.signed_in, auth.failed, account.created, password.changed, "
                        "password.reset, key.created, key.revoked, member.added, member.removed, member.left, "
                        "member.role_changed, invitation.created, invitation.revoked, workspace.created, "
                        "workspace.renamed, workspace.transferred, signup.opened, signup.closed, kb.deleted, "
                        "document.deleted")
    user_id: str | None = Field(description="who (None: an unknown caller)")
    target: str
    detail: str
    origin: str = Field(description="the client's address, or cli")
    created_at: str | None


class AuditLog(View):
    events: list[AuditEventView]
    total: int


def audit_view(rows: Sequence[db.AuditEvent], total: int) -> AuditLog:
    return AuditLog(events=[AuditEventView(id=r.id, action=r.action, user_id=r.user_id, target=r.target,
                                           detail=r.detail, origin=r.origin, created_at=iso_utc(r.created_at))
                            for r in rows], total=total)


# --- people and workspaces ------------------------------------------------------------------------

class UserView(View):
    id: str
    email: str
    name: str
    is_admin: bool = Field(description="a server administrator (the first account)")


class WorkspaceView(View):
    id: str
    name: str
    role: str = Field(description="your role there: owner, admin or member")
    current: bool = Field(False, description="the workspace this session or key acts in")


class WorkspaceList(View):
    workspaces: list[WorkspaceView]
    total: int


class Me(View):
    user: UserView
    workspace: WorkspaceView | None = Field(description="the workspace requests act in")
    workspaces: list[WorkspaceView]
    via: str = Field(description="session (a web sign-in) or key (an API key)")
    csrf_token: str | None = Field(None, description="a session's: send it as X-CSRF-Token on every request that "
                                   "changes data")


class SignedIn(Me):
    expires_at: str | None


class MemberView(View):
    user_id: str
    email: str
    name: str
    role: str


class MemberList(View):
    members: list[MemberView]
    total: int


class InvitationView(View):
    id: str
    role: str
    email: str = Field(description="only this address may accept it; empty: whoever holds the token")
    state: str = Field(description="pending, accepted, revoked or expired")
    created_by: str | None
    created_at: str | None
    expires_at: str | None
    accepted_by: str | None


class InvitationList(View):
    invitations: list[InvitationView]
    total: int


class NewInvitation(InvitationView):
    token: str = Field(description="the one-time token: shown this once; the invited person accepts it with "
                       "POST /api/v1/invitations/accept, `ragloom workspaces join`, or signs up with it")


class SignupState(View):
    open: bool


def user_view(row: db.User) -> UserView:
    return UserView(id=row.id, email=row.email, name=row.name, is_admin=row.is_superuser)


def invitation_view(row: db.Invitation, state: str) -> InvitationView:
    return InvitationView(id=row.id, role=row.role, email=row.email, state=state, created_by=row.created_by,
                          created_at=iso_utc(row.created_at), expires_at=iso_utc(row.expires_at),
                          accepted_by=row.accepted_by)
