"""DOCX with python-docx: paragraphs, lists, tables, text boxes, notes and figures in body order.

Text is read from the XML itself, not from python-docx's ``Paragraph.text`` (which sees only
runs that are direct children of a paragraph or of a hyperlink): every ``w:t`` (and math
``m:t``) of a paragraph counts, wherever it sits — tracked insertions (``w:ins``,
``w:moveTo``), smart tags, fields (``w:fldSimple`` and the result part of complex fields),
inline content controls, ``w:customXml``. Block-level content controls, custom XML and
tracked-insertion wrappers are opened around paragraphs, tables, table rows and cells. Of an
``mc:AlternateContent`` only the first choice is read (the fallback is a copy of it).

* Heading levels come from the paragraph style: ``Title`` is the top level and ``Heading N``
  (also ``标题 N``) is level N, shifted down by one when the document uses a ``Title``
  paragraph so that the title encloses its sections; a paragraph with an outline level
  (direct or from its style) is a heading too.
* Consecutive list paragraphs form one ``list`` block whose lines keep their numbering
  (``1.``, ``2.1``, ``a)``) as a prefix.
* Tables become ``table`` blocks (:func:`~ragloom.ingest.parsers.tabular.table_from_cells`):
  a horizontal merge (``gridSpan``, ``hMerge``) is a cell spanning columns and a vertical merge
  (``vMerge``) one spanning rows, its value under every column and in every row it covers; the
  rows Word repeats as header (``tblHeader``) are the header, else the header rows are found by
  how the rows read (a grouping row with merged cells and the row under it: header paths such as
  ``Price › 2024``); a first column naming its rows is a stub column. A paragraph right before
  (or after) the table reading "Table 3: ..." (or in the Caption style) is its caption, and stays a
  block marked ``meta["caption_of"] = "table"``. A table nested in a cell with two rows and two
  columns is a table block of its own after it (``meta["nested"]``); a smaller one is read into
  the cell's text (rows on lines, cells joined by ``|``). A table of a single cell is a frame
  around body content: its content is read as body.
* Text boxes (``w:txbxContent``) become blocks of their own right after the paragraph that
  anchors them. Footnotes and endnotes become blocks right after the paragraph (or list, or
  table) that cites them, marked ``meta["note"] = "footnote N"`` (N in citation order);
  notes never cited come last.
* Images become ``figure`` blocks holding their caption and alt text; shapes that only hold
  a text box are not figures.

Left out on purpose, and counted in ``ParsedDocument.removed`` (characters by reason): page
headers and footers (``running_header``, ``running_footer``: page furniture repeated on every
page), ``comments``, and text a tracked change moved away (``tracked_move``: ``w:moveFrom``,
read at its new place; deleted text is ``w:delText``, never ``w:t``).
"""

from __future__ import annotations

import io
import logging
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

import docx
from docx.document import Document as DocxDocument
from docx.exceptions import InvalidXmlError
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import Part
from docx.oxml.ns import qn
from docx.oxml.parser import parse_xml
from docx.text.paragraph import Paragraph
from lxml.etree import XMLSyntaxError, _Element

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, exceeded, limits
from ragloom.ingest.parsers.bounds import check_zip, is_depth_error, malformed_part, named, xml_too_deep
from ragloom.ingest.parsers.common import HeadingTracker, chosen_branch, small_int, xml_name
from ragloom.ingest.parsers.docx_lists import ListNumbering, paragraph_style, property_chain
from ragloom.ingest.parsers.tabular import Cell, table_from_cells

log = logging.getLogger(__name__)

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)
_LIST_STYLE = re.compile(r"^list", re.IGNORECASE)
_CAPTION_TEXT = re.compile(r"^(?:figure|fig\.|图|图表)\s*\d", re.IGNORECASE)
_TABLE_CAPTION = re.compile(r"^(?:table|tab\.|tabelle|tableau|tabla|表|表格)\s*[\dIVX]", re.IGNORECASE)
CAPTION_CHARS = 300  # a paragraph longer than this is text, not a table's caption
_DOC_PR = qn("wp:docPr")
_BLIP = qn("a:blip")
_EMBED = qn("r:embed")
_MATH_T = "{http://schemas.openxmlformats.org/officeDocument/2006/math}t"
_TEXT_TAGS = frozenset({qn("w:t"), _MATH_T})
_CHARS = {qn("w:tab"): "\t", qn("w:ptab"): "\t", qn("w:br"): "\n", qn("w:cr"): "\n", qn("w:noBreakHyphen"): "-"}
_DELETED = frozenset({"del", "moveFrom"})  # tracked deletions; a move is read where it moved to
# properties and field codes: no text of the document in them (w:tab in w:pPr is a tab stop)
_NO_TEXT = frozenset({"pPr", "rPr", "sdtPr", "sdtEndPr", "tblPr", "tblGrid", "trPr", "tcPr", "instrText",
                      "delText", "delInstrText", "fldData", "sectPr"})
