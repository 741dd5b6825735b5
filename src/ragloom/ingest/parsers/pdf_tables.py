"""Tables of a PDF page as :class:`Region` objects: ruled tables with pdfplumber, unruled ones by alignment.

**Ruled tables.** pdfplumber is slow (a few pages per second), so it only looks at pages
that look like they hold a table: enough vector path objects (rules, cell borders) and
text upright on the displayed page. A table whose frame misses ruled columns — a paper's
table with horizontal rules across the whole table but vertical rules only *between*
columns, so that pdfplumber's grid stops at the first and last vertical rule — is widened
to the ends of its horizontal rules. Cells are read from the characters whose centre they
hold; a row between two rules that holds several lines of values (rules only under the
header and at the bottom) is split into one row per line when most of its cells have that
many lines; characters inside the table's frame that no cell holds become a row of their
own, so nothing inside a table is lost. Merged cells repeat the merged cell's value.

**Unruled tables** (:func:`find_unruled`) are found on every text page from the lines'
words: a run of at least ``MIN_ROWS`` consecutive lines cut by wide gaps, whose words
leave at least two vertical "rivers" of white across the whole run (three columns or
more), holding short cells (a few words each, unlike a column of prose). On a page with
text columns each column is searched on its own.

Each table keeps its rows, the first row as header when it reads like one, and its column
left edges so a table split by a page break can be recognised and joined (see
``pdf_paragraphs``).
"""

from __future__ import annotations

import bisect
import io
import logging
import re
import statistics
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError
from pdfminer.psparser import PSException
from pdfplumber.pdf import PDF
from pdfplumber.utils.exceptions import PdfminerException
from pdfplumber.utils.text import extract_text

from ragloom.ingest.blocks import BlockKind, Table
from ragloom.ingest.parsers.common import clean_cell
from ragloom.ingest.parsers.pdf_layout import Line, Word
from ragloom.ingest.parsers.pdf_order import Region, find_gutters

log = logging.getLogger(__name__)

MIN_PATHS = 4  # path objects a page needs before it is searched for tables
WIDEN_SLACK = 2.0  # points a table's rules must reach past its frame before it is widened
MIN_ROWS = 3  # unruled tables: rows
MIN_COLUMNS = 3  # unruled tables: columns (two aligned columns are a form or a list, not a table)
CELL_GAP = 0.8  # unruled tables: a gap between cells is at least this many line sizes wide
RIVER = 0.5  # unruled tables: a column gap is at least this many line sizes wide over the whole run
MAX_HEADER_LINES = 3  # unruled tables: lines above the aligned rows that may join as a header
MAX_CELL_WORDS = 3.0  # unruled tables: median words per filled cell (prose columns hold many more)
_NUMBERING = re.compile(r"^([\dIVXivx]+|[A-Z])(\.\d+)*\.?$")
_NUMBER = re.compile(r"^[-+]?[\d.,%$€£¥ ]+$")

_Obj = dict[str, Any]
_Box = tuple[float, float, float, float]


def looks_tabular(n_paths: int, turn: int) -> bool:
    """Whether a page is worth a ruled-table search (ruled tables on upright pages)."""
    return n_paths >= MIN_PATHS and turn == 0


