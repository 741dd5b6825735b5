"""PDF parser: text layer with pypdfium2, tables with pdfplumber and by alignment, scans through an OCR reader.

Per page (``pdf_pages``): lines with word boxes in the page's reading frame,
without the page's furniture (``pdf_furniture``: ``rotated_margin_text``,
``watermark``, ``line_number``, ``vertical_stamp``), images, vector path boxes,
a hint of ruled tables, and whether the text layer is usable. Across the task's
pages: running headers/footers and page numbers are removed
(``pdf_order.drop_running``, looking at neighbouring pages too). What is left
out is counted in ``ParsedDocument.removed`` (characters by reason: the above and
``running_header``, ``running_footer``, ``page_number``). On each page ruled tables are found
(``pdf_tables.TableFinder``, widened to their rules), then unruled ones in the
text left (``pdf_tables.find_unruled``); a word inside a table belongs to the
table only, so no text is lost or repeated. Figures are pictures, or vector
drawings a figure caption names (``pdf_order.vector_figures``). Each page is put
in reading order column by column with its tables and figures
(``pdf_order.order_page``), lines are grouped into paragraphs (numbered headings
and captions stand alone), captions join their figures or stay beside their
tables, tables split by a page break are joined (``pdf_paragraphs``), then
headings, levels and lists are decided (``pdf_headings``).

Boxes are PDF points on the page *as displayed* (``/Rotate`` applied), top-left
origin; ``ParsedDocument.page_sizes`` holds the displayed sizes and
``metadata["page_rotation"]`` the ``/Rotate`` of each page (JSON). A page
without a usable text layer is rendered at ``OCR_DPI`` (lower for a page too
large for ``max_page_pixels``) and read by the ``ocr`` :class:`PageReader`
when one is given. Page numbers are absolute even when only
``first_page..last_page`` are parsed. A document of more than ``max_pages``
pages fails at once, whatever range is asked; the task is checked
(:func:`ragloom.ingest.guard.checkpoint`) before each page is read, rendered
for OCR or searched for tables.
"""

from __future__ import annotations

import json
import logging
from collections import Counter

import pypdfium2 as pdfium

from ragloom.errors import LimitExceededError, ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, exceeded, limits
from ragloom.ingest.ocr_base import OCR_DPI, PageReader
from ragloom.ingest.parsers.pdf_headings import OutlineEntry, make_blocks, read_outline
from ragloom.ingest.parsers.pdf_layout import Frame, Line, Word
from ragloom.ingest.parsers.pdf_order import MIN_FIGURE_SIDE, Region, drop_running, order_page, vector_figures
from ragloom.ingest.parsers.pdf_pages import PageData, read_page
from ragloom.ingest.parsers.pdf_paragraphs import Item, attach_captions, group, merge_split_tables
from ragloom.ingest.parsers.pdf_render import open_pdf, render_page, render_page_png, render_pages_png
from ragloom.ingest.parsers.pdf_tables import TableFinder, find_unruled, looks_tabular

__all__ = ["PdfParser", "check_page_count", "open_pdf", "pdf_page_count", "render_page_png", "render_pages_png"]

log = logging.getLogger(__name__)

CONTEXT_PAGES = 3  # neighbouring pages read to recognise running headers in a short page range


def pdf_page_count(data: bytes, filename: str = "document.pdf") -> int:
    """Number of pages (for splitting a large PDF into page-range tasks)."""
    doc = open_pdf(data, filename)
    try:
        return len(doc)
    finally:
        doc.close()


class PdfParser:
    """Blocks of a PDF, optionally for pages ``first_page..last_page`` (1-based, inclusive).

    ``ocr`` reads pages without a usable text layer; without it such pages give
    no blocks and a document without any text raises ``ParseError``.
    ``tables=False`` skips the (slower) ruled-table search.
    """

    def __init__(self, first_page: int = 1, last_page: int | None = None, *,
                 ocr: PageReader | None = None, tables: bool = True) -> None:
        self.first_page = max(1, first_page)
        self.last_page = last_page
        self.ocr = ocr
        self.tables = tables

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        doc = open_pdf(data, filename)
        try:
            count = len(doc)
            if count == 0:
                raise ParseError(f"{filename}: the PDF has no pages")
            check_page_count(count, filename)
            last = min(count, self.last_page or count)
            pages = [_read(doc, n, filename) for n in range(self.first_page, last + 1)]
            context = [_read(doc, n, filename) for n in _context_range(self.first_page, last, count)]
            ocr_blocks = self._read_scans(doc, pages)
            outline = read_outline(doc)
            title = (doc.get_metadata_dict().get("Title") or "").strip() or None
        finally:
            doc.close()
        blocks, removed = self._blocks(data, pages, context, ocr_blocks, outline)
        if not any(b.text.strip() for b in blocks):
            refusal = getattr(self.ocr, "refusal", None)
            if refusal:
                raise ParseError(f"{filename}: the PDF has no text layer, and {refusal}")
            raise ParseError(f"{filename}: the PDF has no text layer and no OCR reader is configured "
                             "(install rapidocr)"
                             if self.ocr is None else f"{filename}: no text was found, not even by OCR")
        return ParsedDocument(
            blocks=blocks, title=title, page_count=count,
            page_sizes={p.number: p.frame.display for p in pages},
            metadata=_metadata(pages, outline, ocr_blocks), removed=removed,
        )

    def _read_scans(self, doc: pdfium.PdfDocument, pages: list[PageData]) -> dict[int, list[Block]]:
        if self.ocr is None:
            return {}
        out: dict[int, list[Block]] = {}
        for page in pages:
            if page.needs_ocr:
                checkpoint()
                image, scale = render_page(doc, page.number, OCR_DPI)
                out[page.number] = self.ocr.read_page(image, page=page.number, scale=scale)
                log.debug("page %d read by %s: %d blocks", page.number, self.ocr.name, len(out[page.number]))
        return out

    def _blocks(self, data: bytes, pages: list[PageData], context: list[PageData],
                ocr_blocks: dict[int, list[Block]], outline: list[OutlineEntry]) -> tuple[list[Block], dict[str, int]]:
        heights = {p.number: p.frame.size[1] for p in [*pages, *context]}
        running = drop_running({p.number: p.lines for p in pages if p.number not in ocr_blocks}, heights,
                               {p.number: p.lines for p in context})
        stream: list[Item] = []
        with TableFinder(data) as finder:
            for page in pages:
                if page.number in ocr_blocks:
                    stream += ocr_blocks[page.number]
                    continue
                checkpoint()
                tables = finder.find(page.number) if self.tables and looks_tabular(page.n_paths, page.frame.turn) \
                    else []
                stream += _page_stream(page, running.lines[page.number], tables, unruled=self.tables)
        items = group(stream)
        captions = attach_captions(items)
        merge_split_tables(items, heights)
        frames: dict[int, Frame] = {p.number: p.frame for p in pages}
        removed = Counter(running.removed)
        for page in pages:
            if page.number not in ocr_blocks:  # a page read by OCR: its text layer is not read
                removed.update(page.removed)
        return make_blocks(items, frames, outline, captions), dict(removed)