_WRAPPERS = frozenset({"sdtContent", "customXml", "ins", "moveTo", "smartTag"})  # opened around blocks, rows, cells
_PICTURE_TAGS = (qn("a:blip"), "{urn:schemas-microsoft-com:vml}imagedata")
_GRAPHIC_DATA = qn("a:graphicData")
_NOTE_KINDS = {"footnotes": "footnote", "endnotes": "endnote"}
_OMITTED_PARTS = {"header": "running_header", "footer": "running_footer", "comments": "comments"}  # -> reason
MAX_SPAN = 1000  # grid columns a row's cells may span (Word allows 63); more is a damaged or hostile file
CHECK_EVERY = 256  # body items between two task checkpoints


def _open(data: bytes, filename: str) -> DocxDocument:
    check_zip(data, filename, "DOCX")
    try:
        return docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, PackageNotFoundError, EOFError, ValueError) as exc:
        raise ParseError(f"{filename}: not a valid DOCX: the zip container is damaged ({exc})") from exc
    except KeyError as exc:
        raise ParseError(f"{filename}: not a valid DOCX: a required part is missing ({exc})") from exc
    except TypeError as exc:  # python-docx follows a relationship without a target
        raise ParseError(f"{filename}: not a valid DOCX: a relationship is malformed ({exc})") from exc
    except XMLSyntaxError as exc:
        if is_depth_error(exc):
            raise xml_too_deep(filename) from exc
        raise ParseError(f"{filename}: not a valid DOCX: malformed XML ({exc})") from exc


def _int(props: _Element | None, child: str, default: int = 0) -> int:
    node = props.find(qn(child)) if props is not None else None
    value = node.get(qn("w:val"), "") if node is not None else ""
    return small_int(value, default, MAX_SPAN)


def _children(parent: _Element, wanted: str) -> Iterator[_Element]:
    """Children named ``wanted`` (``p``/``tbl`` as ``"block"``, ``tr``, ``tc``), through wrappers."""
    for child in parent:
        name = xml_name(child)
        if name == wanted or (wanted == "block" and name in ("p", "tbl")):
            yield child
        elif name == "sdt":
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from _children(content, wanted)
        elif name in _WRAPPERS:
            yield from _children(child, wanted)
        elif name == "AlternateContent":
            branch = chosen_branch(child)
            if branch is not None:
                yield from _children(branch, wanted)


def _continues(props: _Element | None, merge: str) -> bool:
    """Whether a cell continues a merge (``w:vMerge`` / ``w:hMerge`` without ``restart``)."""
    node = props.find(qn(merge)) if props is not None else None
    return node is not None and node.get(qn("w:val"), "continue") == "continue"


def _on(props: _Element | None, flag: str) -> bool:
    """Whether an on/off property (``w:tblHeader``) is set: present, and not ``0``/``false``/``off``."""
    node = props.find(qn(flag)) if props is not None else None
    return node is not None and node.get(qn("w:val"), "true").lower() not in ("0", "false", "off")


def _is_data_table(tbl: _Element) -> bool:
    """A table of at least two rows and two columns (a nested table read as a table, not as text)."""
    rows = list(_children(tbl, "tr"))
    return len(rows) >= 2 and any(sum(1 for _ in _children(tr, "tc")) >= 2 for tr in rows)


def _text_chars(root: _Element) -> int:
    return sum(len(t.text or "") for t in root.iter(qn("w:t")))


