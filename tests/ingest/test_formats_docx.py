"""DOCX: heading levels from styles and outline levels, numbered lists, merged cells, figures."""

from __future__ import annotations

from pathlib import Path

from ragloom.ingest.parsers import parse_document
from tests.ingest.docgen import make_docx_rich


def _parse(path: Path):
    return parse_document(path.read_bytes(), path.name)


def test_styles_and_outline_levels_give_heading_levels_and_paths(tmp_path: Path) -> None:
    make_docx_rich(tmp_path / "d.docx", [
        ("title", "Plant Manual"),
        ("h1", "Pumps"),
        ("outline", ("Maintenance", 2)),
        ("p", "Grease the bearings monthly."),
        ("h1", "Valves"),
        ("p", "Check the seals."),
    ], header="CONFIDENTIAL DRAFT", footer="Page footer text")
    doc = _parse(tmp_path / "d.docx")
    assert [(b.kind, b.level, b.text) for b in doc.blocks] == [
        ("title", 1, "Plant Manual"),
        ("title", 2, "Pumps"),
        ("title", 3, "Maintenance"),
        ("text", 0, "Grease the bearings monthly."),
        ("title", 2, "Valves"),
        ("text", 0, "Check the seals."),
    ]
    assert doc.blocks[3].heading_path == ("Plant Manual", "Pumps", "Maintenance")
    assert doc.blocks[5].heading_path == ("Plant Manual", "Valves")
    all_text = " ".join(b.text for b in doc.blocks)
    assert "CONFIDENTIAL" not in all_text and "footer" not in all_text  # headers/footers ignored


def test_numbered_lists_keep_their_numbers_and_items_stay_together(tmp_path: Path) -> None:
    make_docx_rich(tmp_path / "d.docx", [
        ("h1", "Start-up"),
        ("number", "Open the inlet valve"),
        ("sub", ("Wait for pressure", 1)),
        ("sub", ("Check the gauge", 1)),
        ("number", "Start the pump"),
        ("p", "Then write the log."),
        ("bullet", "Gloves"),
        ("bullet", "Goggles"),
    ])
    doc = _parse(tmp_path / "d.docx")
    numbered, text, bullets = doc.blocks[1:]
    assert numbered.kind == "list" and numbered.meta["list"] == "numbered"
    lines = numbered.text.split("\n")
    assert lines[0] == "1. Open the inlet valve" and lines[3] == "2. Start the pump"
    assert lines[1].startswith("  ") and lines[1].strip().endswith("Wait for pressure")
    assert lines[1].strip()[0] == "1" and lines[2].strip()[0] == "2"  # sub-level counts on its own
    assert text.text == "Then write the log."
    assert bullets.kind == "list" and bullets.meta["list"] == "bulleted"
    assert bullets.text == "Gloves\nGoggles"
    assert numbered.heading_path == ("Start-up",)


def test_merged_cells_repeat_their_value_under_each_header(tmp_path: Path) -> None:
    rows = [
        ["Site", "Pump", "Status", "Note"],
        ["Oslo", "P-100", "running", "serviced"],
        ["Oslo", "P-200", "stopped", "x"],
        ["Bergen", "P-300", "running", "y"],
    ]
    # vertical merge: "Oslo" over rows 1-2 of column Site; horizontal: row 3's "running" over Status and Note
    make_docx_rich(tmp_path / "d.docx", [("merged_table", (rows, [(1, 0, 2, 0), (3, 2, 3, 3)]))])
    (table,) = _parse(tmp_path / "d.docx").blocks
    assert table.kind == "table" and table.table is not None
    assert table.table.header == ["Site", "Pump", "Status", "Note"]
    assert table.table.rows == [
        ["Oslo", "P-100", "running", "serviced"],
        ["Oslo", "P-200", "stopped", "x"],
        ["Bergen", "P-300", "running", "running"],
    ]
    assert table.text.split("\n")[1] == "Site: Oslo — Pump: P-200; Status: stopped; Note: x"  # a stub column
    assert table.table.stub_columns == 1 and (1, 0, 2, 1) in table.table.spans and (3, 2, 1, 2) in table.table.spans
    records = table.table.records()
    assert records[1][0] == ("Site", "Oslo") and records[2][3] == ("Note", "running")
    assert table.html.count('<th scope="row">Oslo</th>') == 2


def test_images_become_figures_with_caption_and_alt_text(tmp_path: Path) -> None:
    make_docx_rich(tmp_path / "d.docx", [
        ("h1", "Layout"),
        ("p", "The pump room is shown below."),
        ("image", "Floor plan of the pump room"),
        ("caption", "Figure 1: Pump room"),
        ("p", "Exits are marked in green."),
    ])
    doc = _parse(tmp_path / "d.docx")
    assert [b.kind for b in doc.blocks] == ["title", "text", "figure", "text"]
    figure = doc.blocks[2]
    assert figure.meta["caption"] == "Figure 1: Pump room"
    assert figure.meta["alt"] == "Floor plan of the pump room"
    assert "Figure 1: Pump room" in figure.text and "Floor plan" in figure.text
    assert figure.heading_path == ("Layout",)
    assert doc.blocks[3].text == "Exits are marked in green."  # the caption is not repeated as text
