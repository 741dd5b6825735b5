"""Spreadsheets: every sheet, header detection, merged cells, formula values; XLS; CSV/TSV."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ragloom.ingest.parsers import detect_type, parse_document
from ragloom.ingest.parsers.sniff import XLS
from ragloom.ingest.parsers.tabular import detect_header
from tests.ingest.docgen import make_xls, make_xlsx

SALES = {
    "Sales": [
        ["Sales report 2024"],
        [],
        ["Region", "Q1", "Q2", "Total"],
        ["North", 10, 12, "=B4+C4"],
        ["South", 7, 9.5, "=B5+C5"],
        ["All regions", None, None, "=SUM(D4:D5)"],
    ],
    "Raw": [[1, 2, 3], [4, 5, 6]],
    "Dates": [["Day", "Open"], [dt.date(2024, 1, 5), True], ["closed all week", None]],
}
MERGES = {"Sales": ["A1:D1", "A6:C6"], "Dates": ["A3:B3"]}


def _by_sheet(doc, kind: str = "table") -> dict[str, object]:
    return {b.meta["sheet"]: b for b in doc.blocks if b.kind == kind}


def test_xlsx_every_sheet_header_row_merges_and_cached_formula_values(tmp_path: Path) -> None:
    make_xlsx(tmp_path / "s.xlsx", SALES, merges=MERGES, cached={"Sales": {"D4": 22, "D5": 16.5, "D6": 38.5}})
    doc = parse_document((tmp_path / "s.xlsx").read_bytes(), "s.xlsx")
    assert [b.kind for b in doc.blocks] == ["table"] * 3  # a sheet name is a heading, no block of its own
    assert [b.heading_path for b in doc.blocks] == [("Sales", "Sales report 2024"), ("Raw",), ("Dates",)]
    assert "warning" not in doc.metadata
    tables = _by_sheet(doc)
    sales = tables["Sales"]
    assert sales.table.header == ["Region", "Q1", "Q2", "Total"]  # found below the title row
    assert sales.text.split("\n") == [
        "Region: North — Q1: 10; Q2: 12; Total: 22",
        "Region: South — Q1: 7; Q2: 9.5; Total: 16.5",
        "Region: All regions — Q1: All regions; Q2: All regions; Total: 38.5",  # A6:C6 merged
    ]
    assert sales.heading_path == ("Sales", "Sales report 2024")  # the title row, merged across A1:D1, said once
    raw = tables["Raw"]
    assert raw.table.header == ["", "", ""]  # numbers only: no header row
    assert raw.text.split("\n")[1] == "4 | 5 | 6"
    assert tables["Dates"].table.rows == [["2024-01-05", "TRUE"], ["closed all week", "closed all week"]]


def test_xlsx_saved_without_calculated_values_says_so(tmp_path: Path) -> None:
    make_xlsx(tmp_path / "s.xlsx", SALES, merges=MERGES)  # openpyxl stores formulas without values
    doc = parse_document((tmp_path / "s.xlsx").read_bytes(), "s.xlsx")
    sales = _by_sheet(doc)["Sales"]
    assert sales.meta["uncalculated_formulas"] == "3"
    assert "Total: =B4+C4 [not calculated]" in sales.text
    assert "3 formula cells have no saved value" in doc.metadata["warning"]


def test_xls_through_xlrd_with_merged_cells(tmp_path: Path) -> None:
    make_xls(tmp_path / "old.xls", {
        "Scores": [["Name", "Score"], ["Ann", 3.5], ["Bob", 4]],
        "Teams": [["Team", "Member"], ["Red", "Ann"], [None, "Bob"]],
    }, merges={"Teams": [(1, 2, 0, 0)]})
    data = (tmp_path / "old.xls").read_bytes()
    assert detect_type("upload.bin", data) == XLS  # OLE2 with a Workbook stream
    doc = parse_document(data, "upload.bin")
    tables = _by_sheet(doc)
    assert tables["Scores"].text == "Name: Ann — Score: 3.5\nName: Bob — Score: 4"
    assert tables["Teams"].text == "Team: Red — Member: Ann\nTeam: Red — Member: Bob"  # a merged stub


def test_csv_delimiter_and_encoding_are_detected(tmp_path: Path) -> None:
    text = "Name;City;Amount\nMüller;Köln;1.234,50\nDupont;Paris;99\n"
    doc = parse_document(text.encode("cp1252"), "people.csv")
    (table,) = doc.blocks
    assert doc.metadata["delimiter"] == ";" and doc.metadata["encoding"] == "cp1252"
    assert table.text == "Name: Müller — City: Köln; Amount: 1.234,50\nName: Dupont — City: Paris; Amount: 99"
    quoted = 'id,comment\n1,"hello, world"\n2,"line one\nline two"\n'
    (table,) = parse_document(quoted.encode("utf-16"), "c.csv").blocks
    assert table.table.rows == [["1", "hello, world"], ["2", "line one line two"]]


def test_tsv_is_tab_separated(tmp_path: Path) -> None:
    (table,) = parse_document(b"part\tqty\nbolt, M8\t40\n", "parts.tsv").blocks
    assert table.text == "part: bolt, M8; qty: 40"


@pytest.mark.parametrize(("rows", "expected"), [
    ([["Name", "Age"], ["Ann", "31"]], 0),
    ([["Report"], ["Name", "Age"], ["Ann", "31"]], 1),
    ([["1", "2"], ["3", "4"]], None),
    ([["Name", "Name"], ["Ann", "Bob"]], None),  # repeated values are no header
    ([["2024-01-01", "5"], ["2024-01-02", "6"]], None),
])
def test_header_detection(rows: list[list[str]], expected: int | None) -> None:
    assert detect_header(rows) == expected


def test_long_title_rows_are_text_and_a_lone_header_row_is_a_one_row_table(tmp_path: Path) -> None:
    note = "Figures are provisional until the audit of the regional offices is complete, " * 2
    make_xlsx(tmp_path / "s.xlsx", {"Notes": [[note.strip()], ["Region", "Units"], ["North", 5]],
                                    "Header only": [["Region", "Units", "Price"]]})
    doc = parse_document((tmp_path / "s.xlsx").read_bytes(), "s.xlsx")
    assert [(b.kind, b.heading_path) for b in doc.blocks] == [
        ("text", ("Notes",)), ("table", ("Notes",)), ("table", ("Header only",))]
    assert doc.blocks[0].text == note.strip()
    assert doc.blocks[2].text == "Region | Units | Price"