@dataclass(slots=True)
class _Inline:
    """What a paragraph holds besides its style: text, text boxes, note citations, drawings."""

    parts: list[str] = field(default_factory=list)
    boxes: list[_Element] = field(default_factory=list)  # w:txbxContent
    notes: list[tuple[str, str]] = field(default_factory=list)  # ("footnote" | "endnote", id)
    drawings: list[_Element] = field(default_factory=list)  # w:drawing / w:pict
    omitted: int = 0  # characters of w:t in tracked deletions and moves

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def collect(self, parent: _Element) -> _Inline:
        for child in parent:
            tag = child.tag
            if tag in _TEXT_TAGS:
                self.parts.append(child.text or "")
                continue
            char = _CHARS.get(tag) if isinstance(tag, str) else None
            if char is not None:
                self.parts.append(char)
                continue
            name = xml_name(child)
            if not name or name in _NO_TEXT:
                continue
            if name == "txbxContent":
                self.boxes.append(child)
            elif name in _DELETED:
                self.omitted += _text_chars(child)
            elif name in ("footnoteReference", "endnoteReference"):
                self.notes.append((name.removesuffix("Reference"), child.get(qn("w:id"), "")))
            elif name == "AlternateContent":
                branch = chosen_branch(child)
                if branch is not None:
                    self.collect(branch)
            else:
                if name in ("drawing", "pict"):
                    self.drawings.append(child)
                self.collect(child)
        return self


def _paragraph_text(p: _Element) -> str:
    return _Inline().collect(p).text


def _style_name(par: Paragraph) -> str:
    style = paragraph_style(par)
    return ((style.name if style is not None else "") or "").strip()


def _outline_level(par: Paragraph) -> int:
    """1-based outline level from the paragraph or its style chain; 0 for body text."""
    for ppr in property_chain(par):
        node = ppr.find(qn("w:outlineLvl")) if ppr is not None else None
        if node is not None:
            value = small_int(node.get(qn("w:val"), "9"), 9, 9)
            return value + 1 if value < 9 else 0
    return 0


def _style_level(par: Paragraph, has_title: bool) -> int:
    """Heading level of a paragraph (1 = top) or 0 for body text."""
    name = _style_name(par)
    if name.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(name)
    level = int(match.group(1)) if match else _outline_level(par)
    return level + (1 if has_title and level else 0)


def _is_picture(drawing: _Element) -> bool:
    """A drawing that shows an image, a chart or a diagram — not a shape that only holds a text box
    or a line."""
    if any(True for _ in drawing.iter(*_PICTURE_TAGS)):
        return True
    return any("wordprocessingShape" not in (g.get("uri") or "") and "wordprocessingGroup" not in (g.get("uri") or "")
               for g in drawing.iter(_GRAPHIC_DATA))


def _image(drawing: _Element) -> dict[str, str]:
    """Alt text (``descr``), title and name of a picture."""
    doc_pr = next(drawing.iter(_DOC_PR), None)
    if doc_pr is None:
        return {"name": "image", "alt": ""}
    alt = " ".join(v for v in (doc_pr.get("title", ""), doc_pr.get("descr", "")) if v).strip()
    return {"name": doc_pr.get("name", "image"), "alt": alt}


def _image_bytes(drawing: _Element, part: Part) -> bytes | None:
    """The picture's bytes, from the part its ``a:blip`` embeds (None for a linked or missing picture)."""
    blip = next(drawing.iter(_BLIP), None)
    rel = blip.get(_EMBED) if blip is not None else None
    if not rel:
        return None
    try:
        blob: bytes = part.related_parts[rel].blob
    except (KeyError, AttributeError):
        return None
    return blob


def _part_root(part: Part) -> _Element:
    element: _Element | None = getattr(part, "element", None)  # parts python-docx knows are parsed already
    return element if element is not None else parse_xml(part.blob)


