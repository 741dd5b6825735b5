"""Everything the parser learns from one PDF page in a single pass with pdfium.

Lines (reading frame) without the page's furniture (turned margin text,
watermarks, line numbers, vertical stamps: :mod:`.pdf_furniture`, counted in
``removed``), the frame itself (size, ``/Rotate``, text direction), image boxes,
the number of vector path objects (a hint of ruled tables) and how usable the
text layer is (a scan has none, or only garbage). A tagged page's lines carry the
structure type the PDF gives them (``Line.tag``: "H1", "P", ...).
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ragloom.errors import ParseError
from ragloom.ingest.parsers.pdf_furniture import remove_furniture
from ragloom.ingest.parsers.pdf_layout import (
    Box,
    Frame,
    Line,
    char_text,
    dominant_angle,
    make_frame,
    page_lines,
    text_quality,
)

MAX_PATHS = 20_000  # path boxes kept per page (for vector figures)
MAX_STRUCTURE = 100_000  # structure elements read per page
HEADING_TAG = re.compile(r"^(?:h|heading)\s*[1-6]?$|^title$", re.IGNORECASE)
MIN_USABLE_CHARS = 10  # fewer glyphs than this beside a page-sized image: a scan


@dataclass(slots=True)
class PageData:
    number: int
    frame: Frame
    lines: list[Line]
    images: list[Box] = field(default_factory=list)  # reading frame
    n_paths: int = 0
    paths: list[Box] = field(default_factory=list)  # path object boxes (reading frame), the first MAX_PATHS
    usable: int = 0  # glyphs of real text
    garbage: int = 0  # private-use / replacement / control glyphs
    removed: dict[str, int] = field(default_factory=dict)  # furniture characters left out of ``lines``, by reason

    @property
    def image_cover(self) -> float:
        """Share of the page covered by its largest image."""
        w, h = self.frame.size
        return max(((b[2] - b[0]) * (b[3] - b[1]) / (w * h) for b in self.images), default=0.0)

    @property
    def needs_ocr(self) -> bool:
        """No usable text layer: no glyphs, mostly garbage, or a few glyphs on a page-sized image."""
        if self.usable == 0 or self.garbage > 0.3 * (self.usable + self.garbage):
            return True
        return self.usable < MIN_USABLE_CHARS and self.image_cover >= 0.3


def read_page(doc: pdfium.PdfDocument, number: int, filename: str) -> PageData:
    """Read page ``number`` (1-based); ``ParseError`` when pdfium cannot load it."""
    try:
        page = doc[number - 1]
        crop = page.get_bbox()  # crop box ∩ media box, pdfium order l, b, r, t
        rotation = page.get_rotation()
        textpage = page.get_textpage()
    except pdfium.PdfiumError as exc:
        raise ParseError(f"{filename}: corrupt PDF: page {number} cannot be read ({exc})") from exc
    try:
        text = char_text(textpage, textpage.count_chars())
        usable, garbage = text_quality(text)
        frame = make_frame(crop, rotation, dominant_angle(textpage, text))
        lines, turned = page_lines(textpage, text, number, frame, _structure_types(page))
        images, paths, n_paths = _objects(page, frame)
    finally:
        textpage.close()
        page.close()
    furniture = remove_furniture(lines, turned)
    return PageData(number, frame, furniture.lines, images, n_paths, paths, usable, garbage, furniture.removed)


def _structure_types(page: pdfium.PdfPage) -> dict[int, str]:
    """The structure type of each marked-content id of a tagged page ("H1", "P", ...; empty when the page
    has no structure tree). Content inside a heading element is the heading's (a span of an H2 is H2);
    at most :data:`MAX_STRUCTURE` elements are read."""
    tree = pdfium_c.FPDF_StructTree_GetForPage(page)
    if not tree:
        return {}
    out: dict[int, str] = {}
    buffer = ctypes.create_string_buffer(256)
    try:
        stack = [(pdfium_c.FPDF_StructTree_GetChildAtIndex(tree, i), "")
                 for i in range(pdfium_c.FPDF_StructTree_CountChildren(tree))]
        seen = 0
        while stack and seen < MAX_STRUCTURE:
            element, outer = stack.pop()
            seen += 1
            if not element:
                continue
            n = pdfium_c.FPDF_StructElement_GetType(element, buffer, len(buffer))
            kind = buffer.raw[: max(0, min(n, len(buffer)) - 2)].decode("utf-16-le", "replace")
            if HEADING_TAG.match(outer):
                kind = outer
            for k in range(pdfium_c.FPDF_StructElement_GetMarkedContentIdCount(element)):
                mcid = pdfium_c.FPDF_StructElement_GetMarkedContentIdAtIndex(element, k)
                if mcid >= 0:
                    out.setdefault(mcid, kind)
            stack += [(pdfium_c.FPDF_StructElement_GetChildAtIndex(element, i), kind)
                      for i in range(pdfium_c.FPDF_StructElement_CountChildren(element))]
    finally:
        pdfium_c.FPDF_StructTree_Close(tree)
    return out


def _objects(page: pdfium.PdfPage, frame: Frame) -> tuple[list[Box], list[Box], int]:
    """Image boxes and path boxes (reading frame, at most ``MAX_PATHS``), and the count of path
    objects, top level only."""
    images: list[Box] = []
    paths: list[Box] = []
    n_paths = 0
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for i in range(pdfium_c.FPDFPage_CountObjects(page)):
        obj = pdfium_c.FPDFPage_GetObject(page, i)
        kind = pdfium_c.FPDFPageObj_GetType(obj)
        if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
            n_paths += 1
            if n_paths <= MAX_PATHS and pdfium_c.FPDFPageObj_GetBounds(
                obj, ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
            ):
                paths.append(frame.map_box(left.value, bottom.value, right.value, top.value))
        elif kind == pdfium_c.FPDF_PAGEOBJ_IMAGE and pdfium_c.FPDFPageObj_GetBounds(
            obj, ctypes.byref(left), ctypes.byref(bottom), ctypes.byref(right), ctypes.byref(top)
        ):
            images.append(frame.map_box(left.value, bottom.value, right.value, top.value))
    return images, paths, n_paths
