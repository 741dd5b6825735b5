"""PDF tables: cells tied to their headers, HTML, and one table across a page break; the table model
(grouped headers as header paths, spans, notes under the table, each row's page and box, a table
printed sideways) on generated PDFs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from ragloom.ingest.blocks import BBox, Block, ParsedDocument
from ragloom.ingest.parsers import parse_document
from tests.ingest.docgen import MM, make_report_pdf, make_table_pdf

HEADER = ["Code", "Item", "Place"]
ROWS = [[f"C{i}", f"copper lantern {i}", f"shelf {i % 4}"] for i in range(10)]
A4_HEIGHT = 297 * MM


def _parse(tmp_path: Path, **kwargs: object) -> ParsedDocument:
    make_table_pdf(tmp_path / "t.pdf", HEADER, ROWS, 6, before="Inventory of the harbor warehouse.",
                   after="End of the inventory.", **kwargs)  # type: ignore[arg-type]
    return parse_document((tmp_path / "t.pdf").read_bytes(), "t.pdf")


@pytest.mark.parametrize("repeat_header", [True, False])
def test_table_over_a_page_break_is_one_table_with_a_box_per_page(tmp_path: Path, repeat_header: bool) -> None:
    doc = _parse(tmp_path, repeat_header=repeat_header)
    assert [b.kind for b in doc.blocks] == ["text", "table", "text"]
    assert doc.blocks[0].text == "Inventory of the harbor warehouse." and doc.blocks[2].text == "End of the inventory."
    table = doc.blocks[1]
    assert table.table is not None and table.table.header == HEADER
    assert table.table.rows == ROWS  # the repeated header row is not a data row
    # boxes: the foot of page 1 and the head of page 2
    (p1, b1), (p2, b2) = table.boxes
    assert (p1, p2) == (1, 2) and table.page == 1
    assert abs(b1.top - (A4_HEIGHT - 20 * MM - 8 * 7 * MM)) < 2 and abs(b1.bottom - (A4_HEIGHT - 20 * MM)) < 2
    rows_on_2 = 4 + (1 if repeat_header else 0)
    assert abs(b2.top - 20 * MM) < 2 and abs(b2.bottom - (20 + 8 * rows_on_2) * MM) < 2
    for box in (b1, b2):
        assert abs(box.left - 20 * MM) < 2 and abs(box.right - 170 * MM) < 2
    assert doc.blocks[2].boxes[0][1].top > b2.bottom


def test_each_cell_is_tied_to_its_column_header(tmp_path: Path) -> None:
    table = _parse(tmp_path).blocks[1]
    assert table.table is not None
    records = table.table.records()
    assert records[7] == [("Code", "C7"), ("Item", "copper lantern 7"), ("Place", "shelf 3")]
    lines = table.text.split("\n")
    assert len(lines) == 10 and lines[7] == "Code: C7 — Item: copper lantern 7; Place: shelf 3"  # codes name rows
    assert table.html is not None and table.html.startswith("<table><thead><tr><th>Code</th><th>Item</th>")
    assert table.html.count("<tr>") == 11 and "<td>copper lantern 9</td>" in table.html
    assert table.meta["pages"] == "1,2"


def test_table_cells_are_not_repeated_as_text(tmp_path: Path) -> None:
    doc = _parse(tmp_path)
    assert not any("copper lantern" in b.text for b in doc.blocks if b.kind != "table")


def test_a_50_page_report_gives_every_table_and_section(tmp_path: Path) -> None:
    """Speed (goal >= 20 pages/s with table detection) is measured by ``benchmarks/parse.py``, not here."""
    make_report_pdf(tmp_path / "report.pdf", 50)
    doc = parse_document((tmp_path / "report.pdf").read_bytes(), "report.pdf")
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) == 10 and all(t.table and t.table.header == ["h0", "h1", "h2", "h3"] for t in tables)
    assert [b.text for b in doc.blocks if b.kind == "title"] == [f"{n}. Section {n}" for n in range(1, 51)]
    assert not any("Harbor Authority" in b.text for b in doc.blocks)


# --- the table model: grouped headers, spans, notes, row boxes, rotation ---------------------------

X, Y, H = 60.0, 120.0, 22.0  # the drawn table's left, top and row height (points)
WIDTHS = (110.0, 80.0, 80.0, 60.0)
A4 = (595.28, 841.89)
# (row, column, rowspan, colspan, text, style): "B" bold, "up" bold and set bottom to top, "spaced" letter-spaced
HEAD = [(0, 0, 2, 1, "Region", "B"), (0, 1, 1, 2, "Sales", "B"), (0, 3, 2, 1, "Staff", "up"),
        (1, 1, 1, 1, "2023", "B"), (1, 2, 1, 1, "2024", "B")]
BODY = [(2, 0, 2, 1, "North", ""), (2, 1, 1, 1, "10", ""), (2, 2, 1, 1, "12", ""), (2, 3, 1, 1, "5", ""),
        (3, 1, 1, 1, "11", ""), (3, 2, 1, 1, "13", ""), (3, 3, 1, 1, "6", ""),
        (4, 0, 1, 1, "Delhi", "spaced"), (4, 1, 1, 1, "20", ""), (4, 2, 1, 1, "22", ""), (4, 3, 1, 1, "7", ""),
        (5, 0, 1, 1, "South", ""), (5, 1, 1, 1, "30", ""), (5, 2, 1, 1, "32", ""), (5, 3, 1, 1, "9", "")]
PATHS = [("Region",), ("Sales", "2023"), ("Sales", "2024"), ("Staff",)]
NOTE = "* Figures in thousands of euros."

Spec = tuple[int, int, int, int, str, str]


def _new_pdf() -> FPDF:
    pdf = FPDF(unit="pt", format=A4)
    pdf.set_auto_page_break(False)
    return pdf


def _draw_table(pdf: FPDF, top: float, cells: list[Spec]) -> float:
    """Ruled cells of ``cells`` (rows counted from the table's top at ``top``); the table's bottom."""
    bottom = top
    for r, c, rs, cs, text, style in cells:
        left, y = X + sum(WIDTHS[:c]), top + r * H
        width, height = sum(WIDTHS[c:c + cs]), rs * H
        bottom = max(bottom, y + height)
        pdf.rect(left, y, width, height)
        pdf.set_font("Helvetica", "B" if style in ("B", "up") else "", 10)
        if style == "up":  # bottom to top, as a narrow column's header often is
            tx, ty = left + width / 2 + 3.5, y + height - 6
            with pdf.rotation(90, x=tx, y=ty):
                pdf.text(tx, ty, text)
            continue
        pdf.set_char_spacing(4 if style == "spaced" else 0)
        pdf.text(left + 5, y + height / 2 + 3.5, text)
        pdf.set_char_spacing(0)
    return bottom


def _paragraph(pdf: FPDF, y: float, text: str, size: int = 11) -> None:
    pdf.set_font("Helvetica", "", size)
    pdf.text(X, y, text)


def _grouped_table_pdf(path: Path) -> None:
    """One page: a paragraph, the table (grouped header, a stub spanning two rows, a letter-spaced stub,
    a header set bottom to top), a footnote right under it, a paragraph further down."""
    pdf = _new_pdf()
    pdf.add_page()
    _paragraph(pdf, 90, "Regional sales and staff over two years.")
    bottom = _draw_table(pdf, Y, HEAD + BODY)
    _paragraph(pdf, bottom + 14, NOTE, size=8)
    _paragraph(pdf, bottom + 80, "The outlook for the coming year is discussed in the next section.")
    pdf.output(str(path))


def _row_box(block: Block, i: int) -> tuple[int, BBox]:
    assert block.table is not None
    (where,) = block.table.row_boxes[i]
    return where


def _near(box: BBox, left: float, top: float, right: float, bottom: float) -> bool:
    return all(abs(a - b) < 1.5 for a, b in zip((box.left, box.top, box.right, box.bottom),
                                                 (left, top, right, bottom), strict=True))


def test_grouped_header_spans_and_footnote_become_the_table_model(tmp_path: Path) -> None:
    _grouped_table_pdf(tmp_path / "g.pdf")
    doc = parse_document((tmp_path / "g.pdf").read_bytes(), "g.pdf")
    assert [b.kind for b in doc.blocks] == ["text", "table", "text"]
    block = doc.blocks[1]
    table = block.table
    assert table is not None
    assert table.header_paths == PATHS and table.header == ["Region", "Sales › 2023", "Sales › 2024", "Staff"]
    assert table.header_rows == [["Region", "Sales", "Sales", "Staff"], ["Region", "2023", "2024", "Staff"]]
    # the stub spanning two rows names both; the letter-spaced one reads as one word
    assert table.rows == [["North", "10", "12", "5"], ["North", "11", "13", "6"], ["Delhi", "20", "22", "7"],
                          ["South", "30", "32", "9"]]
    assert table.stub_columns == 1 and (2, 0, 2, 1) in table.spans and (0, 1, 1, 2) in table.spans
    assert block.text.splitlines()[1] == "Region: North — Sales › 2023: 11; Sales › 2024: 13; Staff: 6"
    # the footnote under the table is the table's note, no row and no paragraph of its own
    assert table.notes == [NOTE]
    assert not any("thousands" in b.text for b in doc.blocks)
    assert block.html is not None and '<th colspan="2">Sales</th>' in block.html
    # each row's own region: its cells (a stub spanning rows counts for a row only when it has no other)
    assert _near(_row_box(block, 0)[1], X + 110, Y + 2 * H, X + 330, Y + 3 * H)
    assert _near(_row_box(block, 2)[1], X, Y + 4 * H, X + 330, Y + 5 * H)
    assert all(_row_box(block, i)[0] == 1 for i in range(4))


def _split_table_pdf(path: Path, repeat_header: bool) -> None:
    """The grouped table with 8 body rows over a page break: 5 rows at the foot of page 1 (a line in the
    margin under them), 3 at the top of page 2 (under the two header rows again when ``repeat_header``)."""
    names = ["North", "South", "East", "West", "Centre", "Coast", "Hills", "Lakes"]
    rows: list[list[Spec]] = [[(i, 0, 1, 1, name, ""), (i, 1, 1, 1, str(10 + i), ""), (i, 2, 1, 1, str(20 + i), ""),
                               (i, 3, 1, 1, str(i), "")] for i, name in enumerate(names)]
    pdf = _new_pdf()
    pdf.add_page()
    _paragraph(pdf, 90, "Regional sales and staff over two years.")
    first = A4[1] - 40 - 7 * H
    _draw_table(pdf, first, HEAD + [(r + 2, c, rs, cs, t, st) for row in rows[:5] for r, c, rs, cs, t, st in row])
    _paragraph(pdf, A4[1] - 16, "Harbor statistics, edition 7", size=7)  # a margin line between the parts
    pdf.add_page()
    top = 40.0
    head = HEAD if repeat_header else []
    shift = 2 if repeat_header else 0
    rest = [(r - 5 + shift, c, rs, cs, t, st) for row in rows[5:] for r, c, rs, cs, t, st in row]
    bottom = _draw_table(pdf, top, head + rest)
    _paragraph(pdf, bottom + 40, "The outlook for the coming year is discussed in the next section.")
    pdf.output(str(path))


@pytest.mark.parametrize("repeat_header", [True, False])
def test_a_table_over_a_page_break_keeps_its_header_and_each_row_its_page(tmp_path: Path,
                                                                          repeat_header: bool) -> None:
    _split_table_pdf(tmp_path / "s.pdf", repeat_header)
    doc = parse_document((tmp_path / "s.pdf").read_bytes(), "s.pdf")
    (block,) = [b for b in doc.blocks if b.kind == "table"]
    table = block.table
    assert table is not None and table.header_paths == PATHS
    assert [r[0] for r in table.rows] == ["North", "South", "East", "West", "Centre", "Coast", "Hills", "Lakes"]
    assert block.text.splitlines()[6] == "Region: Hills — Sales › 2023: 16; Sales › 2024: 26; Staff: 6"
    assert [p for p, _ in block.boxes] == [1, 2]
    first = A4[1] - 40 - 7 * H
    top = 40 + (2 * H if repeat_header else 0)
    for i in range(8):
        page, box = _row_box(block, i)
        assert page == (1 if i < 5 else 2)
        row_top = first + (i + 2) * H if i < 5 else top + (i - 5) * H
        assert _near(box, X, row_top, X + 330, row_top + H), (i, box)


def test_a_table_printed_sideways_is_read_in_its_own_orientation(tmp_path: Path) -> None:
    """The page turned by ``/Rotate 90``: its text runs down the displayed page; the table still reads
    row by row, and its boxes are on the page as displayed."""
    import io

    import pypdfium2 as pdfium

    pdf = _new_pdf()
    pdf.add_page()
    _draw_table(pdf, Y, HEAD + BODY)
    doc_in = pdfium.PdfDocument(io.BytesIO(bytes(pdf.output())))
    doc_in[0].set_rotation(90)
    doc_in.save(str(tmp_path / "r.pdf"))
    doc_in.close()
    doc = parse_document((tmp_path / "r.pdf").read_bytes(), "r.pdf")
    assert doc.page_sizes[1] == pytest.approx((A4[1], A4[0]), abs=0.5)
    (block,) = [b for b in doc.blocks if b.kind == "table"]
    table = block.table
    assert table is not None and table.header_paths == PATHS
    assert [r[0] for r in table.rows] == ["North", "North", "Delhi", "South"]
    assert table.rows[3] == ["South", "30", "32", "9"]
    # displayed (x, y) = (page height - y, x): a row is a vertical band, the first at the right
    page, box = _row_box(block, 3)
    row_top = Y + 5 * H
    assert page == 1 and _near(box, A4[1] - row_top - H, X, A4[1] - row_top, X + 330), box
