"""PPTX with python-pptx: one slide = one section.

Each slide gives a ``title`` block (its title placeholder, else ``Slide N``),
then its shapes top-to-bottom, left-to-right: text frames (one block each,
bullet levels indented), tables (:func:`~ragloom.ingest.parsers.tabular.table_from_cells`: a
merged cell spans its columns and rows, its value under each; the first row is the header when
the table's style shows one, ``firstRow``, with the row under it when it groups that row's
columns; a one-row table is a table too), pictures (``figure`` blocks with their alt text), group shapes
opened; and last its speaker notes — the notes placeholder and any other text
on the notes page, each a block marked ``meta["role"] == "notes"`` and
``meta["notes"] == "true"`` (the convention the ``presentation`` chunk method reads).
Blocks carry ``page`` = the slide number and the shape's box in points, so
positions work as on a page.

Text is read from the XML of each paragraph: runs, fields (dates, slide numbers)
and line breaks, and math (``a14:m``); shapes and paragraph content wrapped in
``mc:AlternateContent`` (equations, newer shape features) are read from its first
choice — python-pptx's shape list leaves them out. Footer, date and slide-number
placeholders (the same on every slide) are left out on purpose and counted in
``ParsedDocument.removed`` (``running_footer``, ``running_header`` on notes pages,
``page_number``).

Not read: text inside charts and SmartArt diagrams (separate parts of the file).
"""

from __future__ import annotations

import contextlib
import io
import zipfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from lxml.etree import XMLSyntaxError

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.ingest.blocks import BBox, Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import check_zip, is_depth_error, malformed_part, xml_too_deep
from ragloom.ingest.parsers.common import chosen_branch, xml_name
from ragloom.ingest.parsers.tabular import Cell, table_from_cells

if TYPE_CHECKING:
    from lxml.etree import _Element
    from pptx.shapes.base import BaseShape
    from pptx.shapes.shapetree import _BaseShapes
    from pptx.slide import Slide
    from pptx.table import Table
    from pptx.text.text import TextFrame

_EMU_PER_POINT = 12700
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_TEXT_TAGS = frozenset({f"{_A}t", "{http://schemas.openxmlformats.org/officeDocument/2006/math}t"})
_NO_TEXT = frozenset({"pPr", "rPr", "endParaRPr"})
_SHAPE_TAGS = frozenset(f"{_P}{name}" for name in ("sp", "grpSp", "graphicFrame", "cxnSp", "pic", "contentPart"))
# placeholders repeated on every slide (or notes page): left out, counted as removed under this reason
_FURNITURE = {"ftr": "running_footer", "dt": "running_footer", "hdr": "running_header", "sldNum": "page_number"}
_ROW_TOLERANCE = 6.0  # points: shapes whose tops differ less read left to right


def _box(shape: BaseShape) -> BBox | None:
    # typed as lengths, but None for a placeholder that inherits no position
    left: int | None = getattr(shape, "left", None)
    top: int | None = getattr(shape, "top", None)
    width: int | None = getattr(shape, "width", None)
    height: int | None = getattr(shape, "height", None)
    if left is None or top is None or width is None or height is None:
        return None
    return BBox(left / _EMU_PER_POINT, top / _EMU_PER_POINT,
                (left + width) / _EMU_PER_POINT, (top + height) / _EMU_PER_POINT)


def _reading_order(shapes: Iterable[BaseShape]) -> list[BaseShape]:
    def key(shape: BaseShape) -> tuple[float, float]:
        box = _box(shape)
        return (round(box.top / _ROW_TOLERANCE), box.left) if box else (float("inf"), 0.0)

    return sorted(shapes, key=key)


def _paragraph_text(el: _Element, parts: list[str] | None = None) -> str:
    """The text of an ``a:p``: runs, fields, math, line breaks as newlines."""
    parts = [] if parts is None else parts
    for child in el:
        if child.tag in _TEXT_TAGS:
            parts.append(child.text or "")
            continue
        name = xml_name(child)
        if name == "br":
            parts.append("\n")
        elif name == "AlternateContent":
            branch = chosen_branch(child)
            if branch is not None:
                _paragraph_text(branch, parts)
        elif name and name not in _NO_TEXT:
            _paragraph_text(child, parts)
    return "".join(parts)


def _frame_text(frame: TextFrame) -> str:
    lines = []
    for par in frame.paragraphs:
        indent = "  " * par.level
        lines += [indent + line.strip() for line in _paragraph_text(par._p).split("\n") if line.strip()]
    return "\n".join(lines)


def _cell_text(tc: _Element) -> str:
    return "\n".join(_paragraph_text(p) for p in tc.iter(f"{_A}p")).strip()


