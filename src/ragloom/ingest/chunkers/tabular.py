"""The table method: one chunk per row, typed columns.

Every table of the document (``Block.table``; else rebuilt from its HTML; else
a tab- or comma-separated text block with a header line) gives one chunk per
row, text ``"- column: value"`` per non-empty cell, ``fields`` holding the typed
values. A row is indivisible: it is one chunk even over the budget — unless it
is longer than ``max_chunk_chars``: it is then split between cells into chunks
of at most that many characters, each with the fields and HTML of its columns.

Column types are voted by the cells (empty cells abstain): int, float, bool,
datetime, else text. The most votes wins; ties prefer the type that loses
least — text > datetime > float > int > bool (REFERENCE §2). Beyond the
reference, an int column that also holds floats is widened to float. A cell
that does not convert to its column's type keeps its text.
Datetimes are ISO 8601 strings (``2024-03-05`` or ``2024-03-05T14:30:00``).
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from html import escape

from lxml import html as lxml_html

from ragloom.dataflow import table_rows
from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, Chunk, ChunkKind, Table
from ragloom.ingest.chunkers.oversize import split_text
from ragloom.ingest.guard import checkpoint, limits

Value = str | int | float | bool | None

_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*|[1-9][0-9]{0,2}(?:,[0-9]{3})+)")
_FLOAT = re.compile(
    r"[+-]?(?:(?:0|[1-9][0-9]*)?\.[0-9]+|(?:0|[1-9][0-9]*)\.)(?:[eE][+-]?[0-9]+)?|[+-]?[0-9]+[eE][+-]?[0-9]+"
)
_TRUE = {"true", "yes", "y", "是", "✓", "✔", "☑", "✅", "√"}
_FALSE = {"false", "no", "n", "否", "×", "✗", "✘"}
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%Y年%m月%d日", "%d.%m.%Y", "%m/%d/%Y", "%d/%m/%Y", "%Y-%m")
_TIME_FORMATS = ("", " %H:%M", " %H:%M:%S", "T%H:%M", "T%H:%M:%S", "T%H:%M:%S.%f")
TYPE_PRIORITY = ("text", "datetime", "float", "int", "bool")  # tie order
CHECK_ROWS = 2000  # rows between two task checkpoints
LABEL_CHARS = 120  # a column name repeated in each row's chunk is cut to this length (as parsers.common does)


def parse_datetime(text: str) -> datetime | None:
    """A date or date-time in one of the usual numeric layouts; None otherwise (no fuzzy guessing)."""
    text = text.strip().removesuffix("Z")
    if not re.match(r"^[0-9]{1,4}[-/.年][0-9]{1,2}", text):
        return None
    for date_format in _DATE_FORMATS:
        for time_format in _TIME_FORMATS:
            try:
                return datetime.strptime(text, date_format + time_format)
            except ValueError:
                continue
    return None


def cell_type(text: str) -> str | None:
    """The type one cell votes for; None for an empty cell."""
    text = text.strip()
    if not text:
        return None
    if _INT.fullmatch(text):
        return "int"
    if _FLOAT.fullmatch(text):
        return "float"
    if text.lower() in _TRUE or text.lower() in _FALSE:
        return "bool"
    if parse_datetime(text) is not None:
        return "datetime"
    return "text"


def column_type(cells: Sequence[str]) -> str:
    """The column's type by majority, ties broken by :data:`TYPE_PRIORITY`."""
    votes = Counter(t for t in (cell_type(c) for c in cells) if t is not None)
    if not votes:
        return "text"
    winner = min(votes, key=lambda t: (-votes[t], TYPE_PRIORITY.index(t)))
    return "float" if winner == "int" and votes["float"] else winner


def convert(text: str, type_name: str) -> Value:
    """``text`` as a value of ``type_name``; empty → None; unconvertible → the text itself."""
    text = text.strip()
    if not text:
        return None
    if type_name == "int" and _INT.fullmatch(text):
        return int(text.replace(",", ""))
    if type_name == "float" and (_FLOAT.fullmatch(text) or _INT.fullmatch(text)):
        return float(text.replace(",", ""))
    if type_name == "bool" and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if type_name == "datetime" and (moment := parse_datetime(text)) is not None:
        has_time = moment.time() != datetime.min.time() or ":" in text
        return moment.isoformat() if has_time else moment.date().isoformat()
    return text


def block_table(block: Block) -> Table | None:
    """The block's table: ``Block.table``, else rebuilt from its HTML; None for a non-table block."""
    if block.table is not None:
        return block.table
    if block.kind != BlockKind.TABLE or not block.html:
        return None
    root = lxml_html.fragment_fromstring(block.html)
    header = [" ".join(c.text_content().split()) for c in root.xpath(".//thead//tr[1]/*")]
    rows = [[" ".join(c.text_content().split()) for c in tr.xpath("./td|./th")]
            for tr in root.xpath(".//tbody/tr|./tr")]
    return Table(header=header, rows=[r for r in rows if any(r)])


