"""PDF fidelity (issue 11): nothing lost, structure right — on paper- and book-like generated PDFs.

Tables keep every cell (ruled tables whose outer columns have no vertical rules, tables
separated only by whitespace); running headers and footers are removed on purpose and
counted, never taken for headings; numbered headings are found in the body; captions stay
by their figure or table and out of the sentences around them.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
from fpdf import FPDF

from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.parsers import PdfParser
from tests.ingest.docgen import MM, WORDS, paragraph

RESULTS_HEADER = ["Model", "Dataset", "Simple", "Complex", "All", "mAP", "TEDS"]
RESULTS = [["EDD", "PTN", "91.1", "88.7", "89.9", "n/a", "89.9"],
           ["GTE", "PTN", "n/a", "n/a", "93.01", "n/a", "93.01"],
           ["TableFormer", "PTN", "98.5", "95.0", "96.75", "82.1", "96.75"],
           ["EDD", "FTN", "88.4", "92.08", "90.6", "n/a", "90.6"],
           ["TableFormer", "FTN", "97.5", "96.0", "96.8", "86.0", "96.8"]]
BEFORE = "We compare the structure recognition of several models on two public data sets of tables."
AFTER = "The transformer is ahead on every data set we tried, by a wide margin on the complex tables."


def _parse(path: Path, **kwargs: int) -> ParsedDocument:
    return PdfParser(**kwargs).parse(path.read_bytes(), path.name)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w./]+", text))


def _outside_tables(doc: ParsedDocument) -> str:
    return "\n".join(b.text for b in doc.blocks if b.kind != "table")


# --- tables -----------------------------------------------------------------------------------------


def _results_table_pdf(path: Path, *, row_rules: bool, widths: tuple[float, ...], tight: bool = False) -> None:
    """A paper's results table: horizontal rules across the whole table (top, under the header, at
    the bottom, and under each row with ``row_rules``) but vertical rules only *between* columns,
    none at the outer edges; the last column is bold. ``tight``: the last two columns' values
    nearly touch (right- and left-aligned), as in a dense LaTeX table."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Times", "", 10)
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 5, BEFORE)
    x0, y, h = 30.0, 45.0, 5.0
    right = x0 + sum(widths)
    top = y
    pdf.line(x0, y, right, y)
    for r, row in enumerate([RESULTS_HEADER, *RESULTS]):
        x = x0
        for c, (w, cell) in enumerate(zip(widths, row, strict=True)):
            pdf.set_font("Times", "B" if r == 0 or c == len(row) - 1 else "", 9)
            pdf.set_xy(x, y)
            align = "L" if c < 2 else "C"
            if tight:
                align = "R" if c == len(row) - 2 else ("L" if c == len(row) - 1 else align)
            pdf.cell(w, h, cell, align=align)
            x += w
        y += h
        if r == 0 or row_rules or r == len(RESULTS):
            pdf.line(x0, y, right, y)
    x = x0
    for w in widths[:-1]:
        x += w
        pdf.line(x, top, x, y)
    pdf.set_font("Times", "", 10)
    pdf.set_xy(20, y + 8)
    pdf.multi_cell(170, 5, AFTER)
    pdf.output(str(path))


@pytest.mark.parametrize(("row_rules", "tight"), [(True, False), (False, False), (True, True)])
def test_ruled_table_without_outer_rules_keeps_its_first_and_last_columns(
        tmp_path: Path, row_rules: bool, tight: bool) -> None:
    widths = (28.0, 20.0, 16.0, 16.0, 16.0, 16.0, 14.0)
    _results_table_pdf(tmp_path / "t.pdf", row_rules=row_rules, widths=widths, tight=tight)
    doc = _parse(tmp_path / "t.pdf")
    assert [b.kind for b in doc.blocks] == ["text", "table", "text"]
    assert doc.blocks[0].text == BEFORE and doc.blocks[2].text == AFTER
    table = doc.blocks[1]
    assert table.table is not None
    assert table.table.header == RESULTS_HEADER and table.table.rows == RESULTS
    # the frame reaches the ends of the horizontal rules
    [(page, box)] = table.boxes
    assert page == 1 and abs(box.left - 30 * MM) < 2 and abs(box.right - (30 + sum(widths)) * MM) < 2
    assert not _words(_outside_tables(doc)) & {"EDD", "GTE", "TableFormer", "96.75", "93.01", "TEDS"}
    _assert_each_word_once(doc, [BEFORE, AFTER, *(" ".join(r) for r in [RESULTS_HEADER, *RESULTS])])


