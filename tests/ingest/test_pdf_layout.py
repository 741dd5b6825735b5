"""PDF reading order and structure: columns, rotation, running lines, headings, lists, figures, outline."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers import PdfParser, parse_document
from ragloom.ingest.parsers.pdf_headings import numbering_level
from tests.ingest.docgen import (
    MM,
    make_rotated_pdf,
    make_running_pdf,
    make_styled_pdf,
    make_two_column_pdf,
    paragraph,
)

CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc")


def _parse(path: Path) -> ParsedDocument:
    return parse_document(path.read_bytes(), path.name)


def _inside(block: Block, size: tuple[float, float]) -> bool:
    return all(0 <= b.left < b.right <= size[0] + 0.01 and 0 <= b.top < b.bottom <= size[1] + 0.01
               for _, b in block.boxes)


def test_two_columns_are_read_column_by_column(tmp_path: Path) -> None:
    rng = random.Random(1)
    left = [f"Left{i} " + paragraph(rng, 3) for i in range(3)]
    right = [f"Right{i} " + paragraph(rng, 3) for i in range(3)]
    make_two_column_pdf(tmp_path / "two.pdf", "Two Column Report", left, right)
    doc = _parse(tmp_path / "two.pdf")
    assert [b.text for b in doc.blocks] == ["Two Column Report", *left, *right]
    width = doc.page_sizes[1][0]
    for block in doc.blocks[1:]:
        [(page, box)] = block.boxes
        column = (20 * MM, 100 * MM) if block.text.startswith("Left") else (110 * MM, 190 * MM)
        assert page == 1 and column[0] - 1 <= box.left and box.right <= column[1] + 1 and box.right < width
    assert doc.blocks[0].kind == "title" and doc.blocks[1].heading_path == ("Two Column Report",)
    # each column goes down the page
    tops = [b.boxes[0][1].top for b in doc.blocks[1:]]
    assert tops[:3] == sorted(tops[:3]) and tops[3:] == sorted(tops[3:]) and tops[3] < tops[2]


def test_sentence_running_from_one_column_into_the_next_is_one_paragraph(tmp_path: Path) -> None:
    rng = random.Random(2)
    left = [paragraph(rng, 4), "This sentence starts at the foot of the left column and"]
    right = ["continues at the head of the right column.", paragraph(rng, 4), paragraph(rng, 2)]
    make_two_column_pdf(tmp_path / "flow.pdf", "Flowing Text", left, right)
    doc = _parse(tmp_path / "flow.pdf")
    joined = left[1] + " " + right[0]
    [block] = [b for b in doc.blocks if "foot of the left" in b.text]
    assert block.text == joined
    assert [b.text for b in doc.blocks] == ["Flowing Text", left[0], joined, right[1], right[2]]


def test_rotated_page_upright_text_is_in_order_with_boxes_on_the_displayed_page(tmp_path: Path) -> None:
    lines = ["First line of the landscape page.", "Second line follows below.", "Third and last line."]
    make_rotated_pdf(tmp_path / "rot.pdf", lines)
    doc = _parse(tmp_path / "rot.pdf")
    width, height = doc.page_sizes[1]
    assert (round(width), round(height)) == (842, 595)  # displayed: landscape
    assert json.loads(doc.metadata["page_rotation"]) == {"1": 90}
    assert [b.text for b in doc.blocks] == lines  # lines 36 pt apart: one paragraph each
    for i, block in enumerate(doc.blocks):
        [(_, box)] = block.boxes
        assert _inside(block, (width, height))
        assert abs(box.left - 72) < 2 and box.top < 100 + 36 * i < box.bottom + 1  # baseline inside the box
        assert box.right - box.left > 3 * (box.bottom - box.top)  # a horizontal line as displayed


def test_rotated_page_with_sideways_text_reads_in_order_inside_the_page(tmp_path: Path) -> None:
    lines = ["Sideways line number one.", "Sideways line number two.", "Sideways line number three."]
    make_rotated_pdf(tmp_path / "side.pdf", lines, upright=False)
    doc = _parse(tmp_path / "side.pdf")
    width, height = doc.page_sizes[1]
    assert [b.text for b in doc.blocks] == lines
    assert json.loads(doc.metadata["text_direction"]) == {"1": 90}
    for i, block in enumerate(doc.blocks):
        [(_, box)] = block.boxes
        assert _inside(block, (width, height))
        assert box.bottom - box.top > 3 * (box.right - box.left)  # the text runs down the displayed page
        assert abs(box.top - 72) < 2
        # the baseline at user-space y = 842 - 100 - 36 i becomes displayed x: the first line is the rightmost
        assert box.left < 842 - 100 - 36 * i < box.right + 1


def test_running_header_footer_and_page_numbers_are_removed(tmp_path: Path) -> None:
    rng = random.Random(4)
    bodies = [paragraph(rng, 3) for _ in range(4)]
    make_running_pdf(tmp_path / "run.pdf", [[b] for b in bodies], header="ACME Annual Report 2024",
                     footer="Confidential")
    doc = _parse(tmp_path / "run.pdf")
    assert [b.text for b in doc.blocks] == bodies
    assert [b.page for b in doc.blocks] == [1, 2, 3, 4]


def test_running_lines_are_recognised_in_a_short_page_range(tmp_path: Path) -> None:
    rng = random.Random(5)
    bodies = [paragraph(rng, 2) for _ in range(8)]
    make_running_pdf(tmp_path / "run.pdf", [[b] for b in bodies], header="ACME Annual Report 2024",
                     footer="Confidential")
    doc = PdfParser(first_page=5, last_page=5).parse((tmp_path / "run.pdf").read_bytes(), "run.pdf")
    [block] = doc.blocks
    assert block.text == bodies[4] and block.page == 5 and list(doc.page_sizes) == [5]


def _manual_items(rng: random.Random) -> list[tuple[str, str]]:
    return [
        ("h1", "Field Manual"),
        ("h2", "1. Introduction"),
        ("p", paragraph(rng, 3)),
        ("h3", "1.1 Scope"),
        ("p", "The steps are:"),
        ("li", "1. Open the valve and wait until the copper gauge settles, then note the reading in the ledger."),
        ("li", "2. Close the gate."),
        ("li", "3. Report to the harbor office."),
        ("h3", "1.2 Terms"),
        ("p", paragraph(rng, 2)),
        ("h2", "2. Method"),
        ("p", paragraph(rng, 2)),
    ]


def test_headings_from_size_weight_and_numbering_with_levels(tmp_path: Path) -> None:
    make_styled_pdf(tmp_path / "m.pdf", _manual_items(random.Random(6)))
    doc = _parse(tmp_path / "m.pdf")
    titles = [(b.text, b.level) for b in doc.blocks if b.kind == "title"]
    assert titles == [("Field Manual", 1), ("1. Introduction", 2), ("1.1 Scope", 3), ("1.2 Terms", 3),
                      ("2. Method", 2)]
    terms = next(b for b in doc.blocks if b.text == "1.2 Terms")
    assert terms.heading_path == ("Field Manual", "1. Introduction")
    method_body = doc.blocks[-1]
    assert method_body.kind == "text" and method_body.heading_path == ("Field Manual", "2. Method")


def test_list_items_are_kept_together(tmp_path: Path) -> None:
    make_styled_pdf(tmp_path / "m.pdf", _manual_items(random.Random(6)))
    doc = _parse(tmp_path / "m.pdf")
    [block] = [b for b in doc.blocks if b.kind == "list"]
    assert block.text.split("\n") == [
        "1. Open the valve and wait until the copper gauge settles, then note the reading in the ledger.",
        "2. Close the gate.",
        "3. Report to the harbor office.",
    ]
    assert block.heading_path == ("Field Manual", "1. Introduction", "1.1 Scope")
    [(page, box)] = block.boxes
    assert page == 1 and abs(box.left - 25 * MM) < 4  # indented (+ the cell padding)


def test_outline_gives_levels_and_is_saved(tmp_path: Path) -> None:
    items = [("h2", "Overview"), ("p", "Opening words of the overview."), ("h2", "Details"),
             ("p", "Body of the details."), ("page", ""), ("h2", "Annex"), ("p", "Closing words.")]
    make_styled_pdf(tmp_path / "o.pdf", items, outline=True, outline_levels={"Overview": 0, "Details": 1,
                                                                              "Annex": 0})
    doc = _parse(tmp_path / "o.pdf")
    outline = json.loads(doc.metadata["outline"])
    assert outline == [{"title": "Overview", "level": 1, "page": 1}, {"title": "Details", "level": 2, "page": 1},
                       {"title": "Annex", "level": 1, "page": 2}]
    # one style for all three: by font they would all be level 1; the outline nests "Details"
    assert [(b.text, b.level, b.page, b.heading_path) for b in doc.blocks if b.kind == "title"] == [
        ("Overview", 1, 1, ()), ("Details", 2, 1, ("Overview",)), ("Annex", 1, 2, ())]
    assert next(b for b in doc.blocks if b.text == "Body of the details.").heading_path == ("Overview", "Details")


def test_figure_with_caption_has_a_box(tmp_path: Path) -> None:
    items = [("h1", "Results"), ("p", "The chart below shows the growth."), ("img", ""),
             ("cap", "Figure 3: Growth of the harbor trade."), ("p", "After the figure.")]
    make_styled_pdf(tmp_path / "f.pdf", items)
    doc = _parse(tmp_path / "f.pdf")
    assert [b.kind for b in doc.blocks] == ["title", "text", "figure", "text"]
    figure = doc.blocks[2]
    assert figure.text == "Figure 3: Growth of the harbor trade." and figure.meta["caption"] == figure.text
    assert figure.heading_path == ("Results",)
    [(page, box)] = figure.boxes
    before, after = doc.blocks[1].boxes[0][1], doc.blocks[3].boxes[0][1]
    assert page == 1 and before.bottom <= box.top and box.bottom <= after.top
    assert box.bottom - box.top >= 40 * MM  # the picture (40 mm tall) and its caption
    assert box.left <= 40 * MM + 1 and box.right >= 100 * MM - 1


def test_numbering_levels() -> None:
    assert numbering_level("1. Introduction") == 1
    assert numbering_level("1.2 Scope") == 2
    assert numbering_level("4.1.3 Limits of the method") == 3
    assert numbering_level("Chapter 3 The Harbor") == 1
    assert numbering_level("第三章 总则") == 1
    assert numbering_level("第二节 范围") == 2
    assert numbering_level("Harbor trade grew.") is None


@pytest.mark.skipif(not CJK_FONT.exists(), reason="needs the WenQuanYi Zen Hei font")
def test_chinese_chapter_headings(tmp_path: Path) -> None:
    items = [("h1", "第一章 总则"), ("p", "本规定适用于港口的全部仓库和码头。"), ("h2", "第一节 范围"),
             ("p", "仓库管理员负责记录每日的进出货物。"), ("h1", "第二章 附则")]
    make_styled_pdf(tmp_path / "zh.pdf", items, font_file=str(CJK_FONT))
    doc = _parse(tmp_path / "zh.pdf")
    assert [(b.text, b.level) for b in doc.blocks if b.kind == "title"] == [
        ("第一章 总则", 1), ("第一节 范围", 2), ("第二章 附则", 1)]
    body = next(b for b in doc.blocks if b.text.startswith("仓库"))
    assert body.text == "仓库管理员负责记录每日的进出货物。" and body.heading_path == ("第一章 总则", "第一节 范围")


def test_label_value_lines_are_read_row_by_row_not_as_columns(tmp_path: Path) -> None:
    from fpdf import FPDF

    pairs = [("Name:", "Copper Lantern Ltd"), ("Address:", "3 Harbor Road"), ("Phone:", "555 0199"),
             ("Contact:", "Violet Meadow"), ("Since:", "1999"), ("Status:", "Active")]
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", "", 11)
    for i, (label, value) in enumerate(pairs):
        pdf.text(20, 30 + 10 * i, label)
        pdf.text(90, 30 + 10 * i, value)
    pdf.output(str(tmp_path / "form.pdf"))
    doc = _parse(tmp_path / "form.pdf")
    text = " ".join(b.text for b in doc.blocks)
    assert text == " ".join(f"{label} {value}" for label, value in pairs)
