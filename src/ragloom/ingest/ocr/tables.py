"""Table regions of a scan: structure from rapid-table, cells from our OCR lines.

rapid-table 0.3 (SLANet-plus) predicts the cell structure of a cropped table
image and fills the cells with the OCR lines we pass it; its answer is HTML,
with a box per predicted cell (in the order of the HTML's cells). :func:`html_cells`
reads that HTML back into rows of :class:`~ragloom.ingest.parsers.tabular.Cell`
with their spans, header marks (``<th>``) and, when the boxes are given, each
cell's place on the page; :func:`cells_table` makes the ``table`` block through
:func:`~ragloom.ingest.parsers.tabular.table_from_cells` (header rows and their
paths, stub columns, notes, each row's box). :func:`html_grid` and
:func:`grid_table` do the same for a plain grid of texts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html.parser import HTMLParser

from ragloom.ingest.blocks import BBox, Block
from ragloom.ingest.ocr.geometry import OcrLine, Rect
from ragloom.ingest.parsers.tabular import (
    Cell,
    cells_of,
    expand_spans,
    mark_grouped_header,
    table_from_cells,
    trim_grid,
)

Place = Callable[[Rect], tuple[int, BBox]]  # a box of the table's crop -> (page, box in PDF points)


class _TableHtml(HTMLParser):
    """Collects ``(text, colspan, rowspan, is_th)`` cells row by row from the first table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, int, int, bool]]] = []
        self._cell: list[str] | None = None
        self._spans = (1, 1, False)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            found = dict(attrs)
            self._cell = []
            self._spans = (_span(found.get("colspan")), _span(found.get("rowspan")), tag == "th")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            if not self.rows:
                self.rows.append([])
            self.rows[-1].append((" ".join("".join(self._cell).split()), *self._spans))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _span(value: str | None) -> int:
    return min(int(value), 100) if value and value.isdigit() and int(value) > 0 else 1


def _rows(html: str) -> list[list[tuple[str, int, int, bool]]]:
    parser = _TableHtml()
    parser.feed(html)
    parser.close()
    return parser.rows


def html_grid(html: str) -> list[list[str]]:
    """The cells of an HTML table as a rectangular grid; a merged cell's text fills every slot."""
    return expand_spans([[(t, cs, rs) for t, cs, rs, _ in row] for row in _rows(html) if row])


def html_cells(html: str, boxes: Sequence[Sequence[float]] | None = None, place: Place | None = None
               ) -> list[list[Cell]]:
    """The cells of the recogniser's HTML, row by row, with their spans and ``<th>`` marks; with
    ``boxes`` (one per cell of the HTML, in its order: ``left, top, right, bottom`` or four corners, in
    the crop's pixels) and ``place`` (crop box -> page and PDF box), each cell's place on the page.
    Boxes that do not match the cells one to one are not used."""
    rows = _rows(html)
    count = sum(len(row) for row in rows)
    usable = place is not None and boxes is not None and len(boxes) == count
    out: list[list[Cell]] = []
    index = 0
    for row in rows:
        cells = []
        for text, colspan, rowspan, th in row:
            box = place(_rect(boxes[index])) if usable and place is not None and boxes is not None else None
            cells.append(Cell(text, colspan, rowspan, th, box))
            index += 1
        if cells:
            out.append(cells)
    return out


def _rect(values: Sequence[float]) -> Rect:
    xs, ys = [float(v) for v in values[0::2]], [float(v) for v in values[1::2]]
    return Rect(min(xs), min(ys), max(xs), max(ys))


def ocr_input(lines: list[OcrLine], origin: Rect) -> list[tuple[list[list[float]], str, float]]:
    """OCR lines in the shape rapid-table takes: 4-point box relative to the crop, text, score."""
    result = []
    for line in lines:
        r = line.rect
        left, right = r.left - origin.left, r.right - origin.left
        top, bottom = r.top - origin.top, r.bottom - origin.top
        result.append(([[left, top], [right, top], [right, bottom], [left, bottom]], line.text, line.score))
    return result


def cells_table(rows: list[list[Cell]]) -> Block | None:
    """A ``table`` block (:func:`~ragloom.ingest.parsers.tabular.table_from_cells`) from the cells of at
    least 2 rows × 2 columns, else None. A first row holding one value (a title inside the table's
    frame) is its caption (and ``meta["title"]``), not a header."""
    texts = expand_spans([[(c.text, c.colspan, c.rowspan) for c in row] for row in rows])
    filled = [i for i, row in enumerate(texts) if any(t.strip() for t in row)]
    if len(filled) < 2 or max(len(texts[i]) for i in filled) < 2:
        return None
    title = ""
    values = {t.strip() for t in texts[filled[0]] if t.strip()}
    if len(filled) >= 3 and len(values) == 1:
        title = values.pop()
        rows = rows[filled[0] + 1:]
    mark_grouped_header(rows)
    block = table_from_cells(rows, caption=title)
    if block is not None and title:
        block.meta["title"] = title
    return block


def grid_table(grid: list[list[str]]) -> Block | None:
    """A ``table`` block (no boxes) from a grid of texts of at least 2 rows × 2 columns, else None
    (:func:`cells_table`)."""
    rows = trim_grid(grid)
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return None
    return cells_table(cells_of(rows))
