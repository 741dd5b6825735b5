"""Spreadsheets: XLSX (openpyxl), XLS (xlrd), CSV/TSV (stdlib ``csv``).

Every table of a sheet becomes a ``table`` block
(:func:`~ragloom.ingest.parsers.sheet_tables.sheet_blocks`): a sheet holding several tables side
by side or one above the other (separated by empty rows or columns) gives one block each. Each is
headed by the sheet name (``heading_path``, and ``meta["sheet"]``) and by its title rows above the
header, if any. Neither is a block of its own: a chunker would make it a chunk holding nothing but
a name; every chunk of the table shows them as its heading. Empty sheets give nothing. A merged
range is one cell spanning its rows and columns (its value under each column it covers; a two-row
header with merged group cells gives header paths such as ``header › second``). Hidden rows and
columns are left out, named in the blocks' ``meta["hidden_rows"]`` / ``meta["hidden_columns"]``
and counted in ``ParsedDocument.removed["hidden_cells"]``; a hidden sheet is read, marked
``meta["hidden"]``.

Values read as the sheet shows them: numbers, dates and times in their cell's number format
(:mod:`~ragloom.ingest.parsers.numfmt`: ``#,##0.00``, ``0%``, ``yyyy-mm-dd h:mm``, currencies...).
Formulas give their *cached* value, formatted the same way; a workbook saved without cached
values (by a program that does not calculate) is not recalculated: such cells
read ``=FORMULA [not calculated]`` and the blocks say how many there are in
``meta["uncalculated_formulas"]``. A CSV's first row is its header when it reads like one, or
when its cells are of another kind (words, numbers) than those under them.

Limits: rows are read one by one (XLSX sheets streamed, CSV rows as they are
split, XLS sheet by sheet) and the parse fails at the first row that takes the
file over ``max_sheet_cells`` non-empty cells (all sheets together, merged
ranges counted as filled) or a sheet over ``max_sheet_columns`` columns
(:class:`~ragloom.errors.LimitExceededError` naming the setting).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import logging
import struct
import zipfile
from collections.abc import Iterable
from pathlib import PurePath
from typing import TYPE_CHECKING

from ragloom.errors import LimitExceededError, MissingDependencyError, ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.guard import checkpoint, exceeded, limits
from ragloom.ingest.parsers.bounds import check_zip
from ragloom.ingest.parsers.numfmt import number_format_code, render
from ragloom.ingest.parsers.sheet_tables import Sheet, sheet_blocks
from ragloom.ingest.parsers.text import decode_or_raise

if TYPE_CHECKING:  # untyped libraries: these names are Any to the checker
    from lxml.etree import _Element
    from xlrd.book import Book
    from xlrd.sheet import Cell

log = logging.getLogger(__name__)
_NOT_CALCULATED = "[not calculated]"
CHECK_ROWS = 2000  # rows between two task checkpoints
XLSX_MAX_ROWS = 1_048_576  # rows an XLSX sheet can hold; a higher row number is a damaged (or hostile) file
SNIFF_CHARS = 8 * 1024  # the start of a CSV file the delimiter is guessed from (csv.Sniffer's patterns are
# quadratic in the sample: 64 KiB of quote marks took 2.5 s)


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


def shown(value: object, code: str) -> str:
    """A cell value as its number format ``code`` shows it (:func:`~ragloom.ingest.parsers.numfmt.render`),
    else as :func:`cell_text` reads it."""
    text = render(value, code) if value is not None else None
    return text if text is not None else cell_text(value)


def _sheet_blocks(name: str, sheet: Sheet, meta: dict[str, str], removed: dict[str, int]) -> list[Block]:
    blocks, hidden = sheet_blocks(sheet, (name,), {"sheet": name, **meta})
    if hidden:
        removed["hidden_cells"] = removed.get("hidden_cells", 0) + hidden
    return blocks


class _Budget:
    """Counts a workbook's non-empty cells (all sheets) against ``max_sheet_cells`` and each sheet's
    columns against ``max_sheet_columns`` while rows are read, so a huge sheet stops at the row that
    crosses a limit; checks the task every ``CHECK_ROWS`` rows."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.max_cells = limits().max_sheet_cells
        self.max_columns = limits().max_sheet_columns
        self.cells = 0
        self.rows = 0

    def row(self, sheet: str, filled: int, width: int) -> None:
        """A row of ``filled`` non-empty cells, the last in column ``width`` (1-based)."""
        self.rows += 1
        if self.rows % CHECK_ROWS == 0:
            checkpoint()
        self.columns(sheet, width)
        self.add(filled)

    def columns(self, sheet: str, width: int) -> None:
        if width > self.max_columns:
            self._fail(exceeded("max_sheet_columns", f"columns in sheet {sheet!r}", self.max_columns, width))

    def add(self, cells: int) -> None:
        self.cells += cells
        if self.cells > self.max_cells:
            self._fail(exceeded("max_sheet_cells", "cells", self.max_cells))

    def merges(self, sheet: str, grid: list[list[str]], ranges: Iterable[tuple[int, int, int, int]]) -> None:
        """Count the cells merged ranges with a value cover (rows clipped to the grid)."""
        for r0, r1, c0, c1 in ranges:
            if r0 < len(grid) and c0 < len(grid[r0]) and grid[r0][c0]:
                self.columns(sheet, c1)
                self.add(max(0, min(r1, len(grid)) - r0) * max(0, c1 - c0))

    def _fail(self, error: LimitExceededError) -> None:
        raise LimitExceededError(f"{self.filename}: {error.message}")


