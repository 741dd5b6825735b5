"""Table regions of a scan: structure from rapid-table, cells from our OCR lines.

rapid-table 0.3 (SLANet-plus) predicts the cell structure of a cropped table
image and fills the cells with the OCR lines we pass it; its answer is HTML.
:func:`html_grid` reads that HTML back into a rectangular grid (spans
repeated), and :func:`grid_table` turns the grid into a ``table`` block whose
rows are tied to the header row.
"""

from __future__ import annotations

from html.parser import HTMLParser

from ragloom.ingest.blocks import Block
from ragloom.ingest.ocr.geometry import OcrLine, Rect
from ragloom.ingest.parsers.tabular import detect_header, expand_spans, table_block, trim_grid


class _TableHtml(HTMLParser):
    """Collects ``(text, colspan, rowspan)`` cells row by row from the first table."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, int, int]]] = []
        self._cell: list[str] | None = None
        self._spans = (1, 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            found = dict(attrs)
            self._cell = []
            self._spans = (_span(found.get("colspan")), _span(found.get("rowspan")))

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


def html_grid(html: str) -> list[list[str]]:
    """The cells of an HTML table as a rectangular grid; a merged cell's text fills every slot."""
    parser = _TableHtml()
    parser.feed(html)
    parser.close()
    return expand_spans([row for row in parser.rows if row])


def ocr_input(lines: list[OcrLine], origin: Rect) -> list[tuple[list[list[float]], str, float]]:
    """OCR lines in the shape rapid-table takes: 4-point box relative to the crop, text, score."""
    result = []
    for line in lines:
        r = line.rect
        left, right = r.left - origin.left, r.right - origin.left
        top, bottom = r.top - origin.top, r.bottom - origin.top
        result.append(([[left, top], [right, top], [right, bottom], [left, bottom]], line.text, line.score))
    return result


def grid_table(grid: list[list[str]]) -> Block | None:
    """A ``table`` block (no boxes yet) from a grid of at least 2 rows × 2 columns, else None.

    The header is the first header-looking row (``tabular.detect_header``);
    rows above it (a title row inside the frame) are dropped into the text.
    Without one the columns are named ``column 1``, ``column 2``...
    """
    rows = trim_grid(grid)
    if len(rows) < 2 or max(len(r) for r in rows) < 2:
        return None
    at = detect_header(rows)
    header = rows[at] if at is not None else []
    body = rows[at + 1:] if at is not None else rows
    block = table_block(header, body)
    if block is not None and at:
        above = " ".join(dict.fromkeys(c for row in rows[:at] for c in row if c))
        block.meta["title"] = above
    return block
