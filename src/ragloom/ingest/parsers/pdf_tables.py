"""Ruled tables of a PDF page with pdfplumber, as :class:`Region` objects.

pdfplumber is slow (a few pages per second), so it only looks at pages that
look like they hold a table: enough vector path objects (rules, cell borders)
and text upright on the displayed page. Each table keeps its rows, the first
row as header when it reads like one, and its column left edges so a table
split by a page break can be recognised and joined (see ``pdf_paragraphs``).
Cells covered by a merged cell repeat the merged cell's value.
"""

from __future__ import annotations

import io
import logging
import re
from types import TracebackType

import pdfplumber
from pdfminer.pdfparser import PDFSyntaxError
from pdfminer.psparser import PSException
from pdfplumber.pdf import PDF
from pdfplumber.utils.exceptions import PdfminerException

from ragloom.ingest.blocks import BlockKind, Table
from ragloom.ingest.parsers.common import clean_cell
from ragloom.ingest.parsers.pdf_order import Region

log = logging.getLogger(__name__)

MIN_PATHS = 4  # path objects a page needs before it is searched for tables
_NUMBER = re.compile(r"^[-+]?[\d.,%$€£¥ ]+$")


def looks_tabular(n_paths: int, turn: int) -> bool:
    """Whether a page is worth a table search (ruled tables on upright pages)."""
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
        """Tables on page ``number`` (1-based), boxes in displayed-page points (top-left origin)."""
        try:
            if self._pdf is None:
                self._pdf = pdfplumber.open(io.BytesIO(self._data))
            page = self._pdf.pages[number - 1]
            found = page.find_tables()
            x0, y0 = page.bbox[0], page.bbox[1]
            return [r for t in found if (r := _region(t, number, x0, y0)) is not None]
        except (PdfminerException, PDFSyntaxError, PSException, ValueError, KeyError) as exc:
            log.warning("table search failed on page %d: %s", number, exc)
            return []


def _region(found: pdfplumber.table.Table, number: int, x0: float, y0: float) -> Region | None:
    rows = _fill_merged(found.extract())
    rows = [r for r in rows if any(r)]
    width = max((len(r) for r in rows), default=0)
    if len(rows) < 2 or width < 2:
        return None
    left, top, right, bottom = found.bbox
    columns = sorted({round(c[0] - x0, 1) for row in found.rows for c in row.cells if c is not None})
    columns = [x for i, x in enumerate(columns) if i == 0 or x - columns[i - 1] > 2]
    header = rows[0] if _is_header(rows[0], rows[1:]) else []
    table = Table(header=header, rows=rows[1:] if header else rows)
    return Region(BlockKind.TABLE, number, left - x0, top - y0, right - x0, bottom - y0, table=table, columns=columns)


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
