"""HTML with BeautifulSoup + lxml: the main text, without navigation and boilerplate.

Dropped: script, style, noscript, template, svg, iframe, form, nav, header,
footer, aside, and elements whose ARIA role is navigation/banner/contentinfo.
The content root is ``<main>`` if present, else the largest ``<article>``, else
``<body>``. Elements nested deeper than ``max_nesting`` fail the parse
(:class:`~ragloom.errors.LimitExceededError` naming the setting).
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag
from bs4.element import NavigableString

from ragloom.errors import ParseError
from ragloom.ingest.blocks import Block, BlockKind, ParsedDocument
from ragloom.ingest.guard import checkpoint, limits
from ragloom.ingest.parsers.bounds import too_deep
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.tabular import expand_spans, table_block
from ragloom.ingest.parsers.text import decode_or_raise

_DROP = ["script", "style", "noscript", "template", "svg", "iframe", "form",
         "nav", "header", "footer", "aside", "button"]
_DROP_ROLES = {"navigation", "banner", "contentinfo", "complementary"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "blockquote", "figure", "figcaption",
               "dl", "dt", "dd", "address", "details", "summary", "body", "center"}
_CHARSET = re.compile(rb"<meta[^>]+charset", re.IGNORECASE)
CHECK_EVERY = 2048  # elements between two task checkpoints


def _text(node: Tag) -> str:
    return " ".join(node.get_text(" ", strip=True).split())


class _Walker:
    """Walks the content tree recursively, one level per element: deeper than ``max_nesting`` fails."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.blocks: list[Block] = []
        self.headings = HeadingTracker()
        self.inline: list[str] = []
        self.max_depth = limits().max_nesting
        self.depth = 0
        self.visited = 0

    def flush(self) -> None:
        text = " ".join(" ".join(self.inline).split())
        self.inline = []
        if text:
            self.blocks.append(Block(text=text, heading_path=self.headings.path))

    def walk(self, node: Tag) -> None:
        self.depth += 1
        if self.depth > self.max_depth:
            raise too_deep(self.filename)
        for child in node.children:
            if isinstance(child, NavigableString):
                if type(child) is NavigableString and child.strip():
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
            text = _text(el)
            if text:
                self.blocks.append(self.headings.title_block(text, _HEADINGS[name]))
        elif name in ("ul", "ol"):
            self.flush()
            items = ["- " + _text(li) for li in el.find_all("li", recursive=False) if _text(li)]
            if items:
                self.blocks.append(Block(text="\n".join(items), kind=BlockKind.LIST, heading_path=self.headings.path))
        elif name == "table":
            self.flush()
            self._table(el)
        elif name == "pre":
            self.flush()
            code = el.get_text()
            if code.strip():
                self.blocks.append(Block(text=code.strip("\n"), kind=BlockKind.CODE, heading_path=self.headings.path))
        elif name == "br":
            self.inline.append("\n")
        elif name in _BLOCK_TAGS or name == "li":
            self.flush()
            self.walk(el)
            self.flush()
        else:
            self.walk(el)

    def _table(self, el: Tag) -> None:
        rows: list[list[tuple[str, int, int]]] = []
        header_rows = 0  # leading rows in <thead> or made only of <th>
        for tr in el.find_all("tr"):
            if tr.find_parent("table") is not el:
                continue
            cells = tr.find_all(["td", "th"], recursive=False)
            if not cells:
                continue
            if header_rows == len(rows) and (tr.find_parent("thead") is not None or all(c.name == "th" for c in cells)):
                header_rows += 1
            rows.append([(_text(c), _span(c, "colspan"), _span(c, "rowspan")) for c in cells])
        grid = expand_spans(rows)
        header_rows = min(header_rows, max(len(grid) - 1, 0))
        header = _header_names(grid[:header_rows])
        caption = el.find("caption")
        meta = {"caption": _text(caption)} if isinstance(caption, Tag) and _text(caption) else {}
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


def _soup(data: bytes, filename: str) -> BeautifulSoup:
    if _CHARSET.search(data[:4096]) or data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return BeautifulSoup(data, "lxml")
    text, _ = decode_or_raise(data, filename)
    return BeautifulSoup(text, "lxml")


def _content_root(soup: BeautifulSoup) -> Tag:
    for el in soup.find_all(_DROP):
        el.decompose()
    for el in soup.find_all(None, attrs={"role": True}):
        if not el.decomposed and str(el.get("role", "")).lower() in _DROP_ROLES:
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
        soup = _soup(data, filename)
        title_tag = soup.find("title")
        title = _text(title_tag) if isinstance(title_tag, Tag) else None
        walker = _Walker(filename)
        walker.element(_content_root(soup))
        walker.flush()
        if not walker.blocks:
            raise ParseError(f"{filename}: the HTML page has no main text")
        if not title:
            title = next((b.text for b in walker.blocks if b.kind == BlockKind.TITLE), None)
        return ParsedDocument(blocks=walker.blocks, title=title or None)