class _Walker:
    def __init__(self, document: DocxDocument, has_title: bool, notes: dict[tuple[str, str], _Element],
                 filename: str) -> None:
        self.document = document
        self.filename = filename
        self.cells_read = 0  # table cells so far (merged cells counted in every slot they cover)
        self.max_cells = limits().max_sheet_cells
        self.numbering = ListNumbering(document)
        self.has_title = has_title
        self.headings = HeadingTracker()
        self.blocks: list[Block] = []
        self.list_lines: list[str] = []
        self.list_kind = ""
        self.list_id = ""
        self.notes = notes
        self.cited: list[tuple[str, str]] = []  # waiting for the end of the current paragraph or list
        self.numbers: dict[str, int] = {}
        self.omitted = 0
        self.items = 0

    # --- text of containers (cells, notes): paragraphs on lines, nested tables flattened ---

    def inline(self, p: _Element, cite: bool = True) -> _Inline:
        """The paragraph's content; its note citations wait for the next :meth:`flush_notes` unless
        ``cite`` is false (the caller cites them once the paragraph's own block is out)."""
        found = _Inline().collect(p)
        self.omitted += found.omitted
        if cite:
            self.cited += found.notes
        return found

    def container_text(self, parent: _Element, nested: list[_Element] | None = None) -> str:
        """The text of a cell, note or text box: paragraphs on lines. A table in it with two rows and two
        columns goes to ``nested`` when given (read as a table of its own), else it is read in (rows on
        lines, cells joined by ``|``)."""
        lines = []
        for item in _children(parent, "block"):
            if xml_name(item) == "p":
                found = self.inline(item)
                lines.append(found.text)
                lines += [self.container_text(box) for box in found.boxes]
            elif nested is not None and _is_data_table(item):
                nested.append(item)
            else:
                grid, _ = self.cells(item)
                lines += [" | ".join(dict.fromkeys(c.text for c in row if c.text)) for row in grid]
        return "\n".join(line for line in lines if line.strip())

    def cells(self, tbl: _Element, nested: list[_Element] | None = None) -> tuple[list[list[Cell]], int]:
        """The table's rows of cells on the layout grid — a horizontal merge (``gridSpan``, ``hMerge``) a
        cell spanning columns, a vertical merge (``vMerge``) one spanning rows, holding the text of every
        cell it merges (Word shows all of it) — and how many leading rows Word repeats as the header
        (``tblHeader``). Slots count against ``max_sheet_cells`` for the whole document."""
        rows: list[list[Cell]] = []
        starts: dict[int, Cell] = {}  # grid column -> the cell a vertical merge there began with
        texts: dict[int, list[str]] = {}  # id of a merged cell -> its texts (joined once, at the end)
        header_rows = 0
        for tr in _children(tbl, "tr"):
            tr_pr = tr.find(qn("w:trPr"))
            if header_rows == len(rows) and _on(tr_pr, "w:tblHeader"):
                header_rows += 1
            col = _int(tr_pr, "w:gridBefore")
            row = [Cell("") for _ in range(min(col, MAX_SPAN))]
            for tc in _children(tr, "tc"):
                props = tc.find(qn("w:tcPr"))
                span = max(1, min(_int(props, "w:gridSpan", 1), MAX_SPAN - col))  # rows stay bounded
                text = self.container_text(tc, nested)
                above = starts.get(col)
                if _continues(props, "w:vMerge") and above is not None and above.colspan == span:
                    above.rowspan += 1
                    if text:
                        texts.setdefault(id(above), [above.text]).append(text)
                elif _continues(props, "w:hMerge") and row:
                    row[-1].colspan += span
                    if text:
                        texts.setdefault(id(row[-1]), [row[-1].text]).append(text)
                else:
                    cell = Cell(text, span, 1, header_rows > len(rows))
                    row.append(cell)
                    for k in range(span):
                        starts.pop(col + k, None)
                    if props is not None and props.find(qn("w:vMerge")) is not None:
                        starts[col] = cell
                col += span
            self.cells_read += col
            if self.cells_read > self.max_cells:
                raise named(self.filename, exceeded("max_sheet_cells", "table cells (merges expanded)", self.max_cells,
                                                    self.cells_read))
            rows.append(row)
        merged = {id(c): c for row in rows for c in row}
        for key, parts in texts.items():
            merged[key].text = "\n".join(parts)
        return rows, header_rows

    # --- body ---

    def walk(self, items: list[_Element]) -> None:
        skip_next = False
        caption_below = ""  # the caption of the table just read, in the paragraph being read
        for index, item in enumerate(items):
            self.items += 1
            if self.items % CHECK_EVERY == 0:
                checkpoint()
            if skip_next:  # a caption its figure took: only what it anchors or cites is left
                skip_next = False
                self.extras(self.inline(item, cite=False))
                continue
            if xml_name(item) == "tbl":
                caption_below = self.table_with_caption(items, index)
                continue
            following = items[index + 1] if index + 1 < len(items) else None
            next_paragraph = following if following is not None and xml_name(following) == "p" else None
            before = len(self.blocks)
            skip_next = self.paragraph(item, next_paragraph)
            if caption_below and len(self.blocks) > before and self.blocks[before].text == caption_below:
                self.blocks[before].meta["caption_of"] = "table"
            caption_below = ""
        self.flush_list()

    def table_with_caption(self, items: list[_Element], index: int) -> str:
        """Reads the table ``items[index]`` with its caption: the paragraph just before it when it reads
        as a table's caption ("Table 3: ..." or the Caption style), else the one just after it (unless
        that one heads the next table). The caption paragraph stays a block, marked
        ``meta["caption_of"] = "table"``; returns the caption when it is the paragraph after."""
        above = self.caption_text(items[index - 1] if index else None)
        if above and self.blocks and self.blocks[-1].text == above:
            self.blocks[-1].meta["caption_of"] = "table"
            self.table(items[index], above)
            return ""
        after = items[index + 1] if index + 1 < len(items) else None
        heads_next = index + 2 < len(items) and xml_name(items[index + 2]) == "tbl"
        below = "" if heads_next else self.caption_text(after)
        self.table(items[index], below)
        return below

    def caption_text(self, p: _Element | None) -> str:
        """The text of a paragraph that reads as a table's caption, else ""."""
        if p is None or xml_name(p) != "p":
            return ""
        text = " ".join(_paragraph_text(p).split())
        if not text or len(text) > CAPTION_CHARS:
            return ""
        if _TABLE_CAPTION.match(text):
            return text
        is_caption = _style_name(Paragraph(p, self.document)).lower() == "caption"
        return text if is_caption and not _CAPTION_TEXT.match(text) else ""

    def flush_list(self) -> None:
        if self.list_lines:
            self.blocks.append(Block(text="\n".join(self.list_lines), kind=BlockKind.LIST,
                                     heading_path=self.headings.path, meta={"list": self.list_kind}))
        self.list_lines = []
        self.list_kind = ""
        self.list_id = ""
        self.flush_notes()

    def flush_notes(self) -> None:
        """The notes cited so far, each once, in citation order."""
        cited, self.cited = self.cited, []
        for key in cited:
            note = self.notes.pop(key, None)
            if note is not None:
                self.note(key[0], note)

    def note(self, kind: str, note: _Element) -> None:
        text = self.container_text(note).strip()
        self.numbers[kind] = number = self.numbers.get(kind, 0) + 1
        if text:
            self.blocks.append(Block(text=text, heading_path=self.headings.path, meta={"note": f"{kind} {number}"}))

    def table(self, tbl: _Element, caption: str = "") -> None:
        rows = list(_children(tbl, "tr"))
        cells = list(_children(rows[0], "tc")) if len(rows) == 1 else []
        if len(cells) == 1:  # a frame around body content
            self.walk(list(_children(cells[0], "block")))
            return
        self.flush_list()
        nested: list[_Element] = []
        grid, _ = self.cells(tbl, nested)  # Word's header rows are marked in the cells
        block = table_from_cells(grid, caption=caption,
                                 heading_path=self.headings.path, lone_notes=False)
        if block is not None:
            self.blocks.append(block)
        self.flush_notes()
        for inner in nested:
            before = len(self.blocks)
            self.table(inner)
            for added in self.blocks[before:]:
                added.meta.setdefault("nested", "true")

    def paragraph(self, p: _Element, caption: _Element | None) -> bool:
        """Adds the paragraph's blocks; True when ``caption`` (the next paragraph) was used."""
        found = self.inline(p, cite=False)
        par = Paragraph(p, self.document)  # a CT_P: python-docx parsed the document
        text = found.text.strip()
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
            if level:
                self.flush_list()
                label = self.numbering.label(*ref)[0] if ref is not None else ""
                self.blocks.append(self.headings.title_block(f"{label} {text}".strip(), level))
            elif _LIST_STYLE.match(_style_name(par)):
                self.list_lines.append(text)
                self.list_kind = self.list_kind or "bulleted"
            else:
                self.flush_list()
                self.blocks.append(Block(text=text, heading_path=self.headings.path))
        used = self.figures(found, caption)
        self.extras(found)
        return used

    def extras(self, found: _Inline) -> None:
        """The text boxes a paragraph anchors, then the notes it cites (after the list it is in)."""
        self.cited += found.notes
        for box in found.boxes:
            self.walk(list(_children(box, "block")))
        if not self.list_lines:
            self.flush_notes()

    def figures(self, found: _Inline, caption: _Element | None) -> bool:
        pictures = [d for d in found.drawings if _is_picture(d)]
        images = [_image(d) for d in pictures]
        blobs = [_image_bytes(d, self.document.part) for d in pictures]
        if not images:
            return False
        self.flush_list()
        caption_text = ""
        if caption is not None:
            text = _paragraph_text(caption).strip()
            is_caption = _style_name(Paragraph(caption, self.document)).lower() == "caption"
            caption_text = text if is_caption or _CAPTION_TEXT.match(text) else ""
        for image, blob in zip(images, blobs, strict=True):
            meta = {"image": image["name"]}
            if image["alt"]:
                meta["alt"] = image["alt"]
            if caption_text:
                meta["caption"] = caption_text
            text = "\n".join(v for v in (caption_text, image["alt"]) if v) or f"[image: {image['name']}]"
            self.blocks.append(Block(text=text, kind=BlockKind.FIGURE, heading_path=self.headings.path, meta=meta,
                                     image=blob))
        return bool(caption_text)


