"""Tables as tables in Word, Excel, CSV, HTML, PowerPoint and Markdown (issue 25): spans assigned to
every cell they cover, grouped headers as header paths, stub columns naming their rows, notes and
captions beside the rows, sheets' values as the sheet shows them, hidden rows and columns left out,
tables side by side on a sheet apart. Every file is generated here."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import openpyxl

from ragloom.dataflow import Block, Table
from ragloom.ingest.parsers import parse_document
from ragloom.ingest.parsers.sheet_tables import Sheet, table_regions
from tests.ingest import hostile
from tests.ingest.docgen import make_pptx


def _tables(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.kind == "table"]


def _table(block: Block) -> Table:
    assert block.table is not None
    return block.table


# --- Word -------------------------------------------------------------------------------------------


def _p(text: str) -> str:
    return f'<w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def _tc(text: str, props: str = "") -> str:
    return f"<w:tc>{f'<w:tcPr>{props}</w:tcPr>' if props else ''}{_p(text)}</w:tc>"


def _tr(cells: str, header: bool = False) -> str:
    return f"<w:tr>{'<w:trPr><w:tblHeader/></w:trPr>' if header else ''}{cells}</w:tr>"


RESTART, CONTINUE, SPAN2, SPAN3 = ('<w:vMerge w:val="restart"/>', "<w:vMerge/>", '<w:gridSpan w:val="2"/>',
                                   '<w:gridSpan w:val="3"/>')
WORD_TABLE = (
    _p("Table 1: Sales by region")
    + "<w:tbl><w:tblPr/><w:tblGrid>" + '<w:gridCol w:w="2000"/>' * 3 + "</w:tblGrid>"
    + _tr(_tc("Region", RESTART) + _tc("Sales", SPAN2), header=True)
    + _tr(_tc("", CONTINUE) + _tc("2023") + _tc("2024"), header=True)
    + _tr(_tc("North") + _tc("1,200") + _tc("1,350"))
    + _tr(_tc("South", RESTART) + _tc("980") + _tc("1,010"))
    + _tr(_tc("", CONTINUE) + _tc("990") + _tc("1,100"))
    + _tr(_tc("Source: company reports", SPAN3))
    + "</w:tbl>" + _p("After the table.")
)


def test_word_merges_and_repeated_header_rows_give_header_paths_a_stub_a_caption_and_notes() -> None:
    doc = parse_document(hostile.docx_with_body(WORD_TABLE.encode()), "sales.docx")
    caption, block, after = doc.blocks
    assert caption.text == "Table 1: Sales by region" and caption.meta["caption_of"] == "table"
    table = _table(block)
    assert table.caption == "Table 1: Sales by region"
    assert table.header_paths == [("Region",), ("Sales", "2023"), ("Sales", "2024")]
    assert table.header_rows == [["Region", "Sales", "Sales"], ["Region", "2023", "2024"]]
    assert table.stub_columns == 1 and table.notes == ["Source: company reports"]
    assert table.rows == [["North", "1,200", "1,350"], ["South", "980", "1,010"], ["South", "990", "1,100"]]
    assert block.text.split("\n") == [
        "Region: North — Sales › 2023: 1,200; Sales › 2024: 1,350",
        "Region: South — Sales › 2023: 980; Sales › 2024: 1,010",
        "Region: South — Sales › 2023: 990; Sales › 2024: 1,100",
    ]
    assert (0, 0, 2, 1) in table.spans and (0, 1, 1, 2) in table.spans and (3, 0, 2, 1) in table.spans
    assert after.text == "After the table."


# --- Excel ------------------------------------------------------------------------------------------


def _cache(data: bytes, sheet: int, values: dict[str, object]) -> bytes:
    """The workbook with cached values for formula cells, as Excel saves them (openpyxl saves none)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    parts = {n: src.read(n) for n in src.namelist()}
    part = f"xl/worksheets/sheet{sheet}.xml"
    xml = parts[part].decode()
    for ref, value in values.items():
        xml, n = re.subn(rf'(<c r="{ref}"[^>]*>)(<f>[^<]*</f>)<v\s*/?>(</v>)?', rf"\g<1>\g<2><v>{value}</v>", xml)
        assert n == 1, ref
    parts[part] = xml.encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for name, body in parts.items():
            dst.writestr(name, body)
    return out.getvalue()


