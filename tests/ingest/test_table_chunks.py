"""Issue 25: a table's chunks are whole rows labelled by their header paths, each chunk points at its own
rows (on each page they lie on), never the whole table, and carries its rows for display."""

from __future__ import annotations

from ragloom.dataflow import BBox
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.parsers.tabular import Cell, table_from_cells


def count_words(text: str) -> int:
    return len(text.split())


STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut", "Delaware",
          "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
          "Louisiana", "Maine", "Maryland"]


def nics_like() -> list[list[Cell]]:
    """A grouped two-row header, 20 states over two pages (the header repeated on neither), a footnote."""
    def at(page: int, top: float) -> tuple[int, BBox]:
        return page, BBox(50.0, top, 550.0, top + 12.0)

    header = [
        [Cell("State / Territory", rowspan=2, box=at(1, 60)), Cell("Permit", rowspan=2, box=at(1, 60)),
         Cell("Pre-Pawn", colspan=2, box=at(1, 60)), Cell("Totals", rowspan=2, box=at(1, 60))],
        [Cell("Handgun", box=at(1, 72)), Cell("Long Gun", box=at(1, 72))],
    ]
    rows = []
    for i, state in enumerate(STATES):
        page, top = (1, 100.0 + 14 * i) if i < 12 else (2, 40.0 + 14 * (i - 12))
        values = [state, f"{1000 + i:,}", str(i), str(2 * i), f"{1003 + 3 * i:,}"]
        rows.append([Cell(v, box=(page, BBox(50.0 + 100 * k, top, 140.0 + 100 * k, top + 12))) for k, v in
                     enumerate(values)])
    note = [[Cell("*Refers to frames, receivers and other firearm parts", colspan=5, box=at(2, 200))]]
    return header + rows + note


def test_a_grouped_header_names_each_column_by_its_path_and_the_stub_names_the_row() -> None:
    block = table_from_cells(nics_like(), caption="NICS checks, November 2015")
    assert block is not None and block.table is not None
    table = block.table
    assert table.header_paths[:4] == [("State / Territory",), ("Permit",), ("Pre-Pawn", "Handgun"),
                                      ("Pre-Pawn", "Long Gun")]
    assert table.stub_columns == 1
    assert table.notes == ["*Refers to frames, receivers and other firearm parts"]  # not a row
    assert len(table.rows) == len(STATES)
    kentucky = block.text.split("\n")[STATES.index("Kentucky")]
    assert kentucky == ("State / Territory: Kentucky — Permit: 1,016; Pre-Pawn › Handgun: 16; "
                        "Pre-Pawn › Long Gun: 32; Totals: 1,051")
    assert [p for p, _ in table.row_boxes[0]] == [1] and [p for p, _ in table.row_boxes[15]] == [2]
    assert [p for p, _ in block.boxes] == [1, 2]


def test_each_chunk_of_a_table_points_at_its_own_rows_on_their_pages() -> None:
    block = table_from_cells(nics_like(), caption="NICS checks, November 2015")
    assert block is not None and block.table is not None
    chunks = chunk_blocks([block], ChunkerConfig.parse({"method": "naive", "chunk_token_num": 60}), count_words)
    assert len(chunks) > 2
    whole = {(p, round(b.top), round(b.bottom)) for p, b in block.boxes}
    rows_seen: list[str] = []
    for chunk in chunks:
        assert chunk.kind == "table" and chunk.table is not None
        rows = chunk.table["rows"]
        rows_seen += [r[0] for r in rows]
        own = [block.table.row_boxes[STATES.index(r[0])] for r in rows]
        pages = sorted({p for boxes in own for p, _ in boxes})
        assert [p[0] for p in chunk.positions] == pages  # its rows' pages, no other
        for page, _left, _right, top, bottom in chunk.positions:
            assert (page, round(top), round(bottom)) not in whole  # never the whole table's region
            tops = [b.top for boxes in own for p, b in boxes if p == page]
            assert top == min(tops) and bottom == max(b.bottom for boxes in own for p, b in boxes if p == page)
        assert chunk.table["header_paths"][2] == ["Pre-Pawn", "Handgun"] and chunk.table["stub_columns"] == 1
    assert rows_seen == STATES  # every row once, in order
    assert chunks[0].text.splitlines()[0] == "NICS checks, November 2015"  # the caption leads the first
    assert chunks[0].table["caption"] and not chunks[1].table["caption"]
    assert chunks[-1].text.endswith("*Refers to frames, receivers and other firearm parts")  # notes end the last
    assert chunks[-1].table["notes"] and not chunks[0].table["notes"]


def test_a_table_in_one_chunk_keeps_the_table_region_and_the_table_method_one_row_each() -> None:
    block = table_from_cells(nics_like())
    assert block is not None
    [one] = chunk_blocks([block], ChunkerConfig.parse({"method": "naive", "chunk_token_num": 2000}), count_words)
    assert one.positions == block.positions() and len(one.table["rows"]) == len(STATES)
    rows = chunk_blocks([block], ChunkerConfig.parse({"method": "table"}), count_words)
    assert len(rows) == len(STATES)
    kentucky = rows[STATES.index("Kentucky")]
    assert kentucky.table["rows"] == [["Kentucky", "1,016", "16", "32", "1,051"]]
    assert [p[0] for p in kentucky.positions] == [2] and len(kentucky.positions) == 1
