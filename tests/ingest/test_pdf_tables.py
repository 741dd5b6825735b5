"""PDF tables: cells tied to their headers, HTML, and one table across a page break."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.ingest.blocks import ParsedDocument
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
