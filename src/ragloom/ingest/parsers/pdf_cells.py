"""The text of a PDF table cell from its characters (pdfplumber's character dicts), read in the cell's
own direction.

**Direction.** A cell set sideways (a column header printed bottom to top, "*JOBCTL") is read along its
characters' direction (:func:`direction`: from the character's text matrix, or the ``dir`` a turned
page gives it): its boxes are turned so that the text runs left to right (:func:`oriented`), then read
like any other cell. Reading sideways text top to bottom gives it backwards ("LTCBOJ*").

**Words.** Characters are grouped into lines by how they overlap vertically (:func:`in_lines`: small capitals
and subscripts stay on their line) and each line into words by the gaps between them: a gap wider than a fifth
of the type size, or a space glyph standing in a gap, ends a word. The gap is measured above the line's own
letter spacing (the median gap), so a word set letter-spaced (``D e l h i``) stays one word, and space glyphs
drawn over the digits of a field (``0 3 / 2 5 / 2 0 16`` in the WARN report) split nothing. A glyph drawn
twice at the same place (a bold imitation) is read once; ligatures are spelled out.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pdfplumber.utils.text import LIGATURES

from ragloom.ingest.blocks import BBox, Block, BlockKind, Table
from ragloom.ingest.parsers.common import clean_cell
from ragloom.ingest.parsers.pdf_layout import Frame
from ragloom.ingest.parsers.pdf_order import Region
from ragloom.ingest.parsers.tabular import HEADER_ROWS_MAX, Cell, cells_of, expand_spans, table_from_cells

Char = dict[str, Any]
T = TypeVar("T")
_UNREADABLE = re.compile(r"\(cid:\d+\)|[\ue000-\uf8ff\ufffd]")
DIRECTIONS = ("ltr", "ttb", "rtl", "btt")  # clockwise: each is the previous one turned 90° on the page
WORD_GAP = 0.2  # type sizes: a gap wider than this (above the line's letter spacing) ends a word
SPACE_GAP = 0.08  # type sizes: a space glyph ends a word when it stands in a gap at least this wide
DRAWN_APART = 4  # glyphs at most this far apart in drawing order: a space glyph drawn between them cuts them
LINE_OVERLAP = 0.5  # a glyph overlapping a line's band by this share of the smaller height is on that line


@dataclass(slots=True)
class TextWord:
    """A word of a cell, its box in the cell's reading direction (left to right)."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float


def direction(char: Char) -> str:
    """Which way a character's text runs on the page: ``ltr``, ``ttb``, ``rtl`` or ``btt``."""
    given = char.get("dir")
    if isinstance(given, str):
        return given
    if char.get("upright", True):
        return "ltr"
    a, b = char["matrix"][:2]  # the text's direction in PDF space (y up)
    if abs(a) >= abs(b):
        return "ltr" if a > 0 else "rtl"
    return "btt" if b > 0 else "ttb"


def oriented(char: Char, way: str) -> tuple[float, float, float, float]:
    """A character's box (x0, top, x1, bottom) turned so that text running ``way`` runs left to right."""
    x0, top, x1, bottom = char["x0"], char["top"], char["x1"], char["bottom"]
    if way == "ttb":
        return top, -x1, bottom, -x0
    if way == "btt":
        return -bottom, x0, -top, x1
    if way == "rtl":
        return -x1, -bottom, -x0, -top
    return x0, top, x1, bottom


def main_direction(chars: Sequence[Char]) -> str:
    """The direction most of ``chars`` run in (``ltr`` when there are none)."""
    counts = Counter(direction(c) for c in chars)
    return counts.most_common(1)[0][0] if counts else "ltr"


_Glyph = tuple[float, float, float, float, str, int]  # x0, top, x1, bottom, text (oriented), drawing order


