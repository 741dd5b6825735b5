"""Unruled tables of a PDF page: found from the lines' words by alignment, as table regions holding
their cells (:class:`~ragloom.ingest.parsers.pdf_cells.PdfTable`).

A table is a run of at least ``MIN_ROWS`` consecutive lines cut by wide gaps, whose words leave at
least two vertical "rivers" of white across the whole run (three columns or more), holding short
cells (a few words each, unlike a column of prose). On a page with text columns each column is
searched on its own. Header lines just above the run that keep to its columns join it, and so do
wrapped lines of a cell below. Each cell keeps the box of its words (reading frame), so each row
of the table knows where it is printed.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections.abc import Callable, Sequence

from ragloom.ingest.blocks import BBox, BlockKind
from ragloom.ingest.parsers.pdf_cells import PdfTable
from ragloom.ingest.parsers.pdf_layout import Line, Word
from ragloom.ingest.parsers.pdf_order import Region, find_gutters
from ragloom.ingest.parsers.tabular import Cell

MIN_ROWS = 3  # unruled tables: rows
MIN_COLUMNS = 3  # unruled tables: columns (two aligned columns are a form or a list, not a table)
CELL_GAP = 0.8  # unruled tables: a gap between cells is at least this many line sizes wide
RIVER = 0.5  # unruled tables: a column gap is at least this many line sizes wide over the whole run
MAX_HEADER_LINES = 3  # unruled tables: lines above the aligned rows that may join as a header
MAX_CELL_WORDS = 3.0  # unruled tables: median words per filled cell (prose columns hold many more)
_NUMBERING = re.compile(r"^([\dIVXivx]+|[A-Z])(\.\d+)*\.?$")


class _Row:
    """The words of one visual line of a page (all its :class:`Line` parts), or of a few lines."""

    def __init__(self, words: list[Word], top: float, bottom: float, size: float) -> None:
        self.words = sorted(words, key=lambda w: w.left)
        self.top, self.bottom, self.size = top, bottom, size

    @classmethod
    def of(cls, parts: Sequence[_Row | Line]) -> _Row:
        words = [w for p in parts for w in p.words]
        return cls(words, min(p.top for p in parts), max(p.bottom for p in parts),
                   statistics.median(p.size for p in parts))

    def segments(self) -> int:
        gap = CELL_GAP * self.size
        gaps = sum(1 for a, b in zip(self.words, self.words[1:], strict=False) if b.left - a.right >= gap)
        return gaps + 1 if self.words else 0


def _cell_text(words: list[Word]) -> str:
    """Words of one cell in reading order: line by line, left to right."""
    lines: list[list[Word]] = []
    for w in sorted(words, key=lambda w: (w.top + w.bottom) / 2):
        if lines and (w.top + w.bottom) / 2 - (lines[-1][-1].top + lines[-1][-1].bottom) / 2 \
                < 0.5 * (w.bottom - w.top):
            lines[-1].append(w)
        else:
            lines.append([w])
    return " ".join(w.text for line in lines for w in sorted(line, key=lambda w: w.left))


def _visual_rows(lines: Sequence[Line]) -> list[_Row]:
    """The visual rows of ``lines``, top to bottom, leaving out glyphs far smaller than the text
    around them (a line set sideways in the margin reads as a column of tiny "lines")."""
    if not lines:
        return []
    typical = statistics.median(ln.size for ln in lines)
    ordered = sorted((ln for ln in lines if ln.words and ln.size >= 0.6 * typical),
                     key=lambda ln: (ln.top + ln.bottom) / 2)
    groups: list[list[Line]] = []
    for ln in ordered:
        if groups:
            last = groups[-1][-1]
            if abs((ln.top + ln.bottom) / 2 - (last.top + last.bottom) / 2) < 0.4 * min(ln.size, last.size):
                groups[-1].append(ln)
                continue
        groups.append([ln])
    return [_Row.of(g) for g in groups]


def find_unruled(lines: Sequence[Line], width: float, page: int) -> list[Region]:
    """Whitespace-aligned tables among one page's ``lines`` (reading frame), as table regions.

    The page is searched whole, then (on a page with text columns) column by column for
    what is left. Every word whose centre lies in a table's box is one of its cells.
    """
    if len(lines) < MIN_ROWS:
        return []
    passes: list[list[Line]] = [list(lines)]
    if gutters := find_gutters(lines, width):
        columns: list[list[Line]] = [[] for _ in range(len(gutters) + 1)]
        for ln in lines:
            if not any(ln.left < lo - 2 and ln.right > hi + 2 for lo, hi in gutters):
                columns[sum(1 for lo, _ in gutters if (ln.left + ln.right) / 2 > lo)].append(ln)
        passes += columns
    words = [w for ln in lines for w in ln.words]
    found: list[Region] = []
    for group in passes:
        rows = _visual_rows([ln for ln in group if not any(_inside(ln, r) for r in found)])
        for first, last in _runs(rows):
            region = _unruled_table(rows, first, last, words, page)
            if region is not None and not any(_overlap(region, r) for r in found):
                found.append(region)
    return found


def _inside(ln: Line, r: Region) -> bool:
    cx, cy = (ln.left + ln.right) / 2, (ln.top + ln.bottom) / 2
    return r.left - 2 <= cx <= r.right + 2 and r.top - 2 <= cy <= r.bottom + 2


def _overlap(a: Region, b: Region) -> bool:
    return a.left < b.right and b.left < a.right and a.top < b.bottom and b.top < a.bottom


def _runs(rows: list[_Row]) -> list[tuple[int, int]]:
    """Maximal runs (first, last index) of consecutive rows cut into two or more segments, close together."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, row in enumerate(rows):
        if row.segments() >= 2:
            if start is not None and not _close(rows[i - 1], row, 1.5):
                runs.append((start, i - 1))
                start = None
            if start is None:
                start = i
        elif start is not None:
            runs.append((start, i - 1))
            start = None
    if start is not None:
        runs.append((start, len(rows) - 1))
    return [(a, b) for a, b in runs if b - a + 1 >= MIN_ROWS]


