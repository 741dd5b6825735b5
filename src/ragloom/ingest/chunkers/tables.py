"""Table chunks: a table is its own chunk, split by rows when over the budget.

A table block's text holds one line per body row and its HTML one ``<tr>`` per
body row in ``<tbody>`` (see ``parsers.tabular.table_from_cells``); a part
gets the header plus its own rows as HTML, the regions of its own rows, and its
rows with their columns' header paths (``Chunk.table``). A single row longer than the budget
is indivisible and forms a chunk alone — unless it is longer than
``max_chunk_chars``: it is then cut between cells into pieces of at most that
many characters (with no HTML), never embedded whole.

Headings folded into a table (the section titles that open right before it, which
would otherwise form a chunk of their own) lead its first part: ``first_prefix``
replaces the heading prefix there, and their boxes join that part's positions. The
table's caption follows them, so the table's numbers are found with the words that
say what they measure.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree
from lxml import html as lxml_html

from ragloom.dataflow import table_rows
from ragloom.ingest.blocks import BBox, Block, Chunk, ChunkKind, Position, Table
from ragloom.ingest.chunkers._atoms import TokenCounter
from ragloom.ingest.chunkers.cuts import min_cuts
from ragloom.ingest.chunkers.oversize import split_row
from ragloom.ingest.guard import limits

MIN_PIECE_CHARS = 100  # a piece of a long row holds at least this many characters, whatever the prefix


def _html_parts(html: str | None, n_rows: int, groups: list[tuple[int, int]]) -> list[str | None]:
    if not html:
        return [None] * len(groups)
    table = lxml_html.fragment_fromstring(html)
    head = table.find("thead")
    body = table.find("tbody")
    rows = list(body) if body is not None else table.findall(".//tr")
    if len(rows) != n_rows:
        return [None] * len(groups)
    head_html = etree.tostring(head, encoding="unicode") if head is not None else ""
    out: list[str | None] = []
    for a, b in groups:
        trs = "".join(etree.tostring(r, encoding="unicode") for r in rows[a : b + 1])
        out.append(f"<table>{head_html}<tbody>{trs}</tbody></table>")
    return out


def table_chunks(block: Block, counter: TokenCounter, capacity: float, prefix: str, *,
                 first_prefix: str | None = None, first_positions: Sequence[Position] = (),
                 caption: str = "") -> list[Chunk]:
    """Chunks of one table block (``order`` is set by the caller); ``capacity`` leaves out the prefix, and
    ``first_prefix`` (headings folded in) leads the first part in place of ``prefix``, followed by
    the table's ``caption`` ("Table 2: ...", its positions among ``first_positions``; else the
    table's own caption). The table's notes (footnotes, source lines) end its last part.

    A table cut into several parts gives each part the regions of its own rows (the table's
    ``row_boxes``, on every page they lie on), never the whole table's; each part carries its rows
    with their columns' header paths (``Chunk.table``) for display."""
    rows = block.text.split("\n")
    table = block.table if block.table is not None and len(block.table.rows) == len(rows) else None
    caption = caption or (table.caption if table is not None else "")
    notes = "\n".join(table.notes) if table is not None and table.notes else ""
    lead = f"{prefix}\n" if prefix else ""
    first_lead = lead if first_prefix is None else (f"{first_prefix}\n" if first_prefix else "")
    if caption:
        first_lead += f"{caption}\n"
        capacity = max(1.0, capacity - counter.count(caption))
    if notes:
        capacity = max(1.0, capacity - counter.count(notes))
    max_chars = max(MIN_PIECE_CHARS, limits().max_chunk_chars - max(len(lead), len(first_lead)) - len(notes) - 1)
    # the prefix lives in the reserve, outside `capacity`
    if len(block.text) <= max_chars and counter.count(block.text) <= capacity:
        parts: list[tuple[int, int] | str] = [(0, len(rows) - 1)]
        spans = [(0, len(rows) - 1)]
    else:
        parts, spans = _parts(rows, counter, capacity, max_chars)
    groups = [p for p in parts if isinstance(p, tuple)]
    htmls = iter([block.html] if parts == groups and len(groups) == 1 else _html_parts(block.html, len(rows), groups))
    own = block.positions()
    chunks = []
    for k, part in enumerate(parts):
        first, last = spans[k]
        where = own if len(parts) == 1 else _rows_positions(table, first, last) or own
        text = (first_lead if k == 0 else lead) + ("\n".join(rows[part[0]: part[1] + 1]) if isinstance(part, tuple)
                                                  else part)
        if notes and k == len(parts) - 1:
            text += f"\n{notes}"
        chunks.append(Chunk(
            text=text, order=0, positions=[*first_positions, *(q for q in where if q not in first_positions)]
            if k == 0 else where, heading_path=block.heading_path, kind=ChunkKind.TABLE,
            html=next(htmls) if isinstance(part, tuple) else None,
            table=table_rows(table, range(first, last + 1), caption=k == 0, notes=k == len(parts) - 1)
            if table is not None else None))
    return chunks


def _rows_positions(table: Table | None, first: int, last: int) -> list[Position]:
    """The regions of body rows ``first..last``: on each page, the union of their boxes; empty when the
    table has no row boxes."""
    if table is None or len(table.row_boxes) != len(table.rows):
        return []
    by_page: dict[int, BBox] = {}
    for boxes in table.row_boxes[first: last + 1]:
        for page, b in boxes:
            got = by_page.get(page)
            by_page[page] = b if got is None else BBox(min(got.left, b.left), min(got.top, b.top),
                                                       max(got.right, b.right), max(got.bottom, b.bottom))
    return [(p, b.left, b.right, b.top, b.bottom) for p, b in sorted(by_page.items())]


def _parts(rows: list[str], counter: TokenCounter, capacity: float,
           max_chars: int) -> tuple[list[tuple[int, int] | str], list[tuple[int, int]]]:
    """Groups of whole rows (first, last) that fit ``capacity`` tokens and ``max_chars``, in order; a row
    longer than ``max_chars`` becomes pieces of itself (its text, cut between cells). With them, the
    rows (first, last) each part holds."""
    parts: list[tuple[int, int] | str] = []
    spans: list[tuple[int, int]] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        ends = min_cuts([counter.count(rows[i]) for i in run], [1] * len(run), capacity)
        for a, b in zip([0] + [e + 1 for e in ends[:-1]], ends, strict=True):
            groups = _by_chars(rows, run[a], run[b], max_chars)
            parts.extend(groups)
            spans.extend(groups)
        run.clear()

    for index, row in enumerate(rows):
        if len(row) <= max_chars:
            run.append(index)
            continue
        flush()
        pieces = split_row(row, max_chars)
        parts.extend(pieces)
        spans.extend([(index, index)] * len(pieces))
    flush()
    return parts, spans


def _by_chars(rows: list[str], first: int, last: int, max_chars: int) -> list[tuple[int, int]]:
    """Rows ``first..last`` (each at most ``max_chars``) in groups whose joined text is at most ``max_chars``."""
    groups: list[tuple[int, int]] = []
    start, size = first, -1
    for index in range(first, last + 1):
        if index > start and size + 1 + len(rows[index]) > max_chars:
            groups.append((start, index - 1))
            start, size = index, -1
        size += 1 + len(rows[index])
    groups.append((start, last))
    return groups
