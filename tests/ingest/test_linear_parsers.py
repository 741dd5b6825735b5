"""Every parser's cost is linear in its input: each case parses (and chunks) a file and one 8 times
larger, made here, and the CPU time of the second is less than ``MAX_RATIO`` times the first
(linear is ~8, quadratic ~64).

The shapes are those that made a parser quadratic once, or could: nesting within the limit,
many siblings, long lines, many tiny paragraphs, many table cells, merged cells and long headers
repeated on every row, runs of characters a pattern backtracks on, many e-mail header words, many
running lines in page margins, figure captions over many drawings. Times are CPU seconds of this
process (``time.process_time``, the garbage collector paused), the smaller 1x time of two runs after
a warm-up, so other work on the machine moves them little; a ratio over the limit is measured once
more before failing.
"""

from __future__ import annotations

import gc
import io
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragloom.errors import RagloomError
from ragloom.ingest.parsers import parse_document
from ragloom.ingest.pipeline import chunk_parsed
from tests.ingest import hostile
from tests.ingest.docgen import make_epub, make_xls

MAX_RATIO = 20.0  # 8x the input: linear ~8, quadratic ~64


@dataclass(frozen=True)
class Case:
    filename: str
    make: Callable[[int], bytes]
    n: int  # the 1x size (units of the generator); the 1x parse takes about 50-100 ms
    method: str | None = "naive"  # chunk method run after the parse (None: parse only)


def _words(n: int, seed: int = 0) -> str:
    return hostile.words(random.Random(seed), n)


def _paragraphs(n: int, size: int = 8) -> list[str]:
    rng = random.Random(n)
    return [hostile.words(rng, size) for _ in range(n)]


# --- generators of the shapes ----------------------------------------------------------------------


def html_siblings(n: int) -> bytes:
    """Many tiny paragraphs and inline elements side by side."""
    body = "".join(f"<p>{p} <b>{i}</b><i>x</i></p>" for i, p in enumerate(_paragraphs(n)))
    return f"<html><body>{body}</body></html>".encode()


def html_deep(n: int) -> bytes:
    """Sections nested 240 deep (the limit is 256), text at every level, repeated ``n`` times."""
    words = _paragraphs(240, 10)
    tree = "".join(f"<div><p>{w}</p>" for w in words) + "</div>" * 240
    return f"<html><body>{tree * n}</body></html>".encode()


def html_structures(n: int) -> bytes:
    """Nested lists, nested tables, articles, headers and asides inside 100 nested sections."""
    unit = ("<article><header>By {w}</header><ul><li>{w}<ul><li>two<ul><li>three</li></ul></li></ul></li>"
            "<li>next</li></ul><table><tr><td><table><tr><td>{w}</td><td>y</td></tr></table></td><td>z</td></tr>"
            "</table><aside>aside {i}</aside><p>{w}</p></article>")
    body = "".join(unit.format(w=w, i=i) for i, w in enumerate(_paragraphs(n, 4)))
    return f"<html><body>{'<section>' * 100}{body}{'</section>' * 100}</body></html>".encode()


def html_table(n: int) -> bytes:
    """A table of ``n`` rows of 6 cells, some spanning rows and columns."""
    rows = []
    for i in range(n):
        if i % 10 == 0:
            rows.append(f"<tr><td rowspan='3'>group {i}</td><td colspan='2'>{i}</td><td>a</td><td>b</td></tr>")
        else:
            rows.append(f"<tr><td>{i}</td><td>x</td><td>y</td><td>z</td><td>w</td></tr>")
    head = "<tr>" + "".join(f"<th>column {c}</th>" for c in range(6)) + "</tr>"
    return f"<html><body><table>{head}{''.join(rows)}</table></body></html>".encode()


