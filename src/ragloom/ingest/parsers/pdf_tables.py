"""Ruled tables of a PDF page as :class:`Region` objects holding their cells (:class:`PdfTable`).

pdfplumber finds the grid (it is slow, a few pages per second, so it only looks at pages that look
like they hold a table: enough vector path objects). A page whose text runs sideways (a table printed
rotated 90°) is searched in its reading frame: pdfplumber's characters and rules are turned first
(:class:`_TurnedPage`), so its rows are rows. A table whose frame misses ruled columns — a paper's
table with horizontal rules across the whole table but vertical rules only *between* columns, so
that pdfplumber's grid stops at the first and last vertical rule — is widened to the ends of its
horizontal rules.

**Cells.** Each grid cell keeps its box and its spans, read from its rectangle (the columns and rows
of the grid it covers), so a merged cell is one cell spanning its slots. A cell's text is read from
the characters whose centre it holds, in their own direction (``pdf_cells``). Two cases need more than
the rules:

- a row between two rules holding several lines of values (rules only under the header and at the
  bottom) is split into one row per line when most of its cells have that many lines;
- a cell spanning columns whose text lines up with the columns under it (no rule between them) is cut
  into those columns: its lines above the first line that lines up are a group label over them, on a
  row of its own ("Pre-Pawn" over "Handgun", "Long Gun", "*Other"), the rest one cell per column.

Characters inside the table's frame that no cell holds become a row of their own, so nothing inside
a table is lost; columns without any text of their own (a widened frame's edge) are dropped. A first
row holding one value across the table is its title, not its header.

Unruled tables are found by alignment in ``pdf_unruled``.
"""

from __future__ import annotations

import bisect
import io
import logging
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError
from pdfminer.psparser import PSException
from pdfplumber.page import DerivedPage, Page
from pdfplumber.pdf import PDF
from pdfplumber.utils.exceptions import PdfminerException

from ragloom.ingest.blocks import BBox, BlockKind
from ragloom.ingest.parsers.pdf_cells import (
    DIRECTIONS,
    Char,
    PdfTable,
    TextWord,
    cell_text,
    direction,
    in_lines,
    main_direction,
    text_lines,
)
from ragloom.ingest.parsers.pdf_order import Region
from ragloom.ingest.parsers.pdf_unruled import find_unruled
from ragloom.ingest.parsers.tabular import HEADER_ROWS_MAX, Cell, mark_grouped_header

__all__ = ["TableFinder", "find_unruled", "looks_tabular"]

log = logging.getLogger(__name__)

MIN_PATHS = 4  # path objects a page needs before it is searched for tables
WIDEN_SLACK = 2.0  # points a table's rules must reach past its frame before it is widened
PHRASE_GAP = 0.8  # type sizes: words closer than this are one phrase (one cell's value)
_NUMBER = re.compile(r"^[-+]?[\d.,%$€£¥ ]+$")
_BOLD = re.compile(r"bold|black|heavy|semibold", re.IGNORECASE)
_END = 0.5  # points: a cell ends this far above its bottom rule (the next row starts on that rule)
_ONE = 0.005  # a piece on one row as read ends this far below its start (rows as read start 0.01 apart)

_Box = tuple[float, float, float, float]


def looks_tabular(n_paths: int, turn: int = 0) -> bool:
    """Whether a page is worth a ruled-table search (a page turned any quarter is read in its frame)."""
    return n_paths >= MIN_PATHS and turn % 90 == 0


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
        """Ruled tables on page ``number`` (1-based), boxes in the page's reading frame (top-left origin):
        the displayed page, turned back when most of its text runs down or up it (as ``pdf_layout``'s
        frame turns it)."""
        try:
            if self._pdf is None:
                self._pdf = pdfplumber.open(io.BytesIO(self._data))
            page: Page = self._pdf.pages[number - 1]
            turn = 90 * DIRECTIONS.index(main_direction(page.chars))
            if turn:
                page = _TurnedPage(page, turn)
            found = page.find_tables()
            if not found:
                return []
            grids = [t.bbox for t in found if max((len(r.cells) for r in t.rows), default=0) >= 2]
            extra = _widening_edges(page.horizontal_edges, page.vertical_edges, grids)
            if extra:
                log.debug("page %d: table frames closed at the ends of their rules (%d edges)", number, len(extra))
                found = page.find_tables({"explicit_vertical_lines": extra})
            x0, y0 = page.bbox[0], page.bbox[1]
            chars = page.chars
            for i, c in enumerate(chars):
                c["seq"] = i  # drawing order: which space glyphs were drawn between two characters
            return [r for t in found if (r := _region(t, chars, number, x0, y0)) is not None]
        except (PdfminerException, PDFSyntaxError, PSException, ValueError, KeyError) as exc:
            log.warning("table search failed on page %d: %s", number, exc)
            return []


