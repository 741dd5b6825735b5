"""Page furniture is not text (issue 25): turned margin text, watermarks, line numbers and vertical
stamps are left out of the reading order and counted by reason; a heading needs a cue a reader sees.

Every PDF is generated here (fpdf2, or raw PDF for the cost shapes): a sentence broken over lines
beside a word turned up the margin, a diagonal watermark behind the text, a pleading's line numbers,
a word stacked letter under letter in the margin, a bold phrase inside a running line.
"""

from __future__ import annotations

from pathlib import Path

from fpdf import FPDF

from ragloom.ingest.blocks import BlockKind, ParsedDocument
from ragloom.ingest.chunkers import ChunkerConfig, chunk_blocks
from ragloom.ingest.coverage import measure
from ragloom.ingest.parsers import PdfParser
from tests.ingest import hostile
from tests.ingest.test_linear_parsers import Case, assert_linear

DEADLINE = ["The agency must receive comments on this proposed rule",
            "by September 21, 2020, at the address given below, and",
            "comments received after that date may not be considered",
            "before the final rule is adopted by the administrator."]
MORE = ["Each comment should name the docket number of this notice",
        "and the part of the proposal it addresses, with the data",
        "that support it, so that the agency can weigh it fairly."]


def _parse(pdf: FPDF, path: Path) -> ParsedDocument:
    pdf.output(str(path))
    return PdfParser().parse(path.read_bytes(), path.name)


def _page() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 11)
    return pdf


def _lines(pdf: FPDF, lines: list[str], *, x: float = 30, y: float = 40, pitch: float = 6) -> float:
    """Body lines set one under the other (baselines ``pitch`` mm apart); the next free baseline."""
    pdf.set_font("Helvetica", "", 11)
    for line in lines:
        pdf.text(x, y, line)
        y += pitch
    return y


def _texts(doc: ParsedDocument) -> list[str]:
    return [b.text for b in doc.blocks]


def _everything(doc: ParsedDocument) -> str:
    return "\n".join(b.text + " " + " ".join(b.heading_path) for b in doc.blocks)


# --- turned margin text -----------------------------------------------------------------------------


def test_a_word_turned_up_the_margin_leaves_the_sentence_beside_it_whole(tmp_path: Path) -> None:
    """The federal register's slug: a word set at 90 degrees in the margin, written between the lines
    of the sentence beside it, used to come out letter by letter inside that sentence."""
    pdf = _page()
    _lines(pdf, DEADLINE[:2])
    pdf.set_font("Helvetica", "", 9)
    with pdf.rotation(90, 14, 70):
        pdf.text(14, 70, "PROPOSALS")
    _lines(pdf, [*DEADLINE[2:], "", *MORE], y=52)
    doc = _parse(pdf, tmp_path / "slug.pdf")
    assert _texts(doc) == [" ".join(DEADLINE), " ".join(MORE)]
    assert doc.removed == {"rotated_margin_text": len("PROPOSALS")}


def test_a_long_turned_slug_in_each_margin_is_counted_on_every_page(tmp_path: Path) -> None:
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    slug = "jbell on DSKJLSW7X2PROD with PROPOSALS"
    for _ in range(2):
        pdf.add_page()
        _lines(pdf, DEADLINE)
        pdf.set_font("Helvetica", "", 6)
        with pdf.rotation(90, 8, 290):
            pdf.text(8, 290, slug)
        with pdf.rotation(270, 200, 30):  # and one running down the right margin
            pdf.text(200, 30, "Downloaded on 6 August 2020")
    doc = _parse(pdf, tmp_path / "slugs.pdf")
    assert _texts(doc) == [" ".join(DEADLINE)] * 2
    assert doc.removed == {"rotated_margin_text": 2 * (len(slug) + len("Downloaded on 6 August 2020"))}


def test_turned_text_inside_the_text_is_kept_as_a_line_of_its_own(tmp_path: Path) -> None:
    """A label turned inside the text area (a table's turned header, a chart's axis) is text: read
    whole, in its own direction, never letter by letter."""
    pdf = _page()
    y = _lines(pdf, DEADLINE)
    pdf.set_font("Helvetica", "", 11)
    with pdf.rotation(90, 100, y + 40):
        pdf.text(100, y + 40, "Quarterly totals")
    _lines(pdf, MORE, y=y + 50)
    doc = _parse(pdf, tmp_path / "label.pdf")
    assert "Quarterly totals" in _texts(doc)
    assert " ".join(DEADLINE) in _texts(doc) and " ".join(MORE) in _texts(doc)
    assert doc.removed == {}


