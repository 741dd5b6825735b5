"""Cell text of PDF tables from characters (pdfplumber's dicts): words cut by gaps and by space glyphs,
letter-spaced words and space glyphs drawn over a field joined, sideways text read in its direction;
scanned tables' cells (the recogniser's HTML and boxes) with their spans and row boxes."""

from __future__ import annotations

from typing import Any

from ragloom.ingest.blocks import BBox
from ragloom.ingest.ocr.geometry import Rect
from ragloom.ingest.ocr.tables import cells_table, html_cells
from ragloom.ingest.parsers.pdf_cells import cell_text

SIZE = 10.0


def chars(text: str, x: float = 100.0, advance: float = 6.0, spacing: float = 0.0, y: float = 50.0,
          seq: int | None = None) -> list[dict[str, Any]]:
    """Upright characters of ``text`` set left to right (a space advances without ink)."""
    out = []
    for i, ch in enumerate(text):
        left = x + i * (advance + spacing)
        c: dict[str, Any] = {"text": ch, "x0": left, "x1": left + advance, "top": y, "bottom": y + SIZE,
                             "upright": True, "matrix": (SIZE, 0, 0, SIZE, left, y)}
        if seq is not None:
            c["seq"] = seq + i
        out.append(c)
    return out


def test_words_are_cut_at_gaps_and_spaces() -> None:
    assert cell_text(chars("Long Gun")) == "Long Gun"
    apart = chars("Total", x=100) + chars("12", x=150)
    assert cell_text(apart) == "Total 12"


def test_letter_spaced_word_is_one_word() -> None:
    assert cell_text(chars("Delhi", spacing=4.0)) == "Delhi"
    assert cell_text(chars("New Delhi", spacing=4.0)) == "New Delhi"


def test_space_glyphs_drawn_over_a_field_split_nothing() -> None:
    """The WARN report draws a run of spaces, then the date over it: no space was drawn between digits."""
    blanks = chars(" " * 12, x=98.0, advance=3.0, seq=0)
    digits = chars("03/25/2016", x=100.0, advance=5.5, seq=20)
    assert cell_text(blanks + digits) == "03/25/2016"
    # a space glyph drawn between two characters cuts them even where their boxes touch (CJK fonts)
    assert cell_text(chars("높거나 집단", advance=6.0, seq=0)) == "높거나 집단"


def test_sideways_text_reads_in_its_own_direction() -> None:
    """A header set bottom to top: its characters go up the page, each turned 90° counter-clockwise."""
    out = []
    for i, ch in enumerate("*JOBCTL"):
        bottom = 200.0 - i * 6.0
        out.append({"text": ch, "x0": 100.0, "x1": 100.0 + SIZE, "top": bottom - 6.0, "bottom": bottom,
                    "upright": False, "matrix": (0.0, SIZE, -SIZE, 0.0, 100.0, bottom)})
    assert cell_text(out) == "*JOBCTL"
    assert cell_text(list(reversed(out))) == "*JOBCTL"


def test_unreadable_glyphs_are_spaces() -> None:
    assert cell_text(chars("Usage:") + [{**chars("x", x=137)[0], "text": "(cid:2)"}] + chars("ALLOWED", x=143)) \
        == "Usage: ALLOWED"


def test_scanned_table_cells_keep_spans_and_boxes() -> None:
    html = ("<table><tr><td rowspan=2>Region</td><td colspan=2>Sales</td></tr><tr><td>2023</td><td>2024</td></tr>"
            "<tr><td>North</td><td>10</td><td>12</td></tr><tr><td>South</td><td>30</td><td>32</td></tr></table>")
    boxes = [[0, 0, 100, 40], [100, 0, 300, 20], [100, 20, 200, 40], [200, 20, 300, 40],
             [0, 40, 100, 60], [100, 40, 200, 60], [200, 40, 300, 60],
             [0, 60, 100, 80, 0, 80, 100, 60], [100, 60, 200, 80], [200, 60, 300, 80]]  # last row: 4 corners

    def place(r: Rect) -> tuple[int, BBox]:  # pixels at 2 px per point, the crop at (50, 100) pt
        return 4, BBox(50 + r.left / 2, 100 + r.top / 2, 50 + r.right / 2, 100 + r.bottom / 2)

    rows = html_cells(html, boxes, place)
    assert [[c.text for c in row] for row in rows] == [["Region", "Sales"], ["2023", "2024"], ["North", "10", "12"],
                                                       ["South", "30", "32"]]
    block = cells_table(rows)
    assert block is not None and block.table is not None
    assert block.table.header_paths == [("Region",), ("Sales", "2023"), ("Sales", "2024")]
    assert block.text.splitlines() == ["Region: North — Sales › 2023: 10; Sales › 2024: 12",
                                       "Region: South — Sales › 2023: 30; Sales › 2024: 32"]
    assert block.table.row_boxes == [[(4, BBox(50, 120, 200, 130))], [(4, BBox(50, 130, 200, 140))]]
    # boxes that do not match the cells one to one are left out
    assert all(c.box is None for row in html_cells(html, boxes[:3], place) for c in row)