def _workbook() -> bytes:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Region", "Revenue", None, "Share", "Updated", "Internal"])
    ws.append([None, 2023, 2024])
    ws.append(["North", 1234567, 1300000.5, 0.256, dt.datetime(2024, 3, 5, 14, 7), "x"])
    ws.append(["Secret", 1, 2, 0.5, dt.datetime(2024, 1, 1), "y"])
    ws.append(["South", "=B3*2", "=C3+1", 0.1, dt.datetime(2024, 3, 6, 9, 0), "z"])
    for ref in ("A1:A2", "B1:C1", "D1:D2", "E1:E2", "F1:F2"):
        ws.merge_cells(ref)
    for col, code in (("B", "#,##0"), ("C", "#,##0.00"), ("D", "0.0%"), ("E", "yyyy-mm-dd hh:mm")):
        for row in range(3, 6):
            ws[f"{col}{row}"].number_format = code
    ws.row_dimensions[4].hidden = True
    ws.column_dimensions["F"].hidden = True
    two = wb.create_sheet("Two")
    two.append(["Stock by shelf"])
    two.append([])
    two.append(["Part", "Count", None, "Tool", "Owner"])
    two.append(["bolt", 12, None, "drill", "Ann"])
    two.append(["nut", 40, None, "saw", "Bob"])
    buf = io.BytesIO()
    wb.save(buf)
    return _cache(buf.getvalue(), 1, {"B5": 2469134, "C5": 1300001.5})


def test_excel_merged_two_row_header_formats_formulas_and_hidden_rows_and_columns() -> None:
    doc = parse_document(_workbook(), "book.xlsx")
    sales = [b for b in _tables(doc.blocks) if b.meta["sheet"] == "Sales"]
    assert len(sales) == 1
    table = _table(sales[0])
    assert table.header_paths == [("Region",), ("Revenue", "2023"), ("Revenue", "2024"), ("Share",), ("Updated",)]
    assert table.stub_columns == 1
    assert sales[0].text.split("\n") == [
        "Region: North — Revenue › 2023: 1,234,567; Revenue › 2024: 1,300,000.50; Share: 25.6%; "
        "Updated: 2024-03-05 14:07",
        "Region: South — Revenue › 2023: 2,469,134; Revenue › 2024: 1,300,001.50; Share: 10.0%; "
        "Updated: 2024-03-06 09:00",  # formulas: their cached values, in the cells' formats
    ]
    assert "Secret" not in sales[0].text and "Internal" not in sales[0].text
    assert sales[0].meta["hidden_rows"] == "4" and sales[0].meta["hidden_columns"] == "F"
    hidden_row, hidden_column = ["Secret", "1", "2.00", "50.0%", "2024-01-01 00:00", "y"], ["Internal", "x", "z"]
    assert doc.removed["hidden_cells"] == sum(map(len, hidden_row + hidden_column))


def test_tables_side_by_side_on_a_sheet_are_tables_of_their_own() -> None:
    doc = parse_document(_workbook(), "book.xlsx")
    left, right = [b for b in _tables(doc.blocks) if b.meta["sheet"] == "Two"]
    assert left.heading_path == ("Two", "Stock by shelf") and right.heading_path == ("Two",)
    assert _table(left).header == ["Part", "Count"] and left.text.split("\n")[0] == "Part: bolt — Count: 12"
    assert _table(right).header == ["Tool", "Owner"] and right.text.split("\n")[1] == "Tool: saw — Owner: Bob"