# --- watermarks -------------------------------------------------------------------------------------


def test_a_diagonal_watermark_behind_the_text_is_left_out(tmp_path: Path) -> None:
    pdf = _page()
    pdf.set_font("Helvetica", "B", 64)
    pdf.set_text_color(215, 215, 215)
    with pdf.rotation(45, 45, 200):
        pdf.text(45, 200, "CONFIDENTIAL")
    pdf.set_text_color(0, 0, 0)
    y = _lines(pdf, DEADLINE, y=90)
    _lines(pdf, MORE, y=y + 4)
    doc = _parse(pdf, tmp_path / "diagonal.pdf")
    assert _texts(doc) == [" ".join(DEADLINE), " ".join(MORE)]
    assert doc.removed == {"watermark": len("CONFIDENTIAL")}


def test_large_upright_text_laid_over_the_lines_is_a_watermark(tmp_path: Path) -> None:
    pdf = _page()
    y = _lines(pdf, DEADLINE, y=60)
    _lines(pdf, MORE, y=y + 4)
    pdf.set_font("Helvetica", "B", 90)
    pdf.set_text_color(200, 200, 200)
    pdf.text(40, 85, "DRAFT")  # drawn last, across both paragraphs
    doc = _parse(pdf, tmp_path / "draft.pdf")
    assert _texts(doc) == [" ".join(DEADLINE), " ".join(MORE)]
    assert doc.removed == {"watermark": len("DRAFT")}


# --- line numbers -----------------------------------------------------------------------------------

PLEADING = [["IN THE SUPREME COURT OF THE STATE", "", "The petitioner asks the court to review the order",
             "entered by the district court on the second of May,", "which denied the motion without a hearing."],
            ["", "The respondent opposes the petition and says that", "the order was right on the law and the facts,",
             "and that no hearing was needed to decide it."]]


def _pleading(path: Path, *, right_edge: float, every: int = 1, n_rows: int = 14) -> tuple[ParsedDocument, int]:
    """A pleading page: ``n_rows`` numbered lines, the numbers right-aligned at ``right_edge`` mm, the
    text at 35 mm; only every ``every``-th line is numbered. The characters of the numbers come back."""
    pdf = _page()
    rows = [row for part in PLEADING for row in [*part, ""]][:n_rows]
    rows += [""] * (n_rows - len(rows))
    numbered = 0
    for i, row in enumerate(rows, start=1):
        y = 30 + 8 * i
        if i % every == 0:
            pdf.set_font("Helvetica", "", 10)
            pdf.text(right_edge - pdf.get_string_width(str(i)), y, str(i))
            numbered += len(str(i))
        if row:
            pdf.set_font("Helvetica", "", 11)
            pdf.text(35, y, row)
    pdf.output(str(path))
    return PdfParser().parse(path.read_bytes(), path.name), numbered


def _pleading_texts() -> list[str]:
    return [PLEADING[0][0], " ".join(PLEADING[0][2:]), " ".join(PLEADING[1][1:])]


def test_line_numbers_down_the_margin_are_left_out_and_counted(tmp_path: Path) -> None:
    doc, numbered = _pleading(tmp_path / "pleading.pdf", right_edge=22)
    assert _texts(doc) == _pleading_texts()
    assert doc.removed == {"line_number": numbered}


def test_line_numbers_close_to_the_text_and_every_fifth_line(tmp_path: Path) -> None:
    """Numbers set near enough to the text to share its line, and numbers on every fifth line only."""
    doc, numbered = _pleading(tmp_path / "close.pdf", right_edge=29)
    assert _texts(doc) == _pleading_texts() and doc.removed == {"line_number": numbered}
    doc, numbered = _pleading(tmp_path / "fifth.pdf", right_edge=22, every=5, n_rows=25)
    assert numbered == len("510152025") and doc.removed == {"line_number": numbered}
    assert _texts(doc) == _pleading_texts()


