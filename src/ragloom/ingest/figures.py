"""Figures as chunks of their own: the picture, its caption, the text around it and the text inside it.

A parser marks a picture as a ``figure`` block (:class:`~ragloom.dataflow.BlockKind`): a PDF's figure
region (found from its caption or by the OCR layout model), a DOCX or PPTX picture, an HTML ``<img>``
with a ``data:`` URI. The file formats hold the picture's bytes (``Block.image``); a PDF's figure is
cropped from its page here. Each figure larger than an icon becomes a chunk of kind ``figure`` whose
text is, in order: the caption (or the picture's alt text), the description a vision model wrote (when
the workspace has one), the text read inside the picture by OCR, and the paragraphs just before and
after it — so a question about what the figure shows finds it like any text, and its citation shows the
picture (the chunk's image) and its region on the page.
"""

from __future__ import annotations

import io
import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from ragloom.dataflow import Block, BlockKind, Chunk, ChunkKind, ParsedDocument

log = logging.getLogger(__name__)

MIN_SIDE = 48  # pixels: a smaller picture is an icon, a bullet or a rule, not a figure
MAX_SIDE = 1600  # pixels: the stored picture's longer side at most (what a citation panel shows)
MAX_PIXELS = 40_000_000  # a picture decoding to more is not read (a decompression bomb)
MAX_FIGURES = 50  # figures per document part made into chunks (the first ones, in reading order)
MAX_CANDIDATES = 500  # pictures looked at for them (logos and icons are left out on the way)
CROP_DPI = 150
CONTEXT_CHARS = 300  # of the paragraph before and the one after
ORDER_OFFSET = 90_000  # a figure chunk's order: after the part's text chunks (see Job.order_base)
OCR_MIN_SIDE = 120  # pixels: a smaller figure is not worth an OCR pass
# the chunk methods whose chunks are not passages of a document: a picture file is one figure already, a
# tag set's and a Q&A file's rows are what they are
NO_FIGURE_METHODS = frozenset({"picture", "tag", "qa", "table"})
# the picture formats documents embed (never EPS, which Pillow hands to Ghostscript)
PICTURE_FORMATS = ("PNG", "JPEG", "GIF", "BMP", "TIFF", "WEBP", "ICO", "MPO")
# what Pillow's plugins raise on damaged data (a broken PNG chunk raises SyntaxError, a bad TIFF tag TypeError...)
CORRUPT_PICTURE = (OSError, ValueError, EOFError, SyntaxError, TypeError, KeyError, IndexError, struct.error,
                   ZeroDivisionError, MemoryError)


@dataclass(slots=True)
class Figure:
    """One figure of a document: its block, its picture as PNG and what was read of it."""

    block: Block
    png: bytes
    width: int
    height: int
    before: str = ""
    after: str = ""
    ocr_text: str = ""
    description: str = ""

    @property
    def caption(self) -> str:
        meta = self.block.meta
        text = meta.get("caption") or meta.get("alt") or self.block.text
        return "" if text.startswith("[image") else text.strip()

    def text(self) -> str:
        """The chunk's text: what the figure is (caption, description, its own words), then its context."""
        parts = [self.caption, self.description, self.ocr_text, self.before, self.after]
        return "\n".join(dict.fromkeys(p.strip() for p in parts if p and p.strip()))


def as_png(data: bytes) -> tuple[bytes, int, int] | None:
    """A picture file's bytes as a PNG no larger than :data:`MAX_SIDE` (its width and height), or None when
    it is not a picture Pillow reads, too large to decode, or an icon (under :data:`MIN_SIDE`)."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data), formats=PICTURE_FORMATS) as image:
            if image.width * image.height > MAX_PIXELS:
                return None
            if min(image.width, image.height) < MIN_SIDE:
                return None
            picture = image.convert("RGB")
    except CORRUPT_PICTURE:  # a damaged picture is left out; the document's text is read as usual
        return None
    picture.thumbnail((MAX_SIDE, MAX_SIDE))
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue(), picture.width, picture.height


def crop_pdf_figures(data: bytes, blocks: Sequence[Block]) -> dict[int, bytes]:
    """PNG crops of the PDF figure ``blocks`` (their first box), by the block's index in ``blocks``."""
    from ragloom.ingest.parsers.pdf_render import open_pdf, render_page

    wanted = [(i, b) for i, b in enumerate(blocks) if b.boxes and b.image is None]
    if not wanted:
        return {}
    out: dict[int, bytes] = {}
    doc = open_pdf(data, "document.pdf")
    try:
        for i, block in wanted:
            page_no, box = block.boxes[0]
            if not 1 <= page_no <= len(doc):
                continue
            image, scale = render_page(doc, page_no, CROP_DPI)  # lowered for a huge page (max_page_pixels)
            left, top = max(0, int(box.left * scale)), max(0, int(box.top * scale))
            right, bottom = min(image.width, int(box.right * scale)), min(image.height, int(box.bottom * scale))
            if right - left < MIN_SIDE or bottom - top < MIN_SIDE:
                continue
            buf = io.BytesIO()
            image.crop((left, top, right, bottom)).save(buf, format="PNG")
            out[i] = buf.getvalue()
    finally:
        doc.close()
    return out