class _TurnedPage(DerivedPage):
    """A pdfplumber page seen in its reading frame: every character, rule and curve turned back by
    ``turn`` degrees, so that text running down (or up) the displayed page runs left to right; each
    character's ``dir`` is the way it runs in that frame."""

    def __init__(self, parent: Page, turn: int) -> None:
        left, top, right, bottom = parent.bbox
        self.turn, self.origin, self.display = turn, (left, top), (right - left, bottom - top)
        w, h = self.display
        self.bbox = (0, 0, h, w) if turn in (90, 270) else (0, 0, w, h)
        super().__init__(parent)
        self._turned: dict[str, list[dict[str, Any]]] | None = None

    def _point(self, x: float, y: float) -> tuple[float, float]:
        x, y = x - self.origin[0], y - self.origin[1]
        w, h = self.display
        if self.turn == 90:
            return y, w - x
        if self.turn == 180:
            return w - x, h - y
        return h - y, x

    def _object(self, obj: dict[str, Any]) -> dict[str, Any]:
        (ax, ay), (bx, by) = self._point(obj["x0"], obj["top"]), self._point(obj["x1"], obj["bottom"])
        x0, x1, top, bottom = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
        height = self.bbox[3]
        out = {**obj, "x0": x0, "x1": x1, "top": top, "bottom": bottom, "doctop": top, "y0": height - bottom,
               "y1": height - top, "width": x1 - x0, "height": bottom - top}
        if "pts" in obj:
            out["pts"] = [self._point(x, y) for x, y in obj["pts"]]
        if obj.get("object_type") == "char":
            way = DIRECTIONS[(DIRECTIONS.index(direction(obj)) - self.turn // 90) % 4]
            out["dir"], out["upright"] = way, way == "ltr"
        return out

    @property
    def objects(self) -> dict[str, list[dict[str, Any]]]:
        if self._turned is None:
            kinds = ("char", "rect", "line", "curve")
            self._turned = {k: [self._object(o) for o in v] for k, v in self.parent_page.objects.items()
                            if k in kinds}
        return self._turned


def _widening_edges(h_edges: Sequence[dict[str, Any]], v_edges: Sequence[dict[str, Any]],
                    boxes: Sequence[_Box]) -> list[dict[str, Any]]:
    """Vertical edges closing a table's frame at the ends of its horizontal rules (of a table of two
    columns or more: a column of underlined lines is no table).

    At least two rules of the table (say its top and bottom rules) must reach its frame's side or run
    past it, and no vertical rule must already close that side from the table's top to its bottom
    (rules drawn only *between* columns); the frame is then closed there, at the farthest rule end.
    """
    extra: list[dict[str, Any]] = []
    for left, top, right, bottom in boxes:
        rules = [e for e in h_edges
                 if top - 1 <= e["top"] <= bottom + 1 and e["x0"] < right and e["x1"] > left]
        to_left = [e["x0"] for e in rules if e["x0"] <= left + WIDEN_SLACK]
        to_right = [e["x1"] for e in rules if e["x1"] >= right - WIDEN_SLACK]
        ends = ([min(to_left)] if len(to_left) >= 2 else []) + ([max(to_right)] if len(to_right) >= 2 else [])
        extra += [{"x0": x, "x1": x, "top": top, "bottom": bottom, "width": 0.0, "height": bottom - top,
                   "orientation": "v", "object_type": "explicit_edge"} for x in ends
                  if not _closed(v_edges, x, top, bottom)]
    return extra


def _closed(v_edges: Sequence[dict[str, Any]], x: float, top: float, bottom: float) -> bool:
    """Whether vertical rules at ``x`` cover (nearly all of) the height from ``top`` to ``bottom``."""
    spans = sorted((max(top, e["top"]), min(bottom, e["bottom"])) for e in v_edges
                   if abs(e["x0"] - x) <= WIDEN_SLACK and e["bottom"] > top and e["top"] < bottom)
    covered, reach = 0.0, top
    for a, b in spans:
        if b > reach:
            covered += b - max(a, reach)
            reach = b
    return covered >= 0.95 * (bottom - top)


class _Placed:
    """Characters sorted by vertical centre, for quick box queries."""

    def __init__(self, chars: list[Char]) -> None:
        keyed = sorted((((c["top"] + c["bottom"]) / 2, (c["x0"] + c["x1"]) / 2, c) for c in chars),
                       key=lambda k: k[0])
        self.ys = [k[0] for k in keyed]
        self.keyed = keyed

    def within(self, box: _Box) -> list[Char]:
        """Characters whose centre is inside ``box`` (left/top inclusive, right/bottom exclusive)."""
        lo, hi = bisect.bisect_left(self.ys, box[1]), bisect.bisect_left(self.ys, box[3])
        return [c for _, cx, c in self.keyed[lo:hi] if box[0] <= cx < box[2]]


class _Across:
    """The characters of one row, sorted by horizontal centre, for its cells' boxes."""

    def __init__(self, chars: list[Char]) -> None:
        keyed = sorted((((c["x0"] + c["x1"]) / 2, c) for c in chars), key=lambda k: k[0])
        self.xs = [k[0] for k in keyed]
        self.chars = [k[1] for k in keyed]

    def within(self, box: _Box) -> list[Char]:
        """Characters whose centre is inside ``box`` horizontally (left inclusive, right exclusive)."""
        return self.chars[bisect.bisect_left(self.xs, box[0]):bisect.bisect_left(self.xs, box[2])]


def _line_groups(chars: list[Char]) -> list[list[Char]]:
    """Characters grouped into text lines, top to bottom (``pdf_cells.in_lines``)."""
    return in_lines(chars, lambda c: (c["top"], c["bottom"]))


# --- a grid of placed cells --------------------------------------------------------------------------


@dataclass(slots=True)
class _Piece:
    """A cell placed on the table's rows as read: it starts at the first row at or below ``start`` and
    covers every row above ``end``; ``col``/``span``: the grid columns it covers."""

    start: float
    end: float
    col: int
    span: int
    text: str
    box: _Box
    bold: bool = False


@dataclass(slots=True)
class _Grid:
    """The ruled grid: column left edges (and the right edge of the last), the rows' tops."""

    edges: list[float]
    tops: list[float]

    def columns(self, left: float, right: float) -> tuple[int, int]:
        """First column and number of columns of a cell from ``left`` to ``right``."""
        first = max(0, bisect.bisect_right(self.edges, left + 1) - 1)
        last = max(first, bisect.bisect_left(self.edges, right - 1) - 1)
        return first, min(last, len(self.edges) - 2) - first + 1


def _region(found: Any, chars: list[Char], number: int, x0: float, y0: float) -> Region | None:
    left, top, right, bottom = found.bbox
    frame = _Placed(chars).within(found.bbox)
    inside = _Placed(frame)
    edges = sorted({c[0] for row in found.rows for c in row.cells if c is not None})
    grid = _Grid([*edges, max(right, *(c[2] for row in found.rows for c in row.cells if c is not None))],
                 [row.bbox[1] for row in found.rows])
    pieces: list[_Piece] = []
    rows: list[float] = []  # the start of each row as read
    claimed: set[int] = set()
    for row in found.rows:
        boxes = [c for c in row.cells if c is not None]
        band = (row.bbox[0], row.bbox[1], row.bbox[2], min(c[3] for c in boxes))  # without cells spanning down
        across = _Across(inside.within(band))  # the row's characters, once; each cell's by bisection
        held = [(c, across.within(c) if c[3] <= band[3] + 1 else inside.within(c)) for c in boxes]
        claimed.update(id(ch) for _, chars_in in held for ch in chars_in)
        starts, placed = _row_pieces(band, held, grid)
        rows += starts
        pieces += placed
    stray = [c for c in frame if id(c) not in claimed and c["text"].strip()]
    if len(stray) > sum(1 for c in frame if id(c) in claimed and c["text"].strip()):
        return None  # not a grid of text (its text stays on the page)
    for group in _line_groups(stray):  # text inside the frame that no cell holds: a row of its own
        y = float(min(c["top"] for c in group))
        log.debug("page %d: table text outside its cells kept as a row: %r", number, cell_text(group))
        rows.append(y)
        box = (min(c["x0"] for c in group), y, max(c["x1"] for c in group), max(c["bottom"] for c in group))
        pieces.append(_Piece(y, y + _ONE, 0, 1, cell_text(group), box, _bold(group)))
    pieces, kept = _drop_empty_columns(pieces, len(grid.edges) - 1)
    title, pieces = _title(pieces, kept)
    cells = _assemble(pieces, sorted(rows), kept, number, (x0, y0))
    filled = [row for row in cells if any(c.text for c in row)]
    if len(filled) < 2 or kept < 2:
        return None
    region = Region(BlockKind.TABLE, number, left - x0, top - y0, right - x0, bottom - y0,
                    table=PdfTable.of(cells), columns=_column_lefts(pieces, grid, x0))
    if title is not None:
        tl, tt, tr, tb = title.box
        region.title = (title.text, (tl - x0, tt - y0, tr - x0, tb - y0))
    return region


def _row_pieces(bbox: _Box, cells: list[tuple[_Box, list[Char]]],
                grid: _Grid) -> tuple[list[float], list[_Piece]]:
    """One ruled row as read: the starts of its rows (one, or one per line of values stacked under
    one rule, or two when a cell spanning columns holds a group label over them) and its pieces."""
    top, bottom = bbox[1], bbox[3]
    spans = [(box, held, *grid.columns(box[0], box[2])) for box, held in cells]
    single = [(box, held, col, span) for box, held, col, span in spans if box[3] <= bottom + 1]
    bands = _stacked_bands([held for _, held, _, _ in single])
    if bands:
        starts = [top + i * 0.01 for i in range(len(bands))]
        pieces = []
        for box, held, col, span in spans:
            if box[3] > bottom + 1:  # a cell spanning rows below: whole, over all of them
                pieces.append(_Piece(top, box[3] - _END, col, span, cell_text(held), box, _bold(held)))
                continue
            parts: list[list[Char]] = [[] for _ in bands]
            band_tops = [b_top for b_top, _ in bands]
            for ch in held:  # each character in the last band starting above its centre
                parts[max(0, bisect.bisect_right(band_tops, (ch["top"] + ch["bottom"]) / 2) - 1)].append(ch)
            for start, (b_top, b_bottom), part in zip(starts, bands, parts, strict=True):
                pieces.append(_Piece(start, start + _ONE, col, span, cell_text(part),
                                     (box[0], b_top, box[2], b_bottom), _bold(part)))
        return starts, pieces
    cut = [(box, held, col, span, _column_split(held, grid, col, span) if span > 1 and box[3] <= bottom + 1
            else None) for box, held, col, span in spans]
    labelled = any(split is not None and split.label for *_, split in cut)
    count = int(labelled) + max((len(split.rows) for *_, split in cut if split is not None), default=1)
    starts = [top + i * 0.01 for i in range(count)]
    pieces = []
    for box, held, col, span, split in cut:
        if split is None:
            pieces.append(_Piece(top, box[3] - _END, col, span, cell_text(held), box, _bold(held)))
            continue
        if split.label:
            label_box = (box[0], box[1], box[2], split.rows[0][0])
            pieces.append(_Piece(top, top + _ONE, col, span, split.label, label_box, _bold(held)))
        first = int(labelled) if split.label or len(split.rows) > 1 else 0
        for i, (line_top, line_bottom, columns) in enumerate(split.rows):
            last = i == len(split.rows) - 1
            start = starts[first + i]
            end = box[3] - _END if last else start + _ONE
            for c, text in columns.items():
                where = (grid.edges[c], line_top, grid.edges[c + 1], box[3] if last else line_bottom)
                pieces.append(_Piece(start, end, c, 1, text, where, _bold(held)))
    return starts, pieces


def _stacked_bands(held: list[list[Char]]) -> list[tuple[float, float]]:
    """The text lines of a ruled row holding values stacked under one rule (each a row of its own), or
    nothing: at least two cells, and most of its filled cells, hold exactly as many lines as the row —
    three lines or more, or two lines of figures; a wrapped header or wrapped text is kept whole."""
    chars = [ch for h in held for ch in h]
    if main_direction(chars) != "ltr":
        return []
    lines = _line_groups(chars)
    if len(lines) < 2:
        return []
    per_cell = [_line_groups(h) for h in held if h]
    full = [cell for cell in per_cell if len(cell) == len(lines)]
    numeric = sum(1 for cell in full for g in cell if _NUMBER.match(cell_text(g)))
    stacked = len(lines) >= 3 or numeric >= 0.6 * len(lines) * len(full)
    if not stacked or len(full) < max(2, 0.6 * len(per_cell)):
        return []
    return [(min(ch["top"] for ch in g), max(ch["bottom"] for ch in g)) for g in lines]


@dataclass(slots=True)
class _Split:
    """A cell spanning columns cut into them: its group ``label`` (the lines above its first line that
    lines up with the columns) and its rows, each ``(top, bottom, {column: text})``."""

    label: str
    rows: list[tuple[float, float, dict[int, str]]]


def _column_split(held: list[Char], grid: _Grid, col: int, span: int) -> _Split | None:
    """A cell spanning ``span`` columns whose text lines up with them, or None (a title, a sentence
    across the columns). Each line whose phrases fall into two columns or more starts a row; a line
    after it that does not (a wrapped value) joins that row, in the column it starts in; the lines
    before the first such line are the label over the columns ("Pre-Pawn" over "Handgun", "Long
    Gun", "*Other")."""
    if main_direction(held) != "ltr":
        return None
    label: list[str] = []
    rows: list[tuple[float, float, dict[int, list[str]]]] = []
    for line in text_lines(held):
        placed = _placed_phrases(line, grid, col, span)
        line_top, line_bottom = min(w.top for w in line), max(w.bottom for w in line)
        if len({c for c, _ in placed}) >= 2:
            rows.append((line_top, line_bottom, {}))
        elif not rows:
            label += [w.text for w in line]
            continue
        row_top, _, columns = rows[-1]
        rows[-1] = (row_top, line_bottom, columns)
        for c, text in placed:
            columns.setdefault(c, []).append(text)
    if not rows:
        return None
    return _Split(" ".join(label), [(t, b, {c: " ".join(v) for c, v in sorted(cs.items())}) for t, b, cs in rows])


def _placed_phrases(line: Sequence[TextWord], grid: _Grid, col: int, span: int) -> list[tuple[int, str]]:
    """The phrases of a line (words closer than :data:`PHRASE_GAP` type sizes), each with the column
    (of the ``span`` from ``col``) it starts in."""
    size = statistics.median(w.bottom - w.top for w in line) or 1.0
    phrases: list[list[TextWord]] = [[line[0]]]
    for a, b in zip(line, line[1:], strict=False):
        if b.x0 - a.x1 > PHRASE_GAP * size:
            phrases.append([])
        phrases[-1].append(b)
    out = []
    for phrase in phrases:
        c = min(max(bisect.bisect_right(grid.edges, phrase[0].x0 + 1) - 1, col), col + span - 1)
        out.append((c, " ".join(w.text for w in phrase)))
    return out


def _drop_empty_columns(pieces: list[_Piece], width: int) -> tuple[list[_Piece], int]:
    """The pieces without the columns that hold no text of their own (a widened frame's empty edge):
    a column stays when a one-column piece in it has text, or when it is the first of a spanning
    piece with text none of whose columns stays. Spans shrink to the columns kept."""
    keep = [False] * width
    for p in pieces:
        if p.text and p.span == 1:
            keep[p.col] = True
    for p in pieces:
        if p.text and not any(keep[p.col: p.col + p.span]):
            keep[p.col] = True
    index = [0] * (width + 1)
    for c in range(width):
        index[c + 1] = index[c] + keep[c]
    out = []
    for p in pieces:
        span = index[p.col + p.span] - index[p.col]
        if span:
            out.append(_Piece(p.start, p.end, index[p.col], span, p.text, p.box, p.bold))
    return out, index[width]


def _title(pieces: list[_Piece], width: int) -> tuple[_Piece | None, list[_Piece]]:
    """The table's title — the one value of its first row, across the table, with two rows or more
    under it — and the other pieces."""
    if not pieces or width < 2:
        return None, pieces
    first = min(p.start for p in pieces)
    head = [p for p in pieces if p.start == first]
    texts = [p for p in head if p.text]
    rest = {p.start for p in pieces if p.start != first and p.text}
    if len(texts) != 1 or len(rest) < 2 or any(p.end > min(rest) for p in head):
        return None, pieces
    return texts[0], [p for p in pieces if p.start != first]


def _assemble(pieces: list[_Piece], starts: list[float], width: int, page: int,
              origin: tuple[float, float]) -> list[list[Cell]]:
    """The rows of cells, in the order :func:`~ragloom.ingest.parsers.tabular.table_from_cells` reads them
    (left to right, a slot covered by a row span above skipped): each piece at the first row at or below
    its start, spanning the rows up to its end; a slot no piece covers gets an empty cell. A piece
    whose slot is taken moves to the next free one (or is dropped when its row has none)."""
    starts = sorted(set(starts))
    taken = [[False] * width for _ in starts]
    at: list[list[_Piece]] = [[] for _ in starts]
    for p in pieces:
        r = bisect.bisect_left(starts, p.start - 1e-6)
        if r < len(starts):
            at[r].append(p)
    rows: list[list[Cell]] = []
    placements: list[_Placement] = []
    ox, oy = origin
    for r, placed in enumerate(at):
        queue = sorted(placed, key=lambda p: (p.col, -p.span))
        row: list[Cell] = []
        for c in range(width):
            if taken[r][c]:
                continue
            if not queue or queue[0].col > c:
                row.append(Cell(""))
                taken[r][c] = True
                continue
            p = queue.pop(0)
            span = 1
            while span < p.span and c + span < width and not taken[r][c + span]:
                span += 1
            down = max(1, bisect.bisect_left(starts, p.end) - r)
            for rr in range(r, min(len(starts), r + down)):
                for cc in range(c, c + span):
                    taken[rr][cc] = True
            box = BBox(p.box[0] - ox, p.box[1] - oy, p.box[2] - ox, p.box[3] - oy)
            row.append(Cell(p.text, span, down, box=(page, box)))
            placements.append(_Placement(r, p.bold, row[-1]))
        if queue:
            log.debug("page %d: %d table cells without a free slot left out", page, len(queue))
        rows.append(row)
    _mark_header(placements, len(rows))
    mark_grouped_header(rows)
    return rows


@dataclass(slots=True)
class _Placement:
    row: int
    bold: bool
    cell: Cell


def _mark_header(placements: list[_Placement], n_rows: int) -> None:
    """Mark the cells of the leading rows set in bold over a body that is not as header cells (two
    rows drawn as a grouped header are marked by ``tabular.mark_grouped_header``)."""
    by_row: list[list[_Placement]] = [[] for _ in range(n_rows)]
    for p in placements:
        if p.cell.text:
            by_row[p.row].append(p)
    filled = [r for r in by_row if r]
    bold = 0
    while bold < min(HEADER_ROWS_MAX, len(filled) - 1) and all(p.bold for p in filled[bold]):
        bold += 1
    if bold and any(not p.bold for row in filled[bold:] for p in row):
        for row in filled[:bold]:
            for p in row:
                p.cell.header = True


def _bold(chars: Sequence[Char]) -> bool:
    """Every character with ink is set in a bold face."""
    inked = [c for c in chars if str(c.get("text", "")).strip()]
    return bool(inked) and all(_BOLD.search(str(c.get("fontname", ""))) for c in inked)


def _column_lefts(pieces: list[_Piece], grid: _Grid, x0: float) -> list[float]:
    """The left edges of the columns kept (a continued table's columns are compared by them)."""
    lefts: dict[int, float] = {}
    for p in pieces:
        if p.span == 1:
            lefts[p.col] = min(lefts.get(p.col, p.box[0]), p.box[0])
    return [round(lefts[c] - x0, 1) for c in sorted(lefts)]