def _related(document: DocxDocument) -> tuple[dict[tuple[str, str], _Element], dict[str, int]]:
    """The footnotes and endnotes by ``(kind, id)``, and the characters of the parts left out
    (headers, footers, comments) by reason."""
    notes: dict[tuple[str, str], _Element] = {}
    omitted: dict[str, int] = {}
    seen: set[str] = set()
    for rel in document.part.rels.values():
        kind = rel.reltype.rsplit("/", 1)[-1]
        if rel.is_external or (kind not in _NOTE_KINDS and kind not in _OMITTED_PARTS):
            continue
        part = rel.target_part
        if str(part.partname) in seen:
            continue
        seen.add(str(part.partname))
        root = _part_root(part)
        if kind in _OMITTED_PARTS:
            reason = _OMITTED_PARTS[kind]
            omitted[reason] = omitted.get(reason, 0) + _text_chars(root)
            continue
        for note in root:
            if xml_name(note) == _NOTE_KINDS[kind] and note.get(qn("w:type"), "normal") == "normal":
                notes[(_NOTE_KINDS[kind], note.get(qn("w:id"), ""))] = note
    return notes, omitted


class DocxParser:
    """Blocks of a Word document in body order."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        try:
            return self._parse(data, filename)
        except (InvalidXmlError, ValueError) as exc:  # python-docx reads an attribute that does not hold its type
            raise ParseError(f"{filename}: not a valid DOCX: {exc}") from exc
        except AttributeError as exc:
            if not malformed_part(exc):
                raise
            raise ParseError(f"{filename}: not a valid DOCX: a part is malformed ({exc})") from exc

    def _parse(self, data: bytes, filename: str) -> ParsedDocument:
        document = _open(data, filename)
        try:
            notes, omitted = _related(document)
        except XMLSyntaxError as exc:
            if is_depth_error(exc):
                raise xml_too_deep(filename) from exc
            raise ParseError(f"{filename}: not a valid DOCX: malformed XML ({exc})") from exc
        items = list(_children(document.element.body, "block"))
        has_title = any(xml_name(it) == "p" and _style_name(Paragraph(it, document)).lower() == "title"
                        and _paragraph_text(it).strip() for it in items)
        walker = _Walker(document, has_title, notes, filename)
        walker.walk(items)
        walker.headings = HeadingTracker()  # notes never cited: at the end, outside any section
        for (kind, _), note in list(walker.notes.items()):
            walker.note(kind, note)
        blocks = walker.blocks
        omitted["tracked_move"] = walker.omitted
        if not blocks:
            raise ParseError(f"{filename}: the DOCX document contains no text")
        core_title = document.core_properties.title or None
        title = core_title or next((b.text for b in blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=blocks, title=title, removed={k: v for k, v in omitted.items() if v})