def test_sheet_regions_cut_along_empty_lines_only_between_tables() -> None:
    # two tables corner to corner; a title row above two stacked tables joins the first
    corner = Sheet([["a", "b"], ["1", "2"], ["", "", "c", "d"], ["", "", "3", "4"]])
    assert table_regions(corner) == [(0, 2, 0, 2), (2, 4, 2, 4)]
    stacked = Sheet([["Title"], [], ["a", "b"], ["1", "2"], [], ["c", "d"], ["3", "4"]])
    assert table_regions(stacked) == [(0, 4, 0, 2), (5, 7, 0, 2)]
    form = Sheet([["1", "", "Voltage", "kV"], ["2", "", "Frequency", "Hz"]])  # a lone column is no table
    assert table_regions(form) == [(0, 2, 0, 4)]


def test_a_csv_first_row_of_another_kind_than_its_column_is_its_header() -> None:
    doc = parse_document(b"1,2,3\na,b,c\nd,e,f\n", "numbered.csv")
    (block,) = doc.blocks
    assert _table(block).header == ["1", "2", "3"] and block.text.split("\n")[0] == "1: a — 2: b; 3: c"
    (plain,) = parse_document(b"1,2,3\n4,5,6\n", "numbers.csv").blocks
    assert _table(plain).header_rows == [] and plain.text == "1 | 2 | 3\n4 | 5 | 6"


# --- HTML -------------------------------------------------------------------------------------------

HTML = """<html><body><h1>Checks</h1>
<table><caption>Checks by state</caption>
<thead><tr><th rowspan="2">State</th><th colspan="2">Pre-Pawn</th><th rowspan="2">Totals</th></tr>
<tr><th>Handgun</th><th>Long Gun</th></tr></thead>
<tbody><tr><th>Kentucky</th><td>3</td><td>5</td><td>264,140</td></tr>
<tr><th>Ohio</th><td>1</td><td>2</td><td>12,155</td></tr></tbody>
<tfoot><tr><td colspan="4">* Refers to frames and receivers</td></tr></tfoot></table>
<table><tr><th>Year</th><th>Month</th><th>Revenue</th></tr>
<tr><th rowspan="3">2025</th></tr><tr><td>January</td><td>$134</td></tr><tr><td>February</td><td>$150</td></tr>
</table>
<table><tr><th>Part</th><th>Parts list</th></tr>
<tr><td>Pump</td><td>See below<table><tr><th>Seal</th><th>Spring</th></tr><tr><td>Viton</td><td>Steel</td></tr>
</table></td></tr><tr><td>Valve</td><td>none</td></tr></table>
</body></html>"""


def test_html_grouped_header_th_stub_caption_and_footnote() -> None:
    blocks = parse_document(HTML.encode(), "checks.html").blocks
    checks = _tables(blocks)[0]
    table = _table(checks)
    assert table.caption == "Checks by state" and table.notes == ["* Refers to frames and receivers"]
    assert table.header_paths == [("State",), ("Pre-Pawn", "Handgun"), ("Pre-Pawn", "Long Gun"), ("Totals",)]
    assert table.stub_columns == 1
    assert checks.text.split("\n") == [
        "State: Kentucky — Pre-Pawn › Handgun: 3; Pre-Pawn › Long Gun: 5; Totals: 264,140",
        "State: Ohio — Pre-Pawn › Handgun: 1; Pre-Pawn › Long Gun: 2; Totals: 12,155",
    ]


def test_html_row_spanning_th_is_a_stub_not_a_header_and_nested_tables_stand_alone() -> None:
    pivot, parts, inner = _tables(parse_document(HTML.encode(), "checks.html").blocks)[1:]
    assert _table(pivot).header == ["Year", "Month", "Revenue"] and _table(pivot).stub_columns == 1
    assert pivot.text.split("\n") == ["Year: 2025 — Month: January; Revenue: $134",
                                      "Year: 2025 — Month: February; Revenue: $150"]
    assert _table(parts).rows == [["Pump", "See below"], ["Valve", "none"]]
    assert inner.meta["nested"] == "true" and inner.text == "Seal: Viton; Spring: Steel"


