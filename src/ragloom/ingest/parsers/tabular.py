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
from dataclasses import dataclass
from html import escape

from ragloom.dataflow import PATH_SEP
from ragloom.ingest.blocks import BBox, Block, BlockKind, Table
from ragloom.ingest.parsers.common import clean_cell, column_label

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
    """A ``table`` block for one ``header`` row and body ``rows`` (:func:`table_from_cells`); None when
    it holds no text. An empty ``header`` means the table has none. A header without body rows (a
    one-row table) is read as the table's only row."""
    grid = [header, *rows] if any(h.strip() for h in header) else list(rows)
    return table_from_cells(cells_of(grid), header_rows=1 if grid is not rows else 0, heading_path=heading_path,
                            meta=meta)


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
    table = rows[header_at:] if header_at is not None else rows
    block = table_from_cells(cells_of(table), header_rows=None if header_at is not None else 0,
                             heading_path=heading_path, meta=meta)
    if block is not None:
        if header_at is None:
            block.meta["header"] = "none found"
        blocks.append(block)
    return blocks


# -- one table structure from any format ------------------------------------------------------------

@dataclass(slots=True)
class Cell:
    """One cell as a format gives it: its text, the rows and columns it spans, whether the file marks
    it as a header cell (HTML ``<th>``, Word's repeated header row, a PDF structure tree's ``TH``), and
    where it stands (page, box) when the format has positions."""

    text: str
    colspan: int = 1
    rowspan: int = 1
    header: bool = False
    box: tuple[int, BBox] | None = None


HEADER_ROWS_MAX = 4  # header rows a table may have (grouped headers rarely nest deeper)
MAX_SPAN = 1000  # a span larger than this is read as this (a hostile colspan must not build a huge grid)
_NOTE_MARK = re.compile(r"^\s*(?:[*†‡§¶#¹²³⁴⁵⁶⁷⁸⁹⁰]|\(\d+\)|\d\)|(?:notes?|sources?|footnotes?)\b"
                        r"|注|资料来源|数据来源)", re.IGNORECASE)
NOTE_CHARS = 40  # a lone cell at least this long under a table's rows is a note, not a row
STUB_DISTINCT = 0.7  # a first column whose values are this distinct (and not numbers) names its rows


@dataclass(slots=True)
class _Slot:
    text: str
    origin: int  # the cell it comes from (same number for every slot a span covers)
    header: bool
    box: tuple[int, BBox] | None
    rowspan: int


def _expand(rows: Sequence[Sequence[Cell]]) -> tuple[list[list[_Slot | None]], list[tuple[int, int, int, int]]]:
    """The grid of slots, spans filled in (a row span ends at the last row, as in a browser), and the
    spans ``(row, column, rowspan, colspan)``."""
    grid: list[list[_Slot | None]] = [[] for _ in rows]
    spans: list[tuple[int, int, int, int]] = []
    origin = 0
    for r, row in enumerate(rows):
        col = 0
        for cell in row:
            while col < len(grid[r]) and grid[r][col] is not None:
                col += 1
            colspan = min(max(1, cell.colspan), MAX_SPAN)
            rowspan = min(max(1, cell.rowspan), len(rows) - r)
            text = clean_cell(cell.text)
            copy = span_copy(text)
            if colspan > 1 or rowspan > 1:
                spans.append((r, col, rowspan, colspan))
            for dr in range(rowspan):
                target = grid[r + dr]
                if len(target) < col + colspan:
                    target.extend([None] * (col + colspan - len(target)))
                for dc in range(colspan):
                    target[col + dc] = _Slot(text if dr == 0 and dc == 0 else copy, origin, cell.header,
                                             cell.box, rowspan)
            origin += 1
            col += colspan
    return grid, spans


def _texts(row: Sequence[_Slot | None]) -> list[str]:
    return [s.text if s is not None else "" for s in row]


_BOOLEANS = frozenset({"true", "false"})


def _is_value(text: str) -> bool:
    """A number, date or truth value: what a header is not made of."""
    return is_numeric(text) or text.strip().lower() in _BOOLEANS


