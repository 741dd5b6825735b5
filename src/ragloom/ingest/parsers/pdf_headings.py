"""Paragraphs, regions and OCR blocks → final blocks: headings with levels, lists, tables, figures.

A heading needs a cue a reader sees. A paragraph is a heading when it matches an
entry of the PDF outline (bookmarks) or the PDF's structure tree tags it as one
(H1..H6, H, Title), or when it is short and set larger than the body text, or
entirely bold (every word of it), or numbered like a section ("1.2 Scope",
"Chapter 3", "第三章"). Text that ends a sentence (of five words or more, or
with "。") is running text, however large; text at body size that opens with a
lower-case word continues a sentence: neither is a heading without the outline
or a tag. Levels come from the outline when the heading is in it, else from the
tag's number, else from the numbering depth (shifted below any larger unnumbered
headings such as a document title), else from the rank of the heading's style
(size, weight) among all heading styles.
Consecutive list items become one ``list`` block (one item per line). A caption
is never a heading, nor is text that is mostly not letters (a formula, a lone
letter). A table's caption (or its title row) is a ``text`` block just before
or after the table with ``meta["caption_of"] = "table"``; the table block has
``meta["caption"]``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pypdfium2 as pdfium

from ragloom.ingest.blocks import BBox, Block, BlockKind
from ragloom.ingest.parsers.common import HeadingTracker
from ragloom.ingest.parsers.pdf_cells import table_block
from ragloom.ingest.parsers.pdf_layout import Frame
from ragloom.ingest.parsers.pdf_order import Region
from ragloom.ingest.parsers.pdf_paragraphs import BULLET, Paragraph, is_caption, union

_DOTTED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+\S")
_CHAPTER = re.compile(r"^(chapter|part|book)\s+([\dIVXLC]+|[A-Z]|[a-z]+)\b", re.IGNORECASE)
_SECTION = re.compile(r"^(section|appendix|annex)\s+([\dIVXLC]+|[A-Z])\b", re.IGNORECASE)
_CJK_HEAD = re.compile(r"^第\s*[一二三四五六七八九十百千零〇两\d]+\s*([编部篇章节条])")
_CJK_LEVEL = {"编": 1, "部": 1, "篇": 1, "章": 1, "节": 2, "条": 3}
_BODY_END = re.compile(r"[.,;，；。:]$")
_WORD = re.compile(r"[^\W\d_]{2}|[\u3400-\u9fff\uac00-\ud7af]")
_SENTENCE_END_CJK = re.compile(r"。$")  # a question may be a heading ("What is a pump?"), a statement not
_SENTENCE_END = re.compile(r"[^\W\d_]{2}\.$")
SENTENCE_WORDS = 5  # a heading of this many words or more that ends like a sentence is a sentence
_TAG = re.compile(r"^(?:h|heading)\s*([1-6])?$|^(title)$", re.IGNORECASE)
_FIRST_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    title: str
    level: int  # 1 = top
    page: int | None  # 1-based


def read_outline(doc: pdfium.PdfDocument) -> list[OutlineEntry]:
    """The document's bookmarks in order (empty when it has none)."""
    entries = []
    for mark in doc.get_toc(max_depth=8):
        title = " ".join((mark.get_title() or "").split())
        if not title:
            continue
        dest = mark.get_dest()
        index = dest.get_index() if dest is not None else None
        entries.append(OutlineEntry(title, mark.level + 1, index + 1 if index is not None else None))
    return entries


def numbering_level(text: str) -> int | None:
    """The section depth a heading's numbering implies, or None when it has none."""
    if m := _CJK_HEAD.match(text):
        return _CJK_LEVEL[m.group(1)]
    if _CHAPTER.match(text):
        return 1
    if _SECTION.match(text):
        return 2
    if m := _DOTTED.match(text):
        return m.group(1).count(".") + 1
    return None