def markdown_specials(n: int) -> bytes:
    """Runs of the characters Markdown's inline patterns backtrack on: ``*_[]()`<>!\\``."""
    rng = random.Random(n)
    runs = ["".join(rng.choice("*_[]()`<>!\\") for _ in range(rng.randint(1, 60))) for _ in range(n // 30)]
    return "\n".join(f"{r} word {r}" for r in runs).encode()


def markdown_long_heading(n: int) -> bytes:
    """A heading of ``n`` words over ``n / 4`` paragraphs: every block and chunk of the section has it in its path."""
    return ("# " + _words(n) + "\n\n## Part\n\n" + "\n\n".join(_paragraphs(n // 4))).encode()


def markdown_table(n: int) -> bytes:
    return ("| a | b | c |\n|---|---|---|\n" + "".join(f"| {i} | x | y |\n" for i in range(n))).encode()


def text_lines(n: int) -> bytes:
    """Many tiny paragraphs, then one long line."""
    return ("a.\n\n" * n + _words(n) + "\n").encode()


def csv_long_header(n: int) -> bytes:
    """A header cell of ``n / 2`` words over ``n`` rows: each row names its columns (a CSV field holds
    at most 128 KiB)."""
    return ("name " + _words(n // 2) + ",value\n" + "".join(f"x{i},{i}\n" for i in range(n))).encode()


def json_deep(n: int) -> bytes:
    """A value 200 deep holding ``n`` records."""
    leaves = ",".join(f'{{"id": {i}, "name": "n{i}"}}' for i in range(n))
    return ('{"a":' * 200 + "[" + leaves + "]" + "}" * 200).encode()


def json_unterminated(n: int) -> bytes:
    """An unterminated string of escaped quotes behind 300 brackets: the depth check reads it once."""
    return b"[" * 300 + b'"' + b'\\"' * n


def docx_paragraphs(n: int) -> bytes:
    """Paragraphs inside 100 nested custom XML wrappers, and a table."""
    paragraphs = b"".join(hostile.docx_paragraph(p) for p in _paragraphs(n))
    cells = (b"".join(b"<w:tc>" + hostile.docx_paragraph(f"r{i}c{j}") + b"</w:tc>" for j in range(4))
             for i in range(n // 4))
    table = b"<w:tbl>" + b"".join(b"<w:tr>" + row + b"</w:tr>" for row in cells) + b"</w:tbl>"
    return hostile.docx_with_body(b"<w:customXml>" * 100 + paragraphs + b"</w:customXml>" * 100 + table)


def docx_merged(n: int) -> bytes:
    """A cell merged down ``n`` rows, each of which adds text to it (Word shows all of it)."""
    restart = b'<w:tc><w:tcPr><w:vMerge w:val="restart"/></w:tcPr>' + hostile.docx_paragraph("start") + b"</w:tc>"
    rows = [b"<w:tr>" + restart + b"<w:tc>" + hostile.docx_paragraph("head") + b"</w:tc></w:tr>"]
    for i, text in enumerate(_paragraphs(n, 10)):
        rows.append(b"<w:tr><w:tc><w:tcPr><w:vMerge/></w:tcPr>" + hostile.docx_paragraph(text) + b"</w:tc><w:tc>"
                    + hostile.docx_paragraph(f"row {i}") + b"</w:tc></w:tr>")
    return hostile.docx_with_body(b"<w:tbl>" + b"".join(rows) + b"</w:tbl>")


def pptx_table(n: int) -> bytes:
    return hostile.pptx_with_table([["name", "b", "c", "d"], *([f"v{i}", "x", "y", "z"] for i in range(n))])


def xlsx_rows(n: int) -> bytes:
    return hostile.big_xlsx(n, 6)


def xlsx_tables(n: int) -> bytes:
    """``n`` pairs of small tables side by side, stacked, each under a title, with a merged two-row
    header, number formats and a hidden row, and a hidden column between the pairs."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for t in range(n):
        top = 1 + 9 * t
        for left in (1, 6):
            ws.cell(top, left, f"Table {t}.{left}")
            ws.cell(top + 1, left, "Region")
            ws.cell(top + 1, left + 1, "Revenue")
            ws.merge_cells(start_row=top + 1, start_column=left + 1, end_row=top + 1, end_column=left + 2)
            ws.merge_cells(start_row=top + 1, start_column=left, end_row=top + 2, end_column=left)
            ws.cell(top + 2, left + 1, 2023)
            ws.cell(top + 2, left + 2, 2024)
            for r in range(top + 3, top + 8):
                ws.cell(r, left, f"r{r}")
                ws.cell(r, left + 1, r * 1234.5).number_format = "#,##0.00"
                ws.cell(r, left + 2, r / 1000).number_format = "0.0%"
        ws.row_dimensions[top + 4].hidden = True
    ws.column_dimensions["E"].hidden = True
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def xls_rows(tmp: Path) -> Callable[[int], bytes]:
    def make(n: int) -> bytes:
        path = tmp / f"rows{n}.xls"
        make_xls(path, {"data": [["a", "b", "c"], *([i, f"x{i}", "y"] for i in range(n))]},
                 merges={"data": [(1, 3, 1, 2)]})
        return path.read_bytes()

    return make


def eml_headers(n: int) -> bytes:
    """A subject of ``n`` encoded words, ``n`` recipients, ``n`` other headers."""
    subject = b"=?utf-8?q?caf=C3=A9?= " * n
    to = b", ".join(b'"User %d" <u%d@example.com>' % (i, i) for i in range(n))
    other = b"".join(b"X-Trace-%d: hop %d\n" % (i, i) for i in range(n))
    return b"From: a@example.com\nTo: " + to + b"\nSubject: " + subject + b"\n" + other + b"\nThe body.\n"


def epub_chapters(tmp: Path) -> Callable[[int], bytes]:
    def make(n: int) -> bytes:
        path = tmp / f"book{n}.epub"
        make_epub(path, "Book", [(f"c{i}.xhtml", f"<h1>Chapter {i}</h1><p>{p}</p>")
                                 for i, p in enumerate(_paragraphs(n, 30))])
        return path.read_bytes()

    return make


def pdf_margins(n: int) -> bytes:
    """``n`` pages, each with 38 identical lines in its top margin: one running-header candidate per line."""
    margin = b"".join(b"1 0 0 1 40 %.1f Tm (same line) Tj " % (840 - 2.6 * k) for k in range(38))
    return hostile.raw_pdf([(595, 842)] * n, [b"BT /F1 2 Tf " + margin + b"/F1 11 Tf 1 0 0 1 72 400 Tm ("
                                              + p.encode() + b") Tj ET" for p in _paragraphs(n)])


def pdf_grid(n: int) -> bytes:
    """``n`` rows of 30 short cells: an unruled table of 30 columns."""
    cells = b"".join(b"1 0 0 1 %d %d Tm (c%d) Tj " % (40 + 60 * j, 10 + 12 * i, i) for i in range(n) for j in range(30))
    return hostile.raw_pdf([(595 * 4, 12 * n + 40)], b"BT /F1 8 Tf " + cells + b"ET")


def pdf_captions(n: int) -> bytes:
    """``n`` small drawings and ``n / 4`` figure captions on one tall page."""
    paths = b"".join(b"%d %d m %d %d l S " % (40 + i % 400, 100 + 13 * (i % 1000), 45 + i % 400, 110 + 13 * (i % 1000))
                     for i in range(n))
    captions = b"".join(b"1 0 0 1 72 %d Tm (Figure %d: a chart) Tj " % (95 + 13 * (i % 1000), i) for i in range(n // 4))
    return hostile.raw_pdf([(595, 842 * 16)], paths + b"BT /F1 4 Tf " + captions + b"ET")


CASES: dict[str, Case] = {
    "html-siblings": Case("a.html", html_siblings, 800),
    "html-deep-240": Case("a.html", html_deep, 4),
    "html-nested-structures": Case("a.html", html_structures, 250),
    "html-table-spans": Case("a.html", html_table, 500),
    "markdown-special-runs": Case("a.md", markdown_specials, 15_000, None),
    "markdown-long-heading": Case("a.md", markdown_long_heading, 4000),
    "markdown-table": Case("a.md", markdown_table, 1500),
    "text-tiny-paragraphs-long-line": Case("a.txt", text_lines, 3000),
    "csv-long-header": Case("a.csv", csv_long_header, 3000),
    "csv-long-header-table-method": Case("a.csv", csv_long_header, 2500, "table"),
    "json-deep-many-records": Case("a.json", json_deep, 400),
    "json-unterminated-escapes": Case("a.json", json_unterminated, 1_000_000, None),
    "docx-wrapped-paragraphs-table": Case("a.docx", docx_paragraphs, 800),
    "docx-vertical-merge": Case("a.docx", docx_merged, 800),
    "pptx-table": Case("a.pptx", pptx_table, 1500),
    "xlsx-rows": Case("a.xlsx", xlsx_rows, 1000),
    "xlsx-tables-merges-formats": Case("a.xlsx", xlsx_tables, 40),
    "eml-headers": Case("a.eml", eml_headers, 12_000, None),
    "pdf-margin-lines": Case("a.pdf", pdf_margins, 20),
    "pdf-grid": Case("a.pdf", pdf_grid, 60),
    "pdf-captions-drawings": Case("a.pdf", pdf_captions, 400, None),
}


def _count(text: str) -> int:
    return len(text.split())


def _run(data: bytes, filename: str, method: str | None) -> str:
    """Parse (and chunk) once; the outcome: ``"ok"`` or the error's class name."""
    try:
        doc = parse_document(data, filename)
        if method is not None:
            chunk_parsed(doc, method, {}, _count)
    except RagloomError as exc:
        return type(exc).__name__
    return "ok"


def _cpu(data: bytes, filename: str, method: str | None,
         clock: Callable[[], float] = time.process_time) -> tuple[float, str]:
    """CPU seconds of one run, the garbage collector paused: its full collections come at thresholds
    that a 1x input may stay under and an 8x one cross (their cost is linear, spread over time).
    ``clock``: the process's CPU time, or this thread's alone (``time.thread_time``: what other threads of
    a test process, left by earlier tests, burn meanwhile is not counted)."""
    gc.disable()
    try:
        start = clock()
        outcome = _run(data, filename, method)
        return clock() - start, outcome
    finally:
        gc.enable()


def assert_linear(case: Case, make: Callable[[int], bytes] | None = None) -> None:
    make = make or case.make
    small, large = make(case.n), make(8 * case.n)
    _cpu(small, case.filename, case.method)  # warm-up: imports, caches, compiled patterns
    t1, outcome = min(_cpu(small, case.filename, case.method) for _ in range(2))
    t8, outcome8 = _cpu(large, case.filename, case.method)
    assert outcome8 == outcome, (outcome, outcome8)
    ratio = t8 / max(t1, 1e-4)
    if ratio >= MAX_RATIO:  # measured again before failing: a pause of the machine is not a quadratic
        t1 = min(t1, _cpu(small, case.filename, case.method)[0])
        t8 = min(t8, _cpu(large, case.filename, case.method)[0])
        # and on this thread's clock: a quadratic parse is as quadratic there, the load of other threads is not
        own1 = min(_cpu(small, case.filename, case.method, time.thread_time)[0] for _ in range(2))
        own8 = _cpu(large, case.filename, case.method, time.thread_time)[0]
        ratio = min(t8 / max(t1, 1e-4), own8 / max(own1, 1e-4))
    assert ratio < MAX_RATIO, (
        f"{len(small):,} bytes: {t1 * 1000:.0f} ms; {len(large):,} bytes: {t8 * 1000:.0f} ms: {ratio:.1f}x for 8x")


@pytest.mark.parametrize("name", list(CASES))
def test_cost_is_linear_in_the_input(name: str) -> None:
    assert_linear(CASES[name])


@pytest.mark.parametrize("name", ["xls", "epub"])
def test_cost_is_linear_for_formats_written_to_files(name: str, tmp_path: Path) -> None:
    if name == "xls":
        assert_linear(Case("a.xls", xls_rows(tmp_path), 1200), xls_rows(tmp_path))
    else:
        assert_linear(Case("a.epub", epub_chapters(tmp_path), 60), epub_chapters(tmp_path))


def test_the_cases_parse() -> None:
    """The 1x inputs are real documents of their format (or the error the shape is meant to reach)."""
    expected = {"json-unterminated-escapes": "LimitExceededError"}  # 300 levels: found after one scan
    for name, case in CASES.items():
        assert _run(case.make(max(2, case.n // 20)), case.filename, case.method) == expected.get(name, "ok"), name
