"""Geometry of a PDF text page: characters → lines → paragraphs.

Coordinates here are already converted to PDF points with a top-left origin.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

import pypdfium2 as pdfium

from ragloom.ingest.blocks import BBox

_BULLET = re.compile(r"^([•▪◦●‣\-–*]\s|\(?\d{1,3}[.)]\s|\(?[a-z][.)]\s)")
_SENTENCE_END = re.compile(r"[.!?。！？:;：；\"”')\]]\s*$")
_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


@dataclass(slots=True)
class Line:
    page: int
    text: str
    left: float
    top: float
    right: float
    bottom: float
    size: float  # glyph box height of the line's characters (median)


@dataclass(slots=True)
class Paragraph:
    lines: list[Line] = field(default_factory=list)

    @property
    def size(self) -> float:
        return statistics.median(ln.size for ln in self.lines)

    @property
    def text(self) -> str:
        out = ""
        for ln in self.lines:
            out = _join(out, ln.text)
        return out

    def boxes(self) -> list[tuple[int, BBox]]:
        """One box per page: the union of this paragraph's line boxes on it."""
        per_page: dict[int, list[float]] = {}
        for ln in self.lines:
            box = per_page.setdefault(ln.page, [ln.left, ln.top, ln.right, ln.bottom])
            box[:] = [min(box[0], ln.left), min(box[1], ln.top), max(box[2], ln.right), max(box[3], ln.bottom)]
        return [(p, BBox(round(b[0], 2), round(b[1], 2), round(b[2], 2), round(b[3], 2)))
                for p, b in per_page.items()]


def _join(left: str, right: str) -> str:
    if not left:
        return right
    if left.endswith("-") and len(left) > 1 and left[-2].isalpha() and right[:1].islower():
        return left[:-1] + right
    if _CJK.match(left[-1]) and _CJK.match(right[0]):
        return left + right
    return left + " " + right


def _char_text(textpage: pdfium.PdfTextPage, count: int) -> str:
    text = textpage.get_text_range()
    if len(text) != count:  # surrogate pairs etc.: fall back to per-char code points
        text = "".join(chr(pdfium.raw.FPDFText_GetUnicode(textpage, i) or 32) for i in range(count))
    return text


def page_lines(
    textpage: pdfium.PdfTextPage, page: int, frame: tuple[float, float, float, float]
) -> list[Line]:
    """Lines of one page. ``frame`` = (crop left, crop top, width, height) in PDF points."""
    x0, y_top, width, height = frame
    count = textpage.count_chars()
    text = _char_text(textpage, count)
    lines: list[Line] = []
    chars: list[tuple[str, float, float, float, float]] = []  # ch, l, t, r, b (top-left origin)
    for i, ch in enumerate(text):
        if ch in "\r\n":
            if ch == "\n":
                lines.extend(_make_lines(chars, page))
                chars = []
            continue
        if ch == "\x02":  # pdfium's soft-hyphen marker at a line end
            ch = "-"
        if ch.isspace() or ch == "\x00":
            chars.append((" ", 0.0, 0.0, 0.0, 0.0))
            continue
        left, bottom, right, top = textpage.get_charbox(i, loose=True)
        chars.append((ch, left - x0, y_top - top, right - x0, y_top - bottom))
    lines.extend(_make_lines(chars, page))
    for line in lines:  # keep boxes inside the page
        line.left, line.right = max(line.left, 0.0), min(line.right, width)
        line.top, line.bottom = max(line.top, 0.0), min(line.bottom, height)
    return lines


def _make_lines(chars: list[tuple[str, float, float, float, float]], page: int) -> list[Line]:
    """Split one pdfium line at wide horizontal gaps (columns) and measure each part."""
    parts: list[list[tuple[str, float, float, float, float]]] = [[]]
    prev = None
    for c in chars:
        if c[0] != " " and prev is not None:
            gap, height = c[1] - prev[3], prev[4] - prev[2]
            if gap > 3 * height or c[1] < prev[1] - height:
                parts.append([])
        parts[-1].append(c)
        if c[0] != " ":
            prev = c
    out = []
    for part in parts:
        glyphs = [c for c in part if c[0] != " "]
        text = " ".join("".join(c[0] for c in part).split())
        if not glyphs or not text:
            continue
        out.append(Line(
            page=page, text=text,
            left=min(c[1] for c in glyphs), top=min(c[2] for c in glyphs),
            right=max(c[3] for c in glyphs), bottom=max(c[4] for c in glyphs),
            size=round(statistics.median(c[4] - c[2] for c in glyphs), 1),
        ))
    return out


def _typical_gap(lines: list[Line]) -> float:
    """Median vertical gap between consecutive same-size lines, relative to line size."""
    gaps = [
        (b.top - a.bottom) / a.size
        for a, b in zip(lines, lines[1:], strict=False)
        if a.page == b.page and a.size > 0 and abs(a.size - b.size) <= 0.1 * a.size
        and -0.3 * a.size < b.top - a.bottom < 3 * a.size
    ]
    return statistics.median(gaps) if gaps else 0.2


def _continues(prev: Line, line: Line, gap_limit: float) -> bool:
    """Whether ``line`` continues the paragraph whose last line is ``prev`` (same page)."""
    if abs(prev.size - line.size) > 0.1 * max(prev.size, line.size) or _BULLET.match(line.text):
        return False
    gap = line.top - prev.bottom
    overlaps = line.left < prev.right and line.right > prev.left
    return overlaps and -0.3 * prev.size <= gap <= gap_limit * prev.size


def _continues_over_page(prev: Line, line: Line) -> bool:
    return (
        abs(prev.size - line.size) <= 0.1 * max(prev.size, line.size)
        and not _SENTENCE_END.search(prev.text)
        and line.text[:1].islower()
    )


def group_paragraphs(lines: list[Line]) -> list[Paragraph]:
    """Group lines (reading order) into paragraphs; a paragraph may continue on the next page."""
    gap_limit = max(0.5, 1.5 * _typical_gap(lines) + 0.15)
    paragraphs: list[Paragraph] = []
    for line in lines:
        if paragraphs:
            prev = paragraphs[-1].lines[-1]
            same_page = prev.page == line.page and _continues(prev, line, gap_limit)
            next_page = line.page == prev.page + 1 and _continues_over_page(prev, line)
            if same_page or next_page:
                paragraphs[-1].lines.append(line)
                continue
        paragraphs.append(Paragraph([line]))
    return paragraphs

