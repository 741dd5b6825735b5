"""Plain dataclasses carried between the stages of the data flow (file → blocks → chunks → index).

A leaf module: it imports nothing of ours, so every layer (ingest, docstore,
generation, retrieval, service) can share these types without importing each
other. :mod:`ragloom.ingest.blocks` re-exports them under their historical home.

A parser turns bytes into a :class:`ParsedDocument` (a list of :class:`Block`);
a chunker turns blocks into :class:`Chunk` objects. Coordinates are PDF points
with the origin at the *top-left* of the page (``top < bottom``); pages are
1-based. Formats without pages use ``page=None`` and no box.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# (page, left, right, top, bottom): the order the API and CLI print positions in.
Position = tuple[int, float, float, float, float]


@dataclass(frozen=True, slots=True)
class BBox:
    left: float
    top: float
    right: float
    bottom: float


@dataclass(slots=True)
class Table:
    """A table's structure: ``header`` names the columns (may be empty when none was
    found); every row has one cell per column (merged cells repeat their value)."""

    header: list[str]
    rows: list[list[str]]

    def records(self) -> list[list[tuple[str, str]]]:
        """Each row as (column name, value) pairs; unnamed columns are called ``column N``."""
        names = [h or f"column {i + 1}" for i, h in enumerate(self.header)]
        width = max([len(names), *(len(r) for r in self.rows)]) if self.rows else len(names)
        names += [f"column {i + 1}" for i in range(len(names), width)]
        return [list(zip(names, r, strict=False)) for r in self.rows]


@dataclass(slots=True)
class Block:
    """One unit of a parsed document: a paragraph, heading, table, list item, code block...

    ``kind`` is one of ``text``, ``title``, ``table``, ``list``, ``code``, ``figure``.
    ``level`` is the heading level (1 = top) for titles, else 0.
    ``heading_path`` holds the titles of the enclosing sections, outermost first
    (it does not include the block itself when the block is a title).
    ``boxes`` holds one entry per page region the block covers (a paragraph that
    runs over a page break has two); ``page`` is the first page.
    """

    text: str
    kind: str = "text"
    level: int = 0
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    boxes: list[tuple[int, BBox]] = field(default_factory=list)
    html: str | None = None  # tables: an HTML rendering for display
    table: Table | None = None  # tables: rows tied to their column headers
    # format-specific facts: slide number, sheet name, e-mail headers, caption of, list marker ...
    meta: dict[str, str] = field(default_factory=dict)

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
    kind: str = "text"
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

    @property
    def pages(self) -> list[int]:
        return pages_of(self.positions)


def pages_of(positions: list[Position]) -> list[int]:
    """The distinct page numbers of some positions, in order of first appearance."""
    return list(dict.fromkeys(p[0] for p in positions))