def find_figures(parsed: ParsedDocument, data: bytes, filename: str) -> list[Figure]:
    """The document's figures with their pictures (PDF figures cropped from ``data``) and the paragraphs
    around them; at most :data:`MAX_FIGURES`."""
    blocks = parsed.blocks
    indices = [i for i, b in enumerate(blocks) if b.kind == BlockKind.FIGURE][:MAX_CANDIDATES]
    if not indices:
        return []
    crops: dict[int, bytes] = {}
    if filename.lower().endswith(".pdf"):
        try:
            crops = crop_pdf_figures(data, [blocks[i] for i in indices])
        except Exception as exc:  # noqa: BLE001 - a figure that cannot be cropped is left out, the text is kept
            log.warning("%s: figures not cropped: %s", filename, exc)
    figures: list[Figure] = []
    for n, i in enumerate(indices):
        block = blocks[i]
        raw = block.image if block.image is not None else crops.get(n)
        picture = as_png(raw) if raw else None
        if picture is None:
            continue
        png, width, height = picture
        figures.append(Figure(block, png, width, height, before=_neighbour(blocks, i, -1),
                              after=_neighbour(blocks, i, 1)))
        if len(figures) == MAX_FIGURES:
            break
    return figures


def _neighbour(blocks: Sequence[Block], i: int, step: int) -> str:
    """The nearest text paragraph before (``step`` -1) or after (+1) block ``i`` (over other figures: a row
    of pictures shares its paragraphs), cut to :data:`CONTEXT_CHARS` at a word."""
    j = i + step
    while 0 <= j < len(blocks):
        b = blocks[j]
        if b.kind in (BlockKind.TEXT, BlockKind.LIST) and b.text.strip():
            text = " ".join(b.text.split())
            if len(text) <= CONTEXT_CHARS:
                return text
            cut = text[:CONTEXT_CHARS] if step > 0 else text[-CONTEXT_CHARS:]
            return cut.rsplit(" ", 1)[0] if step > 0 else cut.split(" ", 1)[-1]
        if b.kind in (BlockKind.TITLE, BlockKind.TABLE):  # another section or a table: no context of this figure
            return ""
        j += step
    return ""


def read_inside(figure: Figure, language: str = "") -> str:
    """The text OCR reads inside the figure's picture: "" when OCR is not installed, for a small picture,
    or for a knowledge base whose script the OCR model does not read (``language``,
    :func:`ragloom.ingest.ocr.unread_scans`)."""
    from PIL import Image

    from ragloom.errors import ParseError
    from ragloom.ingest.ocr import default_page_reader, unread_scans

    if min(figure.width, figure.height) < OCR_MIN_SIDE or unread_scans(language):
        return ""
    reader = default_page_reader()
    if reader is None:
        return ""
    try:
        with Image.open(io.BytesIO(figure.png)) as image:
            blocks = reader.read_page(image.convert("RGB"), page=1, scale=1.0)
    except (ParseError, *CORRUPT_PICTURE) as exc:
        log.warning("a figure's text not read: %s", exc)
        return ""
    return " ".join(" ".join(b.text.split()) for b in blocks if b.text.strip())


def figure_chunk(figure: Figure, order: int, method: str) -> Chunk:
    """The figure's chunk: its text (:meth:`Figure.text`), its region on the page, kind ``figure``."""
    block = figure.block
    return Chunk(text=figure.text() or f"[figure: {block.meta.get('image', 'picture')}]", order=order,
                 positions=block.positions(), heading_path=block.heading_path, kind=ChunkKind.FIGURE,
                 method=method)