def text_lines(chars: Sequence[Char]) -> list[list[TextWord]]:
    """The words of ``chars``, line by line, in their reading direction (left to right once oriented).
    A character's ``seq`` (its place in the page's drawing order), where given, tells which space glyphs
    were drawn between two characters."""
    way = main_direction(chars)
    glyphs: list[_Glyph] = []
    for c in chars:
        text = str(c.get("text", ""))
        if _UNREADABLE.fullmatch(text):
            text = " "  # a glyph without a character (pdfminer's "(cid:2)", a private-use bullet) separates words
        if text:
            glyphs.append((*oriented(c, way), LIGATURES.get(text, text), int(c.get("seq", -1))))
    if not glyphs:
        return []
    return [words for line in in_lines(glyphs, lambda g: (g[1], g[3])) if (words := _words(line))]


def in_lines(items: Sequence[T], span: Callable[[T], tuple[float, float]]) -> list[list[T]]:
    """``items`` (glyphs, characters) grouped into lines, top to bottom: taken by vertical centre, an item
    joins the line being read when it overlaps that line's band by at least :data:`LINE_OVERLAP` of the
    smaller height — so small capitals, subscripts and superscripts stay on their line."""
    lines: list[list[T]] = []
    band = (0.0, 0.0)
    for it in sorted(items, key=lambda i: sum(span(i))):
        top, bottom = span(it)
        if lines and min(bottom, band[1]) - max(top, band[0]) >= LINE_OVERLAP * min(bottom - top, band[1] - band[0]):
            lines[-1].append(it)
            band = (min(top, band[0]), max(bottom, band[1]))
        else:
            lines.append([it])
            band = (top, bottom)
    return lines


def _words(line: list[_Glyph]) -> list[TextWord]:
    """A line's words: cut where the gap between two glyphs is wide (above the line's letter spacing),
    or where a space glyph was drawn between them (by drawing order; without it, a space glyph standing
    in their gap)."""
    line.sort(key=lambda g: g[0])
    ink = _deduped([g for g in line if g[4].strip()])
    if not ink:
        return []
    blank_seqs = {g[5] for g in line if not g[4].strip() and g[5] >= 0}
    blanks = sorted((g[0] + g[2]) / 2 for g in line if not g[4].strip() and g[5] < 0)
    size = statistics.median(g[3] - g[1] for g in ink) or 1.0
    gaps = [b[0] - a[2] for a, b in zip(ink, ink[1:], strict=False)]
    spacing = max(0.0, statistics.median(gaps)) if len(gaps) >= 3 else 0.0
    words: list[TextWord] = []
    start, k = 0, 0
    for i, gap in enumerate(gaps):
        left, right = ink[i], ink[i + 1]
        while k < len(blanks) and blanks[k] < left[2]:
            k += 1
        spaced = k < len(blanks) and blanks[k] <= right[0] and gap >= SPACE_GAP * size
        if left[5] >= 0 and right[5] >= 0 and 0 < abs(right[5] - left[5]) <= DRAWN_APART:
            low, high = sorted((left[5], right[5]))
            spaced = any(q in blank_seqs for q in range(low + 1, high))
        if gap - spacing > WORD_GAP * size or spaced:
            words.append(_word(ink[start:i + 1]))
            start = i + 1
    words.append(_word(ink[start:]))
    return words


def _deduped(glyphs: list[_Glyph]) -> list[_Glyph]:
    """Glyphs without the copies drawn over one another (same text, nearly the same place)."""
    out: list[_Glyph] = []
    for g in glyphs:
        if out and out[-1][4] == g[4] and abs(out[-1][0] - g[0]) < 0.3 * max(g[2] - g[0], 0.1) \
                and abs(out[-1][1] - g[1]) < 0.3 * max(g[3] - g[1], 0.1):
            continue
        out.append(g)
    return out


def _word(glyphs: Sequence[_Glyph]) -> TextWord:
    return TextWord("".join(g[4] for g in glyphs), glyphs[0][0], max(g[2] for g in glyphs),
                    min(g[1] for g in glyphs), max(g[3] for g in glyphs))