def _shape_list(shapes: _BaseShapes) -> list[BaseShape]:
    """The shapes of a slide, group or notes page, with those wrapped in ``mc:AlternateContent``
    (read from its first choice) that python-pptx's own list leaves out."""
    found: list[BaseShape] = list(shapes)
    for alternate in shapes._spTree.iterchildren(f"{{{_MC}}}AlternateContent"):
        branch = chosen_branch(alternate)
        for element in branch if branch is not None else ():
            if element.tag in _SHAPE_TAGS:
                found.append(shapes._shape_factory(element))
    return found


def _frames(shape: BaseShape) -> list[TextFrame]:
    """The text frames of a shape and of the shapes grouped in it."""
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        return [f for inner in _reading_order(_shape_list(shape.shapes)) for f in _frames(inner)]
    frame: TextFrame | None = getattr(shape, "text_frame", None) if getattr(shape, "has_text_frame", False) else None
    return [frame] if frame is not None else []


def _furniture(shape: BaseShape) -> str | None:
    """The removal reason of a footer, date, header or slide-number placeholder; None for other shapes."""
    ph = shape.element.find(f"./*/{_P}nvPr/{_P}ph")
    return _FURNITURE.get(ph.get("type", "")) if ph is not None else None


def _table_cells(table: Table) -> list[list[Cell]]:
    """The cells of a table, row by row: a merged cell (``gridSpan``, ``rowSpan``) spans its columns and
    rows, and the cells it covers (marked ``hMerge`` / ``vMerge``) are left out; the first row's cells
    are marked as header when the table's style shows a header row (``firstRow``).

    Read from the XML in one pass (python-pptx's ``table.rows[i]`` and ``row.cells[j]`` look their
    element up in a fresh list each time: quadratic over a table); spans are cut to the table's grid.
    """
    tbl = table._tbl
    width = len(tbl.tblGrid.gridCol_lst)
    rows = tbl.tr_lst
    header = bool(table.first_row)
    out: list[list[Cell]] = []
    for r, tr in enumerate(rows):
        row: list[Cell] = []
        col = 0
        for tc in tr.tc_lst[:width]:
            if tc.hMerge or tc.vMerge:
                col += 1
                continue
            colspan = max(1, min(tc.gridSpan, width - col))
            row.append(Cell(_cell_text(tc), colspan, max(1, min(tc.rowSpan, len(rows) - r)), header and r == 0))
            col += 1
        out.append(row)
    return out


def _is_title(shape: BaseShape) -> bool:
    from pptx.enum.shapes import PP_PLACEHOLDER

    if not getattr(shape, "is_placeholder", False):
        return False
    return shape.placeholder_format.type in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE)


class _Slide:
    def __init__(self, number: int, title: str, title_shape: BaseShape | None = None) -> None:
        self.number = number
        self.path = (title,)
        self.blocks: list[Block] = []
        self.title_element = title_shape.element if title_shape is not None else None
        self.removed: dict[str, int] = {}

    def furniture(self, shape: BaseShape) -> bool:
        """Count a footer, date, header or slide-number placeholder as removed; False for other shapes."""
        reason = _furniture(shape)
        if reason is None:
            return False
        frame = getattr(shape, "text_frame", None) if getattr(shape, "has_text_frame", False) else None
        chars = len(_frame_text(frame)) if frame is not None else 0
        if chars:
            self.removed[reason] = self.removed.get(reason, 0) + chars
        return True

    def add(self, text: str, kind: BlockKind, shape: BaseShape | None,
            meta: dict[str, str] | None = None) -> Block | None:
        if not text.strip() and kind != BlockKind.TABLE:
            return None
        box = _box(shape) if shape is not None else None
        block = Block(text=text, kind=kind, heading_path=self.path, page=self.number,
                      boxes=[(self.number, box)] if box else [], meta=meta if meta is not None else {})
        block.meta.setdefault("slide", str(self.number))
        self.blocks.append(block)
        return block

    def notes(self, shapes: _BaseShapes) -> None:
        """The text of a notes page: its notes placeholder, then any other text on it, as notes blocks
        (the slide image has none; the page number and header/footer are counted as removed)."""
        from pptx.enum.shapes import PP_PLACEHOLDER

        def order(shape: BaseShape) -> int:
            is_body = shape.is_placeholder and shape.placeholder_format.type == PP_PLACEHOLDER.BODY
            return 0 if is_body else 1

        for shape in sorted(_reading_order(_shape_list(shapes)), key=order):
            if self.furniture(shape):
                continue
            for frame in _frames(shape):
                self.add(_frame_text(frame), BlockKind.TEXT, None, meta={"role": "notes", "notes": "true"})

    def shapes(self, shapes: _BaseShapes) -> None:
        from pptx.shapes.autoshape import Shape
        from pptx.shapes.graphfrm import GraphicFrame
        from pptx.shapes.group import GroupShape
        from pptx.shapes.picture import Picture

        for shape in _reading_order(_shape_list(shapes)):
            if shape.element is self.title_element or self.furniture(shape):
                continue
            if isinstance(shape, GroupShape):
                self.shapes(shape.shapes)
            elif isinstance(shape, GraphicFrame) and shape.has_table:  # only a graphic frame can hold a table
                block = table_from_cells(_table_cells(shape.table), heading_path=self.path, lone_notes=False)
                if block:
                    box = _box(shape)
                    block.page, block.boxes = self.number, [(self.number, box)] if box else []
                    block.meta["slide"] = str(self.number)
                    self.blocks.append(block)
            elif isinstance(shape, Shape) and shape.has_text_frame:
                self.add(_frame_text(shape.text_frame), BlockKind.TEXT, shape)
            elif isinstance(shape, Picture):
                alt: list[str] = shape.element.xpath("./p:nvPicPr/p:cNvPr/@descr")
                text = (alt[0] if alt else "").strip()
                figure = self.add(text or f"[image: {shape.name}]", BlockKind.FIGURE, shape,
                                  meta={"alt": text} if text else {})
                if figure is not None:  # the picture as the deck holds it (a linked one has no bytes in the file)
                    with contextlib.suppress(AttributeError, KeyError, ValueError):
                        figure.image = shape.image.blob


