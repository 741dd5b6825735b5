"""A sheet's cells as tables: hidden rows and columns left out, merged ranges as spans, the sheet cut
into the tables laid out on it.

A sheet comes as rows of shown texts (:mod:`~ragloom.ingest.parsers.numfmt` formats them), its
merged ranges and its hidden rows and columns. :func:`sheet_blocks` drops what is hidden, finds the
tables (:func:`table_regions`: blocks of cells separated by empty rows or columns, when at least two
of them are tables — a title or a note line between them joins the table next to it) and makes
each a ``table`` block through :func:`~ragloom.ingest.parsers.tabular.table_from_cells`, its title
rows above the header (short ones) added to its heading path, as
:func:`~ragloom.ingest.parsers.tabular.grid_blocks` does for plain grids.

Cost: each cut visits the cells of its region once, and cuts nest at most :data:`MAX_CUTS` deep.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragloom.ingest.blocks import Block
from ragloom.ingest.parsers.common import clean_cell
from ragloom.ingest.parsers.tabular import TITLE_CHARS, Cell, detect_header, is_numeric, table_from_cells

MAX_CUTS = 4  # nested cuts (rows, then columns, then rows...) looked for
MAX_PARTS = 64  # blocks of touching cells a region may be cut into
LISTED = 20  # hidden rows or columns named in a block's meta; more are counted
CONTRAST_ROWS = 20  # rows under a first row looked at to judge it a header by its type

Region = tuple[int, int, int, int]  # rows r0..r1, columns c0..c1 (end-exclusive)
Merge = tuple[int, int, int, int]  # same, the range of a merged cell; its value is at (r0, c0)


@dataclass(slots=True)
class Sheet:
    """A sheet's shown texts by row (0-based, rows may be short), its merged ranges, and the rows and
    columns the file hides (0-based)."""

    rows: list[list[str]]
    merges: list[Merge] = field(default_factory=list)
    hidden_rows: set[int] = field(default_factory=set)
    hidden_columns: set[int] = field(default_factory=set)


def column_letters(index: int) -> str:
    """``0`` -> ``A``, ``27`` -> ``AB``."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:LISTED])
    return shown + (f" … ({len(names)} in all)" if len(names) > LISTED else "")


def visible(sheet: Sheet) -> tuple[Sheet, dict[str, str], int]:
    """The sheet without its hidden rows and columns (merged ranges cut to what is left), the meta
    that names what was left out (``hidden_rows``: numbers as the sheet shows them, ``hidden_columns``:
    letters), and the characters left out."""
    hidden_rows = {r for r in sheet.hidden_rows if r < len(sheet.rows) and any(sheet.rows[r])}
    width = max((len(r) for r in sheet.rows), default=0)
    hidden_cols: set[int] = set()
    if sheet.hidden_columns:  # one pass over the cells, not one per hidden column
        hidden_cols = {c for r, row in enumerate(sheet.rows) if r not in hidden_rows
                       for c, v in enumerate(row) if v and c in sheet.hidden_columns}
    if not hidden_rows and not hidden_cols:
        return sheet, {}, 0
    removed = 0
    rows = []
    for r, row in enumerate(sheet.rows):
        if r in hidden_rows:
            removed += sum(len(v) for v in row)
            continue
        if hidden_cols:
            kept = []
            for c, v in enumerate(row):
                if c in hidden_cols:
                    removed += len(v)
                else:
                    kept.append(v)
            row = kept
        rows.append(row)
    row_at = _new_index(len(sheet.rows), hidden_rows)
    col_at = _new_index(width, hidden_cols)
    merges = []
    for r0, r1, c0, c1 in sheet.merges:
        value = sheet.rows[r0][c0] if r0 < len(sheet.rows) and c0 < len(sheet.rows[r0]) else ""
        kept_rows = [row_at[r] for r in range(r0, min(r1, len(row_at))) if row_at[r] >= 0]
        kept_cols = [col_at[c] for c in range(c0, min(c1, len(col_at))) if col_at[c] >= 0]
        if not value or not kept_rows or not kept_cols:
            continue
        nr0, nc0 = kept_rows[0], kept_cols[0]
        rows[nr0].extend([""] * (nc0 + 1 - len(rows[nr0])))
        rows[nr0][nc0] = value  # the range's value stays shown when its first row or column is hidden
        merges.append((nr0, kept_rows[-1] + 1, nc0, kept_cols[-1] + 1))
    meta = {}
    if hidden_rows:
        meta["hidden_rows"] = _listed([str(r + 1) for r in sorted(hidden_rows)])
    if hidden_cols:
        meta["hidden_columns"] = _listed([column_letters(c) for c in sorted(hidden_cols)])
    return Sheet(rows, merges), meta, removed


def _new_index(size: int, hidden: set[int]) -> list[int]:
    out, at = [], 0
    for i in range(size):
        if i in hidden:
            out.append(-1)
        else:
            out.append(at)
            at += 1
    return out


