"""The PDF text-layer parser: pages, boxes, reading order, headings."""

from __future__ import annotations

import random
from pathlib import Path

from ragloom.ingest.parsers import PdfParser, parse_document, pdf_page_count
from tests.ingest.docgen import make_pdf, paragraph

MARKER = "The violet zeppelin landed quietly beside the observatory."


def _three_pages(tmp_path: Path) -> bytes:
    rng = random.Random(3)
    pages = [
        ["# Field Report", "## Findings", paragraph(rng, 5), paragraph(rng, 4)],
        [paragraph(rng, 3), MARKER, paragraph(rng, 6)],
        ["## Appendix", paragraph(rng, 4)],
    ]
    make_pdf(tmp_path / "r.pdf", pages)
    return (tmp_path / "r.pdf").read_bytes()


def test_distinctive_sentence_on_page_two_has_page_and_box(tmp_path: Path) -> None:
    doc = parse_document(_three_pages(tmp_path), "r.pdf")
    assert doc.page_count == 3
    width, height = doc.page_sizes[2]
    assert round(width) == 595 and round(height) == 842  # A4 in points
    [block] = [b for b in doc.blocks if MARKER in b.text]
    assert block.text == MARKER and block.page == 2
    [(page, box)] = block.boxes
    assert page == 2
    assert 0 <= box.left < box.right <= width and 0 <= box.top < box.bottom <= height
    # top-left origin: the sentence sits in the upper part of the page, below the first paragraph
    before = next(b for b in doc.blocks if b.page == 2)
    assert before is not block and before.boxes[0][1].bottom <= box.top
    assert box.top < height / 2
    assert block.positions() == [(2, box.left, box.right, box.top, box.bottom)]


def test_text_in_reading_order_and_pages_non_decreasing(tmp_path: Path) -> None:
    doc = parse_document(_three_pages(tmp_path), "r.pdf")
    pages = [b.page for b in doc.blocks]
    assert pages == sorted(pages) and set(pages) == {1, 2, 3}
    texts = [b.text for b in doc.blocks]
    assert texts.index("Field Report") < texts.index("Findings") < texts.index(MARKER) < texts.index("Appendix")
    for b in doc.blocks:  # boxes on one page go down the page in order
        assert all(0 <= bx.top < bx.bottom for _, bx in b.boxes)


def test_heading_levels_from_font_size(tmp_path: Path) -> None:
    doc = parse_document(_three_pages(tmp_path), "r.pdf")
    titles = {b.text: b for b in doc.blocks if b.kind == "title"}
    assert set(titles) == {"Field Report", "Findings", "Appendix"}
    assert titles["Field Report"].level == 1 and titles["Findings"].level == 2
    assert titles["Appendix"].heading_path == ("Field Report",)
    marker = next(b for b in doc.blocks if b.text == MARKER)
    assert marker.kind == "text" and marker.heading_path == ("Field Report", "Findings")


def test_paragraph_wrapping_lines_become_one_block(tmp_path: Path) -> None:
    long = " ".join(["Lantern copper harbor signal meadow quarry."] * 12)
    make_pdf(tmp_path / "w.pdf", [[long, "Short closing line."]])
    doc = parse_document((tmp_path / "w.pdf").read_bytes(), "w.pdf")
    assert [b.text for b in doc.blocks] == [long, "Short closing line."]


def test_paragraph_continued_over_a_page_break_keeps_one_box_per_page(tmp_path: Path) -> None:
    make_pdf(tmp_path / "c.pdf", [["The first half of this sentence runs on to"], ["the next page and ends here."]])
    doc = parse_document((tmp_path / "c.pdf").read_bytes(), "c.pdf")
    [block] = doc.blocks
    assert block.text == "The first half of this sentence runs on to the next page and ends here."
    assert [p for p, _ in block.boxes] == [1, 2] and block.page == 1


def test_page_range_and_page_count(tmp_path: Path) -> None:
    data = _three_pages(tmp_path)
    assert pdf_page_count(data) == 3
    doc = PdfParser(first_page=2, last_page=2).parse(data, "r.pdf")
    assert {b.page for b in doc.blocks} == {2} and list(doc.page_sizes) == [2]


def test_a_50_page_pdf_gives_every_chapter(tmp_path: Path) -> None:
    """Speed is measured by ``benchmarks/parse.py`` (goal >= 20 pages/s), not here."""
    rng = random.Random(5)
    make_pdf(tmp_path / "big.pdf", [[f"# Chapter {i}"] + [paragraph(rng, 6) for _ in range(6)] for i in range(50)])
    doc = parse_document((tmp_path / "big.pdf").read_bytes(), "big.pdf")
    assert doc.page_count == 50 and len([b for b in doc.blocks if b.kind == "title"]) == 50
