"""DOCX with python-docx: paragraphs, lists, tables and figures in body order.

Heading levels come from the paragraph style: ``Title`` is the top level and
``Heading N`` (also ``标题 N``) is level N, shifted down by one when the
document uses a ``Title`` paragraph so that the title encloses its sections; a
paragraph with an outline level (direct or from its style) is a heading too.
Consecutive list paragraphs form one ``list`` block whose lines keep their
numbering (``1.``, ``2.1``, ``a)``) as a prefix. Tables repeat the value of a
merged cell in every row and column it spans. Images become ``figure`` blocks
holding their caption and alt text. Headers, footers and comments are ignored.
"""

from __future__ import annotations

import io
import re
import zipfile

import docx
from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml.ns import qn
from docx.oxml.xmlchemy import BaseOxmlElement
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml.etree import XMLSyntaxError

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint
from ragloom.ingest.parsers.bounds import check_zip, is_depth_error, xml_too_deep
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.docx_lists import ListNumbering, paragraph_style, property_chain
from ragloom.ingest.parsers.tabular import table_block

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list", re.IGNORECASE)
_CAPTION_TEXT = re.compile(r"^(?:figure|fig\.|图|图表)\s*\d", re.IGNORECASE)
_DOC_PR = qn("wp:docPr")
CHECK_EVERY = 256  # body items between two task checkpoints


def _open(data: bytes, filename: str) -> DocxDocument:
    check_zip(data, filename, "DOCX")
    try:
        return docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, PackageNotFoundError) as exc:
        raise ParseError(f"{filename}: not a valid DOCX: the zip container is damaged ({exc})") from exc
    except KeyError as exc:
        raise ParseError(f"{filename}: not a valid DOCX: a required part is missing ({exc})") from exc
    except XMLSyntaxError as exc:
        if is_depth_error(exc):
            raise xml_too_deep(filename) from exc
        raise ParseError(f"{filename}: not a valid DOCX: malformed XML ({exc})") from exc


def _style_name(par: Paragraph) -> str:
    style = paragraph_style(par)
    return ((style.name if style is not None else "") or "").strip()


def _outline_level(par: Paragraph) -> int:
    """1-based outline level from the paragraph or its style chain; 0 for body text."""
    for ppr in property_chain(par):
        node = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
        if node is not None:
            value = node.get(qn("w:val"), "9")
            return int(value) + 1 if value.isdigit() and int(value) < 9 else 0
    return 0


def _style_level(par: Paragraph, has_title: bool) -> int:
    """Heading level of a paragraph (1 = top) or 0 for body text."""
    name = _style_name(par)
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name)
    level = int(match.group(1)) if match else _outline_level(par)
    return level + (1 if has_title and level else 0)


def _table_rows(table: Table) -> list[list[str]]:
    """Rows of cell texts on the layout grid; merged cells repeat their text in each slot."""
    rows = []
    for row in table.rows:
        cells = [""] * row.grid_cols_before + [cell.text for cell in row.cells]
        rows.append(cells)
    return rows


def _body_items(document: DocxDocument) -> list[Paragraph | Table]:
    items: list[Paragraph | Table] = []

    def visit(parent: BaseOxmlElement) -> None:
        for child in parent.iterchildren():
            tag = child.tag.rsplit("}", 1)[-1]
            if tag == "p":
                items.append(Paragraph(child, document))
            elif tag == "tbl":
                items.append(Table(child, document))
            elif tag in ("sdt", "sdtContent", "customXml"):
                visit(child)

    visit(document.element.body)
    return items


def _images(par: Paragraph) -> list[dict[str, str]]:
    """Alt text (``descr``), title and name of each picture drawn in a paragraph."""
    found = []
    for drawing in par._p.iter(qn("w:drawing"), qn("w:pict")):
        doc_pr = next(drawing.iter(_DOC_PR), None)
        if doc_pr is None:
            found.append({"name": "image", "alt": ""})
            continue
        alt = " ".join(v for v in (doc_pr.get("title", ""), doc_pr.get("descr", "")) if v).strip()
        found.append({"name": doc_pr.get("name", "image"), "alt": alt})
    return found


