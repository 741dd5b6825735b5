"""Plain dataclasses carried between the stages of the data flow:
file → :class:`Block` → :class:`Chunk` → :class:`ChunkRecord` (index) → :class:`Candidate`
(retrieval) → :class:`Evidence` → :class:`Answer` (with :class:`Citation`).

A leaf module: it imports nothing of ours, so every layer (ingest, docstore,
generation, retrieval, service) can share these types without importing each
other. :mod:`ragloom.ingest.blocks` re-exports the parsing ones under their historical home,
:mod:`ragloom.docstore.base` re-exports :class:`ChunkRecord`.

A parser turns bytes into a :class:`ParsedDocument` (a list of :class:`Block`);
a chunker turns blocks into :class:`Chunk` objects. Coordinates are PDF points
with the origin at the *top-left* of the page (``top < bottom``); pages are
1-based. Formats without pages use ``page=None`` and no box.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

# (page, left, right, top, bottom): the order the API and CLI print positions in.
Position = tuple[int, float, float, float, float]


class BlockKind(StrEnum):
    """What a :class:`Block` is (``StrEnum``: compared, stored and sent as its plain value).

    ``Block.kind`` stays typed ``str``: a plugin parser may use a kind of its own.
    """

    TEXT = "text"  # a paragraph
    TITLE = "title"  # a heading (``level`` 1 = top)
    TABLE = "table"
    FIGURE = "figure"  # a picture with its caption / recognised text
    LIST = "list"
    CODE = "code"
    NOTES = "notes"  # speaker notes: no built-in parser makes it (ours mark notes in ``meta``); chunkers accept it


class ChunkKind(StrEnum):
    """What a :class:`Chunk` (and its :class:`ChunkRecord`) is (``StrEnum``: stored and sent as its plain value).

    ``kind`` stays typed ``str``: rows read back from a store hold the plain value.
    """

    TEXT = "text"
    CODE = "code"  # made only of code blocks
    TABLE = "table"  # a table, or one row of it (table method)
    FIGURE = "figure"  # picture method
    PARENT = "parent"  # parent-child: the hidden parent row its children are swapped for
    TOC = "toc"  # the hidden table-of-contents row of a version
    SUMMARY = "summary"  # a knowledge build's summary of other rows (RAPTOR): ``layer`` and ``source_ids`` set


@dataclass(frozen=True, slots=True)
class BBox:
    left: float
    top: float
    right: float
    bottom: float


PATH_SEP = " › "
"""Joins a column's header path into one name ("Pre-Pawn › Handgun")."""


@dataclass(slots=True)
class Table:
    """A table's structure, the same whatever format it came from.

    ``rows`` are the body rows, one cell per column: a cell that spans several rows or columns
    repeats its value in every slot it covers, so each value stays under its own header.
    ``header_paths`` names each column by the header cells above it, outermost first (a grouped
    header gives ``("Pre-Pawn", "Handgun")``; a column without a header ``()``), and ``header`` holds
    the same paths joined by :data:`PATH_SEP`. ``header_rows`` is the header as it is shown (its
    rows, spans repeated). The first ``stub_columns`` columns name their row (a state, a model, a
    year). ``row_boxes`` gives each body row its regions ``(page, box)`` — the union of its cells on
    each page it lies on — where the format has positions (PDF, scans), else it is empty.
    ``caption`` is the table's title, ``notes`` the footnotes and source lines printed with it (never
    rows). ``spans`` lists the merged cells ``(row, column, rowspan, colspan)`` of the whole grid,
    header rows first."""

    header: list[str]
    rows: list[list[str]]
    header_paths: list[tuple[str, ...]] = field(default_factory=list)
    header_rows: list[list[str]] = field(default_factory=list)
    stub_columns: int = 0
    row_boxes: list[list[tuple[int, BBox]]] = field(default_factory=list)
    caption: str = ""
    notes: list[str] = field(default_factory=list)
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)

    def paths(self) -> list[tuple[str, ...]]:
        """Each column's header path: ``header_paths`` where given, else its ``header`` name (as many as
        the header or the first row has columns: rows are as wide as the table)."""
        width = max(len(self.header), len(self.header_paths), len(self.rows[0]) if self.rows else 0)
        given = list(self.header_paths) or [(h,) if h else () for h in self.header]
        return given + [()] * (width - len(given))

    def records(self) -> list[list[tuple[str, str]]]:
        """Each row as (column name, value) pairs; unnamed columns are called ``column N``."""
        paths = self.paths()
        width = max([len(paths), *(len(r) for r in self.rows)])
        names = [PATH_SEP.join(p) or f"column {i + 1}" for i, p in enumerate(paths + [()] * (width - len(paths)))]
        return [list(zip(names, r, strict=False)) for r in self.rows]


HEADER_CELL_CHARS = 200  # of a header cell in a chunk's table rows (Chunk.table)


def _cut(text: str) -> str:
    return text if len(text) <= HEADER_CELL_CHARS else text[:HEADER_CELL_CHARS].rstrip() + "…"