def test_numbers_that_belong_to_the_text_stay(tmp_path: Path) -> None:
    """A numbered list and a column of figures at the text's own left edge are text, not line numbers."""
    pdf = _page()
    y = _lines(pdf, DEADLINE, x=25)
    for i in range(1, 8):
        pdf.text(25, y + 6 * i, str(i))
        pdf.text(45, y + 6 * i, f"Item number {i} of the inventory list")
    doc = _parse(pdf, tmp_path / "list.pdf")
    assert "line_number" not in doc.removed
    assert all(str(i) in _texts(doc) and f"Item number {i} of the inventory list" in _texts(doc) for i in range(1, 8))


# --- vertical stamps --------------------------------------------------------------------------------


def test_a_word_stacked_letter_under_letter_in_the_margin_is_a_stamp(tmp_path: Path) -> None:
    pdf = _page()
    y = _lines(pdf, DEADLINE)
    _lines(pdf, MORE, y=y + 4)
    pdf.set_font("Helvetica", "B", 12)
    for i, letter in enumerate("DRAFT"):
        pdf.text(196, 45 + 5 * i, letter)
    doc = _parse(pdf, tmp_path / "stamp.pdf")
    assert _texts(doc) == [" ".join(DEADLINE), " ".join(MORE)]
    assert doc.removed == {"vertical_stamp": len("DRAFT")}


# --- coverage ---------------------------------------------------------------------------------------


def test_coverage_reports_the_furniture_by_reason(tmp_path: Path) -> None:
    pdf = _page()
    pdf.set_font("Helvetica", "B", 64)
    pdf.set_text_color(215, 215, 215)
    with pdf.rotation(45, 45, 200):
        pdf.text(45, 200, "CONFIDENTIAL")
    pdf.set_text_color(0, 0, 0)
    y = _lines(pdf, DEADLINE, y=90)
    pdf.set_font("Helvetica", "", 9)
    with pdf.rotation(90, 14, 120):
        pdf.text(14, 120, "PROPOSALS")
    _lines(pdf, MORE, y=y + 4)
    doc = _parse(pdf, tmp_path / "both.pdf")
    chunks = chunk_blocks(doc.blocks, ChunkerConfig.parse({"method": "naive", "chunk_token_num": 128}),
                          lambda text: len(text.split()))
    coverage = measure(doc.blocks, chunks, doc.removed)
    assert coverage.ratio == 1.0
    assert coverage.as_dict()["removed"] == {"watermark": len("CONFIDENTIAL"), "rotated_margin_text": len("PROPOSALS")}


# --- heading cues -----------------------------------------------------------------------------------


