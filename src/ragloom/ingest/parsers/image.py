"""Image files (PNG, JPEG, TIFF) read by OCR; each frame of a multi-page TIFF is a page.

Pages are measured in pixels (``scale=1.0``): a box is where the text is on
the picture as stored. Titles found by the reader open sections, so the
blocks carry heading paths across pages.
"""

from __future__ import annotations

import io
import logging
import warnings

from PIL import Image, ImageSequence, UnidentifiedImageError

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.ocr_base import PageReader
from ragloom.ingest.parsers.common import HeadingTracker

log = logging.getLogger(__name__)

PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
MAX_PAGES = 2000


def _default_reader() -> PageReader:
    from ragloom.ingest.ocr import default_page_reader

    reader = default_page_reader()
    if reader is None:
        raise MissingDependencyError("rapidocr")
    return reader


class ImageParser:
    """Blocks of an image file read by a :class:`PageReader` (the built-in OCR by default).

    Raises :class:`ParseError` when the image is corrupt or holds no readable
    text, :class:`MissingDependencyError` when no OCR engine is installed.
    """

    def __init__(self, reader: PageReader | None = None) -> None:
        self._reader = reader

    @property
    def reader(self) -> PageReader:
        if self._reader is None:
            self._reader = _default_reader()
        return self._reader

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        image = _open(data, filename)
        blocks: list[Block] = []
        sizes: dict[int, tuple[float, float]] = {}
        try:
            for number, frame in enumerate(ImageSequence.Iterator(image), start=1):
                if number > MAX_PAGES:
                    raise ParseError(f"{filename}: more than {MAX_PAGES} pages in one image file")
                page = _decoded(frame, filename, number)
                sizes[number] = (float(page.width), float(page.height))
                blocks.extend(self.reader.read_page(page, page=number, scale=1.0))
        except (OSError, ValueError, EOFError) as exc:
            raise ParseError(f"{filename}: corrupt image: a page cannot be read ({exc})") from exc
        if not any(b.text.strip() for b in blocks):
            raise ParseError(f"{filename}: no text was found in the image (OCR read nothing)")
        _heading_paths(blocks)
        meta = {"ocr": self.reader.name, "image_format": image.format or ""}
        return ParsedDocument(blocks=blocks, page_count=len(sizes), page_sizes=sizes, metadata=meta)


def _open(data: bytes, filename: str) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ParseError(f"{filename}: the image is too large to read ({exc})") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise ParseError(f"{filename}: corrupt image: it cannot be decoded ({exc})") from exc
    return image


def _decoded(frame: Image.Image, filename: str, number: int) -> Image.Image:
    """One frame, fully decoded and detached from the file (EXIF rotation applied)."""
    from PIL import ImageOps

    try:
        frame.load()
        return ImageOps.exif_transpose(frame.copy()) or frame.copy()
    except (OSError, ValueError, SyntaxError) as exc:
        raise ParseError(f"{filename}: corrupt image: page {number} cannot be decoded ({exc})") from exc


def _heading_paths(blocks: list[Block]) -> None:
    headings = HeadingTracker()
    for block in blocks:
        if block.kind == "title":
            block.heading_path = headings.title(block.text, block.level or 1)
        else:
            block.heading_path = headings.path