def table_rows(table: Table, rows: Sequence[int], *, caption: bool = True, notes: bool = True) -> dict[str, Any]:
    """What a table's chunk carries of the table for a client to render it: ``{"header_paths": [[...]],
    "stub_columns": n, "rows": [[...]], "caption": str, "notes": [...]}`` — the body rows numbered
    ``rows``; the caption and notes when asked (a table cut into several chunks shows its caption with
    the first and its notes with the last). A header cell is cut to :data:`HEADER_CELL_CHARS` characters
    here: every chunk of a table carries its header, so a header cell holding a paragraph must not cost
    its length once per chunk."""
    return {"header_paths": [[_cut(h) for h in p] for p in table.paths()], "stub_columns": table.stub_columns,
            "rows": [list(table.rows[i]) for i in rows if 0 <= i < len(table.rows)],
            "caption": table.caption if caption else "", "notes": list(table.notes) if notes else []}


@dataclass(slots=True)
class Block:
    """One unit of a parsed document: a paragraph, heading, table, list item, code block...

    ``kind`` is a :class:`BlockKind` (``text``, ``title``, ``table``, ``list``, ``code``, ``figure``...).
    ``level`` is the heading level (1 = top) for titles, else 0.
    ``heading_path`` holds the titles of the enclosing sections, outermost first
    (it does not include the block itself when the block is a title).
    ``boxes`` holds one entry per page region the block covers (a paragraph that
    runs over a page break has two); ``page`` is the first page.
    """

    text: str
    kind: str = BlockKind.TEXT
    level: int = 0
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    boxes: list[tuple[int, BBox]] = field(default_factory=list)
    html: str | None = None  # tables: an HTML rendering for display
    table: Table | None = None  # tables: rows tied to their column headers
    # format-specific facts: slide number, sheet name, e-mail headers, caption of, list marker ...
    meta: dict[str, str] = field(default_factory=dict)
    # figures: the picture's bytes as the file holds it (DOCX, PPTX, an HTML data: URI); None for a PDF's figure,
    # which is cropped from its page at ingestion (ragloom.ingest.figures)
    image: bytes | None = None

    def positions(self) -> list[Position]:
        return [(p, b.left, b.right, b.top, b.bottom) for p, b in self.boxes]


@dataclass(slots=True)
class ParsedDocument:
    """What a parser returns: blocks in reading order plus document-level facts."""

    blocks: list[Block]
    title: str | None = None
    page_count: int | None = None
    # page number -> (width, height) in PDF points
    page_sizes: dict[int, tuple[float, float]] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    # characters of the file's text left out on purpose, by reason ("running_header", "page_number", ...)
    removed: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Chunk:
    """A retrievable piece of a document, before embedding.

    ``order`` is the chunk's ordinal within the document (0-based, reading order).
    ``positions`` lists every page region the chunk's text came from.
    """

    text: str
    order: int
    positions: list[Position] = field(default_factory=list)
    heading_path: tuple[str, ...] = ()
    kind: str = ChunkKind.TEXT  # a ChunkKind
    html: str | None = None
    method: str = "naive"  # the chunk method that made it
    # qa: the questions are indexed as terms in place of the text (which keeps question + answer)
    questions: list[str] = field(default_factory=list)
    important_keywords: list[str] = field(default_factory=list)
    # parent-child: the larger parent text this (child) chunk is swapped for at retrieval
    parent_text: str | None = None
    # table method: typed column values of the row ({column: value}); shown and filterable later
    fields: dict[str, str | int | float | bool | None] = field(default_factory=dict)
    # tag method: the tags of a tag-set row (searched to tag other knowledge bases' chunks)
    tag_keywords: list[str] = field(default_factory=list)
    # a table's chunk: its rows with their columns' header paths (:func:`table_rows`), for a client to render
    table: dict[str, Any] | None = None

    @property
    def pages(self) -> list[int]:
        return pages_of(self.positions)


def pages_of(positions: list[Position]) -> list[int]:
    """The distinct page numbers of some positions, in order of first appearance."""
    return list(dict.fromkeys(p[0] for p in positions))


# --- index: one row of the search store ---------------------------------------------------------