class PptxParser:
    """Blocks of a PowerPoint deck, slide by slide."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            import pptx
            from pptx.exc import InvalidXmlError, PackageNotFoundError
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("python-pptx") from exc
        check_zip(data, filename, "PPTX")
        removed: dict[str, int] = {}
        try:
            try:
                deck = pptx.Presentation(io.BytesIO(data))
            except TypeError as exc:  # python-pptx follows a relationship without a target
                raise ParseError(f"{filename}: not a valid PPTX presentation: a relationship is malformed ({exc})"
                                 ) from exc
            size = ((deck.slide_width or 0) / _EMU_PER_POINT, (deck.slide_height or 0) / _EMU_PER_POINT)
            blocks: list[Block] = []
            for number, slide in enumerate(deck.slides, start=1):
                checkpoint()
                section = self._slide(number, slide)
                blocks += section.blocks
                for reason, chars in section.removed.items():
                    removed[reason] = removed.get(reason, 0) + chars
            count = len(deck.slides)
            core_title = deck.core_properties.title
        except (zipfile.BadZipFile, PackageNotFoundError, KeyError, InvalidXmlError, ValueError) as exc:
            # ValueError: python-pptx reads an attribute that does not hold its type (an EMU of "1e308")
            raise ParseError(f"{filename}: not a valid PPTX presentation ({exc})") from exc
        except AttributeError as exc:
            if not malformed_part(exc):
                raise
            raise ParseError(f"{filename}: not a valid PPTX presentation: a part is malformed ({exc})") from exc
        except XMLSyntaxError as exc:
            if is_depth_error(exc):
                raise xml_too_deep(filename) from exc
            raise ParseError(f"{filename}: not a valid PPTX presentation: malformed XML ({exc})") from exc
        if not any(b.text.strip() for b in blocks):
            raise ParseError(f"{filename}: the presentation contains no text")
        title = core_title or next((b.text for b in blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=blocks, title=title, page_count=count,
                              page_sizes={n: size for n in range(1, count + 1)}, removed=removed)

    @staticmethod
    def _slide(number: int, slide: Slide) -> _Slide:
        from pptx.shapes.autoshape import Shape

        # only a Shape (autoshape, text box, placeholder) can have a text frame
        title_shape = next(
            (s for s in slide.shapes if isinstance(s, Shape) and _is_title(s) and s.has_text_frame), None)
        title = " ".join(_frame_text(title_shape.text_frame).split()) if title_shape is not None else ""
        section = _Slide(number, title or f"Slide {number}", title_shape)
        if title_shape is not None and title:
            box = _box(title_shape)
            section.blocks.append(Block(text=title, kind=BlockKind.TITLE, level=1, page=number,
                                        boxes=[(number, box)] if box else [], meta={"slide": str(number)}))
        section.shapes(slide.shapes)
        if slide.has_notes_slide:
            section.notes(slide.notes_slide.shapes)
        return section
