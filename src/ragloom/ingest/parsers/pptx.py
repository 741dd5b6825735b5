"""PPTX with python-pptx: one slide = one section.

Each slide gives a ``title`` block (its title placeholder, else ``Slide N``),
then its shapes top-to-bottom, left-to-right: text frames (one block each,
bullet levels indented), tables (merged cells repeated), pictures (``figure``
blocks with their alt text), group shapes opened; and last its speaker notes
as a block marked ``meta["role"] == "notes"`` and ``meta["notes"] == "true"``
(the convention the ``presentation`` chunk method reads). Blocks carry ``page`` = the
slide number and the shape's box in points, so positions work as on a page.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from lxml.etree import XMLSyntaxError

from ragloom.errors import MissingDependencyError, ParseError
from ragloom.ingest.blocks import BBox, Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import check_zip, is_depth_error, xml_too_deep
from ragloom.ingest.parsers.tabular import table_block

if TYPE_CHECKING:
    from pptx.shapes.base import BaseShape
    from pptx.slide import Slide
    from pptx.table import Table
    from pptx.text.text import TextFrame

_EMU_PER_POINT = 12700
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


def _frame_text(frame: TextFrame) -> str:
    lines = []
    for par in frame.paragraphs:
        text = "".join(run.text for run in par.runs).strip() or par.text.strip()
        if text:
            lines.append("  " * par.level + text)
    return "\n".join(lines)


def _table_grid(table: Table) -> list[list[str]]:
    rows = list(table.rows)
    width = len(table.columns)
    grid = [[row.cells[c].text.strip() if c < len(row.cells) else "" for c in range(width)] for row in rows]
    for r, row in enumerate(rows):
        for c in range(width):
            cell = row.cells[c]
            if cell.is_merge_origin:
                for dr in range(cell.span_height):
                    for dc in range(cell.span_width):
                        if r + dr < len(grid) and c + dc < width:
                            grid[r + dr][c + dc] = grid[r][c]
    return grid


def _is_title(shape: BaseShape) -> bool:
    from pptx.enum.shapes import PP_PLACEHOLDER

    if not getattr(shape, "is_placeholder", False):
        return False
    return shape.placeholder_format.type in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE)


class _Slide:
    def __init__(self, number: int, title: str) -> None:
        self.number = number
        self.path = (title,)
        self.blocks: list[Block] = []

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

    def shapes(self, shapes: Iterable[BaseShape]) -> None:
        from pptx.shapes.autoshape import Shape
        from pptx.shapes.graphfrm import GraphicFrame
        from pptx.shapes.group import GroupShape
        from pptx.shapes.picture import Picture

        for shape in _reading_order(shapes):
            if isinstance(shape, GroupShape):
                self.shapes(shape.shapes)
            elif isinstance(shape, GraphicFrame) and shape.has_table:  # only a graphic frame can hold a table
                grid = _table_grid(shape.table)
                block = table_block(grid[0], grid[1:], self.path) if grid else None
                if block:
                    box = _box(shape)
                    block.page, block.boxes = self.number, [(self.number, box)] if box else []
                    block.meta["slide"] = str(self.number)
                    self.blocks.append(block)
            elif isinstance(shape, Shape) and shape.has_text_frame and not _is_title(shape):
                self.add(_frame_text(shape.text_frame), BlockKind.TEXT, shape)
            elif isinstance(shape, Picture):
                alt: list[str] = shape.element.xpath("./p:nvPicPr/p:cNvPr/@descr")
                text = (alt[0] if alt else "").strip()
                self.add(text or f"[image: {shape.name}]", BlockKind.FIGURE, shape,
                         meta={"alt": text} if text else {})


class PptxParser:
    """Blocks of a PowerPoint deck, slide by slide."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            import pptx
            from pptx.exc import PackageNotFoundError
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise MissingDependencyError("python-pptx") from exc
        check_zip(data, filename, "PPTX")
        try:
            deck = pptx.Presentation(io.BytesIO(data))
            size = ((deck.slide_width or 0) / _EMU_PER_POINT, (deck.slide_height or 0) / _EMU_PER_POINT)
            blocks: list[Block] = []
            for number, slide in enumerate(deck.slides, start=1):
                checkpoint()
                blocks += self._slide(number, slide)
        except (zipfile.BadZipFile, PackageNotFoundError, KeyError) as exc:
            raise ParseError(f"{filename}: not a valid PPTX presentation ({exc})") from exc
        except XMLSyntaxError as exc:
            if is_depth_error(exc):
                raise xml_too_deep(filename) from exc
            raise ParseError(f"{filename}: not a valid PPTX presentation: malformed XML ({exc})") from exc
        if not any(b.text.strip() for b in blocks):
            raise ParseError(f"{filename}: the presentation contains no text")
        count = len(deck.slides)
        title = deck.core_properties.title or next((b.text for b in blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=blocks, title=title, page_count=count,
                              page_sizes={n: size for n in range(1, count + 1)})

    @staticmethod
    def _slide(number: int, slide: Slide) -> list[Block]:
        from pptx.shapes.autoshape import Shape

        # only a Shape (autoshape, text box, placeholder) can have a text frame
        title_shape = next(
            (s for s in slide.shapes if isinstance(s, Shape) and _is_title(s) and s.has_text_frame), None)
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
        section = _Slide(number, title or f"Slide {number}")
        if title_shape is not None and title:
            box = _box(title_shape)
            section.blocks.append(Block(text=title, kind=BlockKind.TITLE, level=1, page=number,
                                        boxes=[(number, box)] if box else [], meta={"slide": str(number)}))
        section.shapes(slide.shapes)
        notes = ""
        if slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = frame.text.strip() if frame is not None else ""
        if notes:
            section.add(notes, BlockKind.TEXT, None, meta={"role": "notes", "notes": "true"})
        return section.blocks
