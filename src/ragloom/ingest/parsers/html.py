"""HTML with BeautifulSoup + lxml: the main text as a browser shows it, without page chrome.

**Text** joins as a browser renders it: white space collapses (a run of spaces, tabs, newlines or
non-breaking spaces is one space, none at the start or end of a block), nothing is invented
between inline elements (``<a>grasses</a>, aquatic`` reads "grasses, aquatic", ``<b>a</b><i>b</i>``
reads "ab"), every block-level element (``p``, ``div``, ``li``, ``td``, ``dt``, ...) starts a new
block and ``<br>`` a new line; soft hyphens (``&shy;``) are left out. ``<pre>`` keeps its white
space (a ``code`` block). Ruby annotations read "base(reading)", as browsers without ruby support
show them.

**Structure**: headings are ``title`` blocks (and the heading path of what follows); a list is one
``list`` block, one ``- item`` line per item, nested items indented by two spaces; a table is one
``table`` block (:func:`~ragloom.ingest.parsers.tabular.table_from_cells`: spans assigned to every
slot, ``<th>`` cells marked as headers, the ``<thead>`` rows or leading rows of ``<th>`` as the
header with a path per column, ``<th>`` down the first columns as stub columns naming their rows,
a one-cell ``<tfoot>`` row as a note), its ``<caption>`` the table's caption and also a text block
just before it (``meta["caption_of"] = "table"``; and ``meta["caption"]``); a table nested in a
cell is a table block of its own after it (``meta["nested"]``), not text of the cell; a
one-column table (layout) is read as ordinary content. Definition terms and definitions, figure captions, block
quotes, addresses and ``<details>`` are blocks: the content of a closed ``<details>`` is kept,
although a browser shows it only once opened, since a reader can open it.

**Dropped on purpose** (nothing else is):

* never shown: ``script``, ``style``, ``template``, ``noscript``, elements with the ``hidden``
  attribute (not ``hidden="until-found"``: find-in-page shows those) or an inline style
  ``display: none`` / ``visibility: hidden``;
* not text: ``svg``, ``iframe``, linked images (their ``alt`` text is not shown), forms and their
  controls (``form``, ``button``); an image the file holds (a ``data:`` URI) is a figure block, its
  ``alt`` text or ``<figcaption>`` as text (:mod:`ragloom.ingest.figures`);
* page chrome: ``nav`` and ``role="navigation"`` (menus, tables of contents, navboxes),
  ``role="banner"`` and ``role="contentinfo"``; ``header``, ``footer``, ``aside`` and
  ``role="complementary"`` unless inside an ``article``, ``main`` or ``section`` (there they
  belong to the content: an article's byline, a sidebar of the text).

The content root is ``<main>`` (or ``role="main"``) if present, else the largest ``<article>``,
else ``<body>``. The bytes are decoded by :func:`~ragloom.ingest.parsers.text.decode_or_raise`
(the ``<meta charset>`` or XML declaration first when the bytes fit it). Elements nested deeper
than ``max_nesting`` fail the parse (:class:`~ragloom.errors.LimitExceededError` naming the
setting) while the tree is being built, before any of it is read.

**Cost** is linear in the size of the page: the tree is built and read in passes that visit each
element a bounded number of times (no search of a subtree per element: a bs4 attribute lookup
that misses, like ``tag.decomposed``, is such a search). Table cells, spans expanded, count
against ``max_sheet_cells`` (all the tables of a page together), and a value a span repeats is
repeated shortened (:func:`~ragloom.ingest.parsers.tabular.span_copy`).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import warnings
from collections.abc import Collection, Iterator

from bs4 import BeautifulSoup, Tag, XMLParsedAsHTMLWarning
from bs4.element import CData, NavigableString, PageElement, RubyParenthesisString, RubyTextString

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, exceeded, limits
from ragloom.ingest.parsers.bounds import named, too_deep
from ragloom.ingest.parsers.common import HeadingTracker, small_int
from ragloom.ingest.parsers.tabular import Cell, expand_spans, table_from_cells
from ragloom.ingest.parsers.text import decode_or_raise

_DROP = ["script", "style", "noscript", "template", "svg", "iframe", "form", "nav", "button"]
_SCOPED = ["header", "footer", "aside"]  # dropped unless inside one of _CONTENT
_CONTENT = ["article", "main", "section"]
_DROP_ROLES = {"navigation", "banner", "contentinfo"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_LISTS = {"ul", "ol", "menu", "dir"}
_PRE = {"pre", "listing", "plaintext", "xmp"}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "blockquote", "figure", "figcaption", "dl", "dt", "dd",
               "address", "details", "summary", "body", "html", "center", "header", "footer", "aside", "fieldset",
               "legend", "hgroup", "caption", "dialog", "search", "li", "tr", "td", "th", "thead", "tbody",
               "tfoot", "colgroup", "frameset", "noframes"}
# elements a browser lays out on lines of their own: text never runs across their edges
_BREAKS = _BLOCK_TAGS | set(_HEADINGS) | _LISTS | _PRE | {"table", "hr", "br"}
_TEXT = (NavigableString, CData, RubyTextString, RubyParenthesisString)  # not comments, doctypes...
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.IGNORECASE)
_DECLARED = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)|<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""",
                       re.IGNORECASE)