def _close(upper: _Row, lower: _Row, lines: float) -> bool:
    return lower.top - upper.bottom <= lines * upper.size and abs(lower.size - upper.size) <= 0.25 * upper.size


def _rivers(run: Sequence[_Row]) -> list[tuple[float, float]]:
    """Vertical strips inside the run that (almost) no word touches, left to right."""
    left = min(w.left for r in run for w in r.words)
    right = max(w.right for r in run for w in r.words)
    bins = int(right - left) + 2
    cover = [0] * (bins + 1)
    for row in run:
        for w in row.words:
            cover[max(0, int(w.left - left))] += 1
            cover[min(bins, int(w.right - left) + 1)] -= 1
    allowed = len(run) // 7  # a title row spanning columns is allowed in a longer table
    size = statistics.median(r.size for r in run)
    out: list[tuple[float, float]] = []
    running, start = 0, None
    for i in range(bins):
        running += cover[i]
        if running <= allowed and start is None:
            start = i
        elif running > allowed and start is not None:
            if i - start >= RIVER * size:
                out.append((left + start, left + i))
            start = None
    return out


def _fits(row: _Row, left: float, right: float, rivers: list[tuple[float, float]]) -> bool:
    """A row (a header, a wrapped cell) lies about within the table and crosses no column gap."""
    return all(left - 8 * row.size <= w.left and w.right <= right + 8 * row.size
               and not any(w.left < hi and w.right > lo for lo, hi in rivers) for w in row.words)


def _header_band(rows: list[_Row], first: int) -> int:
    """Index of the first of the rows just above ``rows[first]`` that overlap one another
    vertically (the lines of a header whose cells have one, two or three lines)."""
    k = first - 1
    while k > 0 and rows[k - 1].bottom > rows[k].top + 0.3 * rows[k].size and first - k < MAX_HEADER_LINES:
        k -= 1
    return k