def check_page_count(count: int, filename: str) -> None:
    """``LimitExceededError`` naming ``max_pages`` when a document has more pages than it allows."""
    if count > limits().max_pages:
        error = exceeded("max_pages", "pages", limits().max_pages, count)
        raise LimitExceededError(f"{filename}: {error.message}")


def _read(doc: pdfium.PdfDocument, number: int, filename: str) -> PageData:
    checkpoint()
    return read_page(doc, number, filename)


def _context_range(first: int, last: int, count: int) -> list[int]:
    """Pages around a short range, read only to recognise running headers and footers."""
    if last - first + 1 >= 2 * CONTEXT_PAGES:
        return []
    before = range(max(1, first - CONTEXT_PAGES), first)
    after = range(last + 1, min(count, last + CONTEXT_PAGES) + 1)
    return [*before, *after]


def _page_stream(page: PageData, lines: list[Line], tables: list[Region], *, unruled: bool = True) -> list[Item]:
    """One page's lines, tables and figures in reading order.

    The words inside a table are the table's: they leave the page's lines (a line partly
    inside keeps its other words). Unruled tables are then looked for in what is left.
    """
    width, height = page.frame.size
    lines = _outside(lines, tables)
    if unruled:
        found = find_unruled(lines, width, page.number)
        if found:
            tables = [*tables, *found]
            lines = _outside(lines, found)
    figures = [
        Region(BlockKind.FIGURE, page.number, max(0.0, b[0]), max(0.0, b[1]), min(width, b[2]), min(height, b[3]))
        for b in page.images
        if b[2] - b[0] >= MIN_FIGURE_SIDE and b[3] - b[1] >= MIN_FIGURE_SIDE
        and (b[2] - b[0]) * (b[3] - b[1]) < 0.8 * width * height
    ]
    figures += vector_figures(page.paths, lines, [*tables, *figures], (width, height))
    items: list[Line | Region] = [*lines, *tables, *figures]
    return list(order_page(items, width))


def _outside(lines: list[Line], regions: list[Region]) -> list[Line]:
    """``lines`` without the words whose centre is inside one of ``regions``."""
    if not regions:
        return lines

    def inside(w: Word) -> bool:
        cx, cy = (w.left + w.right) / 2, (w.top + w.bottom) / 2
        return any(r.left - 2 <= cx <= r.right + 2 and r.top - 2 <= cy <= r.bottom + 2 for r in regions)

    out: list[Line] = []
    for ln in lines:
        words = [w for w in ln.words if not inside(w)]
        if len(words) == len(ln.words):
            out.append(ln)
        elif words:
            out.append(Line(page=ln.page, text=" ".join(w.text for w in words), left=min(w.left for w in words),
                            top=min(w.top for w in words), right=max(w.right for w in words),
                            bottom=max(w.bottom for w in words), size=ln.size, bold=ln.bold, words=words,
                            tag=ln.tag))
    return out


def _metadata(pages: list[PageData], outline: list[OutlineEntry], ocr_blocks: dict[int, list[Block]]) -> dict[str, str]:
    meta = {"page_rotation": json.dumps({str(p.number): p.frame.rotation for p in pages})}
    if any(p.frame.turn for p in pages):
        meta["text_direction"] = json.dumps({str(p.number): p.frame.turn for p in pages if p.frame.turn})
    if outline:
        meta["outline"] = json.dumps([{"title": e.title, "level": e.level, "page": e.page} for e in outline],
                                     ensure_ascii=False)
    if ocr_blocks:
        meta["ocr_pages"] = json.dumps(sorted(ocr_blocks))
    return meta