def _cells_reader() -> type:
    """openpyxl's streaming sheet reader (what its read-only mode iterates with; openpyxl is pinned),
    reading cached values and marking formula cells saved without one."""
    from openpyxl.worksheet._reader import WorkSheetParser
    from openpyxl.xml.constants import SHEET_MAIN_NS

    formula_tag = f"{{{SHEET_MAIN_NS}}}f"

    class CellsReader(WorkSheetParser):  # type: ignore[misc]  # openpyxl is untyped: its base class is Any
        def parse_cell(self, element: _Element) -> dict[str, object]:
            cell: dict[str, object] = super().parse_cell(element)  # data_only: the cached value
            if element.find(formula_tag) is not None:
                formula = self.parse_formula(element)  # also keeps shared formulas translatable
                if cell["value"] is None:
                    cell["value"] = f"{getattr(formula, 'text', None) or formula} {_NOT_CALCULATED}"
                    cell["uncalculated"] = True
            return cell

    return CellsReader


class _Workbook:
    """An XLSX workbook opened the way openpyxl's read-only mode opens it (shared strings, styles,
    sheet list), whose sheets are then streamed row by row with openpyxl's own sheet reader.

    Uses openpyxl internals (the version is pinned): its read-only worksheets
    parse a whole sheet just to look for a ``<dimension>`` element when it is
    missing, and do not expose merged cells.
    """

    def __init__(self, data: bytes) -> None:
        from openpyxl.reader.excel import ExcelReader
        from openpyxl.styles.stylesheet import apply_stylesheet

        self._reader = reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True)
        try:
            reader.read_manifest()
            reader.read_strings()
            reader.read_workbook()
            reader.read_properties()
            apply_stylesheet(reader.archive, reader.wb)
            self.sheets: list[tuple[str, str, str]] = [
                (sheet.name, sheet.state or "visible", rel.target) for sheet, rel in reader.parser.find_sheets()
                if rel.target in reader.valid_files and "chartsheet" not in rel.Type
            ]
        except BaseException:
            self.close()
            raise
        self.title: str | None = reader.wb.properties.title or None
        self._formats: dict[int, str] = {}

    def close(self) -> None:
        self._reader.archive.close()

    def number_format(self, style_id: int) -> str:
        """The number format code of a cell style (``General`` for a style the file does not hold)."""
        code = self._formats.get(style_id)
        if code is None:
            from openpyxl.styles.numbers import BUILTIN_FORMATS, BUILTIN_FORMATS_MAX_SIZE

            wb = self._reader.wb
            try:
                fmt_id = int(wb._cell_styles[style_id].numFmtId)
                code = (BUILTIN_FORMATS.get(fmt_id, "General") if fmt_id < BUILTIN_FORMATS_MAX_SIZE
                        else wb._number_formats[fmt_id - BUILTIN_FORMATS_MAX_SIZE])
                code = number_format_code(fmt_id, str(code))
            except (IndexError, KeyError, TypeError, ValueError, AttributeError):
                code = "General"
            self._formats[style_id] = code
        return code

    def sheet(self, name: str, path: str, budget: _Budget) -> tuple[Sheet, int]:
        """The sheet's shown texts (cached values in their number formats), merged ranges and hidden rows
        and columns, and its count of uncalculated formulas."""
        from openpyxl.utils.cell import column_index_from_string, range_boundaries

        wb = self._reader.wb
        rows: dict[int, list[str]] = {}
        missing = 0
        with self._reader.archive.open(path) as source:
            cells_reader = _cells_reader()(source, self._reader.shared_strings, data_only=True, epoch=wb.epoch,
                                           date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
            for number, cells in cells_reader.parse():
                if not 1 <= number <= XLSX_MAX_ROWS:
                    raise ValueError(f"row number {number} in sheet {name!r} is outside 1..{XLSX_MAX_ROWS:,}")
                values = {c["column"]: self._text(c) for c in cells if c["value"] is not None}
                values = {col: v for col, v in values.items() if v}
                missing += sum(1 for c in cells if c.get("uncalculated"))
                width = max(values, default=0)
                budget.row(name, len(values), width)
                if values:
                    row = [""] * width
                    for col, value in values.items():
                        row[col - 1] = value
                    rows[number - 1] = row
            merged = cells_reader.merged_cells.mergeCell if cells_reader.merged_cells else []
            hidden_rows = {int(r) - 1 for r, attrs in cells_reader.row_dimensions.items()
                           if _flag(attrs.get("hidden")) and str(r).isdigit()}
            spans = []
            for letter, attrs in cells_reader.column_dimensions.items():
                if _flag(attrs.get("hidden")):
                    first = column_index_from_string(letter)
                    spans.append((first - 1, min(_int(attrs.get("max")) or first, budget.max_columns)))
            hidden_cols: set[int] = set()
            reach = 0  # columns below this are in the set already: overlapping <col> ranges add each once
            for start, end in sorted(spans):
                hidden_cols.update(range(max(start, reach), end))
                reach = max(reach, end)
        grid = [rows.get(r, []) for r in range(max(rows, default=-1) + 1)]
        ranges = []
        for m in merged:
            min_col, min_row, max_col, max_row = range_boundaries(m.ref)
            ranges.append((min_row - 1, max_row, min_col - 1, max_col))
        budget.merges(name, grid, ranges)
        return Sheet(grid, ranges, hidden_rows, hidden_cols), missing

    def _text(self, cell: dict[str, object]) -> str:
        value = cell["value"]
        if cell.get("uncalculated") or cell.get("data_type") in ("s", "e", "str", "inlineStr"):
            return cell_text(value)
        style = cell.get("style_id") or 0
        return shown(value, self.number_format(style if isinstance(style, int) else 0))


def _flag(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true")


def _int(value: object) -> int:
    text = str(value).strip()
    return int(text) if text.isdigit() and len(text) < 8 else 0


class XlsxParser:
    """Every worksheet of an XLSX workbook, with cached formula values, read row by row.

    The zip is checked first (``max_unzipped_mb``); sheets are streamed, and the
    parse stops at the first row over ``max_sheet_cells`` or ``max_sheet_columns``.
    """

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            from openpyxl.utils.exceptions import InvalidFileException
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("openpyxl") from exc
        check_zip(data, filename, "XLSX")
        # what openpyxl raises on a damaged workbook: a missing part, a value of the wrong type, a style index
        # past any list (IndexError, OverflowError)
        errors = (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError, TypeError, IndexError,
                  OverflowError)
        try:
            book = _Workbook(data)
        except errors as exc:
            raise ParseError(f"{filename}: not a valid XLSX workbook ({exc})") from exc
        blocks: list[Block] = []
        removed: dict[str, int] = {}
        missing_total = 0
        budget = _Budget(filename)
        try:
            for name, state, path in book.sheets:
                checkpoint()
                sheet, missing = book.sheet(name, path, budget)
                meta = {"uncalculated_formulas": str(missing)} if missing else {}
                if state != "visible":
                    meta["hidden"] = "true"
                blocks += _sheet_blocks(name, sheet, meta, removed)
                missing_total += missing
        except errors as exc:
            raise ParseError(f"{filename}: not a valid XLSX workbook ({exc})") from exc
        finally:
            book.close()
        metadata = {"sheets": str(len(book.sheets))}
        title = book.title
        if not blocks:
            raise ParseError(f"{filename}: the workbook has no cell with a value")
        if missing_total:
            metadata["warning"] = (
                f"{missing_total} formula cells have no saved value (the file was saved without calculating); "
                f"they are shown as the formula followed by {_NOT_CALCULATED}"
            )
            log.warning("%s: %s", filename, metadata["warning"])
        return ParsedDocument(blocks=blocks, title=title, metadata=metadata, removed=removed)


class XlsParser:
    """Every sheet of a legacy Excel 97-2003 ``.xls`` workbook through xlrd (cached formula values)."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            import xlrd
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("xlrd") from exc
        from xlrd.compdoc import CompDocError

        # what xlrd raises on a damaged file besides its own error: a bad sector chain, a record cut short
        errors = (xlrd.XLRDError, CompDocError, AssertionError, IndexError, KeyError, ValueError, struct.error,
                  EOFError)
        try:
            book = xlrd.open_workbook(file_contents=data, formatting_info=True, on_demand=True)
        except errors as exc:
            raise ParseError(f"{filename}: not a readable XLS workbook ({exc})") from exc
        blocks: list[Block] = []
        removed: dict[str, int] = {}
        budget = _Budget(filename)
        formats: dict[int, str] = {}
        try:
            for index in range(book.nsheets):
                checkpoint()
                sheet = book.sheet_by_index(index)
                grid = []
                for r in range(sheet.nrows):
                    row = [self._cell(cell, book, formats) for cell in sheet.row(r)]
                    width = max((c + 1 for c, v in enumerate(row) if v), default=0)
                    budget.row(sheet.name, sum(1 for v in row if v), width)
                    grid.append(row)
                budget.merges(sheet.name, grid, sheet.merged_cells)
                hidden_rows = {r for r, info in sheet.rowinfo_map.items() if getattr(info, "hidden", 0)}
                hidden_cols = {c for c, info in sheet.colinfo_map.items() if getattr(info, "hidden", 0)}
                meta = {"hidden": "true"} if getattr(sheet, "visibility", 0) else {}
                blocks += _sheet_blocks(sheet.name, Sheet(grid, list(sheet.merged_cells), hidden_rows, hidden_cols),
                                        meta, removed)
                book.unload_sheet(index)
        except errors as exc:
            raise ParseError(f"{filename}: not a readable XLS workbook ({exc})") from exc
        finally:
            book.release_resources()
        if not blocks:
            raise ParseError(f"{filename}: the workbook has no cell with a value")
        return ParsedDocument(blocks=blocks, metadata={"sheets": str(book.nsheets)}, removed=removed)

    @staticmethod
    def _format(cell: Cell, book: Book, formats: dict[int, str]) -> str:
        """The number format code of a cell (cached by its XF index)."""
        key = cell.xf_index
        code = formats.get(key) if key is not None else "General"
        if code is None:
            try:
                fmt_key = book.xf_list[key].format_key
                code = number_format_code(fmt_key, book.format_map[fmt_key].format_str or "General")
            except (IndexError, KeyError, AttributeError, TypeError):
                code = "General"
            formats[key] = code
        return code

    @staticmethod
    def _cell(cell: Cell, book: Book, formats: dict[int, str]) -> str:
        import xlrd

        ctype, value = cell.ctype, cell.value
        if ctype == xlrd.XL_CELL_DATE:
            try:
                moment = xlrd.xldate_as_datetime(value, book.datemode)
            except (xlrd.xldate.XLDateError, OverflowError, ValueError):
                return cell_text(value)
            when = moment.time() if 0 <= value < 1 else moment
            return shown(when, XlsParser._format(cell, book, formats))
        if ctype == xlrd.XL_CELL_BOOLEAN:
            return cell_text(bool(value))
        if ctype == xlrd.XL_CELL_ERROR:
            text: str = xlrd.error_text_from_code.get(value, "#ERROR")
            return text
        if ctype == xlrd.XL_CELL_NUMBER:
            return shown(value, XlsParser._format(cell, book, formats))
        return cell_text(value)


class CsvParser:
    """A CSV or TSV file as one table: encoding detected, delimiter sniffed (``, ; \\t |``)."""

    def __init__(self, delimiter: str | None = None) -> None:
        self.delimiter = delimiter

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename)
        delimiter = self.delimiter or self._sniff(text)
        name = PurePath(filename).stem or "table"
        budget = _Budget(filename)
        grid: list[list[str]] = []
        try:
            for row in csv.reader(io.StringIO(text), delimiter=delimiter):
                budget.row(name, sum(1 for v in row if v.strip()), len(row))
                grid.append(row)
        except csv.Error as exc:
            raise ParseError(f"{filename}: malformed CSV ({exc})") from exc
        blocks, _ = sheet_blocks(Sheet(grid), (), {"sheet": name, "delimiter": delimiter}, header_by_type=True)
        if not blocks:
            raise ParseError(f"{filename}: the CSV file has no values")
        return ParsedDocument(blocks=blocks, metadata={"encoding": encoding, "delimiter": delimiter})

    @staticmethod
    def _sniff(text: str) -> str:
        sample = "\n".join(text[:SNIFF_CHARS].splitlines()[:50])
        try:
            return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
        except csv.Error:
            counts = {d: sample.count(d) for d in ",;\t|"}
            best = max(counts, key=lambda d: counts[d])
            return best if counts[best] else ","


def tsv_parser() -> CsvParser:
    return CsvParser("\t")