@dataclass(slots=True)
class ChunkRecord:
    """One row of the search store.

    ``id`` is unique within a tenant index; writing a record whose id exists
    replaces the old row (upsert). Term fields are lists of analysed terms.
    ``available=False`` rows are stored but never matched by :meth:`DocStore.search`
    (parents of parent-child chunks, TOC entries); :meth:`DocStore.get` still
    returns them. ``vector`` is L2-normalised float32.

    Engines may return a subclass that decodes stored fields on first access (a search
    materialises ~100 rows of which retrieval displays a few); it must behave exactly like
    this class: every field readable and assignable, ``dataclasses`` helpers, copies and
    pickles seeing every field.
    """

    id: str
    kb_id: str
    doc_id: str
    version_id: str
    content: str
    vector: np.ndarray
    document_name: str = ""
    content_terms: list[str] = field(default_factory=list)
    content_fine_terms: list[str] = field(default_factory=list)
    title_terms: list[str] = field(default_factory=list)
    title_fine_terms: list[str] = field(default_factory=list)
    important_keywords: list[str] = field(default_factory=list)
    important_terms: list[str] = field(default_factory=list)
    question_terms: list[str] = field(default_factory=list)
    available: bool = True
    order: int = 0
    kind: str = ChunkKind.TEXT  # a ChunkKind
    positions: list[Position] = field(default_factory=list)
    heading_path: list[str] = field(default_factory=list)
    parent_id: str | None = None
    html: str | None = None
    # tag sets (chunk method "tag"): the row's own tags; other chunks: tag -> weight (REFERENCE §5.5)
    tag_keywords: list[str] = field(default_factory=list)
    tags: dict[str, float] = field(default_factory=dict)
    # summaries (kind "summary"): the layer of the tree (1 = summaries of chunks), the rows summarised
    # (chunks, or summaries of the layer below) and what wrote the text ("raptor:extractive",
    # "raptor:llm:<model>"); 0, [] and "" on every other row
    layer: int = 0
    source_ids: list[str] = field(default_factory=list)
    built_by: str = ""
    # a table's chunk: its rows with their columns' header paths (:func:`table_rows`); None on other rows
    table: dict[str, Any] | None = None
    # the questions the chunk answers, as written (qa pairs, auto_questions, a manual edit): indexed as
    # ``question_terms`` and embedded in place of the text
    questions: list[str] = field(default_factory=list)


# --- retrieval ------------------------------------------------------------------------------------

@dataclass(slots=True)
class Candidate:
    record: ChunkRecord
    term_similarity: float = 0.0
    vector_similarity: float = 0.0
    similarity: float = 0.0
    text_score: float | None = None
    rank_feature: float = 0.0
    rerank_score: float | None = None  # set by the rerank stage for candidates inside its window
    # the calibrated probability that the chunk is relevant (ragloom.retrieval.relevance); None: not scored
    relevance: float | None = None

    @property
    def vector(self) -> np.ndarray:
        return self.record.vector


# --- answer generation: evidence in, answer out -----------------------------------------------------

@dataclass(slots=True)
class Evidence:
    """One retrieved chunk offered to the answer generator.

    ``index`` is the number shown to the model (``ID: index``) and cited as
    ``[ID:index]``; indices must be unique within one answer. ``vector`` is the
    chunk's passage embedding when the caller already has it (otherwise it is
    computed on demand with the answer's embedder).
    """

    index: int
    chunk_id: str
    doc_id: str
    document_name: str
    content: str
    positions: list[Position] = field(default_factory=list)
    version_id: str = ""
    similarity: float = 0.0
    vector: np.ndarray | None = None
    table: dict[str, Any] | None = None  # a table's chunk: its rows with their header paths (ChunkRecord.table)
    vector_similarity: float | None = None  # the retrieval's two sides of ``similarity``, when it scored them
    term_similarity: float | None = None
    kind: str = ChunkKind.TEXT  # the chunk's kind: a ``figure`` is shown with its picture
    kb_id: str = ""


@dataclass(slots=True)
class Citation:
    """One ``[ID:index]`` marker attached to sentence ``sentence`` of the answer.

    ``support`` is the verification score (``None`` when not verified);
    ``supported`` is False for a citation that verification rejected — such a
    citation is no longer in the answer text. ``inserted`` is True when the
    marker was added by similarity rather than written by the model.
    ``verdict`` grades the support — ``supported``, ``weak`` (kept, but the chunk only
    shares the sentence's topic) or ``unsupported`` (removed) — with the thresholds of
    ``ragloom.generation.thresholds``; ``supporting_sentence`` is the sentence of the cited
    chunk that best matches the answer sentence (``None`` when not verified).
    """

    sentence: int
    index: int
    support: float | None = None
    supported: bool = True
    inserted: bool = False
    verdict: str | None = None
    supporting_sentence: str | None = None


@dataclass(slots=True)
class Answer:
    """A generated answer with its evidence.

    ``references`` holds only the evidence cited in ``text`` (ordered by index).
    ``sentences`` are the answer's sentences without markers, in order; each
    :class:`Citation` points into it. ``insufficient`` is True when the evidence
    does not support the answer (or nothing answered the question). ``mode`` says how the text
    was made: ``extractive`` (sentences quoted from the evidence, no chat model) or ``model``
    (written by the chat model ``model``); left empty it follows ``model`` (``"extractive"`` or
    not). ``truncated`` is True when the chat model stopped at its ``max_tokens`` (the text may end
    mid-sentence). Its JSON form (the API's answer body) is built by
    :func:`ragloom.service.search.views.answer_view`
    (as :class:`ragloom.schemas.answers.CitedAnswer`).
    """

    text: str
    model: str
    references: list[Evidence] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    insufficient: bool = False
    mode: str = ""
    truncated: bool = False

    def __post_init__(self) -> None:
        if not self.mode:
            self.mode = "extractive" if self.model == "extractive" else "model"