def test_a_heading_needs_a_cue_and_a_running_line_never_becomes_one(tmp_path: Path) -> None:
    """Large or bold lines are headings; a running line with a bold phrase in it, a bold line that opens
    lower-case (the rest of a sentence), a run-in bold label, a short plain line at body size and a
    sentence set large are not."""
    pdf = _page()
    pdf.set_xy(25, 25)
    pdf.set_font("Helvetica", "", 16)
    pdf.multi_cell(160, 9, "Scope of the Work", new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(25)
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(160, 5.5, "The emergency order was issued on the seventh of November and it", markdown=True,
                   new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(25)
    pdf.multi_cell(160, 5.5, "was published in the **Federal Register as an**", markdown=True,
                   new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(25)
    pdf.multi_cell(160, 5.5, "amendment to the rules, effective on the day it was received.",
                   new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(25)
    pdf.set_font("Helvetica", "B", 11)
    pdf.multi_cell(160, 5.5, "and the bold clause that follows it", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_x(25)
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(160, 5.5, "A plain sentence closes the part.", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_x(25)
    pdf.set_font("Helvetica", "B", 11)
    pdf.multi_cell(160, 5.5, "Materials and Methods", new_x="LMARGIN", new_y="NEXT")
    pdf.set_x(25)
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(160, 5.5, "**FOR FURTHER INFORMATION CONTACT:** Ian", markdown=True, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_x(25)
    pdf.multi_cell(160, 5.5, "Notes on the survey", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_x(25)
    pdf.multi_cell(160, 5.5, " ".join(MORE), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(6)
    pdf.set_x(25)
    pdf.set_font("Helvetica", "", 16)
    pdf.multi_cell(160, 9, "The notice is set large for the public to read.", new_x="LMARGIN", new_y="NEXT")
    doc = _parse(pdf, tmp_path / "cues.pdf")
    titles = [b.text for b in doc.blocks if b.kind == BlockKind.TITLE]
    assert titles == ["Scope of the Work", "Materials and Methods"]
    assert all(not part.startswith(("was published", "FOR FURTHER", "and the")) for b in doc.blocks
               for part in b.heading_path)
    assert "The emergency order was issued on the seventh of November and it was published in the Federal " \
           "Register as an amendment to the rules, effective on the day it was received." in _texts(doc)


def _tagged_pdf(heading: str, body: list[str], tag: str = "H2") -> bytes:
    """One page: ``heading`` and the ``body`` lines, all Helvetica 11 pt; with ``tag`` the structure tree
    tags the heading so (the body lines are P)."""
    ops = []
    y = 780
    kids = []
    for mcid, (kind, text) in enumerate([(tag, heading), *(("P", line) for line in body)]):
        ops.append(b"/%s <</MCID %d>> BDC BT /F1 11 Tf 72 %d Td (%s) Tj ET EMC"
                   % (kind.encode(), mcid, y, text.encode()))
        kids.append(b"<</Type/StructElem/S/%s/P 5 0 R/Pg 3 0 R/K %d>>" % (kind.encode(), mcid))
        y -= 16 if mcid else 24
    content = b"\n".join(ops)
    n_kids = len(kids)
    objects = [
        b"<</Type/Catalog/Pages 2 0 R/MarkInfo<</Marked true>>/StructTreeRoot 5 0 R>>",
        b"<</Type/Pages/Kids[3 0 R]/Count 1>>",
        b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 595 842]/Contents 4 0 R/StructParents 0"
        b"/Resources<</Font<</F1 6 0 R>>>>>>",
        b"<</Length %d>>stream\n" % len(content) + content + b"\nendstream",
        b"<</Type/StructTreeRoot/K[" + b" ".join(b"%d 0 R" % (8 + i) for i in range(n_kids)) + b"]/ParentTree 7 0 R>>",
        b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>",
        b"<</Nums[0[" + b" ".join(b"%d 0 R" % (8 + i) for i in range(n_kids)) + b"]]>>",
        *kids,
    ]
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj" % number + obj + b"endobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def test_the_structure_tree_is_a_heading_cue() -> None:
    """A line at body size, neither bold nor numbered, is a heading when the PDF's structure tree tags it
    H2 (at level 2), and text when it tags it P."""
    body = ["The pump is serviced every year by the maker.", "Its filter is changed at the same time.",
            "A log of each service is kept on site."]
    tagged = PdfParser().parse(_tagged_pdf("Service of the pump", body), "tagged.pdf")
    assert [(b.kind, b.level, b.text) for b in tagged.blocks] == [
        (BlockKind.TITLE, 2, "Service of the pump"), (BlockKind.TEXT, 0, " ".join(body))]
    plain = PdfParser().parse(_tagged_pdf("Service of the pump", body, "P"), "plain.pdf")
    assert [b.kind for b in plain.blocks] == [BlockKind.TEXT, BlockKind.TEXT]


# --- cost -------------------------------------------------------------------------------------------


def _furniture_page(n: int) -> bytes:
    """One tall page: ``n`` lines of text, each with a line number in the margin, a letter stacked in
    the other margin, a word turned in a third place, a diagonal word over it and a large one."""
    body = b"".join(b"/F1 11 Tf 1 0 0 1 72 %d Tm (line %d of the body text here) Tj "
                    b"/F1 9 Tf 1 0 0 1 40 %d Tm (%d) Tj 1 0 0 1 560 %d Tm (%c) Tj "
                    b"0 1 -1 0 20 %d Tm (turned) Tj 0.7 0.7 -0.7 0.7 300 %d Tm (slanted) Tj "
                    b"/F1 30 Tf 1 0 0 1 300 %d Tm (LARGE) Tj "
                    % (14 * i + 20, i, 14 * i + 20, i + 1, 14 * i + 20, 65 + i % 26, 14 * i + 20, 14 * i + 20,
                       14 * i + 20) for i in range(n))
    return hostile.raw_pdf([(595, 14 * n + 60)], b"BT " + body + b"ET")


def test_furniture_search_cost_is_linear() -> None:
    assert_linear(Case("a.pdf", _furniture_page, 100))