# --- PowerPoint and Markdown ------------------------------------------------------------------------


def test_pptx_merged_cells_and_first_row_header(tmp_path: Path) -> None:
    rows = [["", "Class1", "", ""], ["", "A", "B", "C"], ["R1", "1", "2", "3"], ["R2", "4", "5", "6"],
            ["", "7", "8", "9"]]
    make_pptx(tmp_path / "d.pptx", [{"title": "Scores", "table": rows, "merges": [(0, 1, 0, 3), (3, 0, 4, 0)]}])
    (block,) = _tables(parse_document((tmp_path / "d.pptx").read_bytes(), "d.pptx").blocks)
    table = _table(block)
    assert table.header_paths == [(), ("Class1", "A"), ("Class1", "B"), ("Class1", "C")]
    assert table.stub_columns == 1 and table.rows[-1] == ["R2", "7", "8", "9"]
    assert block.text.split("\n")[0] == "R1 — Class1 › A: 1; Class1 › B: 2; Class1 › C: 3"
    assert block.page == 1 and block.boxes


def test_markdown_header_row_is_marked() -> None:
    (block,) = _tables(parse_document(b"| Name | Score |\n|---|---|\n| 2021 | 3 |\n| 2022 | 4 |\n", "s.md").blocks)
    assert _table(block).header_rows == [["Name", "Score"]]
    assert block.text == "Name: 2021; Score: 3\nName: 2022; Score: 4"  # years in the first column: no stub


def test_xls_values_in_their_formats_and_hidden_columns() -> None:
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Prices")
    for c, name in enumerate(["Item", "Price", "Day", "Cost"]):
        sheet.write(0, c, name)
    sheet.write(1, 0, "Tea")
    sheet.write(1, 1, 1234.5, xlwt.easyxf(num_format_str="#,##0.00"))
    sheet.write(1, 2, dt.datetime(2024, 3, 5), xlwt.easyxf(num_format_str="d-mmm-yy"))
    sheet.write(1, 3, 99)
    sheet.write(2, 0, "Milk")
    sheet.write(2, 1, 0.5, xlwt.easyxf(num_format_str="0%"))
    sheet.col(3).hidden = True
    buf = io.BytesIO()
    book.save(buf)
    doc = parse_document(buf.getvalue(), "prices.xls")
    (block,) = doc.blocks
    assert block.text == "Item: Tea — Price: 1,234.50; Day: 5-Mar-24\nItem: Milk — Price: 50%"
    assert block.meta["hidden_columns"] == "D" and doc.removed == {"hidden_cells": len("Cost99")}


def test_epub_tables_are_read_as_html_tables(tmp_path: Path) -> None:
    from tests.ingest.docgen import make_epub

    make_epub(tmp_path / "b.epub", "Pumps", [("c1.xhtml", "<h1>Ratings</h1><table><thead><tr><th>Pump</th>"
                                              "<th>Flow</th></tr></thead><tbody><tr><th>P-1</th><td>40</td></tr>"
                                              "<tr><th>P-2</th><td>55</td></tr></tbody></table>")])
    (block,) = _tables(parse_document((tmp_path / "b.epub").read_bytes(), "b.epub").blocks)
    assert _table(block).stub_columns == 1 and block.text == "Pump: P-1 — Flow: 40\nPump: P-2 — Flow: 55"


def test_a_title_across_a_key_value_table_is_its_caption_and_keys_name_their_values() -> None:
    html = ("<table><tr><th colspan='2'>Duck</th></tr><tr><th>Kingdom:</th><td>Animalia</td></tr>"
            "<tr><th>Weight</th><td>1.2 kg</td></tr></table>")
    (block,) = _tables(parse_document(html.encode(), "infobox.html").blocks)
    table = _table(block)
    assert table.caption == "Duck" and table.header_paths == [("Duck",), ("Duck",)] and table.stub_columns == 1
    assert block.text == "Kingdom: Animalia\nWeight: 1.2 kg"