class TableFinder:
    """Opens the document with pdfplumber on first use; use as a context manager."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pdf: PDF | None = None

    def __enter__(self) -> TableFinder:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._pdf is not None:
            self._pdf.close()

    def find(self, number: int) -> list[Region]:
        """Ruled tables on page ``number`` (1-based), boxes in displayed-page points (top-left origin)."""
        try:
            if self._pdf is None:
                self._pdf = pdfplumber.open(io.BytesIO(self._data))
            page = self._pdf.pages[number - 1]
            found = page.find_tables()
            if not found:
                return []
            grids = [t.bbox for t in found if max((len(r.cells) for r in t.rows), default=0) >= 2]
            extra = _widening_edges(page.horizontal_edges, grids)
            if extra:
                log.debug("page %d: table frames closed at the ends of their rules (%d edges)", number, len(extra))
                found = page.find_tables({"explicit_vertical_lines": extra})
            x0, y0 = page.bbox[0], page.bbox[1]
            chars = page.chars
            return [r for t in found if (r := _region(t, chars, number, x0, y0)) is not None]
        except (PdfminerException, PDFSyntaxError, PSException, ValueError, KeyError) as exc:
            log.warning("table search failed on page %d: %s", number, exc)
            return []


def _widening_edges(h_edges: Sequence[_Obj], boxes: Sequence[_Box]) -> list[_Obj]:
    """Vertical edges at the ends of horizontal rules that run past a table's frame (of a table
    of two columns or more: a column of underlined lines is no table).

    At least two rules of the table (say its top and bottom rules) must reach past the
    frame on a side; the frame is then closed there, from its top to its bottom.
    """
    extra: list[_Obj] = []
    for left, top, right, bottom in boxes:
        rules = [e for e in h_edges
                 if top - 1 <= e["top"] <= bottom + 1 and e["x0"] < right and e["x1"] > left]
        past_left = [e["x0"] for e in rules if e["x0"] < left - WIDEN_SLACK]
        past_right = [e["x1"] for e in rules if e["x1"] > right + WIDEN_SLACK]
        ends = ([min(past_left)] if len(past_left) >= 2 else []) + ([max(past_right)] if len(past_right) >= 2 else [])
        extra += [{"x0": x, "x1": x, "top": top, "bottom": bottom, "width": 0.0, "height": bottom - top,
                   "orientation": "v", "object_type": "explicit_edge"} for x in ends]
    return extra


class _Placed:
    """The characters of a table's frame, sorted by vertical centre, for quick box queries."""

    def __init__(self, chars: list[_Obj]) -> None:
        keyed = sorted((((c["top"] + c["bottom"]) / 2, (c["x0"] + c["x1"]) / 2, c) for c in chars),
                       key=lambda k: k[0])
        self.ys = [k[0] for k in keyed]
        self.keyed = keyed

    def within(self, box: _Box) -> list[_Obj]:
        """Characters whose centre is inside ``box`` (left/top inclusive, right/bottom exclusive)."""
        lo, hi = bisect.bisect_left(self.ys, box[1]), bisect.bisect_left(self.ys, box[3])
        return [c for _, cx, c in self.keyed[lo:hi] if box[0] <= cx < box[2]]


def _line_groups(chars: list[_Obj]) -> list[list[_Obj]]:
    """Characters grouped into text lines by their vertical centres, top to bottom."""
    if not chars:
        return []
    ordered = sorted(chars, key=lambda c: (c["top"] + c["bottom"]) / 2)
    height = statistics.median(c["bottom"] - c["top"] for c in ordered) or 1.0
    groups: list[list[_Obj]] = [[ordered[0]]]
    for c in ordered[1:]:
        prev = groups[-1][-1]
        if (c["top"] + c["bottom"]) / 2 - (prev["top"] + prev["bottom"]) / 2 > 0.5 * height:
            groups.append([])
        groups[-1].append(c)
    return groups


def _text(chars: list[_Obj]) -> str:
    return clean_cell(extract_text(chars)) if chars else ""


def _row_lines(held: list[list[_Obj] | None], first: bool) -> list[list[str | None]]:
    """One table row (between two rules; ``held``: the characters of each cell, None for a cell
    covered by a merged one) as one or more rows of cell texts.

    The row is split into one row per text line when at least two cells, and most of its
    filled cells, hold exactly as many lines as the row (values stacked under one rule): three
    lines or more, or two lines of figures; a wrapped header or wrapped text is kept whole.
    """
    lines = _line_groups([ch for h in held if h for ch in h])
    if len(lines) >= 2 and not (first and len(lines) == 2):
        bands = [(min(ch["top"] for ch in g), max(ch["bottom"] for ch in g)) for g in lines]
        per_cell = [_line_groups(h) for h in held if h]
        full = [cell for cell in per_cell if len(cell) == len(lines)]
        numeric = sum(1 for cell in full for g in cell if _NUMBER.match(_text(g)))
        stacked = len(lines) >= 3 or numeric >= 0.6 * len(lines) * len(full)  # two lines: values, not wrapped text
        if stacked and len(full) >= max(2, 0.6 * len(per_cell)):
            out: list[list[str | None]] = []
            for top, bottom in bands:
                out.append([None if h is None else _text([ch for ch in h if top <= (ch["top"] + ch["bottom"]) / 2
                                                          <= bottom]) for h in held])
            return out
    return [[None if h is None else _text(h) for h in held]]


