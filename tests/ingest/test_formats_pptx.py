"""PPTX: one slide = one section, shapes in reading order, tables, notes, slide positions."""

from __future__ import annotations

from pathlib import Path

from ragloom.ingest.parsers import parse_document
from tests.ingest.docgen import make_pptx


def test_slides_are_sections_with_text_tables_notes_and_positions(tmp_path: Path) -> None:
    make_pptx(tmp_path / "deck.pptx", [
        {"title": "Quarterly review", "bullets": ["Revenue grew", ("Mostly in the north", 1), "Costs fell"],
         "notes": "Mention the new office in Tromsø."},
        {"title": "Numbers", "table": [["Region", "Q1", "Q2"], ["North", "10", "12"], ["South", "7", "9"]],
         "merges": [(2, 1, 2, 2)],
         "boxes": [("Right box", 400, 120), ("Left box", 40, 122)], "image": "Bar chart of revenue"},
        {"boxes": [("Slide without a title", 50, 50)]},
    ])
    doc = parse_document((tmp_path / "deck.pptx").read_bytes(), "deck.pptx")
    assert doc.page_count == 3 and doc.page_sizes[2] == (720.0, 540.0)
    assert doc.title == "Quarterly review"
    assert [(b.page, b.kind, b.text.split("\n")[0]) for b in doc.blocks] == [
        (1, "title", "Quarterly review"),
        (1, "text", "Revenue grew"),
        (1, "text", "Mention the new office in Tromsø."),
        (2, "title", "Numbers"),
        (2, "text", "Left box"),  # same row as "Right box": left to right
        (2, "text", "Right box"),
        (2, "figure", "Bar chart of revenue"),
        (2, "table", "Region: North — Q1: 10; Q2: 12"),
        (3, "text", "Slide without a title"),
    ]
    bullets, notes = doc.blocks[1], doc.blocks[2]
    assert bullets.text == "Revenue grew\n  Mostly in the north\nCosts fell"
    assert bullets.heading_path == ("Quarterly review",) and bullets.meta["slide"] == "1"
    assert notes.meta["role"] == "notes" and "notes" not in bullets.meta
    table = doc.blocks[7]
    assert table.table.rows == [["North", "10", "12"], ["South", "7", "7"]]  # merged cell repeated
    assert table.text.split("\n")[1] == "Region: South — Q1: 7; Q2: 7"
    assert table.positions() == [(2, 40.0, 640.0, 300.0, 450.0)]  # shape box in points
    assert doc.blocks[4].positions() == [(2, 40.0, 240.0, 122.0, 152.0)]
    assert doc.blocks[8].heading_path == ("Slide 3",)