def _wordy(text: str) -> bool:
    """Text with a word in it and mostly letters: not a formula ("⇒ π", "| xn ≥ 0 }") or a lone letter."""
    glyphs = [c for c in text if not c.isspace()]
    letters = sum(1 for c in glyphs if c.isalpha())
    return _WORD.search(text) is not None and 2 * letters >= len(glyphs)


def _runs_on(text: str) -> bool:
    """Text that opens with a lower-case word ("published in the ...", "and the"): the rest of a
    sentence, not a heading ("iPhone", "e" of "e) Scope" are not such words)."""
    m = _FIRST_WORD.match(text.lstrip())
    return m is not None and len(m.group()) >= 2 and m.group().islower()


def _ends_sentence(text: str) -> bool:
    """Text that ends a statement ("…的法律责任。", "… is kept on site."): running text, even set large."""
    if _SENTENCE_END_CJK.search(text):
        return True
    return _SENTENCE_END.search(text) is not None and len(text.split()) >= SENTENCE_WORDS


def _tagged(p: Paragraph) -> tuple[bool, int | None]:
    """Whether the PDF's structure tree tags ``p`` as a heading, and the level its tag names (None for
    "H": the level then comes from the heading's style)."""
    m = _TAG.match(p.lines[0].tag)
    if m is None:
        return False, None
    return True, (int(m.group(1)) if m.group(1) else 1 if m.group(2) else None)


def _norm(text: str) -> str:
    return re.sub(r"[\s.:：]+", " ", text.lower()).strip()


class _Headings:
    """Decides which paragraphs are headings and at which level."""

    def __init__(self, paragraphs: list[Paragraph], outline: list[OutlineEntry]) -> None:
        weights: Counter[float] = Counter()
        bold: Counter[bool] = Counter()
        for p in paragraphs:
            for ln in p.lines:
                weights[round(ln.size)] += len(ln.text)
                bold[ln.bold] += len(ln.text)
        self.body = weights.most_common(1)[0][0] if weights else 0.0
        self.body_bold = bool(bold) and bold.most_common(1)[0][0]
        self.outline = {_norm(e.title): e for e in outline}
        heads = [p for p in paragraphs if self._is_heading(p)]
        styles = sorted({self._style(p) for p in heads}, reverse=True)
        numbered = [(self._style(p), lvl) for p in heads if (lvl := numbering_level(p.text)) is not None]
        top_numbered = max((s for s, _ in numbered), default=None)
        unnumbered_styles = {self._style(p) for p in heads if numbering_level(p.text) is None}
        self.shift = sum(1 for s in unnumbered_styles if top_numbered and s > top_numbered
                         and s not in {st for st, _ in numbered})
        by_style: dict[tuple[float, bool], Counter[int]] = {}
        for style, lvl in numbered:
            by_style.setdefault(style, Counter())[lvl + self.shift] += 1
        self.style_level = {s: (by_style[s].most_common(1)[0][0] if s in by_style else i + 1)
                            for i, s in enumerate(styles)}

    @staticmethod
    def _style(p: Paragraph) -> tuple[float, bool]:
        return (round(p.size), p.bold)

    def _outline_entry(self, p: Paragraph) -> OutlineEntry | None:
        entry = self.outline.get(_norm(p.text))
        if entry and (entry.page is None or abs(entry.page - p.page) <= 1):
            return entry
        return None

    def _is_heading(self, p: Paragraph) -> bool:
        text = p.text
        if len(text) > 200 or len(p.lines) > 3 or not _wordy(text) or is_caption(p):
            return False
        if self._outline_entry(p) or _tagged(p)[0]:
            return True
        if _ends_sentence(text):
            return False
        if p.size >= self.body * 1.15:
            return True
        if _runs_on(text):
            return False
        short = len(p.lines) <= 2 and len(text) <= 120 and not _BODY_END.search(text)
        if p.bold and not self.body_bold and short:
            return True
        if numbering_level(text) is None or not short or len(p.lines) > 1:
            return False
        dotted = _DOTTED.match(text)  # a plain "1." at body size is a list item, "1.2" a section
        return dotted is None or "." in dotted.group(1)

    def level(self, p: Paragraph) -> int | None:
        """The heading level of ``p`` (1 = top), or None when it is body text."""
        if not self._is_heading(p):
            return None
        if entry := self._outline_entry(p):
            return entry.level
        if (tagged := _tagged(p)[1]) is not None:
            return tagged
        if (lvl := numbering_level(p.text)) is not None:
            return min(6, lvl + self.shift)
        return min(6, self.style_level.get(self._style(p), 1))


