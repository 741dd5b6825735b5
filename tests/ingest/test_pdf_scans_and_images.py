"""Scanned pages go to the OCR reader page by page; page images for previews; page ranges."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from ragloom.errors import ParseError
from ragloom.ingest.blocks import BBox, Block
from ragloom.ingest.ocr_base import OCR_DPI, PageReader
from ragloom.ingest.parsers import PdfParser
from ragloom.ingest.parsers.pdf import render_page_png, render_pages_png
from ragloom.ingest.parsers.pdf_layout import make_frame
from ragloom.ingest.parsers.pdf_pages import PageData
from tests.ingest.docgen import make_mixed_scan_pdf, make_rotated_pdf, make_running_pdf, paragraph


class FixedReader:
    """A test double of our PageReader interface: one fixed block per page, calls recorded."""

    name = "fixed"

    def __init__(self) -> None:
        self.calls: list[tuple[int, tuple[int, int], float]] = []

    def read_page(self, image: Image.Image, *, page: int, scale: float) -> list[Block]:
        self.calls.append((page, image.size, scale))
        return [Block(text=f"Scanned words of page {page}.", page=page, boxes=[(page, BBox(80, 60, 300, 75))])]


PAGES = [("text", "Typed words on page one."), ("scan", "Scanned words of page 2."),
         ("text", "Typed words on page three.")]


def test_scanned_page_is_read_by_the_ocr_reader_in_page_order(tmp_path: Path) -> None:
    make_mixed_scan_pdf(tmp_path / "mixed.pdf", PAGES)
    reader = FixedReader()
    assert isinstance(reader, PageReader)
    doc = PdfParser(ocr=reader).parse((tmp_path / "mixed.pdf").read_bytes(), "mixed.pdf")
    assert [(b.text, b.page) for b in doc.blocks] == [
        ("Typed words on page one.", 1), ("Scanned words of page 2.", 2), ("Typed words on page three.", 3)]
    [(page, size, scale)] = reader.calls
    assert page == 2 and scale == OCR_DPI / 72
    assert abs(size[0] - 595.28 * OCR_DPI / 72) <= 1 and abs(size[1] - 841.89 * OCR_DPI / 72) <= 1
    assert json.loads(doc.metadata["ocr_pages"]) == [2]
    assert doc.blocks[1].boxes == [(2, BBox(80, 60, 300, 75))]


def test_without_ocr_scanned_pages_give_nothing_and_a_scan_only_pdf_fails(tmp_path: Path) -> None:
    make_mixed_scan_pdf(tmp_path / "mixed.pdf", PAGES)
    doc = PdfParser().parse((tmp_path / "mixed.pdf").read_bytes(), "mixed.pdf")
    assert [b.page for b in doc.blocks] == [1, 3] and "ocr_pages" not in doc.metadata
    make_mixed_scan_pdf(tmp_path / "scan.pdf", [("scan", "Only a picture.")])
    with pytest.raises(ParseError, match="no text layer"):
        PdfParser().parse((tmp_path / "scan.pdf").read_bytes(), "scan.pdf")


def test_scan_detection_counts_garbage_glyphs() -> None:
    frame = make_frame((0, 0, 595, 842), 0, 0)
    assert PageData(1, frame, [], usable=0).needs_ocr
    assert PageData(1, frame, [], usable=100, garbage=200).needs_ocr  # private-use / broken font
    assert not PageData(1, frame, [], usable=500, garbage=3).needs_ocr
    assert PageData(1, frame, [], images=[(0, 0, 595, 842)], usable=2).needs_ocr  # a scan with a page number
    assert not PageData(1, frame, [], usable=8).needs_ocr  # a short page without a picture


def test_page_images_as_displayed(tmp_path: Path) -> None:
    make_mixed_scan_pdf(tmp_path / "m.pdf", PAGES)
    data = (tmp_path / "m.pdf").read_bytes()
    image = Image.open(io.BytesIO(render_page_png(data, 1, dpi=72)))
    assert image.format == "PNG" and _near(image.size, (595.28, 841.89))
    rendered = list(render_pages_png(data, [2, 3], dpi=36))
    assert [n for n, _ in rendered] == [2, 3]
    assert all(_near(Image.open(io.BytesIO(png)).size, (297.64, 420.95)) for _, png in rendered)
    make_rotated_pdf(tmp_path / "r.pdf", ["Landscape page."])
    rotated = Image.open(io.BytesIO(render_page_png((tmp_path / "r.pdf").read_bytes(), 1, dpi=72)))
    assert _near(rotated.size, (841.89, 595.28))  # /Rotate applied, matching the block boxes


def _near(size: tuple[int, int], expected: tuple[float, float]) -> bool:
    return all(abs(a - b) <= 1 for a, b in zip(size, expected, strict=True))


def test_page_range_task_keeps_absolute_pages(tmp_path: Path) -> None:
    import random

    rng = random.Random(9)
    bodies = [paragraph(rng, 2) for _ in range(30)]
    make_running_pdf(tmp_path / "long.pdf", [[b] for b in bodies], header="Harbor Yearbook", footer="Draft")
    data = (tmp_path / "long.pdf").read_bytes()
    doc = PdfParser(first_page=13, last_page=24).parse(data, "long.pdf")
    assert [(b.text, b.page) for b in doc.blocks] == [(bodies[n - 1], n) for n in range(13, 25)]
    assert sorted(doc.page_sizes) == list(range(13, 25)) and doc.page_count == 30
    assert all(b.boxes[0][0] == b.page for b in doc.blocks)
