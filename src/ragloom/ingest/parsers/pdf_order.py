"""Reading order of a PDF page, and removal of running headers, footers and page numbers.

Columns are found per page from the x-extent of its narrow lines: a *gutter*
is a vertical strip inside the text area that (almost) no narrow line crosses,
with enough text on both sides. Lines (or regions: tables, figures) that cross
a gutter span the columns and cut the page into bands; each band is read column
by column, top to bottom, and the bands in page order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ragloom.ingest.blocks import BlockKind, Table
from ragloom.ingest.parsers.pdf_layout import Line

_PAGE_NUMBER = re.compile(
    r"^(page\s*|p\.\s*|第\s*)?[-–—(\[]?\s*(\d{1,4}|[ivxlc]{1,6})\s*[-–—)\]]?\s*(页|頁)?"
    r"(\s*(of|/|von|de)\s*\d{1,4})?$",
    re.IGNORECASE,
)
MARGIN = 0.12  # share of the page height that counts as header / footer zone


class _Boxed(Protocol):
    left: float
    top: float
    right: float
    bottom: float


class _Placed(_Boxed, Protocol):
    col: int  # column index set by reading order (-1: spans the columns)


T = TypeVar("T", bound=_Boxed)
P = TypeVar("P", bound=_Placed)


@dataclass(slots=True)
class Region:
    """A non-text item placed in reading order: a table or a figure (reading-frame box)."""

    kind: BlockKind  # TABLE or FIGURE
    page: int
    left: float
    top: float
    right: float
    bottom: float
    table: Table | None = None
    columns: list[float] = field(default_factory=list)  # tables: column left edges
    col: int = 0
    continued: list[Region] = field(default_factory=list)  # a table's parts on the following pages

    @property
    def parts(self) -> list[Region]:
        """The page pieces of the region, first page first."""
        return [self, *self.continued]


def find_gutters(lines: Sequence[_Boxed], width: float) -> list[tuple[float, float]]:
    """Vertical gaps between text columns on one page, left to right."""
    if len(lines) < 6:
        return []
    text_left = min(ln.left for ln in lines)
    text_right = max(ln.right for ln in lines)
    span = text_right - text_left
    narrow = [ln for ln in lines if ln.right - ln.left < 0.6 * span]
    if len(narrow) < 6 or span < 0.3 * width:
        return []
    bins = int(span // 2) + 2
    counts = [0] * (bins + 1)
    for ln in narrow:
        counts[int((ln.left - text_left) // 2)] += 1
        counts[min(bins, int((ln.right - text_left) // 2) + 1)] -= 1
    allowed = max(1, len(narrow) // 25)
    gutters: list[tuple[float, float]] = []
    running, start = 0, None
    for i in range(bins):
        running += counts[i]
        if running <= allowed and start is None:
            start = i
        elif running > allowed and start is not None:
            gutters.append((text_left + start * 2, text_left + i * 2))
            start = None
    return [g for g in gutters if _is_gutter(g, narrow, text_left, text_right)]


def _is_gutter(gap: tuple[float, float], narrow: Sequence[_Boxed], text_left: float, text_right: float) -> bool:
    lo, hi = gap
    if hi - lo < 7 or lo - text_left < 60 or text_right - hi < 60:
        return False
    span = text_right - text_left
    for side in ([ln for ln in narrow if ln.right <= lo + 2], [ln for ln in narrow if ln.left >= hi - 2]):
        widths = sorted(ln.right - ln.left for ln in side)
        # a column of text is mostly full lines; short label/value fragments are a form or a table
        if len(side) < 3 or widths[len(widths) // 2] < 0.2 * span:
            return False
    return True


def order_page(items: Sequence[P], width: float) -> list[P]:
    """Items of one page in reading order; sets ``col`` on each (-1: spans the columns)."""
    gutters = find_gutters([it for it in items if isinstance(it, Line)], width)
    if not gutters:
        for it in items:
            it.col = 0
        return _rows(list(items))
    ordered: list[P] = []
    band: list[P] = []
    for it in sorted(items, key=lambda i: (i.top, i.left)):
        if any(it.left < lo - 2 and it.right > hi + 2 for lo, hi in gutters):
            it.col = -1
            ordered += _band(band, gutters)
            ordered.append(it)
            band = []
        else:
            centre = (it.left + it.right) / 2
            it.col = sum(1 for lo, _ in gutters if centre > lo)
            band.append(it)
    return ordered + _band(band, gutters)


def _band(band: list[P], gutters: list[tuple[float, float]]) -> list[P]:
    out: list[P] = []
    for col in range(len(gutters) + 1):
        out += _rows([it for it in band if it.col == col])
    return out


def _rows(items: list[T]) -> list[T]:
    """Top to bottom; items whose vertical centres are close form a row read left to right."""
    items = sorted(items, key=lambda i: (i.top + i.bottom) / 2)
    rows: list[list[T]] = []
    for it in items:
        centre, height = (it.top + it.bottom) / 2, it.bottom - it.top
        if rows:
            last = rows[-1][-1]
            if abs(centre - (last.top + last.bottom) / 2) < 0.4 * min(height, last.bottom - last.top):
                rows[-1].append(it)
                continue
        rows.append([it])
    return [it for row in rows for it in sorted(row, key=lambda i: i.left)]


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NUMBER.match(text.strip()))


def _key(line: Line) -> str:
    return re.sub(r"\d+", "#", " ".join(line.text.lower().split()))


def drop_running(pages: dict[int, list[Line]], heights: dict[int, float],
                 context: dict[int, list[Line]] | None = None) -> dict[int, list[Line]]:
    """Remove running headers/footers and page numbers from ``pages`` (page → lines).

    A running line sits in the top or bottom ``MARGIN`` of its page, is not set
    larger than the body text, and its text (digits ignored) recurs at about the
    same height on at least half the pages (and two). ``context`` adds lines of neighbouring pages, so that a short page
    range task still recognises the document's running lines. A lone number (or
    "Page 3 of 9") in the margin is a page number.
    """
    every = {**(context or {}), **pages}
    limit = 1.15 * _body_size([ln for lines in every.values() for ln in lines])
    seen: dict[str, list[tuple[int, float]]] = {}
    for number, lines in every.items():
        for ln in lines:
            if _in_margin(ln, heights[number]) and ln.size <= limit:
                seen.setdefault(_key(ln), []).append((number, ln.top))
    n_pages = len(every)
    repeated: set[tuple[str, int]] = set()
    for key, places in seen.items():
        for _, top in places:
            near = {p for p, t in places if abs(t - top) <= 4}
            if len(near) >= 2 and len(near) >= n_pages / 2:
                repeated.add((key, round(top)))
    out: dict[int, list[Line]] = {}
    for number, lines in pages.items():
        out[number] = [
            ln for ln in lines
            if not (_in_margin(ln, heights[number]) and ln.size <= limit
                    and (is_page_number(ln.text) or _is_repeated(_key(ln), ln.top, repeated)))
        ]
    return out


def _body_size(lines: list[Line]) -> float:
    weights: dict[float, int] = {}
    for ln in lines:
        weights[round(ln.size)] = weights.get(round(ln.size), 0) + len(ln.text)
    return max(weights, key=lambda k: weights[k]) if weights else 0.0


def _in_margin(line: Line, height: float) -> bool:
    return line.bottom < MARGIN * height or line.top > (1 - MARGIN) * height


def _is_repeated(key: str, top: float, repeated: set[tuple[str, int]]) -> bool:
    return any((key, round(top) + d) in repeated for d in range(-4, 5))