def _assert_each_word_once(doc: ParsedDocument, drawn: list[str]) -> None:
    """Every word drawn on the page is in the blocks exactly as often (tables: their cells)."""
    held: Counter[str] = Counter()
    for b in doc.blocks:
        cells = [*b.table.header, *(c for r in b.table.rows for c in r)] if b.table is not None else [b.text]
        held.update(w for c in cells for w in c.split())
    assert held == Counter(w for text in drawn for w in text.split())


def test_title_row_across_a_ruled_table_is_its_caption_not_its_header(tmp_path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(20, 30)
    pdf.cell(150, 7, "Harbor Traffic November 2015", border=1, align="C")
    rows = [["Quay", "Ships", "Cargo"], ["North", "14", "2,300"], ["South", "9", "1,250"], ["East", "3", "75"]]
    for i, row in enumerate(rows):
        pdf.set_xy(20, 37 + 7 * i)
        for cell in row:
            pdf.cell(50, 7, cell, border=1)
    pdf.output(str(tmp_path / "t.pdf"))
    doc = _parse(tmp_path / "t.pdf")
    assert [b.kind for b in doc.blocks] == ["text", "table"]
    title, table = doc.blocks
    assert title.text == "Harbor Traffic November 2015" and title.meta["caption_of"] == "table"
    assert table.table is not None and table.table.header == rows[0] and table.table.rows == rows[1:]
    [(_, box)] = title.boxes
    assert abs(box.top - 30 * MM) < 1 and abs(box.bottom - 37 * MM) < 1
    _assert_each_word_once(doc, ["Harbor Traffic November 2015", *(" ".join(r) for r in rows)])


WAREHOUSE = [["Code", "Item", "Shelf", "Count", "Price"],
             ["C1", "copper lantern", "A", "12", "4.50"],
             ["C2", "violet ribbon", "B", "250", "0.20"],
             ["C3", "marble", "", "7", "31.00"],
             ["C4", "silver compass", "D", "3", "18.75"],
             ["C5", "timber saddle", "A", "1", "120.00"]]


def _whitespace_table_pdf(path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 5, "Stock of the harbor warehouse at the end of the year, counted by hand.")
    y = 40.0
    lefts = (20, 40, 90, 115, 140)
    for r, row in enumerate(WAREHOUSE):
        pdf.set_font("Helvetica", "B" if r == 0 else "", 10)
        for c, (x, cell) in enumerate(zip(lefts, row, strict=True)):
            if c >= 3:  # numbers right-aligned in 20 mm columns
                pdf.set_xy(x, y - 3.5)
                pdf.cell(20, 5, cell, align="R")
            elif cell:
                pdf.text(x, y, cell)
        y += 6
    pdf.set_font("Helvetica", "", 10)
    pdf.set_xy(20, y + 4)
    pdf.multi_cell(170, 5, "Counts were checked twice by the quay master before the ledger closed.")
    pdf.output(str(path))


def test_whitespace_aligned_table_is_found_with_every_cell(tmp_path: Path) -> None:
    _whitespace_table_pdf(tmp_path / "w.pdf")
    doc = _parse(tmp_path / "w.pdf")
    assert [b.kind for b in doc.blocks] == ["text", "table", "text"]
    table = doc.blocks[1]
    assert table.table is not None
    assert table.table.header == WAREHOUSE[0] and table.table.rows == WAREHOUSE[1:]
    [(page, box)] = table.boxes
    assert page == 1 and abs(box.left - 20 * MM) < 2 and abs(box.right - 159 * MM) < 2  # 1 mm cell padding
    assert not _words(_outside_tables(doc)) & {"C3", "lantern", "120.00", "Shelf"}
    _assert_each_word_once(doc, [doc.blocks[0].text, doc.blocks[2].text, *(" ".join(r) for r in WAREHOUSE)])


def test_three_column_prose_is_not_a_table(tmp_path: Path) -> None:
    rng = random.Random(11)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Times", "", 10)
    columns = [[paragraph(rng, 4) for _ in range(3)] for _ in range(3)]
    for x, paras in zip((15, 77, 139), columns, strict=True):
        pdf.set_xy(x, 20)
        for text in paras:
            pdf.set_x(x)
            pdf.multi_cell(56, 4.5, text, new_x="LEFT", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(tmp_path / "three.pdf"))
    doc = _parse(tmp_path / "three.pdf")
    assert {b.kind for b in doc.blocks} == {"text"}
    assert [b.text for b in doc.blocks] == [t for paras in columns for t in paras]


# --- running headers and footers --------------------------------------------------------------------


def _paper_pdf(path: Path, n_pages: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    """An ACM-like paper: a title on page 1, then a bold running header that alternates between
    even pages ("KDD 2022 ..." left, authors right) and odd pages (short title left, venue right);
    centred page numbers; a bold numbered section heading and body text on each page.
    Returns the (heading, paragraphs) of each page."""
    pdf = FPDF(format="letter")
    pdf.set_auto_page_break(False)
    content = []
    for n in range(1, n_pages + 1):
        pdf.add_page()
        if n > 1:
            pdf.set_font("Helvetica", "B", 8)
            left, right = (("KDD 2022, Washington DC", "Pfitzmann and Auer") if n % 2 == 0
                           else ("DocLayNet: A Layout Dataset", "KDD 2022, Washington DC"))
            pdf.text(20, 12, left)
            pdf.set_xy(120, 9)
            pdf.cell(76, 4, right, align="R")
        pdf.set_font("Helvetica", "", 9)
        pdf.set_xy(100, 266)
        pdf.cell(16, 4, str(n), align="C")
        pdf.set_xy(20, 22)
        if n == 1:
            pdf.set_font("Helvetica", "B", 16)
            pdf.multi_cell(176, 8, "DocLayNet: A Layout Dataset", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        heading = f"{n} {rng.choice(WORDS).title()} and {rng.choice(WORDS).title()}"
        pdf.set_font("Helvetica", "B", 10)
        pdf.multi_cell(176, 5, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        paras = [paragraph(rng, 4), paragraph(rng, 3)]
        for text in paras:
            pdf.multi_cell(176, 5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        content.append((heading, paras))
    pdf.output(str(path))
    return content


def test_alternating_running_header_is_removed_counted_and_never_a_heading(tmp_path: Path) -> None:
    content = _paper_pdf(tmp_path / "paper.pdf", 7, random.Random(21))
    doc = _parse(tmp_path / "paper.pdf")
    everything = "\n".join(b.text + " " + " ".join(b.heading_path) for b in doc.blocks)
    assert "Pfitzmann" not in everything and "KDD" not in everything
    titles = [(b.text, b.level) for b in doc.blocks if b.kind == "title"]
    assert titles == [("DocLayNet: A Layout Dataset", 1)] + [(h, 2) for h, _ in content]
    assert [b.text for b in doc.blocks if b.kind == "text"] == [p for _, paras in content for p in paras]
    header_chars = sum(len("KDD 2022, Washington DC") + len("Pfitzmann and Auer" if n % 2 == 0
                                                            else "DocLayNet: A Layout Dataset")
                       for n in range(2, 8))
    assert doc.removed == {"running_header": header_chars, "page_number": 7}


def test_running_header_of_a_page_range_is_removed_and_counted(tmp_path: Path) -> None:
    content = _paper_pdf(tmp_path / "paper.pdf", 12, random.Random(22))
    doc = _parse(tmp_path / "paper.pdf", first_page=4, last_page=5)
    assert [b.text for b in doc.blocks if b.kind == "title"] == [content[3][0], content[4][0]]
    assert not any("KDD" in b.text for b in doc.blocks)
    assert doc.removed == {"running_header": 2 * len("KDD 2022, Washington DC") + len("Pfitzmann and Auer")
                           + len("DocLayNet: A Layout Dataset"), "page_number": 2}


BOOK = "Row and Column Access Control Support in IBM DB2"
CHAPTERS = {3: "Row and Column Access Control", 4: "Implementing RCAC"}


def _book_pdf(path: Path, rng: random.Random) -> dict[int, list[str]]:
    """A Redbook-like PDF: chapter 3 on pages 1-6, chapter 4 on pages 7-12, each opening with a
    20 pt chapter title; running footers (not on chapter openers): odd pages
    "Chapter N. <title>   <printed page>" on the right, even pages "<printed page>   <book title>"
    on the left. Printed page = page + 22. Returns the paragraphs of each page."""
    pdf = FPDF(format="letter")
    pdf.set_auto_page_break(False)
    bodies = {}
    for n in range(1, 13):
        chapter = 3 if n <= 6 else 4
        pdf.add_page()
        pdf.set_xy(20, 22)
        if n in (1, 7):
            pdf.set_font("Helvetica", "B", 20)
            pdf.multi_cell(176, 10, f"Chapter {chapter}. {CHAPTERS[chapter]}", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        pdf.set_font("Helvetica", "", 10)
        bodies[n] = [paragraph(rng, 5), paragraph(rng, 4)]
        for text in bodies[n]:
            pdf.multi_cell(176, 5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
        if n not in (1, 7):
            pdf.set_font("Helvetica", "", 8)
            if n % 2:
                pdf.set_xy(96, 262)
                pdf.cell(100, 4, f"Chapter {chapter}. {CHAPTERS[chapter]}   {n + 22}", align="R")
            else:
                pdf.text(20, 265, f"{n + 22}   {BOOK}")
    pdf.output(str(path))
    return bodies


@pytest.mark.parametrize("pages", [(1, 12), (5, 8), (7, 7), (8, 8)])
def test_chapter_footer_is_never_a_heading(tmp_path: Path, pages: tuple[int, int]) -> None:
    bodies = _book_pdf(tmp_path / "book.pdf", random.Random(23))
    first, last = pages
    doc = _parse(tmp_path / "book.pdf", first_page=first, last_page=last)
    expected_titles = [f"Chapter {c}. {CHAPTERS[c]}" for c, opener in ((3, 1), (4, 7)) if first <= opener <= last]
    assert [b.text for b in doc.blocks if b.kind == "title"] == expected_titles
    assert [b.text for b in doc.blocks if b.kind == "text"] == [
        t for n in range(first, last + 1) for t in bodies[n]]
    for block in doc.blocks:
        assert "Access Control 2" not in block.text and BOOK not in block.text
        if block.kind == "text" and block.page is not None and block.page >= 7:
            assert block.heading_path == (("Chapter 4. Implementing RCAC",) if first <= 7 else ())
    footers = [f"Chapter {3 if n <= 6 else 4}. {CHAPTERS[3 if n <= 6 else 4]} {n + 22}" if n % 2
               else f"{n + 22} {BOOK}" for n in range(first, last + 1) if n not in (1, 7)]
    assert doc.removed == ({"running_footer": sum(len(f) for f in footers)} if footers else {})  # spaces as read


# --- numbered headings in the body ------------------------------------------------------------------


LONG_HEADING = ("5.3 A Much Longer Section Heading About the Many Harbors, Valleys, Islands and Quarries of "
                "the Northern Survey Area")  # wraps: one heading over two lines


def _numbered_pdf(path: Path, items: list[tuple[str, str]]) -> None:
    """One page of 10 pt Times; ``b`` items bold, ``p`` items regular, all at the same line pitch
    (no extra space around headings, as in a dense paper)."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_xy(20, 20)
    for style, text in items:
        pdf.set_font("Times", "B" if style == "b" else "", 10)
        pdf.multi_cell(170, 4.6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def test_numbered_headings_in_the_body_become_titles_with_their_depth(tmp_path: Path) -> None:
    rng = random.Random(31)
    paras = [paragraph(rng, 4) for _ in range(5)]
    wrapped = ("In the last season the harbor of the northern valley took in a great deal of trade, and by "
               "the end of the autumn the quays held 3.5 tonnes of copper and 12 barrels of pepper from "
               "the southern islands, which the ledger records in full.")
    items = [("b", "5 Experiments"), ("p", paras[0]),
             ("b", "5.1 Hyper Parameter Optimization"), ("p", paras[1]),
             ("p", "5.2 Results on Public Data"), ("p", paras[2]),
             ("p", "5.2.1 Ablation"), ("p", wrapped),
             ("p", "12 boats arrived at the harbor before the storm, and their crews stayed until spring."),
             ("p", "1. Open the valve."), ("p", "2. Close the gate."),
             ("b", LONG_HEADING), ("p", paras[4]),
             ("b", "6 Conclusion"), ("b", "6.1 Summary"), ("p", paras[3])]
    _numbered_pdf(tmp_path / "n.pdf", items)
    doc = _parse(tmp_path / "n.pdf")
    assert [(b.text, b.level) for b in doc.blocks if b.kind == "title"] == [
        ("5 Experiments", 1), ("5.1 Hyper Parameter Optimization", 2), ("5.2 Results on Public Data", 2),
        ("5.2.1 Ablation", 3), (LONG_HEADING, 2), ("6 Conclusion", 1), ("6.1 Summary", 2)]
    [long] = [b for b in doc.blocks if b.text == LONG_HEADING]
    assert len({round(bx.top) for _, bx in long.boxes}) == 1 and long.boxes[0][1].bottom - long.boxes[0][1].top > 15
    by_text = {b.text: b for b in doc.blocks}
    assert by_text[paras[1]].heading_path == ("5 Experiments", "5.1 Hyper Parameter Optimization")
    assert by_text[paras[2]].heading_path == ("5 Experiments", "5.2 Results on Public Data")
    assert paras[0] in by_text and paras[3] in by_text
    # a sentence or a wrapped line starting with a number, and list items, stay body text
    body = [b for b in doc.blocks if b.kind != "title"]
    assert any(b.text.startswith(wrapped) for b in body)
    assert "12 boats arrived" in " ".join(b.text for b in body)
    [listing] = [b for b in doc.blocks if b.kind == "list"]
    assert listing.text == "1. Open the valve.\n2. Close the gate."


# --- captions ---------------------------------------------------------------------------------------


def _caption_pdf(path: Path, rng: random.Random) -> tuple[list[str], str, str, float]:
    """A vector-drawn chart (paths, no image) with its caption right under it and the body text
    right under the caption at the same size and pitch; then a table caption right under a
    paragraph, above a ruled table. Returns the paragraphs, the two captions and the chart's top (mm)."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(20, 20, 20)
    pdf.add_page()
    pdf.set_font("Times", "", 10)
    paras = [paragraph(rng, 3), paragraph(rng, 3), paragraph(rng, 2)]
    fig_caption = "Figure 3: Growth of the harbor trade per year."
    table_caption = "Table 2. Ships per quay."
    pdf.set_xy(20, 20)
    pdf.multi_cell(170, 4.6, paras[0], new_x="LMARGIN", new_y="NEXT")
    y = pdf.get_y() + 3
    chart_top = y + 45 - 41
    for i, height in enumerate((20, 28, 35, 41)):  # bars of a chart
        pdf.rect(40 + 15 * i, y + 45 - height, 10, height, style="F")
    pdf.line(35, y + 45, 110, y + 45)
    pdf.set_xy(20, y + 47)
    pdf.multi_cell(170, 4.6, fig_caption, new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(170, 4.6, paras[1], new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(170, 4.6, table_caption, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)
    for row in (["Quay", "Ships"], ["North", "14"], ["South", "9"]):
        pdf.set_x(20)
        for cell in row:
            pdf.cell(40, 6, cell, border=1)
        pdf.ln(6)
    pdf.set_xy(20, pdf.get_y() + 4)
    pdf.multi_cell(170, 4.6, paras[2], new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return paras, fig_caption, table_caption, chart_top


def test_captions_are_blocks_of_their_own_next_to_their_figure_or_table(tmp_path: Path) -> None:
    paras, fig_caption, table_caption, chart_top = _caption_pdf(tmp_path / "c.pdf", random.Random(41))
    doc = _parse(tmp_path / "c.pdf")
    texts = [b.text for b in doc.blocks]
    assert fig_caption in texts and table_caption in texts
    assert paras[1] in texts and paras[2] in texts
    i = texts.index(table_caption)
    caption, table = doc.blocks[i], doc.blocks[i + 1]
    assert table.kind == "table" and table.meta["caption"] == table_caption
    assert caption.meta["caption_of"] == "table" and caption.heading_path == table.heading_path
    assert caption.boxes[0][1].bottom <= table.boxes[0][1].top + 1
    # the chart is found from its drawing (no picture) and reads its caption; its box holds both
    figure = doc.blocks[texts.index(fig_caption)]
    assert figure.kind == "figure" and figure.meta["caption"] == fig_caption
    [(page, box)] = figure.boxes
    assert page == 1 and abs(box.top - chart_top * MM) < 3 and box.right >= 110 * MM - 1
    assert doc.blocks[texts.index(fig_caption) + 1].text == paras[1]


@pytest.mark.parametrize("method", ["naive", "book", "paper", "manual"])
def test_a_table_chunk_reads_its_caption_and_points_at_it(tmp_path: Path, method: str) -> None:
    _, _, table_caption, _ = _caption_pdf(tmp_path / "c.pdf", random.Random(41))
    doc = _parse(tmp_path / "c.pdf")
    chunks = chunk_blocks(doc.blocks, ChunkerConfig.parse({"method": method, "chunk_token_num": 128}),
                          lambda t: len(t.split()))
    (table,) = [c for c in chunks if c.kind == "table"]
    assert table_caption in table.text and table.text.index(table_caption) < table.text.index("Quay")
    assert not any(table_caption in c.text for c in chunks if c is not table)  # once, with its table
    caption_box = next(b for b in doc.blocks if b.text == table_caption).boxes[0][1]
    assert any(abs(p[3] - caption_box.top) < 1 for p in table.positions)


def test_a_caption_under_its_table_joins_it_unless_it_heads_the_next_table() -> None:
    def table(rows: list[str]) -> Block:
        return Block(text="\n".join(rows), kind=BlockKind.TABLE, page=1)

    blocks = [Block(text="Quays of the harbor and their ships.", page=1), table(["Quay 1 | 12", "Quay 2 | 7"]),
              Block(text="Table 1. Ships per quay.", page=1, meta={"caption_of": "table"}),
              Block(text="Table 2. Cranes per quay.", page=1, meta={"caption_of": "table"}),
              table(["Quay 1 | 3", "Quay 2 | 4"]), Block(text="The cranes are old.", page=1)]
    chunks = chunk_blocks(blocks, ChunkerConfig.parse({"method": "naive", "chunk_token_num": 128}),
                          lambda t: len(t.split()))
    tables = [c.text for c in chunks if c.kind == "table"]
    assert tables == ["Table 1. Ships per quay.\nQuay 1 | 12\nQuay 2 | 7",
                      "Table 2. Cranes per quay.\nQuay 1 | 3\nQuay 2 | 4"]
    assert all("Table" not in c.text for c in chunks if c.kind != "table")


def _splice_pdf(path: Path, rng: random.Random) -> tuple[str, str, str]:
    """Two columns: a sentence runs from the foot of the left column to the right column, where
    a picture and its caption come first. Returns the sentence's two halves and the caption."""
    from PIL import Image

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Times", "", 10)
    left = [paragraph(rng, 6), paragraph(rng, 6), "The harbor trade grew in every year of the survey, as the"]
    pdf.set_xy(20, 20)
    for text in left:
        pdf.set_x(20)
        pdf.multi_cell(80, 4.6, text, new_x="LEFT", new_y="NEXT")
    pdf.image(Image.new("RGB", (200, 120), (40, 90, 160)), x=110, y=20, w=80, h=48)
    pdf.set_xy(110, 70)
    caption = "Figure 2: Trade per year."
    rest = "chart of the ledger shows in detail."
    pdf.multi_cell(80, 4.6, caption, new_x="LEFT", new_y="NEXT")
    pdf.multi_cell(80, 4.6, rest, new_x="LEFT", new_y="NEXT")
    pdf.set_xy(110, pdf.get_y() + 3)
    pdf.multi_cell(80, 4.6, paragraph(rng, 8), new_x="LEFT", new_y="NEXT")
    pdf.output(str(path))
    return left[2], rest, caption


def test_caption_is_not_spliced_into_a_sentence_across_a_figure(tmp_path: Path) -> None:
    start, rest, caption = _splice_pdf(tmp_path / "s.pdf", random.Random(42))
    doc = _parse(tmp_path / "s.pdf")
    [figure] = [b for b in doc.blocks if b.kind == "figure"]
    assert figure.text == caption
    [sentence] = [b for b in doc.blocks if start in b.text]
    assert sentence.text.endswith(start + " " + rest)
    assert not any(caption in b.text for b in doc.blocks if b.kind != "figure")
    # one box in each column: the sentence's start at the foot of the left one, its end under the caption
    (p1, left_box), (p2, right_box) = sentence.boxes
    assert p1 == p2 == 1 and left_box.right < 101 * MM and right_box.left > 109 * MM
    assert right_box.top >= figure.boxes[0][1].bottom - 1



def test_a_word_broken_at_its_hyphen_joins_across_lines_and_columns() -> None:
    from ragloom.ingest.parsers.pdf_paragraphs import join_text

    assert join_text("the conver-", "sation") == "the conversation"
    assert join_text("from Soekarno-", "Hatta International Airport") == "from Soekarno-Hatta International Airport"
    assert join_text("a list -", "Next") == "a list - Next"