_LINE = object()  # a line break among inline pieces
CHECK_EVERY = 2048  # elements between two task checkpoints
MAX_SPAN = 1000  # largest colspan or rowspan read

Piece = str | object


MAX_DATA_URI = 20_000_000  # characters of a data: URI picture read (about 15 MB of image)
_DATA_URI = re.compile(r"^data:image/[\w.+-]+;base64,", re.IGNORECASE)


def _data_uri(src: str) -> bytes | None:
    """The bytes of a base64 ``data:image/...`` URI; None for a link or a malformed or huge one."""
    m = _DATA_URI.match(src.strip())
    if m is None or len(src) > MAX_DATA_URI:
        return None
    try:
        return base64.b64decode(src.strip()[m.end():], validate=False)
    except (ValueError, binascii.Error):
        return None


def _render(pieces: list[Piece]) -> str:
    """Inline pieces as a browser lays them out: white space collapsed, one line per ``_LINE``,
    soft hyphens (shown only where a line breaks) removed."""
    lines: list[str] = []
    current: list[str] = []
    for piece in [*pieces, _LINE]:
        if isinstance(piece, str):
            current.append(piece)
        else:
            line = " ".join("".join(current).replace("\xad", "").split())
            if line:
                lines.append(line)
            current = []
    return "\n".join(lines)


