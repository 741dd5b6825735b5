"""Ordered lines → paragraphs; figures get their captions; tables split by a page break are joined.

The input is the document's reading-order stream: :class:`Line` objects,
:class:`Region` objects (tables, figures) and ready :class:`Block` objects (pages
read by OCR). Lines are grouped by geometry: same size, vertical gap under a
threshold learnt from the document's own line spacing, horizontal overlap. A
paragraph may continue over a column or page break when the sentence visibly
does (no closing punctuation, next line starts in lower case), and over a figure
or table with its caption.

A line that reads like a numbered section heading ("5.1 Hyper Parameter
Optimization": a dotted number, or any number on a bold line, then a capital, no
closing punctuation) starts a paragraph of its own and the text after it starts
another, even without extra space around it. A caption ("Figure 3: ...", "Table 2.
...") starts a paragraph and ends where its own sentence ends on a short line; it
joins its figure (``attach_captions``) or stays a block of its own beside its table.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from ragloom.ingest.blocks import BBox, Block, BlockKind
from ragloom.ingest.parsers.pdf_cells import PdfTable
from ragloom.ingest.parsers.pdf_layout import Box, Frame, Line
from ragloom.ingest.parsers.pdf_order import MARGIN, Region, caption_kind

BULLET = re.compile(r"^([•▪◦●‣■□◆◇○\-–*]\s|\(?\d{1,3}[.)]\s|\(?[a-zA-Z][.)]\s|[（(][一二三四五六七八九十\d]+[)）])")
CAPTION = re.compile(r"^(figure|fig\.?|图|圖|chart|plate)\s*[\dA-Z一二三四五六七八九十]+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?。！？:;：；\"”')\]]\s*$")
_NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+([^\W\d_])")
_BODY_END = re.compile(r"[.,;，；。:]$")
# the opening of a table's note: a footnote mark, "Note:", "Source:" (and their Chinese and Korean marks)
_NOTE = re.compile(r"^\s*(?:[*†‡§¶※¹²³⁴⁵⁶⁷⁸⁹⁰]|(?:notes?|sources?|footnotes?)\s*[:.：]"
                   r"|(?:注|资料来源|数据来源)\s*[:：])", re.IGNORECASE)
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")

Item = Line | Region | Block
MARGIN_CHARS = 80  # a margin line between two parts of a table (a page number, a running title) is this short


@dataclass(slots=True)
class Paragraph:
    lines: list[Line] = field(default_factory=list)

    @property
    def size(self) -> float:
        return statistics.median(ln.size for ln in self.lines)

    @property
    def bold(self) -> bool:
        return all(ln.bold for ln in self.lines)

    @property
    def page(self) -> int:
        return self.lines[0].page

    @property
    def text(self) -> str:
        out = ""
        for ln in self.lines:
            out = join_text(out, ln.text)
        return out

    def boxes(self, frames: dict[int, Frame]) -> list[tuple[int, BBox]]:
        """The paragraph's boxes (displayed page coordinates): one per run of lines that follow each
        other down a column — so usually one per page, two when the text continues in the next
        column or past a figure."""
        runs: list[tuple[int, Box]] = []
        prev: Line | None = None
        for ln in self.lines:
            box = (ln.left, ln.top, ln.right, ln.bottom)
            if prev is not None and ln.page == prev.page and ln.col == prev.col \
                    and -0.5 * prev.size <= ln.top - prev.bottom <= 2 * prev.size:
                runs[-1] = (ln.page, union(runs[-1][1], box))
            else:
                runs.append((ln.page, box))
            prev = ln
        return [(p, frames[p].to_display(b)) for p, b in runs]


def union(a: Box | None, b: Box) -> Box:
    if a is None:
        return b
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def join_text(left: str, right: str) -> str:
    if not left:
        return right
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[:1].islower():
        return left[:-1] + right  # a word broken at the line end
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[:1].isupper():
        return left + right  # a compound name broken at its hyphen: Soekarno-Hatta
    if _CJK.match(left[-1]) and _CJK.match(right[0]):
        return left + right
    return left + " " + right


def _typical_gap(lines: list[Line]) -> float:
    """Median vertical gap between consecutive same-size lines, relative to line size."""
    gaps = [
        (b.top - a.bottom) / a.size
        for a, b in zip(lines, lines[1:], strict=False)
        if a.page == b.page and a.col == b.col and a.size > 0 and _same_size(a, b)
        and -0.3 * a.size < b.top - a.bottom < 3 * a.size
    ]
    return statistics.median(gaps) if len(gaps) >= 3 else 0.3


def _same_size(a: Line, b: Line) -> bool:
    return abs(a.size - b.size) <= 0.06 * max(a.size, b.size)


def heading_like(line: Line) -> bool:
    """Whether a line reads like a numbered section heading: "5.1 Hyper Parameter Optimization",
    or "5 Experiments" when bold — not "1. Open the valve.", "12 boats arrived" or "3.5 tonnes of"."""
    m = _NUMBERED.match(line.text)
    if m is None or len(line.text) > 120 or _BODY_END.search(line.text) or m.group(2).islower():
        return False
    return "." in m.group(1) or line.bold


def _continues(para: Paragraph, line: Line, gap_limit: float) -> bool:
    """Whether ``line`` continues ``para``: same size and weight, close below and overlapping
    (and no wider apart than the paragraph's own lines), or over a column/page break
    when the sentence visibly runs on. A numbered heading and a caption stand alone."""
    prev = para.lines[-1]
    if not _same_size(prev, line) or BULLET.match(line.text) or prev.bold != line.bold and len(prev.text) < 80:
        return False
    if _starts_block(prev, line) or _ends_block(para, line):
        return False
    if prev.page == line.page and prev.col == line.col:
        gap = line.top - prev.bottom
        overlaps = line.left < prev.right and line.right > prev.left
        if len(para.lines) >= 2 and para.lines[-2].page == prev.page and para.lines[-2].col == prev.col:
            gap_limit = min(gap_limit, (prev.top - para.lines[-2].bottom) / prev.size + 0.3)
        return overlaps and -0.3 * prev.size <= gap <= gap_limit * prev.size
    next_column = prev.page == line.page and line.col == prev.col + 1 and line.top < prev.top
    next_page = line.page == prev.page + 1
    return (next_column or next_page) and not _SENTENCE_END.search(prev.text) and (
        line.text[:1].islower() or _BROKEN_WORD.search(prev.text) is not None)


_BROKEN_WORD = re.compile(r"[^\W\d_]-$")  # a line that ends in a word broken at its hyphen runs on


def _starts_block(prev: Line, line: Line) -> bool:
    """``line`` opens a heading or a caption (unless the line before breaks off mid-sentence)."""
    if caption_kind(line.text) is not None:
        return not re.search(r"[a-z,]$", prev.text)
    if heading_like(line):
        shorter = line.right < prev.right - 2 * line.size
        return bool(_SENTENCE_END.search(prev.text)) or shorter or prev.bold != line.bold or heading_like(prev)
    return False


def _ends_block(para: Paragraph, line: Line) -> bool:
    """``para`` is a numbered heading, or a caption whose last line ends a sentence short of the next line."""
    first, prev = para.lines[0], para.lines[-1]
    if len(para.lines) == 1 and heading_like(first) and not (first.bold and line.bold):  # bold: may wrap
        return first.right < line.right - 2 * line.size or not line.text[:1].islower()
    if caption_kind(first.text) is not None:
        return bool(_SENTENCE_END.search(prev.text)) and prev.right < line.right - 1.5 * line.size
    return False


def is_caption(p: Paragraph) -> bool:
    return caption_kind(p.lines[0].text) is not None


def group(stream: Sequence[Item]) -> list[Paragraph | Region | Block]:
    """Group the lines of the stream into paragraphs; regions and blocks pass through."""
    lines = [it for it in stream if isinstance(it, Line)]
    gap_limit = max(0.5, 1.5 * _typical_gap(lines) + 0.15)
    out: list[Paragraph | Region | Block] = []
    target: Paragraph | None = None  # the paragraph the next line may continue
    kept = -1  # index in out of the last item that is not a figure, table or caption (they are passed over)
    for it in stream:
        if isinstance(it, Line):
            if target is not None and _continues(target, it, gap_limit):
                target.lines.append(it)
                continue
            held = _held_open(out, kept)
            if held is not None and _resumes(held, it):
                held.lines.append(it)
                target = held
                continue
            target = Paragraph([it])
            out.append(target)
        else:
            out.append(it)
            target = None
        if not _passed_over(out[-1]):  # whether an item is passed over is decided by its first line
            kept = len(out) - 1
    return out


def _held_open(out: list[Paragraph | Region | Block], kept: int) -> Paragraph | None:
    """The paragraph before the trailing figures, tables and captions of ``out`` (``out[kept]``, the
    last item that is none of them) when its sentence is left open (None when nothing trails it)."""
    para = out[kept] if 0 <= kept < len(out) - 1 else None
    if isinstance(para, Paragraph) and not is_caption(para) and not _SENTENCE_END.search(para.lines[-1].text):
        return para
    return None


def _passed_over(item: Paragraph | Region | Block) -> bool:
    return isinstance(item, Region) or isinstance(item, Paragraph) and is_caption(item)


def _resumes(para: Paragraph, line: Line) -> bool:
    """``line`` carries on the open sentence of ``para`` after a figure or table and its caption."""
    prev = para.lines[-1]
    return (_same_size(prev, line) and prev.bold == line.bold and line.text[:1].islower()
            and line.page in (prev.page, prev.page + 1) and not BULLET.match(line.text))


def attach_captions(items: list[Paragraph | Region | Block]) -> dict[int, Paragraph]:
    """Pair each figure and table (by ``id``) with the caption paragraph just below or above it, and
    give each table the notes printed right under it (:func:`attach_notes`).

    A figure's caption is removed from ``items`` (the figure block reads it); a table's stays
    in ``items``, beside its table, as a block of its own.
    """
    captions = _pair_captions(items)
    attach_notes(items, captions)
    return captions


def attach_notes(items: list[Paragraph | Region | Block], captions: dict[int, Paragraph]) -> None:
    """Footnotes, notes and source lines printed right under a table (after its caption, if that is
    below it) — paragraphs opening with a note mark (``*``, ``†``, ``Note:``, ``Source:``, ``注:``...),
    each within a few lines of what is above it — become the table's ``notes`` and leave ``items``:
    text attached to the table, never a paragraph of its own nor a row."""
    out: list[Paragraph | Region | Block] = []
    table: Region | None = None
    bottom = 0.0
    for it in items:
        if isinstance(it, Region):
            table = it if it.kind == BlockKind.TABLE and isinstance(it.table, PdfTable) else None
            bottom = it.bottom
        elif table is not None and isinstance(it, Paragraph) and it.lines[0].page == table.page:
            if captions.get(id(table)) is it and it.lines[0].top >= table.top:  # its caption, below it
                bottom = it.lines[-1].bottom
                out.append(it)
                continue
            first = it.lines[0]
            if _NOTE.match(it.text) and -first.size <= first.top - bottom <= 3 * first.size \
                    and isinstance(table.table, PdfTable):
                table.table.notes.append(it.text)
                bottom = it.lines[-1].bottom
                continue
            table = None
        else:
            table = None
        out.append(it)
    items[:] = out


def _pair_captions(items: list[Paragraph | Region | Block]) -> dict[int, Paragraph]:
    captions: dict[int, Paragraph] = {}
    taken: set[int] = set()  # ids of the captions paired
    removed: set[int] = set()  # indices of the figure captions taken out (items is compacted at the end)
    before = -1  # index of the item before items[i] once the captions taken out are gone
    for i, region in enumerate(items):
        if i in removed:  # the caption below the figure before it: the next region's neighbour is that figure
            continue
        if isinstance(region, Region) and region.kind in (BlockKind.FIGURE, BlockKind.TABLE):
            figure = region.kind == BlockKind.FIGURE
            for j in (i + 1, before) if figure else (before, i + 1):
                cand = items[j] if 0 <= j < len(items) else None
                if isinstance(cand, Paragraph) and id(cand) not in taken and _is_caption_of(cand, region):
                    captions[id(region)] = cand
                    taken.add(id(cand))
                    if figure:
                        removed.add(j)
                    break
        before = i
    if removed:
        items[:] = [it for k, it in enumerate(items) if k not in removed]
    return captions


def _is_caption_of(para: Paragraph, region: Region) -> bool:
    first = para.lines[0]
    if first.page != region.page:
        return False
    if region.kind == BlockKind.FIGURE and not CAPTION.match(para.text) and caption_kind(para.text) != "figure":
        return False
    if region.kind == BlockKind.TABLE and caption_kind(para.text) != "table":
        return False
    below = -2 * first.size <= first.top - region.bottom <= 4 * first.size
    above = -2 * first.size <= region.top - para.lines[-1].bottom <= 4 * first.size
    return below or above


def merge_split_tables(items: list[Paragraph | Region | Block], heights: dict[int, float]) -> None:
    """Join a table ending page N with one starting page N+1 that has the same columns
    (``Region.columns`` of the parts are compared within 8 pt): one table whose continuation rows come
    under its header, each cell keeping its own page and box (:meth:`PdfTable.join`: the continuation's
    leading rows that repeat the table's header are left out). The merged table keeps one box per page.
    A page number or a short line in the page's margin between the two parts (below the first, above
    the second) does not keep them apart; it stays after the table.
    """
    i = 0
    while i + 1 < len(items):
        a = items[i]
        k = i + 1
        while k < len(items) and isinstance(a, Region) and _in_margin(items[k], a, heights):
            k += 1
        b = items[k] if k < len(items) else None
        if isinstance(a, Region) and isinstance(b, Region) and _continues_table(a, b, heights):
            if isinstance(a.table, PdfTable) and isinstance(b.table, PdfTable):
                a.table.join(b.table)
            a.continued.append(b)
            del items[k]
            continue
        i += 1


def _in_margin(item: Paragraph | Region | Block, table: Region, heights: dict[int, float]) -> bool:
    """A short paragraph in a page's margin beside ``table``: below a part of it in the bottom margin of
    its page, above a part of it in the top margin, or in the top margin of the page after its last
    part — furniture the page-number and running-line removal left (``MARGIN``)."""
    if not isinstance(item, Paragraph) or len(item.lines) > 2 or len(item.text) > MARGIN_CHARS:
        return False
    first, end = item.lines[0], item.lines[-1]
    height = heights[first.page]
    top_margin = end.bottom <= MARGIN * height
    if first.page == table.parts[-1].page + 1:
        return top_margin
    return any(first.page == part.page and (first.top >= part.bottom and first.top >= (1 - MARGIN) * height
                                            or end.bottom <= part.top and top_margin) for part in table.parts)


def _continues_table(a: Region, b: Region, heights: dict[int, float]) -> bool:
    if not a.kind == b.kind == BlockKind.TABLE:
        return False
    last = a.parts[-1]
    if b.page != last.page + 1 or b.top > 0.3 * heights[b.page] or a.table is None or b.table is None:
        return False
    if len(a.columns) != len(b.columns):
        return False
    return all(abs(x - y) <= 8 for x, y in zip(a.columns, b.columns, strict=True))
