"""A scanned PDF (pages that are only pictures of text) is read by OCR, page by page, with positions."""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

from ragloom.schemas.datasets import KBCreate
from ragloom.service.search.retrieval import search
from tests.test_retrieval import _drain

pytestmark = pytest.mark.slow
SANS = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def scanned_page(lines: list[str], path: Path) -> None:
    """An A4 page at 200 dpi holding ``lines`` of text as pixels only."""
    image = Image.new("L", (1654, 2339), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(SANS, 40)
    for i, line in enumerate(lines):
        draw.text((150, 300 + 90 * i), line, font=font, fill=0)
    image.save(path)


def test_mixed_text_and_scanned_pdf_is_searchable_with_page_positions(ctx, principal, tmp_path: Path) -> None:
    from ragloom.service import knowledgebases
    from ragloom.service.documents import catalog

    scan = tmp_path / "scan.png"
    scanned_page(["Inspection report", "The left hydraulic valve leaked at 140 bar.",
                  "It was replaced on the second of May."], scan)
    pdf = FPDF(format="A4")
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 6, "Cover page. This report covers the annual inspection of the press line.")
    pdf.add_page()
    pdf.image(str(scan), x=0, y=0, w=210, h=297)
    path = tmp_path / "report.pdf"
    pdf.output(str(path))

    with ctx.db.session() as s:
        knowledgebases.create(ctx, s, principal=principal, spec=KBCreate(name="scans"))
    with ctx.db.session() as s:
        (doc,) = catalog.add_documents(ctx, s, principal=principal, kb_id="scans",
                                         uploads=[catalog.Upload("report.pdf", path.read_bytes())])
        doc_id = doc.id
    _drain(ctx, principal, "scans", [doc_id])
    with ctx.db.session() as s:
        doc = catalog.get(s, principal=principal, kb_id="scans", doc_id=doc_id)
        assert doc.status == "done", doc.message
    question = "which valve leaked and at what pressure"
    hit = search(ctx, principal=principal, kb_ids=["scans"], question=question).chunks[0]
    assert "valve leaked at 140 bar" in hit.record.content  # OCR may misread a letter elsewhere
    page2 = [p for p in hit.record.positions if p[0] == 2]
    assert page2, hit.record.positions
    _, left, right, top, bottom = page2[0]
    # the text was drawn from x = 150 px, y = 300..480 px at 200 dpi: 54 pt, 108..173 pt
    assert 40 < left < 70 and top > 90 and bottom < 400 and right <= 595.3