def _pieces(node: Tag, skip: frozenset[str] = frozenset()) -> Iterator[Piece]:
    """The text pieces of ``node``'s subtree in order, ``_LINE`` at each block edge (iterative:
    any depth); elements named in ``skip`` are left out."""
    stack: list[Iterator[PageElement | object]] = [iter(node.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif child is _LINE:
            yield _LINE
        elif isinstance(child, NavigableString):
            if type(child) in _TEXT:
                yield str(child)
        elif isinstance(child, Tag) and child.name not in skip:
            if child.name in _BREAKS:
                yield _LINE
                stack.append(itertools.chain(child.children, (_LINE,)))
            else:
                stack.append(iter(child.children))


def inline_text(node: Tag, skip: frozenset[str] = frozenset()) -> str:
    """The text of ``node`` on one line, as a browser shows it (block edges become spaces)."""
    return " ".join(_render(list(_pieces(node, skip))).split("\n"))


class _Walker:
    """Walks the content tree recursively, one level per element: deeper than ``max_nesting`` fails."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.blocks: list[Block] = []
        self.headings = HeadingTracker()
        self.inline: list[Piece] = []
        self.max_depth = limits().max_nesting
        self.max_cells = limits().max_sheet_cells
        self.depth = 0
        self.visited = 0
        self.cells = 0  # table cells so far, spans expanded

    def add(self, text: str, kind: str = BlockKind.TEXT, meta: dict[str, str] | None = None) -> None:
        if text:
            self.blocks.append(Block(text=text, kind=kind, heading_path=self.headings.path, meta=meta or {}))

    def flush(self) -> None:
        text = _render(self.inline)
        self.inline = []
        self.add(text)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            raise too_deep(self.filename)

    def walk(self, node: Tag) -> None:
        self.enter()
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) in _TEXT:
                    self.inline.append(str(child))
            elif isinstance(child, Tag):
                self.element(child)
        self.depth -= 1

    def element(self, el: Tag) -> None:
        self.visited += 1
        if self.visited % CHECK_EVERY == 0:
            checkpoint()
        name = el.name
        if name in _HEADINGS:
            self.flush()
            text = inline_text(el)
            if text:
                self.blocks.append(self.headings.title_block(text, _HEADINGS[name]))
        elif name in _LISTS:
            self.flush()
            self.add("\n".join(self._list(el, 0)), BlockKind.LIST)
        elif name == "table":
            self.flush()
            self._table(el)
        elif name in _PRE:
            self.flush()
            code = el.get_text().strip("\n")
            if code.strip():
                self.add(code, BlockKind.CODE)
        elif name == "img":
            self._image(el)
        elif name == "br":
            self.inline.append(_LINE)
        elif name == "hr":
            self.flush()
        elif name in _BLOCK_TAGS:
            self.flush()
            self.walk(el)
            self.flush()
        else:
            self.walk(el)

    def _image(self, el: Tag) -> None:
        """A picture the file holds (a ``data:`` URI) is a figure block, its ``alt`` text (or the caption of
        its ``<figure>``) as text; a linked picture is not fetched (the text around it is read as usual)."""
        data = _data_uri(str(el.get("src") or ""))
        if data is None:
            return
        alt = " ".join(str(el.get("alt") or "").split())
        figure = el.find_parent("figure")
        caption_tag = figure.find("figcaption") if figure is not None else None
        caption = inline_text(caption_tag) if isinstance(caption_tag, Tag) else ""
        meta = {k: v for k, v in (("alt", alt), ("caption", caption)) if v}
        self.flush()
        # its text is the alt text alone: the <figcaption> is read as a paragraph of its own too
        self.blocks.append(Block(text=alt, kind=BlockKind.FIGURE, heading_path=self.headings.path, meta=meta,
                                 image=data))

    def _list(self, el: Tag, depth: int) -> list[str]:
        """``- item`` lines of a list, nested lists indented below their item."""
        self.enter()
        indent = "  " * depth
        lines: list[str] = []
        for child in el.children:
            if isinstance(child, Tag) and child.name in _LISTS:  # a list right inside a list
                lines += self._list(child, depth + 1)
            elif isinstance(child, Tag) and child.name == "li":
                text = inline_text(child, skip=frozenset(_LISTS))
                if text:
                    lines.append(f"{indent}- {text}")
                for sub in _outermost(child, _LISTS):  # this item's own sublists
                    lines += self._list(sub, depth + 1)
            elif isinstance(child, Tag) or (isinstance(child, NavigableString) and type(child) in _TEXT):
                text = inline_text(child) if isinstance(child, Tag) else " ".join(child.split())
                if text:  # stray content between the items
                    lines.append(f"{indent}- {text}")
        self.depth -= 1
        return lines

    def _table(self, el: Tag) -> None:
        """A table block: ``<th>`` cells marked as headers, the leading header rows (those of
        ``<thead>``, else leading rows of ``<th>`` that span the columns — not a row of ``<th>`` down
        the first columns alone, which names the rows below: a stub), spans, the ``<caption>``, a
        ``<tfoot>`` row of one cell as a note (other ``<tfoot>`` rows, totals, are the last rows).
        A table nested in a cell with rows and columns of its own is a table block of its own after
        this one (``meta["nested"]``), not text of its cell; a one-column table is read as content."""
        caption_tag = el.find("caption", recursive=False)
        caption = inline_text(caption_tag) if isinstance(caption_tag, Tag) else ""
        self.add(caption, meta={"caption_of": "table"})
        head: list[list[Tag]] = []
        body: list[list[Tag]] = []
        foot: list[list[Tag]] = []
        for tr, section in _table_rows(el):
            cells = tr.find_all(["td", "th"], recursive=False)
            if cells:
                {"thead": head, "tfoot": foot}.get(section, body).append(cells)
        notes = [inline_text(cells[0]) for cells in foot if len(cells) == 1]
        rows = head + body + [cells for cells in foot if len(cells) > 1]
        spans = [[(_span(c, "colspan"), _span(c, "rowspan")) for c in cells] for cells in rows]
        self._count_cells(spans)
        kinds = expand_spans([[("h" if c.name == "th" else "d", *span) for c, span in zip(cells, row_spans,
                                                                                             strict=True)]
                              for cells, row_spans in zip(rows, spans, strict=True)])
        if max((len(r) for r in kinds), default=0) <= 1:  # one column: a layout table, read as content
            for cell in itertools.chain.from_iterable(rows):
                self.walk(cell)
                self.flush()
            return
        nested = [table for cells in rows for cell in cells for table in _outermost(cell, ("table",))
                  if _is_data_table(table)]
        for table in nested:
            table.extract()  # read as a table of its own, below
        grid = [[Cell(inline_text(c), colspan, rowspan, c.name == "th") for c, (colspan, rowspan)
                 in zip(cells, row_spans, strict=True)] for cells, row_spans in zip(rows, spans, strict=True)]
        meta = {"caption": caption} if caption else {}
        block = table_from_cells(grid, header_rows=_header_rows(kinds, len(head)), caption=caption, notes=notes,
                                 heading_path=self.headings.path, meta=meta, lone_notes=False)
        if block:
            self.blocks.append(block)
        elif notes:
            self.add("\n".join(notes))
        for table in nested:
            before = len(self.blocks)
            self._table(table)
            for added in self.blocks[before:]:
                added.meta.setdefault("nested", "true")

    def _count_cells(self, spans: list[list[tuple[int, int]]]) -> None:
        """Count a table's cells, spans expanded (a rowspan ends at the table's last row), against
        ``max_sheet_cells`` for the whole page."""
        rows = len(spans)
        self.cells += sum(colspan * min(rowspan, rows - r) for r, row in enumerate(spans) for colspan, rowspan in row)
        if self.cells > self.max_cells:
            raise named(self.filename, exceeded("max_sheet_cells", "table cells (spans expanded)", self.max_cells,
                                                self.cells))


def _table_rows(table: Tag) -> list[tuple[Tag, str]]:
    """The rows of ``table`` in order, not those of tables nested in it, each with the section it sits
    in (``thead``, ``tfoot``, else ``""``; one pass over the table, nested tables skipped)."""
    rows: list[tuple[Tag, str]] = []
    stack: list[tuple[Iterator[PageElement], str]] = [(iter(table.children), "")]
    while stack:
        children, section = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
        elif isinstance(child, Tag) and child.name != "table":
            if child.name == "tr":
                rows.append((child, section))
            stack.append((iter(child.children), child.name if child.name in ("thead", "tfoot") else section))
    return rows


def _is_data_table(table: Tag) -> bool:
    """A table with at least two rows and two columns (a nested table that is a table, not a frame)."""
    widths = [sum(_span(c, "colspan") for c in tr.find_all(["td", "th"], recursive=False))
              for tr, _ in _table_rows(table)]
    return len([w for w in widths if w]) >= 2 and max(widths, default=0) >= 2


def _header_rows(kinds: list[list[str]], in_head: int) -> int | None:
    """Header rows of a table whose slots read ``"h"`` (a ``<th>`` covers it), ``"d"`` or ``""``: the rows
    of its ``<thead>``; else the leading rows covered by ``<th>`` cells but for a stub row (``<th>``
    down the first columns, nothing after them); None (found by how the rows read) for a table
    without any ``<th>``."""
    if in_head:
        return in_head
    if not any("h" in row for row in kinds):
        return None
    count = 0
    for row in kinds:
        if not row or "d" in row:
            break
        last_h = max(i for i, k in enumerate(row) if k == "h") if "h" in row else -1
        leading = row[: last_h + 1].count("h") == last_h + 1
        if leading and last_h + 1 < len(row) and not any(row[last_h + 1:]):
            break  # <th> down the first columns alone: a stub row
        count += 1
    return count


def _outermost(node: Tag, names: Collection[str]) -> list[Tag]:
    """The elements named in ``names`` inside ``node`` that no other such element inside ``node``
    encloses, in document order (their own content is not searched)."""
    found: list[Tag] = []
    stack: list[Iterator[PageElement]] = [iter(node.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
        elif isinstance(child, Tag):
            if child.name in names:
                found.append(child)
            else:
                stack.append(iter(child.children))
    return found


def _span(cell: Tag, attr: str) -> int:
    """A cell's ``colspan`` or ``rowspan``: 1 to 1,000 (browsers cap a colspan there), else 1."""
    return max(1, small_int(str(cell.get(attr, "1")), 1, MAX_SPAN))


def declared_charset(data: bytes) -> str | None:
    """The charset a page declares in its first 4 KB (``<meta charset>``, ``http-equiv`` or an XML
    declaration), or None."""
    found = _DECLARED.search(data[:4096])
    if not found:
        return None
    label = found.group(1) or found.group(2)
    return label.decode("ascii", "replace") if label else None


def _hidden(el: Tag) -> bool:
    """Not rendered: ``hidden`` (but ``hidden="until-found"``, which find-in-page reveals: the
    collapsed sections of mobile Wikipedia) or an inline ``display: none`` / ``visibility: hidden``."""
    if el.has_attr("hidden") and str(el.get("hidden", "")).strip().lower() != "until-found":
        return True
    return bool(_HIDDEN_STYLE.search(str(el.get("style", ""))))


def _dropped(el: Tag, in_content: bool) -> bool:
    """Hidden, or page chrome by its ARIA role or (outside the content: ``in_content`` is whether an
    ancestor is an article, main or section) by its element."""
    if el.name in _DROP:
        return True
    role = str(el.get("role", "")).lower()
    if _hidden(el) or role in _DROP_ROLES:
        return True
    return (el.name in _SCOPED or role == "complementary") and not in_content


class _Frame:
    """An element on the stack of :func:`_content_root`'s walk."""

    __slots__ = ("children", "el", "in_content", "order", "text")

    def __init__(self, el: Tag, in_content: bool, order: int) -> None:
        self.el = el
        self.children: Iterator[PageElement] = iter(el.children)
        self.in_content = in_content
        self.order = order  # elements entered before this one
        self.text = 0  # characters of text below el, counted for articles


def _content_root(soup: BeautifulSoup) -> Tag:
    """Drop what is not shown or is page chrome, and return the content root: the first ``<main>``,
    else the first ``role="main"``, else the article with the most text, else ``<body>``.

    One pass over the tree, which keeps for each element whether it sits in content (an ancestor is
    an article, main or section) and sums the text of each article as its end is passed."""
    dropped: list[Tag] = []
    main: Tag | None = None
    role_main: Tag | None = None
    articles: list[tuple[int, int, Tag]] = []  # (text length, -order, article)
    entered = 0
    stack = [_Frame(soup, False, entered)]
    while stack:
        top = stack[-1]
        child = next(top.children, None)
        if child is None:
            stack.pop()
            if stack:
                stack[-1].text += top.text
                if top.el.name == "article":
                    articles.append((top.text, -top.order, top.el))
        elif isinstance(child, NavigableString):
            if type(child) in _TEXT:
                top.text += len(child)
        elif isinstance(child, Tag):
            if _dropped(child, top.in_content):
                dropped.append(child)
                continue
            if child.name == "main" and main is None:
                main = child
            elif role_main is None and child.get("role") == "main":
                role_main = child
            entered += 1
            stack.append(_Frame(child, top.in_content or child.name in _CONTENT, entered))
    for el in dropped:
        el.decompose()
    if main is not None:
        return main
    if role_main is not None:
        return role_main
    if articles:  # the longest, the first of equals
        return max(articles, key=lambda a: a[:2])[2]
    return soup.body or soup


class _DepthBoundSoup(BeautifulSoup):
    """A BeautifulSoup tree (lxml) whose building stops as soon as an element opens deeper than
    ``max_depth`` levels below the root element (``<body>`` is level 1): a page nested 100,000 deep
    fails after reading its first few hundred tags."""

    def __init__(self, markup: str, max_depth: int, filename: str) -> None:
        self.max_depth = max_depth
        self.filename = filename
        with warnings.catch_warnings():  # XHTML (EPUB chapters) is read as HTML on purpose
            warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
            super().__init__(markup, "lxml")

    def pushTag(self, tag: Tag) -> None:  # noqa: N802 - BeautifulSoup's name
        super().pushTag(tag)
        if len(self.tagStack) - 2 > self.max_depth:  # the stack holds the soup object and the root element
            raise too_deep(self.filename)


class HtmlParser:
    """Main-text blocks of an HTML page; ``title`` from ``<title>`` or the first h1."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename, declared_charset(data))
        soup = _DepthBoundSoup(text, limits().max_nesting, filename)
        title_tag = soup.find("title")
        title = inline_text(title_tag) if isinstance(title_tag, Tag) else None
        walker = _Walker(filename)
        walker.element(_content_root(soup))
        walker.flush()
        if not walker.blocks:
            raise ParseError(f"{filename}: the HTML page has no main text")
        if not title:
            title = next((b.text for b in walker.blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=walker.blocks, title=title or None, metadata={"encoding": encoding})