def make_blocks(items: list[Paragraph | Region | Block], frames: dict[int, Frame], outline: list[OutlineEntry],
                captions: dict[int, Paragraph]) -> list[Block]:
    """The final blocks, in reading order, with heading paths."""
    headings = _Headings([it for it in items if isinstance(it, Paragraph)], outline)
    tracker = HeadingTracker()
    table_captions = {id(p) for p in captions.values()}  # figure captions left ``items``
    blocks: list[Block] = []
    for it in items:
        if isinstance(it, Block):  # a page read by OCR
            if it.kind == BlockKind.TITLE:
                it.heading_path = tracker.title(it.text, it.level or 1)
            else:
                it.heading_path = tracker.path
            blocks.append(it)
        elif isinstance(it, Region):
            block = _region_block(it, frames, captions.get(id(it)), tracker.path)
            if it.title is not None:  # a table's own title row: a caption block just before it
                box = [(it.page, frames[it.page].to_display(it.title[1]))]
                blocks.append(Block(text=it.title[0], heading_path=tracker.path, page=it.page, boxes=box,
                                    meta={"caption_of": "table"}))
            blocks.append(block)
        elif id(it) in table_captions:
            boxes = it.boxes(frames)
            blocks.append(Block(text=it.text, heading_path=tracker.path, page=boxes[0][0], boxes=boxes,
                                meta={"caption_of": "table"}))
        elif (level := headings.level(it)) is not None:
            boxes = it.boxes(frames)
            blocks.append(tracker.title_block(it.text, level, page=boxes[0][0], boxes=boxes))
        else:
            _add_text(blocks, it, frames, tracker.path)
    return blocks


def _add_text(blocks: list[Block], p: Paragraph, frames: dict[int, Frame], path: tuple[str, ...]) -> None:
    boxes = p.boxes(frames)
    if not (m := BULLET.match(p.text)):
        blocks.append(Block(text=p.text, heading_path=path, page=boxes[0][0], boxes=boxes))
        return
    last = blocks[-1] if blocks else None
    if last is not None and last.kind == BlockKind.LIST and last.heading_path == path:
        last.text += "\n" + p.text
        merged = dict(last.boxes)
        for page, box in boxes:
            prev = merged.get(page)
            merged[page] = box if prev is None else _bbox_union(prev, box)
        last.boxes = list(merged.items())
        return
    blocks.append(Block(text=p.text, kind=BlockKind.LIST, heading_path=path, page=boxes[0][0], boxes=boxes,
                        meta={"marker": m.group(1).strip()}))


def _bbox_union(a: BBox, b: BBox) -> BBox:
    return BBox(*union((a.left, a.top, a.right, a.bottom), (b.left, b.top, b.right, b.bottom)))


def _region_block(region: Region, frames: dict[int, Frame], caption: Paragraph | None,
                  path: tuple[str, ...]) -> Block:
    boxes = [(part.page, frames[part.page].to_display((part.left, part.top, part.right, part.bottom)))
             for part in region.parts]
    if region.kind == BlockKind.FIGURE:
        meta = {}
        text = ""
        if caption is not None:
            text = caption.text
            meta["caption"] = text
            (page, box), = boxes
            (_, cap), = caption.boxes(frames)[:1]
            boxes = [(page, _bbox_union(box, cap))]
        return Block(text=text, kind=BlockKind.FIGURE, heading_path=path, page=boxes[0][0], boxes=boxes, meta=meta)
    title = caption.text if caption is not None else region.title[0] if region.title is not None else ""
    return table_block(region, frames, title, path)
