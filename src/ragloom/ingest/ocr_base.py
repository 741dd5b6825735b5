"""The meeting point of the PDF parser and the OCR engines.

A PDF page without a usable text layer, or an image file, is rendered to a
picture and handed to a :class:`PageReader`, which returns blocks whose boxes
are already converted to PDF points (pixels / ``scale``, top-left origin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragloom.ingest.blocks import Block

if TYPE_CHECKING:
    from PIL.Image import Image

OCR_DPI = 200  # render pages at 200 dpi for OCR (MODELS.md)


@runtime_checkable
class PageReader(Protocol):
    """Reads one page image.

    ``scale`` is pixels per PDF point (``dpi / 72`` for a rendered page, ``1.0``
    for an image file measured in pixels). The reader detects and undoes page
    rotation itself, and returns blocks in reading order (titles, text lines
    grouped into paragraphs, tables with ``Block.table`` and ``Block.html``),
    each with one box on ``page``. An empty list means no text was found.
    Raises ``ParseError`` only when the image cannot be read at all.
    """

    name: str

    def read_page(self, image: Image, *, page: int, scale: float) -> list[Block]: ...
