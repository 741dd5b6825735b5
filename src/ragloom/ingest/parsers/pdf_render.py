"""Page images of a PDF: PNG previews for the object store, PIL images for OCR.

Pages are rendered as displayed (``/Rotate`` applied), so image pixel ``(x, y)``
is PDF point ``(x, y) / scale`` in block boxes, where the scale is ``dpi / 72``
unless the page is so large that it would exceed ``max_page_pixels``: it is
then rendered at the lower resolution that fits (:func:`render_page` returns
the scale used). Pages are 1-based.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ragloom.errors import InvalidRequestError, ParseError
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import render_scale

if TYPE_CHECKING:
    from PIL.Image import Image

log = logging.getLogger(__name__)

PREVIEW_DPI = 110


def open_pdf(data: bytes, filename: str) -> pdfium.PdfDocument:
    """Load a PDF; ``ParseError`` says whether it is encrypted, uses unknown security or is corrupt."""
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = pdfium_c.FPDF_GetLastError()
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise ParseError(f"{filename}: the PDF is encrypted and needs a password") from exc
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise ParseError(f"{filename}: the PDF uses an unsupported security handler") from exc
        raise ParseError(f"{filename}: corrupt PDF: pdfium cannot load it ({exc})") from exc


def render_page(doc: pdfium.PdfDocument, page: int, dpi: float) -> tuple[Image, float]:
    """Page ``page`` of an open document as an RGB PIL image, and the scale (pixels per point) used.

    The scale is ``dpi / 72``, lowered when the page would render to more than
    ``max_page_pixels`` (a 200 x 200 inch page at 110 dpi is 484 million
    pixels); boxes read from the image must be divided by the returned scale.
    """
    if not 1 <= page <= len(doc):
        raise InvalidRequestError(f"page {page} is out of range 1..{len(doc)}")
    pdf_page = doc[page - 1]
    try:
        scale = render_scale(pdf_page.get_width(), pdf_page.get_height(), dpi / 72)
        if scale < dpi / 72:
            log.info("page %d of %.0f x %.0f pt rendered at %.1f dpi, not %.0f (RAGLOOM_MAX_PAGE_PIXELS)",
                     page, pdf_page.get_width(), pdf_page.get_height(), scale * 72, dpi)
        bitmap = pdf_page.render(scale=scale, may_draw_forms=True)
        return bitmap.to_pil().convert("RGB"), scale
    except pdfium.PdfiumError as exc:
        raise ParseError(f"page {page} cannot be rendered ({exc})") from exc
    finally:
        pdf_page.close()


def page_image(doc: pdfium.PdfDocument, page: int, dpi: float) -> Image:
    """Page ``page`` of an open document as an RGB PIL image at ``dpi`` (lower for a huge page: :func:`render_page`)."""
    return render_page(doc, page, dpi)[0]


def _png(image: Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()


def render_pages_png(data: bytes, pages: Iterable[int] | None = None, dpi: int = PREVIEW_DPI) -> Iterator[
        tuple[int, bytes]]:
    """PNG images of ``pages`` (default: every page), yielded as ``(page, png bytes)``.

    The document is opened once. Raises ``ParseError`` when the PDF cannot be
    loaded and ``InvalidRequestError`` for a page out of range.
    """
    doc = open_pdf(data, "document.pdf")
    try:
        for page in pages if pages is not None else range(1, len(doc) + 1):
            checkpoint()
            yield page, _png(page_image(doc, page, dpi))
    finally:
        doc.close()


def render_page_png(data: bytes, page: int, dpi: int = PREVIEW_DPI) -> bytes:
    """One page (1-based) as PNG bytes at ``dpi`` (110 dpi: an A4 page is about 910×1286 px)."""
    [(_, png)] = list(render_pages_png(data, [page], dpi))
    return png