def text_table(block: Block) -> Table | None:
    """A tab- or comma-separated text block (first line = header) as a table; None when it is not one."""
    lines = [line for line in block.text.split("\n") if line.strip()]
    if len(lines) < 2:
        return None
    for sep in ("\t", ","):
        rows = [[c.strip() for c in r] for r in csv.reader(io.StringIO("\n".join(lines)), delimiter=sep)]
        widths = {len(r) for r in rows}
        if len(widths) == 1 and widths.pop() >= 2:
            return Table(header=rows[0], rows=rows[1:])
    return None


def typed_rows(table: Table) -> tuple[list[str], list[str], list[list[tuple[str, Value]]]]:
    """(column names, column types, rows as (name, typed value) pairs)."""
    records = table.records()
    names = [name for name, _ in records[0]] if records else list(table.header)
    columns = [[row[i] if i < len(row) else "" for row in table.rows] for i in range(len(names))]
    types = [column_type(col) for col in columns]
    typed = [[(name, convert(value, types[i])) for i, (name, value) in enumerate(rec)] for rec in records]
    return names, types, typed


def _label(name: str) -> str:
    """A column name as the chunks after the first repeat it: a long one (a header cell holding a paragraph)
    is cut, so that it costs its length once, not once per row."""
    return name if len(name) <= LABEL_CHARS else name[:LABEL_CHARS].rstrip() + "…"


def _row_html(names: list[str], row: list[str]) -> str:
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    cells = "".join(f"<td>{escape(v)}</td>" for v in row)
    return f"<table><thead><tr>{head}</tr></thead><tbody><tr>{cells}</tr></tbody></table>"


def _row_parts(cells: list[tuple[str, int]], max_chars: int) -> list[list[tuple[str, int]]]:
    """A row's ``(line, column)`` pairs, in one part when its text fits ``max_chars``, else in several
    parts of whole lines (a line longer than that is cut, each piece keeping its column)."""
    if sum(len(line) + 1 for line, _ in cells) <= max_chars + 1:
        return [cells] if cells else []
    lines = [(piece, i) for line, i in cells for piece in split_text(line, max_chars)]
    parts: list[list[tuple[str, int]]] = [[]]
    size = -1
    for line, i in lines:
        if parts[-1] and size + 1 + len(line) > max_chars:
            parts.append([])
            size = -1
        parts[-1].append((line, i))
        size += 1 + len(line)
    return parts


def table_rows_chunk(blocks: Sequence[Block], config: object, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """One chunk per table row of the document; ParseError when it holds no table."""
    chunks: list[Chunk] = []
    max_chars = limits().max_chunk_chars
    for block in blocks:
        table = block_table(block) or (text_table(block) if block.kind == BlockKind.TEXT else None)
        if table is None or not table.rows:
            continue
        full_names, _types, typed = typed_rows(table)
        labels = [_label(n) for n in full_names]
        sheet = block.meta.get("sheet")
        path = block.heading_path + ((sheet,) if sheet and sheet not in block.heading_path else ())
        for index, (raw, row) in enumerate(zip(table.rows, typed, strict=True)):
            if index % CHECK_ROWS == CHECK_ROWS - 1:
                checkpoint()
            names = full_names if index == 0 else labels  # the first row names its columns in full
            row = [(names[i], value) for i, (_, value) in enumerate(row)]
            cells = [(f"- {name}: {value}", i) for i, ((name, _), value) in enumerate(zip(row, raw, strict=False))
                     if value.strip()]
            parts = _row_parts(cells, max_chars)
            for part in parts:
                html, fields = _row_html(names, raw), dict(row)
                if len(parts) > 1:  # a row too long for one chunk: each part has its own columns
                    columns = sorted({i for _, i in part})
                    html = _row_html([names[i] for i in columns], [raw[i] for i in columns])
                    fields = {row[i][0]: row[i][1] for i in columns}
                own = table.row_boxes[index] if len(table.row_boxes) == len(table.rows) else []
                where = [(p, b.left, b.right, b.top, b.bottom) for p, b in own] or block.positions()
                chunks.append(Chunk(text="\n".join(line for line, _ in part), order=len(chunks),
                                    positions=where, heading_path=path, kind=ChunkKind.TABLE, html=html,
                                    method="table", fields=fields,
                                    table=table_rows(table, [index], caption=index == 0,
                                                     notes=index == len(table.rows) - 1)))
    if not chunks:
        raise ParseError("table: the document holds no table (a spreadsheet, CSV, or a table with a header row)")
    return chunks
