"""Table helpers shared by the office, HTML and Markdown parsers.

:func:`table_block` turns a header and body rows into a ``table``
:class:`~ragloom.ingest.blocks.Block` whose ``table`` holds the structure,
``text`` one ``"header: value; header: value"`` line per row and ``html`` the
same rows for display. :func:`detect_header` finds the header row of a grid
that may start with title rows; :func:`expand_spans` fills a grid from cells
with column and row spans, repeating a merged cell's value in every slot
(:func:`span_copy`: a long value is repeated shortened, so that what a table
reads stays linear in what the file holds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragloom.ingest.blocks import Block, BlockKind, Table
from ragloom.ingest.parsers.common import clean_cell, table_text_and_html

_NUMBER = re.compile(r"^[-+(]?[$€£¥]?\s*\d[\d,. ]*%?\)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$|^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$")
_HEADER_SCAN = 10  # rows looked at for a header
TITLE_CHARS = 120  # title rows above a header up to this long head their table
SPAN_COPY_CHARS = 200  # a merged cell's value repeated in the other slots it covers is cut to this length


def is_numeric(value: str) -> bool:
    """True for numbers, money, percentages and dates (values no header is made of)."""
    value = value.strip()
    return bool(value) and bool(_NUMBER.match(value) or _DATE.match(value))


def trim_grid(grid: Sequence[Sequence[str]]) -> list[list[str]]:
    """Cells cleaned, empty rows dropped and trailing empty columns cut."""
    rows = [[clean_cell(c) for c in row] for row in grid]
    rows = [row for row in rows if any(row)]
    width = max((max((i + 1 for i, c in enumerate(row) if c), default=0) for row in rows), default=0)
    return [row[:width] + [""] * (width - len(row)) for row in rows]


def _header_like(row: list[str], width: int) -> bool:
    values = [c for c in row if c]
    if not values or len(values) < max(1, width // 2) or len(set(values)) != len(values):
        return False
    return sum(not is_numeric(v) for v in values) > 0.5 * len(values)


def detect_header(rows: list[list[str]]) -> int | None:
    """Index of the header row of a trimmed grid, or None when it has none.

    The header is the first of the top rows whose non-empty values are mostly
    non-numeric, distinct, and fill at least half the columns, with at least
    one row below it. Title rows (one distinct value, perhaps merged across
    columns) above it are skipped; a data-looking row before any header means
    the grid has none.
    """
    width = max((len(r) for r in rows), default=0)
    for index, row in enumerate(rows[:_HEADER_SCAN]):
        if index == len(rows) - 1:
            return None
        if width > 1 and len({c for c in row if c}) <= 1:
            continue  # a title row (or an empty one)
        return index if _header_like(row, width) else None
    return None


def span_copy(text: str) -> str:
    """What a merged or spanned cell repeats in the slots it covers beyond its first: its text, cut
    to :data:`SPAN_COPY_CHARS` characters (and "…") when longer, so that a long value spanning many
    rows or columns costs its length once, not once per slot."""
    return text if len(text) <= SPAN_COPY_CHARS else text[:SPAN_COPY_CHARS].rstrip() + "…"


def expand_spans(rows: Sequence[Sequence[tuple[str, int, int]]]) -> list[list[str]]:
    """A rectangular grid from ``(text, colspan, rowspan)`` cells, spans repeated.

    A cell spanning several columns or rows puts its text in every slot it
    covers (:func:`span_copy` of it beyond the first), so each slot stays tied to its own column
    header. A row span ends at the last row, as in a browser.
    """
    grid: list[list[str | None]] = [[] for _ in rows]
    for r, row in enumerate(rows):
        col = 0
        for text, colspan, rowspan in row:
            while col < len(grid[r]) and grid[r][col] is not None:
                col += 1
            copy = span_copy(text)
            for dr in range(min(max(1, rowspan), len(rows) - r)):
                target = grid[r + dr]
                if len(target) < col + colspan:
                    target.extend([None] * (col + colspan - len(target)))
                for dc in range(max(1, colspan)):
                    target[col + dc] = text if dr == 0 and dc == 0 else copy
            col += max(1, colspan)
    width = max((len(r) for r in grid), default=0)
    return [[c or "" for c in row] + [""] * (width - len(row)) for row in grid]


def table_block(
    header: list[str],
    rows: list[list[str]],
    heading_path: tuple[str, ...] = (),
    meta: dict[str, str] | None = None,
) -> Block | None:
    """A ``table`` block for ``header`` and body ``rows``; None when it holds no text.

    An empty ``header`` means the table has none: the columns are then named
    ``column 1``, ``column 2``... so every value still reads as ``name: value``.
    A header without body rows (a one-row table) is read as the table's only row.
    """
    header = [clean_cell(h) for h in header]
    body = [[clean_cell(c) for c in row] for row in rows]
    body = [row for row in body if any(row)]
    if not body:
        if not any(header):
            return None
        header, body = [], [header]
    width = max(len(header), *(len(r) for r in body))
    if not any(header):
        header = [f"column {i + 1}" for i in range(width)]
    header = header + [f"column {i + 1}" for i in range(len(header), width)]
    body = [row + [""] * (width - len(row)) for row in body]
    text, html = table_text_and_html([header, *body], True)
    return Block(
        text=text, kind=BlockKind.TABLE, heading_path=heading_path, html=html,
        table=Table(header=header, rows=body), meta=dict(meta or {}),
    )


def grid_blocks(
    grid: Sequence[Sequence[str]], heading_path: tuple[str, ...] = (), meta: dict[str, str] | None = None
) -> list[Block]:
    """Blocks of a spreadsheet-like grid: the table, headed by ``heading_path`` plus its title rows
    (the rows above the header); nothing for an empty grid.

    Title rows longer than :data:`TITLE_CHARS` are a text block before the table instead: a
    heading that long would not fit a chunk's heading prefix. Short ones are no block of their
    own, so no chunk holds nothing but headings; each chunk of the table shows them.
    """
    rows = trim_grid(grid)
    if not rows:
        return []
    header_at = detect_header(rows)
    blocks: list[Block] = []
    if header_at:
        lines = [" ".join(dict.fromkeys(c for c in row if c)) for row in rows[:header_at]]
        title = " / ".join(line for line in lines if line)
        if len(title) <= TITLE_CHARS:
            heading_path = (*heading_path, title)
        else:
            blocks.append(Block(text="\n".join(lines), heading_path=heading_path, meta=dict(meta or {})))
    header = rows[header_at] if header_at is not None else []
    body = rows[header_at + 1:] if header_at is not None else rows
    block = table_block(header, body, heading_path, meta)
    if block is not None:
        if header_at is None:
            block.meta["header"] = "none found: columns are named column 1, column 2, ..."
        blocks.append(block)
    return blocks
