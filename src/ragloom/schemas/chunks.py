"""Chunks: a chunk a caller writes or edits, chunks as stored (a document's chunks in reading order)
and a dry-run parse of a file."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints
from pydantic.json_schema import SkipJsonSchema

from ragloom.schemas.base import Number, Positions, Request, View, absent_unless
from ragloom.schemas.documents import Coverage


class TableRows(View):
    """A table's chunk: its rows with their columns' header paths, for a client to render the table."""

    header_paths: list[list[str]] = Field(description="per column, its header cells outermost first "
                                          "(['Pre-Pawn', 'Handgun']); [] for a column without a header")
    stub_columns: int = Field(description="the first columns name their row (a state, a model, a year)")
    rows: list[list[str]] = Field(description="this chunk's body rows, one cell per column (a spanning cell "
                                  "repeated in each column it covers)")
    caption: str = Field(description="the table's caption (on its first chunk)")
    notes: list[str] = Field(description="footnotes and source lines printed with the table (on its last chunk)")


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
    important_keywords: list[str] = Field(default_factory=list, description="keywords matched beside the text "
                                          "(normalised): the chunk method's, the chat model's or an edit's")
    questions: list[str] = Field(default_factory=list, description="the questions the chunk answers (qa pairs, "
                                 "auto_questions or an edit): matched beside its text and embedded in its place")
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


MAX_CHUNK_TEXT = 100_000  # characters of a chunk a caller writes


MAX_CHUNK_TERMS, MAX_CHUNK_TERM_CHARS = 64, 1000  # keywords or questions a caller gives one chunk; characters of one
ChunkTerm = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CHUNK_TERM_CHARS)]


class ChunkUpdate(Request):
    """A chunk's new text, important keywords or questions, and/or whether it may be retrieved (``false``
    disables it); kept as an override of the document that a re-parse re-applies to the chunk when it
    still exists. A field left out is unchanged; ``[]`` clears keywords or questions."""

    content: str | None = Field(None, min_length=1, max_length=MAX_CHUNK_TEXT)
    available: bool | None = Field(None, description="false: disabled, never retrieved; true: enabled again")
    important_keywords: list[ChunkTerm] | None = Field(None, max_length=MAX_CHUNK_TERMS,
                                                       description="keywords matched beside the text")
    questions: list[ChunkTerm] | None = Field(None, max_length=MAX_CHUNK_TERMS,
                                              description="questions the chunk answers: matched beside its "
                                                          "text and embedded in its place")


class ChunkCreate(Request):
    """A chunk of the caller's own text, added after the document's last chunk (kept over re-parses)."""

    content: str = Field(min_length=1, max_length=MAX_CHUNK_TEXT)
    important_keywords: list[ChunkTerm] = Field(default_factory=list, max_length=MAX_CHUNK_TERMS,
                                                description="keywords matched beside the text")
    questions: list[ChunkTerm] = Field(default_factory=list, max_length=MAX_CHUNK_TERMS,
                                       description="questions the chunk answers: matched beside its text and "
                                                   "embedded in its place")