def _occupancy(sheet: Sheet) -> list[list[int]]:
    """Each row's filled columns, sorted: cells with a value and the cells a merged range with a value
    covers."""
    occ = [[c for c, v in enumerate(row) if v] for row in sheet.rows]
    extra: dict[int, set[int]] = {}
    for r0, r1, c0, c1 in sheet.merges:
        for r in range(r0, min(r1, len(occ))):
            extra.setdefault(r, set()).update(range(c0, c1))
    for r, cols in extra.items():
        occ[r] = sorted(cols.union(occ[r]))
    return occ


def _in(cols: list[int], c0: int, c1: int) -> list[int]:
    return cols[bisect_left(cols, c0):bisect_left(cols, c1)]


def _bands(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Runs of consecutive indices (sorted), end-exclusive."""
    bands: list[tuple[int, int]] = []
    for i in indices:
        if bands and bands[-1][1] == i:
            bands[-1] = (bands[-1][0], i + 1)
        else:
            bands.append((i, i + 1))
    return bands


def _extent(occ: list[list[int]], region: Region) -> tuple[list[int], list[int]]:
    """The filled rows and the filled columns of a region."""
    r0, r1, c0, c1 = region
    rows, cols = [], set()
    for r in range(r0, r1):
        inside = _in(occ[r], c0, c1)
        if inside:
            rows.append(r)
            cols.update(inside)
    return rows, sorted(cols)


def table_regions(sheet: Sheet) -> list[Region]:
    """The tables of a sheet: its filled area, cut along empty rows or columns where at least two of
    the parts are tables (two rows and two columns filled); a part that is not (a title, a note, a
    lone column of labels) joins the table after it, or before it when it comes last."""
    occ = _occupancy(sheet)
    width = max((r[-1] + 1 for r in occ if r), default=0)
    return _cut(occ, (0, len(occ), 0, width), 0)


def _cut(occ: list[list[int]], region: Region, depth: int) -> list[Region]:
    rows, cols = _extent(occ, region)
    if not rows:
        return []
    region = (rows[0], rows[-1] + 1, cols[0], cols[-1] + 1)
    if depth >= MAX_CUTS:
        return [region]
    r0, r1, c0, c1 = region
    for axis, filled in ((0, rows), (1, cols)):
        bands = _bands(filled)
        if len(bands) < 2:
            continue
        parts = [(a, b, c0, c1) if axis == 0 else (r0, r1, a, b) for a, b in bands]
        tables = [_is_table(occ, p) for p in parts]
        if sum(tables) < 2:
            continue
        out: list[Region] = []
        for part in _joined(parts, tables, axis):
            out += _cut(occ, part, depth + 1)
        return out
    return _components(occ, region) or [region]


def _components(occ: list[list[int]], region: Region) -> list[Region]:
    """The region cut into its blocks of touching cells (side by side or one above the other), when
    there are two to :data:`MAX_PARTS`, each a table, whose extents do not overlap (two tables laid
    corner to corner); else nothing."""
    r0, r1, c0, c1 = region
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def root(key: tuple[int, int]) -> tuple[int, int]:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    previous: set[int] = set()
    for r in range(r0, r1):
        cols = _in(occ[r], c0, c1)
        for i, c in enumerate(cols):
            parent[(r, c)] = (r, c)
            if i and cols[i - 1] == c - 1:
                parent[root((r, c))] = root((r, c - 1))
            if c in previous:
                a, b = root((r, c)), root((r - 1, c))
                if a != b:
                    parent[a] = b
        previous = set(cols)
    boxes: dict[tuple[int, int], list[int]] = {}
    for r, c in parent:
        box = boxes.setdefault(root((r, c)), [r, r + 1, c, c + 1])
        box[0], box[1], box[2], box[3] = min(box[0], r), max(box[1], r + 1), min(box[2], c), max(box[3], c + 1)
        if len(boxes) > MAX_PARTS:
            return []
    found = [(b[0], b[1], b[2], b[3]) for b in boxes.values()]
    if len(found) < 2 or not all(_is_table(occ, b) for b in found):
        return []
    for i, one in enumerate(found):
        for other in found[i + 1:]:
            if one[0] < other[1] and other[0] < one[1] and one[2] < other[3] and other[2] < one[3]:
                return []
    return sorted(found)


def _is_table(occ: list[list[int]], region: Region) -> bool:
    rows, cols = _extent(occ, region)
    return len(rows) >= 2 and len(cols) >= 2


def _joined(parts: list[Region], tables: list[bool], axis: int) -> list[Region]:
    """Parts that are no table joined to the next table part (the last ones to the one before)."""
    groups: list[list[Region]] = []
    pending: list[Region] = []
    for part, is_table in zip(parts, tables, strict=True):
        pending.append(part)
        if is_table:
            groups.append(pending)
            pending = []
    if pending:
        groups[-1] += pending
    out = []
    for group in groups:
        if axis == 0:
            out.append((group[0][0], group[-1][1], group[0][2], group[0][3]))
        else:
            out.append((group[0][0], group[0][1], group[0][2], group[-1][3]))
    return out


def region_cells(sheet: Sheet, region: Region) -> list[list[Cell]]:
    """The cells of a region, row by row: a merged range is one cell spanning its rows and columns (cut
    to the region); the slots it covers beyond its first are left out, as in HTML."""
    r0, r1, c0, c1 = region
    starts: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    for m0, m1, n0, n1 in sheet.merges:
        if m0 >= r1 or m1 <= r0 or n0 >= c1 or n1 <= c0 or not (r0 <= m0 and c0 <= n0):
            continue
        starts[(m0, n0)] = (min(m1, r1) - m0, min(n1, c1) - n0)
        covered.update((r, c) for r in range(m0, min(m1, r1)) for c in range(n0, min(n1, c1)))
    last_start: dict[int, int] = {}
    for r, c in starts:
        last_start[r] = max(last_start.get(r, c), c)
    out = []
    for r in range(r0, r1):
        row = sheet.rows[r] if r < len(sheet.rows) else []
        end = min(c1, max(len(row), last_start.get(r, -1) + 1))
        cells = []
        for c in range(c0, end):
            if (r, c) in starts:
                rowspan, colspan = starts[(r, c)]
                cells.append(Cell(row[c] if c < len(row) else "", colspan, rowspan))
            elif (r, c) not in covered:
                cells.append(Cell(row[c] if c < len(row) else ""))
        out.append(cells)
    return out


def sheet_blocks(sheet: Sheet, heading_path: tuple[str, ...], meta: dict[str, str], *,
                 header_by_type: bool = False) -> tuple[list[Block], int]:
    """The blocks of a sheet — one table per region (:func:`table_regions`), hidden rows and columns
    left out (named in each block's meta) — and the characters left out as hidden.
    ``header_by_type``: a first row whose cells differ in kind (numbers, words) from the cells under
    them in every column is a header though it does not read like one (a CSV's first row)."""
    merges = [m for m in sheet.merges if m[0] < len(sheet.rows) and m[2] < len(sheet.rows[m[0]])
              and sheet.rows[m[0]][m[2]]]  # an empty merged range adds nothing
    shown, hidden_meta, removed = visible(Sheet(sheet.rows, merges, sheet.hidden_rows, sheet.hidden_columns))
    meta = {**meta, **hidden_meta}
    blocks: list[Block] = []
    for region in table_regions(shown):
        blocks += _region_blocks(region_cells(shown, region), heading_path, meta, header_by_type)
    return blocks, removed


def _region_blocks(cells: list[list[Cell]], heading_path: tuple[str, ...], meta: dict[str, str],
                   header_by_type: bool) -> list[Block]:
    """A table's blocks: its title rows (the rows above its header) added to ``heading_path`` — or, when
    longer than :data:`~ragloom.ingest.parsers.tabular.TITLE_CHARS`, a text block before it — and the
    table."""
    texts = [[clean_cell(c.text) for c in row] for row in cells]
    filled = [i for i, row in enumerate(texts) if any(row)]
    if not filled:
        return []
    at = detect_header([texts[i] for i in filled])
    if at is not None and _recurs(texts, filled[at:]):
        at = None  # a form or a list of records: its first row is data like the rows under it
    blocks: list[Block] = []
    start = filled[at] if at else filled[0]
    if at:
        lines = [" ".join(dict.fromkeys(v for v in texts[i] if v)) for i in filled[:at]]
        title = " / ".join(line for line in lines if line)
        if len(title) <= TITLE_CHARS:
            heading_path = (*heading_path, title)
        else:
            blocks.append(Block(text="\n".join(lines), heading_path=heading_path, meta=dict(meta)))
    header_rows = None if at is not None else 1 if header_by_type and _by_type(texts, filled) else 0
    block = table_from_cells(cells[start:], header_rows=header_rows, heading_path=heading_path, meta=meta)
    if block is not None:
        if header_rows == 0:
            block.meta["header"] = "none found"
        blocks.append(block)
    return blocks


def _recurs(texts: list[list[str]], rows: list[int]) -> bool:
    """Whether a value of the first of ``rows`` comes again in its column in the rows under it (up to
    :data:`CONTRAST_ROWS`): a header names its column once."""
    first = texts[rows[0]]
    for i in rows[1:CONTRAST_ROWS + 1]:
        if any(v and c < len(texts[i]) and texts[i][c] == v for c, v in enumerate(first)):
            return True
    return False


def _by_type(texts: list[list[str]], filled: list[int]) -> bool:
    """Whether the first filled row is a header by its kind: every cell filled and distinct, and in
    every column the opposite kind (number or word) of most cells under it."""
    first = texts[filled[0]]
    below = [texts[i] for i in filled[1:CONTRAST_ROWS + 1]]
    if not below or not all(first) or len(set(first)) != len(first) or len(first) < 2:
        return False
    for c, head in enumerate(first):
        column = [row[c] for row in below if c < len(row) and row[c]]
        numbers = sum(is_numeric(v) for v in column)
        if not column or is_numeric(head) == (numbers * 2 > len(column)):
            return False
    return True