def _unruled_table(rows: list[_Row], first: int, last: int, words: list[Word], page: int) -> Region | None:
    run = rows[first:last + 1]
    rivers = _rivers(run)
    if len(rivers) + 1 < MIN_COLUMNS:
        return None
    cuts = [(lo + hi) / 2 for lo, hi in rivers]
    n_cols = len(cuts) + 1

    def column(w: Word) -> int:  # the cuts are in order: the number of them left of the word's centre
        return bisect.bisect_left(cuts, (w.left + w.right) / 2)

    grid = [[0] * n_cols for _ in run]
    for cells, r in zip(grid, run, strict=True):
        for w in r.words:
            cells[column(w)] += 1
    if statistics.median(n for cells in grid for n in cells if n) > MAX_CELL_WORDS:
        return None  # columns of prose
    if any(sum(1 for cells in grid if cells[c]) < 2 for c in range(n_cols)):
        return None  # a "column" holding one stray word
    left = min(w.left for r in run for w in r.words)
    right = max(w.right for r in run for w in r.words)
    # header lines above the run and wrapped cells below it that stay within the columns
    if first > 0:
        top = _header_band(rows, first)
        band = _Row.of(rows[top:first])
        if _close(band, rows[first], 2.2) and _fits(band, left, right, rivers) and band.segments() >= 2:
            first = top
    while last + 1 < len(rows) and _close(rows[last], rows[last + 1], 0.5) \
            and _fits(rows[last + 1], left, right, rivers) and rows[last + 1].segments() == 1:
        last += 1
    run = rows[first:last + 1]
    box = (min(w.left for r in run for w in r.words), min(r.top for r in run),
           max(w.right for r in run for w in r.words), max(r.bottom for r in run))
    inside = [w for w in words if box[0] - 2 <= (w.left + w.right) / 2 <= box[2] + 2
              and box[1] - 2 <= (w.top + w.bottom) / 2 <= box[3] + 2]
    table = _grid(inside, n_cols, column, page)
    if _contents(table.rows):
        return None
    lefts = [box[0]] * n_cols
    seen = [False] * n_cols
    for w in inside:
        c = column(w)
        lefts[c] = w.left if not seen[c] else min(lefts[c], w.left)
        seen[c] = True
    return Region(BlockKind.TABLE, page, min(w.left for w in inside), min(w.top for w in inside),
                  max(w.right for w in inside), max(w.bottom for w in inside), table=table,
                  columns=[round(x, 1) for x in lefts])


def _contents(texts: list[list[str]]) -> bool:
    """A table of contents (numbering, title, ascending page numbers; perhaps under a header row) is
    left as text for the chunkers that recognise one."""
    rows = [r for r in texts if any(r)]
    if rows and not rows[0][-1].isdigit():
        rows = rows[1:]  # a header ("Page")
    if not rows or len(rows[0]) != 3:
        return False
    pages = [r[-1] for r in rows]
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in pages) \
            or any(int(a) > int(b) for a, b in zip(pages, pages[1:], strict=False)):
        return False
    return all(not r[0] or _NUMBERING.match(r[0]) for r in rows)


def _grid(words: list[Word], n_cols: int, column: Callable[[Word], int], page: int) -> PdfTable:
    """The table of ``words``: a row per band of vertically overlapping words, a cell per column (its
    box the union of its words'); the second line of a wrapped cell joins the row above."""
    bands: list[list[Word]] = []
    bottom = 0.0
    for w in sorted(words, key=lambda w: (w.top + w.bottom) / 2):
        if bands and w.top < bottom - 0.3 * (w.bottom - w.top):
            bands[-1].append(w)
            bottom = max(bottom, w.bottom)
        else:
            bands.append([w])
            bottom = w.bottom
    pieces: list[list[list[Word]]] = []  # per row, per cell: its words, line by line
    tops: list[float] = []
    for band in bands:
        by_column: list[list[Word]] = [[] for _ in range(n_cols)]
        for w in band:
            c = column(w)
            if 0 <= c < n_cols:
                by_column[c].append(w)
        texts = [_cell_text(cell) for cell in by_column]
        filled = [t for t in texts if t]
        top = min(w.top for w in band)
        size = max(w.bottom - w.top for w in band)
        lone = len(filled) == 1 and not any(texts[2:]) and filled[0][:1].islower()  # a text cell's next line
        wrapped = (not texts[0] and 2 * len(filled) < n_cols) or lone
        if pieces and wrapped and top - tops[-1] < 2.5 * size:
            for cell, more in zip(pieces[-1], by_column, strict=True):
                cell.extend(more)
        else:
            pieces.append(by_column)
        tops.append(top)
    return PdfTable.of([[_cell(cell, page) for cell in row] for row in pieces])


def _cell(words: list[Word], page: int) -> Cell:
    if not words:
        return Cell("")
    box = BBox(min(w.left for w in words), min(w.top for w in words), max(w.right for w in words),
               max(w.bottom for w in words))
    return Cell(_cell_text(words), box=(page, box))
