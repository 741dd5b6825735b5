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
``table`` block (spans expanded, header rows named), its ``<caption>`` a text block just before it
(``meta["caption_of"] = "table"``) and in the table's ``meta["caption"]``; a one-column table
(layout) is read as ordinary content. Definition terms and definitions, figure captions, block
quotes, addresses and ``<details>`` are blocks: the content of a closed ``<details>`` is kept,
although a browser shows it only once opened, since a reader can open it.

**Dropped on purpose** (nothing else is):

* never shown: ``script``, ``style``, ``template``, ``noscript``, elements with the ``hidden``
  attribute (not ``hidden="until-found"``: find-in-page shows those) or an inline style
  ``display: none`` / ``visibility: hidden``;
* not text: ``svg``, ``iframe``, images (their ``alt`` text is not shown), forms and their
  controls (``form``, ``button``);
* page chrome: ``nav`` and ``role="navigation"`` (menus, tables of contents, navboxes),
  ``role="banner"`` and ``role="contentinfo"``; ``header``, ``footer``, ``aside`` and
  ``role="complementary"`` unless inside an ``article``, ``main`` or ``section`` (there they
  belong to the content: an article's byline, a sidebar of the text).

The content root is ``<main>`` (or ``role="main"``) if present, else the largest ``<article>``,
else ``<body>``. The bytes are decoded by :func:`~ragloom.ingest.parsers.text.decode_or_raise`
(the ``<meta charset>`` or XML declaration first when the bytes fit it). Elements nested deeper
than ``max_nesting`` fail the parse (:class:`~ragloom.errors.LimitExceededError` naming the
setting).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from bs4 import BeautifulSoup, Tag
from bs4.element import CData, NavigableString, PageElement, RubyParenthesisString, RubyTextString

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, limits
from ragloom.ingest.parsers.bounds import too_deep
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.tabular import expand_spans, table_block
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

Piece = str | object


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
        self.depth = 0
        self.visited = 0

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
                for sub in child.find_all(list(_LISTS)):
                    if sub.find_parent(list(_LISTS)) is el:  # this item's own sublists
                        lines += self._list(sub, depth + 1)
            elif isinstance(child, Tag) or (isinstance(child, NavigableString) and type(child) in _TEXT):
                text = inline_text(child) if isinstance(child, Tag) else " ".join(child.split())
                if text:  # stray content between the items
                    lines.append(f"{indent}- {text}")
        self.depth -= 1
        return lines

    def _table(self, el: Tag) -> None:
        caption_tag = el.find("caption", recursive=False)
        caption = inline_text(caption_tag) if isinstance(caption_tag, Tag) else ""
        self.add(caption, meta={"caption_of": "table"})
        rows: list[list[tuple[str, int, int]]] = []
        cells_of: list[list[Tag]] = []
        header_rows = 0  # leading rows in <thead> or made only of <th>
        for tr in el.find_all("tr"):
            if tr.find_parent("table") is not el:
                continue
            cells = tr.find_all(["td", "th"], recursive=False)
            if not cells:
                continue
            if header_rows == len(rows) and (tr.find_parent("thead") is not None or all(c.name == "th" for c in cells)):
                header_rows += 1
            rows.append([(inline_text(c), _span(c, "colspan"), _span(c, "rowspan")) for c in cells])
            cells_of.append(cells)
        grid = expand_spans(rows)
        if max((len(r) for r in grid), default=0) <= 1:  # one column: a layout table, read as content
            for cell in itertools.chain.from_iterable(cells_of):
                self.walk(cell)
                self.flush()
            return
        header_rows = min(header_rows, max(len(grid) - 1, 0))
        header = _header_names(grid[:header_rows])
        meta = {"caption": caption} if caption else {}
        block = table_block(header, grid[header_rows:], self.headings.path, meta)
        if block:
            self.blocks.append(block)


def _header_names(header_rows: list[list[str]]) -> list[str]:
    """One name per column; several header rows (spanning groups) join as ``group / name``."""
    if not header_rows:
        return []
    return [" / ".join(dict.fromkeys(r[i] for r in header_rows if r[i])) for i in range(len(header_rows[0]))]


def _span(cell: Tag, attr: str) -> int:
    value = str(cell.get(attr, "1")).strip()
    return min(int(value), 1000) if value.isdigit() and int(value) > 0 else 1


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


def _dropped(el: Tag) -> bool:
    """Hidden, or page chrome by its ARIA role or (outside the content) by its element."""
    role = str(el.get("role", "")).lower()
    if _hidden(el) or role in _DROP_ROLES:
        return True
    return (el.name in _SCOPED or role == "complementary") and el.find_parent(_CONTENT) is None


def _content_root(soup: BeautifulSoup) -> Tag:
    for el in soup.find_all(_DROP):
        el.decompose()
    for el in soup.find_all(True):
        if not el.decomposed and _dropped(el):
            el.decompose()
    main = soup.find("main") or soup.find(None, attrs={"role": "main"})
    if isinstance(main, Tag):
        return main
    articles = soup.find_all("article")
    if articles:
        return max(articles, key=lambda a: len(a.get_text()))
    return soup.body or soup


class HtmlParser:
    """Main-text blocks of an HTML page; ``title`` from ``<title>`` or the first h1."""

    def parse(self, data: bytes, filename: str) -> ParsedDocument:
        text, encoding = decode_or_raise(data, filename, declared_charset(data))
        soup = BeautifulSoup(text, "lxml")
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
