"""DOCX with python-docx: paragraphs and tables in body order, headings from styles.

Heading levels come from the paragraph style: ``Title`` is the top level and
``Heading N`` (also ``标题 N``) is level N, shifted down by one when the
document uses a ``Title`` paragraph so that the title encloses its sections.
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml.etree import XMLSyntaxError

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, ParsedDocument
from ragloom.ingest.parsers.common import HeadingTracker, table_block

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list", re.IGNORECASE)


def _open(data: bytes, filename: str) -> DocxDocument:
    try:
        return docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, PackageNotFoundError) as exc:
        raise ParseError(f"{filename}: not a valid DOCX: the zip container is damaged ({exc})") from exc
    except KeyError as exc:
        raise ParseError(f"{filename}: not a valid DOCX: a required part is missing ({exc})") from exc
    except XMLSyntaxError as exc:
        raise ParseError(f"{filename}: not a valid DOCX: malformed XML ({exc})") from exc


def _style_level(par: Paragraph, has_title: bool) -> int:
    """Heading level of a paragraph (1 = top) or 0 for body text."""
    name = (par.style.name if par.style is not None else "") or ""
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name.strip())
    if match:
        return int(match.group(1)) + (1 if has_title else 0)
    return 0


def _table_rows(table: Table) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:  # merged cells repeat: keep each once
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(cell.text)
        rows.append(cells)
    return rows


def _body_items(document: DocxDocument) -> list[Paragraph | Table]:
    items: list[Paragraph | Table] = []
    for child in document.element.body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            items.append(Paragraph(child, document))
        elif tag == "tbl":
            items.append(Table(child, document))
    return items


class DocxParser:
    """Blocks of a Word document in body order."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        document = _open(data, filename)
        items = _body_items(document)
        has_title = any(
            isinstance(it, Paragraph) and it.style is not None and (it.style.name or "").lower() == "title"
            and it.text.strip() for it in items
        )
        headings = HeadingTracker()
        blocks: list[Block] = []
        for item in items:
            if isinstance(item, Table):
                block = table_block(_table_rows(item), True, headings.path)
                if block:
                    blocks.append(block)
                continue
            text = item.text.strip()
            if not text:
                continue
            level = _style_level(item, has_title)
            if level:
                blocks.append(headings.title_block(text, level))
            else:
                style = item.style.name if item.style is not None else ""
                kind = "list" if _LIST_STYLE.match(style or "") else "text"
                blocks.append(Block(text=text, kind=kind, heading_path=headings.path))
        if not blocks:
            raise ParseError(f"{filename}: the DOCX document contains no text")
        core_title = document.core_properties.title or None
        title = core_title or next((b.text for b in blocks if b.kind == "title"), None)
        return ParsedDocument(blocks=blocks, title=title)