def _is_caption(par: Paragraph) -> bool:
    return _style_name(par).lower() == "caption" or bool(_CAPTION_TEXT.match(par.text.strip()))


class _Walker:
    def __init__(self, document: DocxDocument, has_title: bool) -> None:
        self.numbering = ListNumbering(document)
        self.has_title = has_title
        self.headings = HeadingTracker()
        self.blocks: list[Block] = []
        self.list_lines: list[str] = []
        self.list_kind = ""
        self.list_id = ""

    def flush_list(self) -> None:
        if self.list_lines:
            self.blocks.append(Block(text="\n".join(self.list_lines), kind=BlockKind.LIST,
                                     heading_path=self.headings.path, meta={"list": self.list_kind}))
        self.list_lines = []
        self.list_kind = ""
        self.list_id = ""

    def table(self, item: Table) -> None:
        self.flush_list()
        rows = _table_rows(item)
        block = table_block(rows[0], rows[1:], self.headings.path) if rows else None
        if block:
            self.blocks.append(block)

    def paragraph(self, par: Paragraph, caption: Paragraph | None) -> bool:
        """Adds the paragraph's blocks; True when ``caption`` (the next paragraph) was used."""
        text = par.text.strip()
        level = _style_level(par, self.has_title) if text else 0
        ref = self.numbering.reference(par) if text else None
        if ref is not None and not level:
            if self.list_id and ref[0] != self.list_id and ref[1] == 0:
                self.flush_list()  # another list starts
            self.list_id = ref[0]
            label, bullet = self.numbering.label(*ref)
            indent = "  " * ref[1]
            self.list_lines.append(f"{indent}{text}" if bullet else f"{indent}{label} {text}".rstrip())
            self.list_kind = self.list_kind or ("bulleted" if bullet else "numbered")
        elif text:
            self.flush_list()
            if level:
                label = self.numbering.label(*ref)[0] if ref is not None else ""
                self.blocks.append(self.headings.title_block(f"{label} {text}".strip(), level))
            elif _LIST_STYLE.match(_style_name(par)):
                self.list_lines.append(text)
                self.list_kind = self.list_kind or "bulleted"
            else:
                self.blocks.append(Block(text=text, heading_path=self.headings.path))
        return self._figures(par, caption)

    def _figures(self, par: Paragraph, caption: Paragraph | None) -> bool:
        images = _images(par)
        if not images:
            return False
        self.flush_list()
        caption_text = caption.text.strip() if caption is not None and _is_caption(caption) else ""
        for image in images:
            meta = {"image": image["name"]}
            if image["alt"]:
                meta["alt"] = image["alt"]
            if caption_text:
                meta["caption"] = caption_text
            text = "\n".join(v for v in (caption_text, image["alt"]) if v) or f"[image: {image['name']}]"
            self.blocks.append(Block(text=text, kind=BlockKind.FIGURE, heading_path=self.headings.path, meta=meta))
        return bool(caption_text)


class DocxParser:
    """Blocks of a Word document in body order."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        document = _open(data, filename)
        items = _body_items(document)
        has_title = any(isinstance(it, Paragraph) and _style_name(it).lower() == "title" and it.text.strip()
                        for it in items)
        walker = _Walker(document, has_title)
        skip_next = False
        for index, item in enumerate(items):
            if index % CHECK_EVERY == 0:
                checkpoint()
            if skip_next:
                skip_next = False
                continue
            if isinstance(item, Table):
                walker.table(item)
                continue
            following = items[index + 1] if index + 1 < len(items) else None
            skip_next = walker.paragraph(item, following if isinstance(following, Paragraph) else None)
        walker.flush_list()
        blocks = walker.blocks
        if not blocks:
            raise ParseError(f"{filename}: the DOCX document contains no text")
        core_title = document.core_properties.title or None
        title = core_title or next((b.text for b in blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=blocks, title=title)