def _header_ish(row: Sequence[_Slot | None]) -> bool:
    """Cells that read like a header: some text, mostly not numbers, dates or truth values."""
    values = [s.text for s in row if s is not None and s.text]
    return bool(values) and sum(not _is_value(v) for v in values) >= 0.8 * len(values)


def _first_header_like(row: Sequence[_Slot | None], width: int) -> bool:
    """A first row that reads like a header (:func:`_header_like`), a cell spanning columns counted in
    each column it fills but its text once."""
    texts = _distinct_texts(row)
    filled = sum(1 for s in row if s is not None and s.text)
    return _header_like(texts, width) or (filled >= max(1, width // 2) and _header_like(texts, 2))


def _grouped(row: Sequence[_Slot | None], below: Sequence[_Slot | None]) -> bool:
    """A header row that groups the columns of the row ``below`` it: a cell spans several of them, or
    a cell stands empty to the right of a label over a cell of ``below`` with text (the group's other
    columns, unmerged). Empty cells before the first label (a blank corner, a missing first header)
    group nothing."""
    seen_label = False
    previous = -1
    for c, s in enumerate(row):
        if s is None or not s.text:
            under = below[c] if c < len(below) else None
            if seen_label and under is not None and under.text:
                return True
            continue
        if s.origin == previous:
            return True
        seen_label, previous = True, s.origin
    return False


def _origin(row: Sequence[_Slot | None], c: int) -> int:
    slot = row[c] if 0 <= c < len(row) else None
    return slot.origin if slot is not None else -1


def _under_groups(above: Sequence[_Slot | None], row: Sequence[_Slot | None]) -> bool:
    """Whether every cell of its own a row holds (not one continuing from ``above``) stands under a
    cell of ``above`` that spans columns: the names of a group's columns, even when they are numbers
    ("Revenue" over "2023", "2024")."""
    spanned = {c for c, s in enumerate(above) if s is not None and s.text
               and s.origin in (_origin(above, c - 1), _origin(above, c + 1))}
    own = [c for c, s in enumerate(row) if s is not None and s.text and s.origin != _origin(above, c)]
    return bool(own) and all(c in spanned for c in own)


def _count_header_rows(grid: list[list[_Slot | None]], width: int) -> int:
    """Header rows at the top: the leading rows the file marks as header, else the first row when it
    reads like one (:func:`_first_header_like`); then the rows under a grouping row while they read
    like headers too — always leaving a body row."""
    marked = 0
    for row in grid[:HEADER_ROWS_MAX]:
        cells = [s for s in row if s is not None and s.text]
        if not cells or not all(s.header for s in cells):
            break
        marked += 1
    if len(grid) < 2 or not (marked or _first_header_like(grid[0], width)):
        return 0
    count = min(max(marked, 1), len(grid) - 1)
    while (count < min(HEADER_ROWS_MAX, len(grid) - 1) and _grouped(grid[count - 1], grid[count])
           and (_header_ish(grid[count]) or _under_groups(grid[count - 1], grid[count])) and count + 1 < len(grid)):
        count += 1
    return count


def _distinct_texts(row: Sequence[_Slot | None]) -> list[str]:
    """A row's texts with a span's repeats left out (a header spanning columns is one value)."""
    seen: set[int] = set()
    out = []
    for s in row:
        if s is None or s.origin in seen:
            out.append("")
            continue
        seen.add(s.origin)
        out.append(s.text)
    return out


def _paths(grid: list[list[_Slot | None]], header_rows: int, width: int) -> list[tuple[str, ...]]:
    paths = []
    for c in range(width):
        path: list[str] = []
        last_origin = -1
        for r in range(header_rows):
            slot = grid[r][c] if c < len(grid[r]) else None
            if slot is None or not slot.text or slot.origin == last_origin:
                continue
            if path and path[-1] == slot.text:
                continue
            path.append(slot.text)
            last_origin = slot.origin
        paths.append(tuple(path))
    return paths


def _stub_columns(body: list[list[_Slot | None]], width: int) -> int:
    """Leading columns that name their row: marked as header cells in the body, else a first column of
    distinct words (not numbers) beside other columns (a cell spanning rows counted once)."""
    marked = 0
    plain = any(s is not None and s.text and not s.header for row in body for s in row)
    for c in range(min(width - 1, 3) if plain else 0):  # marks name rows only beside cells that are not marked
        cells = [s for s in (row[c] for row in body) if s is not None and s.text]
        if cells and all(s.header for s in cells):
            marked += 1
        else:
            break
    if marked or width < 2 or len(body) < 2:
        return marked
    firsts = [row[0] for row in body if row and row[0] is not None and row[0].text]
    if len(firsts) < 0.8 * len(body) or any(is_numeric(s.text) for s in firsts):
        return 0
    by_origin = {s.origin: s.text for s in firsts}
    return 1 if len(set(by_origin.values())) >= STUB_DISTINCT * len(by_origin) else 0


def _is_note(row: Sequence[_Slot | None], lone_notes: bool) -> bool:
    """A row of a single cell that is a footnote: marked as one (``*``, ``Note:``, ``Source:``...), or
    long — where the format draws its cells (``lone_notes`` false: Word, HTML, sheets) only when that
    cell spans the row, since a long value beside empty cells is an ordinary row there."""
    origins = {s.origin for s in row if s is not None and s.text}
    if len(origins) != 1:
        return False
    text = next(s.text for s in row if s is not None and s.text)
    if _NOTE_MARK.match(text):
        return True
    if len(text) < NOTE_CHARS:
        return False
    return lone_notes or all(s is None or s.origin in origins for s in row)


def _own_content(grid: list[list[_Slot | None]], start: int) -> list[int]:
    """Indexes of the rows from ``start`` on that hold something of their own: a row whose every value
    comes from a cell spanning down into the next row (a row-spanning stub alone on its row, as
    ``<tr><th rowspan=6>2025</th></tr>``) repeats in that row and is left out."""
    keep = []
    for r in range(start, len(grid)):
        origins = {s.origin for s in grid[r] if s is not None and s.text}
        below = {s.origin for s in grid[r + 1] if s is not None} if r + 1 < len(grid) else set()
        if not origins or not origins <= below:
            keep.append(r)
    return keep


def _remap_spans(spans: Sequence[tuple[int, int, int, int]], kept: Sequence[int]) -> list[tuple[int, int, int, int]]:
    """Spans ``(row, column, rowspan, colspan)`` of the full grid on the rows ``kept`` (sorted)."""
    index = {r: i for i, r in enumerate(kept)}
    out = []
    for r, c, rs, cs in spans:
        rows = [index[x] for x in range(r, r + rs) if x in index]
        if rows and (len(rows) > 1 or cs > 1):
            out.append((rows[0], c, len(rows), cs))
    return out


def _across(row: Sequence[_Slot | None]) -> bool:
    """A row that is one cell across the whole table, on that row alone."""
    first = row[0] if row else None
    return first is not None and first.rowspan == 1 and all(s is not None and s.origin == first.origin for s in row)


def _line(row: Sequence[_Slot | None], labels: Sequence[str], stub_columns: int) -> str:
    """A body row's text: :func:`row_line` of its values, a value spanning columns under one label read
    once; a row that is one cell across the whole table (a section label, "Europe") reads that cell."""
    origins = {s.origin for s in row if s is not None}
    if len(row) > 1 and len(origins) == 1 and all(s is not None for s in row):
        return next(s.text for s in row if s is not None)
    return row_line(_shown_once(row, labels), labels, stub_columns)


def _shown_once(row: Sequence[_Slot | None], labels: Sequence[str]) -> list[str]:
    """A row's values for its text line: a cell spanning columns under one label (or with no labels)
    is read once, not once per column it covers."""
    out = []
    for c, s in enumerate(row):
        prev = row[c - 1] if c else None
        label = labels[c] if c < len(labels) else ""
        prev_label = labels[c - 1] if 0 < c <= len(labels) else ""
        repeat = s is not None and prev is not None and s.origin == prev.origin and label == prev_label
        out.append("" if s is None or repeat else s.text)
    return out


def _union(boxes: Sequence[tuple[int, BBox]]) -> list[tuple[int, BBox]]:
    """One box per page: the union of ``boxes`` on it, pages in order."""
    by_page: dict[int, BBox] = {}
    for page, b in boxes:
        got = by_page.get(page)
        by_page[page] = b if got is None else BBox(min(got.left, b.left), min(got.top, b.top),
                                                   max(got.right, b.right), max(got.bottom, b.bottom))
    return sorted(by_page.items())


def _row_boxes(row: Sequence[_Slot | None]) -> list[tuple[int, BBox]]:
    """A row's regions: its own cells' boxes (a cell spanning several rows only when the row has no
    other)."""
    own = [s.box for s in row if s is not None and s.box is not None and s.rowspan == 1]
    return _union(own or [s.box for s in row if s is not None and s.box is not None])


def row_line(values: Sequence[str], labels: Sequence[str], stub_columns: int) -> str:
    """A body row as retrieval reads it: ``"State: Kentucky — Permit: 264,140; Handgun: 12,155"`` — the
    stub cells name the row, every other value is labelled by its column's header path (``labels``:
    joined and cut, :func:`~ragloom.ingest.parsers.common.column_label`); without any header,
    ``a | b``, or ``key: a | b`` when the row has stub cells."""

    def pairs(columns: range) -> list[tuple[str, str]]:
        return [(labels[i] if i < len(labels) else "", values[i]) for i in columns if values[i]]

    stub = pairs(range(min(stub_columns, len(values))))
    rest = pairs(range(min(stub_columns, len(values)), len(values)))
    if not any(label for label, _ in stub + rest):
        if stub and rest:  # a key and its values: "Weight: 12 kg"
            key = " ".join(v for _, v in stub)
            return f"{key}{' ' if key.endswith(':') else ': '}{' | '.join(v for _, v in rest)}"
        return " | ".join(v for _, v in stub + rest)
    named = "; ".join(f"{label}: {v}" if label else v for label, v in rest)
    if not stub:
        return named
    head = "; ".join(f"{label}: {v}" if label else v for label, v in stub)
    return f"{head} — {named}" if named else head


def _html(grid: list[list[_Slot | None]], header_rows: int, stub_columns: int, caption: str,
          rows: list[list[str]]) -> str:
    """The table for display: the header rows with their spans, one ``<tr>`` per body row (values
    repeated: the chunker cuts the body between rows), stub cells as row headers."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{escape(caption)}</caption>")
    if header_rows:
        out.append("<thead>")
        placed: set[int] = set()
        for r in range(header_rows):
            out.append("<tr>")
            row = grid[r]
            for c, slot in enumerate(row):
                if slot is None:
                    out.append("<th></th>")
                    continue
                if slot.origin in placed:
                    continue
                placed.add(slot.origin)
                colspan = sum(1 for s in row[c:] if s is not None and s.origin == slot.origin)
                below = [grid[rr][c] for rr in range(r, header_rows)]
                rowspan = sum(1 for s in below if s is not None and s.origin == slot.origin)
                attrs = (f' colspan="{colspan}"' if colspan > 1 else "") + (f' rowspan="{rowspan}"' if rowspan > 1
                                                                           else "")
                out.append(f"<th{attrs}>{escape(column_label(slot.text))}</th>")  # repeated by every chunk
            out.append("</tr>")
        out.append("</thead>")
    out.append("<tbody>")
    for values in rows:
        cells = [f'<th scope="row">{escape(v)}</th>' if i < stub_columns else f"<td>{escape(v)}</td>"
                 for i, v in enumerate(values)]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def table_from_cells(
    rows: Sequence[Sequence[Cell]], *, header_rows: int | None = None, caption: str = "",
    notes: Sequence[str] = (), heading_path: tuple[str, ...] = (), meta: dict[str, str] | None = None,
    lone_notes: bool = True,
) -> Block | None:
    """The ``table`` block of a grid of cells, whatever the format: spans assigned to every slot they
    cover, the header rows (``header_rows``, else those the file marks, else found by how they read),
    each column's header path, the stub columns, footnote rows moved to ``notes`` (``lone_notes``: a
    long value alone on the last row is one even when its cell spans nothing — for formats whose cells
    are inferred, as PDF's), each body row's boxes; its text one :func:`row_line` per body row (a
    value spanning columns under one label read once) and its HTML the same rows. A body row whose
    values all continue into the next row is left out; a header row that is one cell across the table
    is its title: the ``caption`` when it has none, and no label of the rows (it stays in the header
    paths). None when it holds no text."""
    grid, spans = _expand(rows)
    keep = [i for i, row in enumerate(grid) if any(s is not None and s.text for s in row)]
    grid = [grid[i] for i in keep]
    if not grid:
        return None
    width = max((max((c + 1 for c, s in enumerate(row) if s is not None and s.text), default=0) for row in grid),
                default=0)
    grid = [row[:width] + [None] * (width - len(row)) for row in grid]
    h = _count_header_rows(grid, width) if header_rows is None else max(0, min(header_rows, len(grid) - 1))
    kept = list(range(h)) + _own_content(grid, h)
    grid = [grid[i] for i in kept]
    body = grid[h:]
    found_notes = list(notes)
    while len(body) > 1 and _is_note(body[-1], lone_notes):
        found_notes.insert(len(notes), next(s.text for s in body[-1] if s is not None and s.text))
        body = body[:-1]
    paths = _paths(grid, h, width)
    stubs = _stub_columns(body, width)
    values = [_texts(row) for row in body]
    label_paths = paths
    if h and width > 1 and _across(grid[0]):  # a title over the whole table: its caption, no row's label
        title = next(s.text for s in grid[0] if s is not None)
        caption = caption or title
        label_paths = [p[1:] if p[:1] == (title,) else p for p in paths]
    labels = [column_label(PATH_SEP.join(p)) for p in label_paths]
    text = "\n".join(_line(row, labels, stubs) for row in body)
    if not text.strip():
        return None
    all_boxes = [s.box for row in grid for s in row if s is not None and s.box is not None]
    table = Table(header=[PATH_SEP.join(p) for p in paths], rows=values, header_paths=paths,
                  header_rows=[_texts(row) for row in grid[:h]], stub_columns=stubs,
                  row_boxes=[_row_boxes(row) for row in body] if all_boxes else [],
                  caption=caption, notes=found_notes,
                  spans=_remap_spans(spans, [keep[i] for i in kept[:h + len(body)]]))
    boxes = _union(all_boxes)
    return Block(text=text, kind=BlockKind.TABLE, heading_path=heading_path,
                 html=_html(grid, h, stubs, caption, values), table=table, meta=dict(meta or {}),
                 page=boxes[0][0] if boxes else None, boxes=boxes)


def cells_of(grid: Sequence[Sequence[str]]) -> list[list[Cell]]:
    """Plain strings as cells (no spans, no header marks, no boxes)."""
    return [[Cell(text) for text in row] for row in grid]


def mark_grouped_header(rows: Sequence[Sequence[Cell]]) -> None:
    """Mark the cells of the first two rows as header cells when they are drawn as a grouped header,
    whatever they read ("2023", "2024" under "Sales"): every cell of the second row stands under a cell
    of the first that spans columns, the second row's other columns are covered by cells of the first
    spanning both rows, and a body row follows."""
    grid, _ = _expand(rows)
    if len(grid) < 3 or not grid[0] or not grid[1]:
        return
    widths: dict[int, int] = {}
    for s in grid[0]:
        if s is not None:
            widths[s.origin] = widths.get(s.origin, 0) + 1
    new = 0
    for c, below in enumerate(grid[1]):
        above = grid[0][c] if c < len(grid[0]) else None
        if above is None or below is None:
            return
        if below.origin == above.origin:
            continue  # a header cell spanning both rows
        if widths[above.origin] < 2 or not above.text:
            return
        new += bool(below.text)
    if new:
        for row in rows[:2]:
            for cell in row:
                cell.header = True