def _region(found: Any, chars: list[_Obj], number: int, x0: float, y0: float) -> Region | None:
    left, top, right, bottom = found.bbox
    frame = _Placed(chars).within(found.bbox)
    inside = _Placed(frame)
    placed: list[tuple[float, list[str | None]]] = []  # (top of the row, cells)
    claimed: set[int] = set()
    for r, row in enumerate(found.rows):
        held: list[list[_Obj] | None] = [None if c is None else inside.within(c) for c in row.cells]
        claimed.update(id(ch) for h in held if h for ch in h)
        for i, texts in enumerate(_row_lines(held, r == 0)):
            placed.append((row.bbox[1] + i * 0.01, texts))
    stray = [c for c in frame if id(c) not in claimed and c["text"].strip()]
    cell_rows = _drop_empty(_fill_merged([t for _, t in placed]))
    if len(cell_rows) < 2 or max((len(r) for r in cell_rows), default=0) < 2 \
            or len(stray) > sum(1 for c in frame if id(c) in claimed and c["text"].strip()):
        return None  # not a grid of text (its text stays on the page)
    width = max((len(t) for _, t in placed), default=0)
    for group in _line_groups(stray):  # text inside the frame that no cell holds: a row of its own
        log.debug("page %d: table text outside its cells kept as a row: %r", number, _text(group))
        stray_row: list[str | None] = [_text(group), *[""] * (width - 1)]
        placed.append((float(min(c["top"] for c in group)), stray_row))
    placed.sort(key=lambda p: p[0])
    rows = _drop_empty(_fill_merged([t for _, t in placed]))
    title = ""
    if len(rows) > 2 and len({c for c in rows[0] if c}) == 1 and len(rows[0]) >= 2:
        title = next(c for c in rows[0] if c)  # a title across the table's columns, not its header
        rows = rows[1:]
        tl, tt, tr, tb = found.rows[0].bbox
    columns = sorted({round(c[0] - x0, 1) for row in found.rows for c in row.cells if c is not None})
    columns = [x for i, x in enumerate(columns) if i == 0 or x - columns[i - 1] > 2]
    header = rows[0] if _is_header(rows[0], rows[1:]) else []
    table = Table(header=header, rows=rows[1:] if header else rows)
    region = Region(BlockKind.TABLE, number, left - x0, top - y0, right - x0, bottom - y0, table=table,
                    columns=columns)
    if title:
        region.title = (title, (tl - x0, tt - y0, tr - x0, tb - y0))
    return region


def _drop_empty(rows: list[list[str]]) -> list[list[str]]:
    """Rows and columns without any text go (a widened frame may add an empty edge column)."""
    rows = [r for r in rows if any(r)]
    width = max((len(r) for r in rows), default=0)
    keep = [c for c in range(width) if any(c < len(r) and r[c] for r in rows)]
    return [[r[c] if c < len(r) else "" for c in keep] for r in rows]


def _fill_merged(rows: list[list[str | None]]) -> list[list[str]]:
    out: list[list[str]] = []
    for r, row in enumerate(rows):
        cells: list[str] = []
        for c, cell in enumerate(row):
            if cell is None:
                cell = cells[c - 1] if c > 0 else (out[r - 1][c] if r > 0 and c < len(out[r - 1]) else "")
            cells.append(clean_cell(cell))
        out.append(cells)
    return out


def _is_header(first: list[str], body: list[list[str]]) -> bool:
    filled = [c for c in first if c]
    if not body or len(filled) * 2 < len(first):
        return False
    return not any(_NUMBER.match(c) for c in filled)


# --- unruled tables ---------------------------------------------------------------------------------


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
    table = _grid(inside, n_cols, column)
    if _contents(table):
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


def _contents(table: Table) -> bool:
    """A table of contents (numbering, title, ascending page numbers) is left as text for the
    chunkers that recognise one."""
    rows = [r for r in table.rows if any(r)]
    if not rows or len(table.header or rows[0]) != 3:
        return False
    pages = [r[-1] for r in rows]
    if not all(p.isascii() and p.isdigit() and len(p) <= 6 for p in pages) \
            or any(int(a) > int(b) for a, b in zip(pages, pages[1:], strict=False)):
        return False
    return all(not r[0] or _NUMBERING.match(r[0]) for r in rows)


def _grid(words: list[Word], n_cols: int, column: Callable[[Word], int]) -> Table:
    """The table of ``words``: a row per band of vertically overlapping words, a cell per column;
    the second line of a wrapped cell joins the row above."""
    bands: list[list[Word]] = []
    bottom = 0.0
    for w in sorted(words, key=lambda w: (w.top + w.bottom) / 2):
        if bands and w.top < bottom - 0.3 * (w.bottom - w.top):
            bands[-1].append(w)
            bottom = max(bottom, w.bottom)
        else:
            bands.append([w])
            bottom = w.bottom
    pieces: list[list[list[str]]] = []  # per row, per cell: its lines (joined once the row is complete)
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
            for cell, text in zip(pieces[-1], texts, strict=True):
                if text:
                    cell.append(text)
        else:
            pieces.append([[text] if text else [] for text in texts])
        tops.append(top)
    rows = [[" ".join(cell) for cell in row] for row in pieces]
    header = rows[0] if len(rows) > 1 and _is_header(rows[0], rows[1:]) else []
    return Table(header=header, rows=rows[1:] if header else rows)