def cell_text(chars: Sequence[Char]) -> str:
    """The text of a cell's characters: its lines in reading order, words joined by single spaces."""
    return clean_cell(" ".join(w.text for line in text_lines(chars) for w in line))


# -- a PDF table: its cells, joined over pages, made a block -------------------------------------------


@dataclass(slots=True)
class PdfTable(Table):
    """A table as found on a PDF page (or on several, once joined): ``cells`` row by row with their spans
    and boxes — ``(page, box)``, the box in that page's *reading frame* — as
    :func:`~ragloom.ingest.parsers.tabular.table_from_cells` takes them. ``rows`` holds the same rows'
    texts, spans repeated, header rows included (what a join or a check compares); ``header`` stays
    empty: which rows head the table is decided when the block is made."""

    cells: list[list[Cell]] = field(default_factory=list)

    @classmethod
    def of(cls, cells: list[list[Cell]]) -> PdfTable:
        return cls(header=[], rows=_texts(cells), cells=cells)

    def join(self, other: PdfTable) -> None:
        """Append ``other``, this table's continuation on the next page, leaving out its leading rows
        that repeat this table's first rows (its header printed again)."""
        theirs = other.rows
        k = 0
        while k < min(HEADER_ROWS_MAX, len(self.rows) - 1, len(theirs)) and _same(theirs[k], self.rows[k]):
            k += 1
        self.cells.extend(other.cells[k:])
        self.rows.extend(theirs[k:])
        self.notes.extend(other.notes)


def _texts(cells: list[list[Cell]]) -> list[list[str]]:
    return expand_spans([[(c.text, c.colspan, c.rowspan) for c in row] for row in cells])


def _same(a: list[str], b: list[str]) -> bool:
    def key(row: list[str]) -> list[str]:
        values = [" ".join(v.split()).casefold() for v in row]
        while values and not values[-1]:
            values.pop()
        return values

    return bool(any(a)) and key(a) == key(b)


def table_block(region: Region, frames: dict[int, Frame], caption: str, path: tuple[str, ...]) -> Block:
    """The ``table`` block of a table region: its cells (boxes on the displayed page) through
    :func:`~ragloom.ingest.parsers.tabular.table_from_cells`; its boxes are the region's own on each
    page (the table's frame), ``meta["pages"]`` lists them and ``meta["caption"]`` holds its caption."""
    boxes = [(part.page, frames[part.page].to_display((part.left, part.top, part.right, part.bottom)))
             for part in region.parts]
    meta = {"pages": ",".join(str(p) for p, _ in boxes)}
    if caption:
        meta["caption"] = caption
    table = region.table
    cells = table.cells if isinstance(table, PdfTable) else cells_of(
        [table.header, *table.rows] if table is not None and any(table.header) else table.rows if table else [])
    shown = [[Cell(c.text, c.colspan, c.rowspan, c.header,
                   None if c.box is None else (c.box[0], frames[c.box[0]].to_display(_corners(c.box[1]))))
              for c in row] for row in cells]
    notes = table.notes if isinstance(table, PdfTable) else []
    block = table_from_cells(shown, header_rows=_marked_rows(shown), caption=caption, notes=notes,
                             heading_path=path, meta=meta)
    if block is None:
        return Block(text="", kind=BlockKind.TABLE, heading_path=path, page=boxes[0][0], boxes=boxes,
                     table=Table(header=[], rows=[]), meta=meta)
    block.page, block.boxes = boxes[0][0], boxes
    return block


def _marked_rows(rows: list[list[Cell]]) -> int | None:
    """How many leading rows (with text) the page marks as the header (bold, drawn as a grouped header):
    the header is those rows, no more; None when it marks none (the rows' reading decides)."""
    count = 0
    for row in rows:
        filled = [c for c in row if c.text]
        if not filled:
            continue
        if not all(c.header for c in filled):
            break
        count += 1
    return count or None


def _corners(box: BBox) -> tuple[float, float, float, float]:
    return box.left, box.top, box.right, box.bottom
