"""PDF text layer with pypdfium2: blocks with page numbers and boxes.

Characters come from pdfium's text page (which already breaks the stream into
lines); a line is cut again at wide horizontal gaps. Lines are grouped into
paragraph blocks by geometry (same size, vertical gap under a threshold learnt
from the document's own line spacing, horizontal overlap). Lines set larger
than the body text become ``title`` blocks, ranked by size into levels.
Boxes are PDF points with a top-left origin; a block running over a page break
keeps one box per page. Page numbers and running headers/footers are dropped.
"""

from __future__ import annotations

import logging
from collections import Counter

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.pdf_layout import Line, group_paragraphs, page_lines

log = logging.getLogger(__name__)


def _open(data: bytes, filename: str) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = pdfium_c.FPDF_GetLastError()
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise ParseError(f"{filename}: the PDF is encrypted and needs a password") from exc
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise ParseError(f"{filename}: the PDF uses an unsupported security handler") from exc
        raise ParseError(f"{filename}: corrupt PDF: pdfium cannot load it ({exc})") from exc


def pdf_page_count(data: bytes, filename: str = "document.pdf") -> int:
    """Number of pages (for splitting a large PDF into page-range tasks)."""
    doc = _open(data, filename)
    try:
        return len(doc)
    finally:
        doc.close()


class PdfParser:
    """Blocks of a PDF's text layer, optionally for pages ``first_page..last_page`` (1-based)."""

    def __init__(self, first_page: int = 1, last_page: int | None = None) -> None:
        self.first_page = max(1, first_page)
        self.last_page = last_page

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        doc = _open(data, filename)
        try:
            count = len(doc)
            if count == 0:
                raise ParseError(f"{filename}: the PDF has no pages")
            last = min(count, self.last_page or count)
            lines, sizes = self._read_pages(doc, filename, range(self.first_page, last + 1))
            title = (doc.get_metadata_dict().get("Title") or "").strip() or None
        finally:
            doc.close()
        blocks = _blocks_from_lines(lines, sizes)
        if not blocks:
            raise ParseError(f"{filename}: the PDF has no text layer; OCR is not available yet")
        return ParsedDocument(blocks=blocks, title=title, page_count=count, page_sizes=sizes)

    @staticmethod
    def _read_pages(
        doc: pdfium.PdfDocument, filename: str, pages: range
    ) -> tuple[list[Line], dict[int, tuple[float, float]]]:
        lines: list[Line] = []
        sizes: dict[int, tuple[float, float]] = {}
        for number in pages:
            try:
                page = doc[number - 1]
                left, bottom, right, top = page.get_bbox()  # crop box ∩ media box
                sizes[number] = (right - left, top - bottom)
                textpage = page.get_textpage()
            except pdfium.PdfiumError as exc:
                raise ParseError(f"{filename}: corrupt PDF: page {number} cannot be read ({exc})") from exc
            try:
                lines.extend(page_lines(textpage, number, (left, top, right - left, top - bottom)))
            finally:
                textpage.close()
                page.close()
        return lines, sizes


def _blocks_from_lines(lines: list[Line], sizes: dict[int, tuple[float, float]]) -> list[Block]:
    lines = _drop_running_lines(lines, sizes)
    if not lines:
        return []
    body = _body_size(lines)
    paragraphs = group_paragraphs(lines)
    title_sizes = sorted(
        {round(p.size, 0) for p in paragraphs if _is_title(p.text, p.size, body, len(p.lines))},
        reverse=True,
    )
    headings = HeadingTracker()
    blocks: list[Block] = []
    for para in paragraphs:
        boxes = para.boxes()
        if _is_title(para.text, para.size, body, len(para.lines)):
            level = min(6, title_sizes.index(round(para.size, 0)) + 1)
            block = headings.title_block(para.text, level, page=boxes[0][0], boxes=boxes)
        else:
            block = Block(text=para.text, heading_path=headings.path, page=boxes[0][0], boxes=boxes)
        blocks.append(block)
    return blocks


def _body_size(lines: list[Line]) -> float:
    weights: Counter[float] = Counter()
    for line in lines:
        weights[round(line.size, 0)] += len(line.text)
    return weights.most_common(1)[0][0]


def _is_title(text: str, size: float, body: float, n_lines: int) -> bool:
    return size >= body * 1.15 and n_lines <= 3 and len(text) <= 200 and any(c.isalpha() for c in text)


def _running_key(line: Line) -> str:
    return "".join("#" if c.isdigit() else c for c in line.text.lower()).strip()


def _drop_running_lines(lines: list[Line], sizes: dict[int, tuple[float, float]]) -> list[Line]:
    """Drop page numbers and headers/footers repeated on many pages (top/bottom 8%)."""
    def in_margin(line: Line) -> bool:
        height = sizes[line.page][1]
        return line.bottom < 0.08 * height or line.top > 0.92 * height

    margin = [ln for ln in lines if in_margin(ln)]
    pages_of: dict[str, set[int]] = {}
    for ln in margin:
        pages_of.setdefault(_running_key(ln), set()).add(ln.page)
    n_pages = len(sizes)
    repeated = {k for k, pages in pages_of.items() if len(pages) >= 3 and len(pages) >= n_pages / 2}
    kept = []
    for ln in lines:
        key = _running_key(ln)
        is_number = key.replace("page", "").replace("of", "").replace("/", "").replace("#", "").strip() == ""
        if in_margin(ln) and (key in repeated or is_number):
            continue
        kept.append(ln)
    return kept
