"""Image files (PNG, JPEG, TIFF) read by OCR; each frame of a multi-page TIFF is a page.

Pages are measured in pixels: a box is where the text is on the picture as
stored. Titles found by the reader open sections, so the blocks carry heading
paths across pages.

Limits: a file of more than ``max_pages`` frames fails at once. A page of more
than ``max_page_pixels`` pixels is read at a lower resolution (the reader gets
``scale`` < 1, so boxes stay in the stored picture's pixels); a JPEG is then
decoded at a reduced size directly, other formats are decoded whole only up to
``DECODE_FACTOR`` times the limit and refused beyond it.
"""

from __future__ import annotations

import io
import logging
import struct
import warnings

from PIL import Image, ImageSequence, UnidentifiedImageError

from ragloom.errors import LimitExceededError, MissingDependencyError, ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, exceeded, limits
from ragloom.ingest.ocr_base import PageReader
from ragloom.ingest.parsers.bounds import render_scale
from ragloom.ingest.parsers.common import HeadingTracker

log = logging.getLogger(__name__)

PNG = "image/png"
JPEG = "image/jpeg"
TIFF = "image/tiff"
DECODE_FACTOR = 4  # a non-JPEG page of up to this many times max_page_pixels is decoded, then reduced
_SWAPPING_ORIENTATIONS = {5, 6, 7, 8}  # EXIF orientations that turn the picture by 90 degrees
# what Pillow's format plugins raise on damaged data, besides their own errors (a TIFF without its size tags
# raises TypeError, a bad tag table KeyError or struct.error, ...)
_CORRUPT = (OSError, ValueError, EOFError, SyntaxError, TypeError, KeyError, IndexError, struct.error,
            ZeroDivisionError)


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
        max_pages = limits().max_pages
        try:
            count = getattr(image, "n_frames", 1)
        except _CORRUPT as exc:
            raise ParseError(f"{filename}: corrupt image: its pages cannot be counted ({exc})") from exc
        if count > max_pages:
            raise LimitExceededError(f"{filename}: {exceeded('max_pages', 'pages', max_pages, count).message}")
        frames = ImageSequence.Iterator(image)
        number = 0
        while True:
            checkpoint()
            try:
                frame = next(frames)
            except StopIteration:
                break
            except _CORRUPT as exc:
                raise ParseError(f"{filename}: corrupt image: page {number + 1} cannot be read ({exc})") from exc
            number += 1
            if number > max_pages:  # n_frames said fewer
                raise LimitExceededError(f"{filename}: {exceeded('max_pages', 'pages', max_pages).message}")
            page, size, scale = _decoded(frame, filename, number)
            sizes[number] = size
            try:
                blocks.extend(self.reader.read_page(page, page=number, scale=scale))
            except (OSError, ValueError, EOFError) as exc:
                raise ParseError(f"{filename}: corrupt image: page {number} cannot be read ({exc})") from exc
        if not any(b.text.strip() for b in blocks):
            refusal = getattr(self.reader, "refusal", None)
            if refusal:
                raise ParseError(f"{filename}: {refusal}")
            raise ParseError(f"{filename}: no text was found in the image (OCR read nothing)")
        _heading_paths(blocks)
        meta = {"ocr": self.reader.name, "image_format": image.format or ""}
        return ParsedDocument(blocks=blocks, page_count=len(sizes), page_sizes=sizes, metadata=meta)


def _open(data: bytes, filename: str) -> Image.Image:
    """The image with its header read; pages are decoded one by one by :func:`_decoded`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # sizes are checked per page
            return Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:  # over Pillow's own hard limit
        raise LimitExceededError(f"{filename}: the image is too large to decode ({exc}; RAGLOOM_MAX_PAGE_PIXELS "
                                 "lowers the resolution only of images Pillow agrees to open)") from exc
    except (UnidentifiedImageError, *_CORRUPT) as exc:
        raise ParseError(f"{filename}: corrupt image: it cannot be decoded ({exc})") from exc


def _decoded(frame: Image.Image, filename: str, number: int) -> tuple[Image.Image, tuple[float, float], float]:
    """One frame decoded and detached from the file (EXIF rotation applied), at most ``max_page_pixels``
    pixels: ``(picture, (width, height) as stored and turned upright, scale of the picture to that size)``."""
    from PIL import ImageOps

    limit = limits().max_page_pixels
    width, height = frame.size
    try:
        turned = frame.getexif().get(0x0112) in _SWAPPING_ORIENTATIONS
        if width * height > limit:
            if frame.format == "JPEG":
                scale = render_scale(width, height, 1.0, limit)
                frame.draft(frame.mode, (max(1, int(width * scale)), max(1, int(height * scale))))
            elif width * height > DECODE_FACTOR * limit:
                raise LimitExceededError(
                    f"{filename}: page {number} is {width:,} x {height:,} = {width * height:,} pixels; pictures of "
                    f"more than {DECODE_FACTOR} x {limit:,} pixels are not decoded (RAGLOOM_MAX_PAGE_PIXELS)")
        frame.load()
        page = _fit(frame, limit)
        page = ImageOps.exif_transpose(page) or page
    except _CORRUPT as exc:
        raise ParseError(f"{filename}: corrupt image: page {number} cannot be decoded ({exc})") from exc
    size = (float(height), float(width)) if turned else (float(width), float(height))
    return page, size, page.width / size[0]


def _fit(frame: Image.Image, limit: int) -> Image.Image:
    """A detached copy of a decoded frame, reduced to at most ``limit`` pixels."""
    if frame.width * frame.height <= limit:
        return frame.copy()
    scale = render_scale(frame.width, frame.height, 1.0, limit)
    source = frame.convert("L") if frame.mode in ("1", "P") else frame
    size = (max(1, int(frame.width * scale)), max(1, int(frame.height * scale)))
    log.info("image page of %d x %d pixels read at %d x %d (RAGLOOM_MAX_PAGE_PIXELS)", *frame.size, *size)
    return source.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)


def _heading_paths(blocks: list[Block]) -> None:
    headings = HeadingTracker()
    for block in blocks:
        if block.kind == BlockKind.TITLE:
            block.heading_path = headings.title(block.text, block.level or 1)
        else:
            block.heading_path = headings.path
