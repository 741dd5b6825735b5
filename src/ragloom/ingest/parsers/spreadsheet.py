"""Spreadsheets: XLSX (openpyxl), XLS (xlrd), CSV/TSV (stdlib ``csv``).

Every sheet becomes a ``title`` block (the sheet name) followed by its rows:
title rows above the header as text, then one ``table`` block whose lines read
``header: value; header: value`` (see :func:`~ragloom.ingest.parsers.tabular.grid_blocks`
for header detection). Merged cells repeat their value in every cell they
cover. Formulas give their *cached* value; a workbook saved without cached
values (by a program that does not calculate) is not recalculated: such cells
read ``=FORMULA [not calculated]`` and the blocks say how many there are in
``meta["uncalculated_formulas"]``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
import zipfile
from collections.abc import Iterable
from pathlib import PurePath

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers.tabular import grid_blocks
from ragloom.ingest.parsers.text import decode_or_raise

log = logging.getLogger(__name__)
_NOT_CALCULATED = "[not calculated]"


def cell_text(value: object) -> str:
    """A cell value as text: integral floats without ``.0``, dates in ISO form, booleans as TRUE/FALSE."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return str(value).strip()


def _sheet_blocks(name: str, grid: list[list[str]], meta: dict[str, str]) -> list[Block]:
    meta = {"sheet": name, **meta}
    body = grid_blocks(grid, (name,), meta)
    if not body:
        return []
    return [Block(text=name, kind="title", level=1, meta=dict(meta)), *body]


def _fill_merges(grid: list[list[str]], ranges: Iterable[tuple[int, int, int, int]]) -> None:
    """Repeat each merged range's top-left value over the range (0-based, end-exclusive)."""
    for r0, r1, c0, c1 in ranges:
        if r0 >= len(grid):
            continue
        value = grid[r0][c0] if c0 < len(grid[r0]) else ""
        for r in range(r0, min(r1, len(grid))):
            row = grid[r]
            row.extend([""] * (c1 - len(row)))
            for c in range(c0, c1):
                row[c] = value


class XlsxParser:
    """Every worksheet of an XLSX workbook, with cached formula values."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            import openpyxl
            from openpyxl.utils.exceptions import InvalidFileException
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("openpyxl") from exc
        try:
            formulas = openpyxl.load_workbook(io.BytesIO(data), data_only=False)
            has_formulas = any(c.data_type == "f" for ws in formulas.worksheets for row in ws.iter_rows()
                               for c in row)
            values = openpyxl.load_workbook(io.BytesIO(data), data_only=True) if has_formulas else formulas
        except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
            raise ParseError(f"{filename}: not a valid XLSX workbook ({exc})") from exc
        blocks: list[Block] = []
        missing_total = 0
        for ws_f, ws_v in zip(formulas.worksheets, values.worksheets, strict=True):
            grid, missing = self._grid(ws_f, ws_v)
            _fill_merges(grid, ((m.min_row - 1, m.max_row, m.min_col - 1, m.max_col) for m in ws_f.merged_cells.ranges))
            meta = {"uncalculated_formulas": str(missing)} if missing else {}
            if ws_f.sheet_state != "visible":
                meta["hidden"] = "true"
            blocks += _sheet_blocks(ws_f.title, grid, meta)
            missing_total += missing
        if not blocks:
            raise ParseError(f"{filename}: the workbook has no cell with a value")
        metadata = {"sheets": str(len(formulas.worksheets))}
        if missing_total:
            metadata["warning"] = (
                f"{missing_total} formula cells have no saved value (the file was saved without calculating); "
                f"they are shown as the formula followed by {_NOT_CALCULATED}"
            )
            log.warning("%s: %s", filename, metadata["warning"])
        return ParsedDocument(blocks=blocks, title=formulas.properties.title or None, metadata=metadata)

    @staticmethod
    def _grid(ws_f: object, ws_v: object) -> tuple[list[list[str]], int]:
        grid: list[list[str]] = []
        missing = 0
        for row_f, row_v in zip(ws_f.iter_rows(), ws_v.iter_rows(), strict=True):  # type: ignore[attr-defined]
            cells = []
            for cf, cv in zip(row_f, row_v, strict=True):
                if cf.data_type == "f" and cv.value is None:
                    missing += 1
                    cells.append(f"{cf.value} {_NOT_CALCULATED}")
                else:
                    cells.append(cell_text(cv.value))
            grid.append(cells)
        return grid, missing


class XlsParser:
    """Every sheet of a legacy Excel 97-2003 ``.xls`` workbook through xlrd (cached formula values)."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            import xlrd
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("xlrd") from exc
        try:
            book = xlrd.open_workbook(file_contents=data, formatting_info=True)
        except (xlrd.XLRDError, AssertionError, IndexError, ValueError) as exc:
            raise ParseError(f"{filename}: not a readable XLS workbook ({exc})") from exc
        blocks: list[Block] = []
        for sheet in book.sheets():
            grid = [[self._cell(sheet.cell(r, c), book.datemode) for c in range(sheet.ncols)]
                    for r in range(sheet.nrows)]
            _fill_merges(grid, sheet.merged_cells)
            blocks += _sheet_blocks(sheet.name, grid, {})
        if not blocks:
            raise ParseError(f"{filename}: the workbook has no cell with a value")
        return ParsedDocument(blocks=blocks, metadata={"sheets": str(book.nsheets)})

    @staticmethod
    def _cell(cell: object, datemode: int) -> str:
        import xlrd

        ctype, value = cell.ctype, cell.value  # type: ignore[attr-defined]
        if ctype == xlrd.XL_CELL_DATE:
            try:
                return cell_text(xlrd.xldate_as_datetime(value, datemode))
            except (xlrd.xldate.XLDateError, OverflowError):
                return cell_text(value)
        if ctype == xlrd.XL_CELL_BOOLEAN:
            return cell_text(bool(value))
        if ctype == xlrd.XL_CELL_ERROR:
            return xlrd.error_text_from_code.get(value, "#ERROR")
        return cell_text(value)


class CsvParser:
    """A CSV or TSV file as one table: encoding detected, delimiter sniffed (``, ; \\t |``)."""

    def __init__(self, delimiter: str | None = None) -> None:
        self.delimiter = delimiter

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        delimiter = self.delimiter or self._sniff(text)
        try:
            grid = list(csv.reader(io.StringIO(text), delimiter=delimiter))
        except csv.Error as exc:
            raise ParseError(f"{filename}: malformed CSV ({exc})") from exc
        name = PurePath(filename).stem or "table"
        blocks = grid_blocks(grid, (), {"sheet": name, "delimiter": delimiter})
        if not blocks:
            raise ParseError(f"{filename}: the CSV file has no values")
        return ParsedDocument(blocks=blocks, metadata={"encoding": encoding, "delimiter": delimiter})

    @staticmethod
    def _sniff(text: str) -> str:
        sample = "\n".join(text.splitlines()[:50])
        try:
            return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:
            counts = {d: sample.count(d) for d in ",;\t|"}
            best = max(counts, key=lambda d: counts[d])
            return best if counts[best] else ","


def tsv_parser() -> CsvParser:
    return CsvParser("\t")
