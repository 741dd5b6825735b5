"""Reading order of a PDF page, removal of running headers, footers and page numbers, vector figures.

Columns are found per page from the x-extent of its narrow lines: a *gutter*
is a vertical strip inside the text area that (almost) no narrow line crosses,
with enough text on both sides. Lines (or regions: tables, figures) that cross
a gutter span the columns and cut the page into bands; each band is read column
by column, top to bottom, and the bands in page order.

Captions are recognised here (:func:`caption_kind`) because a figure drawn with
vector paths is found from the caption that names it (:func:`vector_figures`).
"""

from __future__ import annotations

import heapq
import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from ragloom.ingest.blocks import BlockKind, Table
from ragloom.ingest.parsers.pdf_layout import Line

log = logging.getLogger(__name__)

_PAGE_NUMBER = re.compile(
    r"^(page\s*|p\.\s*|第\s*)?[-–—(\[]?\s*(\d{1,4}|[ivxlc]{1,6})\s*[-–—)\]]?\s*(页|頁)?"
    r"(\s*(of|/|von|de)\s*\d{1,4})?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
# "Figure 3: ...", "Fig. 2. ...", "Table IV - ...", "Figure 3 Growth ...", "图 2 ...": a caption's first line
CAPTION_START = re.compile(
    r"^(?:(?i:(figure|fig\.|chart|plate|exhibit)|(table|tab\.))\s*(?:\d+|[IVX]+|[A-Z])(?:[.\-–]\d+)*[a-z]?"
    r"(?:\s*[:.|—–-](?:\s|$)|\s+[A-Z\d(])|([图圖])\s*\d+|(表)\s*\d+)"
)
MIN_FIGURE_SIDE = 36.0  # points; smaller pictures and drawings are icons, bullets and rules
MARGIN = 0.12  # share of the page height that counts as header / footer zone
MIN_DENSITY = 0.4  # share of the pages from a running line's first to last occurrence that hold it
FIGURE_WORK = 4_000_000  # drawing objects looked at per page in the search for vector figures


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
    # tables: a first row across every column (a title, not a header), and its box
    title: tuple[str, tuple[float, float, float, float]] | None = None

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
        counts[min(bins, int((ln.left - text_left) // 2))] += 1
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


def caption_kind(text: str) -> str | None:
    """``"figure"`` or ``"table"`` when ``text`` starts like a caption ("Figure 3: ...", "Table 2. ..."), else None."""
    m = CAPTION_START.match(text)
    if m is None:
        return None
    return "table" if m.group(2) or m.group(4) else "figure"


def vector_figures(paths: Sequence[tuple[float, float, float, float]], lines: Sequence[Line],
                   taken: Sequence[_Boxed], size: tuple[float, float]) -> list[Region]:
    """Figures drawn with vector paths (a chart, a diagram) that a figure caption names.

    For each line starting like a figure caption, the drawing objects just above it (else
    just below it) are gathered with every object touching them, up to the caption; the
    result is a figure when it is at least ``MIN_FIGURE_SIDE`` wide and tall. Objects
    inside ``taken`` (tables, pictures) and page-sized frames are left out.

    Each caption looks at every drawing object of the page, so a page of many captions and many
    objects (a hostile one: thousands of each) stops looking once :data:`FIGURE_WORK` objects have
    been looked at; the captions left are read as text without a drawn figure (a page of a real
    document uses a few thousand).
    """
    captions = [ln for ln in lines if caption_kind(ln.text) == "figure"]
    if not captions or not paths or len(paths) * (len(taken) + 1) > FIGURE_WORK:
        return []
    width, height = size

    def free(b: tuple[float, float, float, float]) -> bool:
        if (b[2] - b[0]) * (b[3] - b[1]) >= 0.8 * width * height:
            return False
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        return not any(t.left <= cx <= t.right and t.top <= cy <= t.bottom for t in taken)

    boxes = [b for b in paths if free(b)]
    out: list[Region] = []
    work = len(paths) * (len(taken) + 1)
    for cap in captions:
        for above in (True, False):
            if work > FIGURE_WORK:
                log.info("page %d: %d figure captions over %d drawing objects; the rest not searched for figures",
                         cap.page, len(captions), len(boxes))
                return out
            side = [b for b in boxes if (b[3] <= cap.top + 2 if above else b[1] >= cap.bottom - 2)]
            seeds = [b for b in side if (cap.top - b[3] if above else b[1] - cap.bottom) <= 3 * cap.size
                     and b[0] < cap.right + 2 * cap.size and b[2] > cap.left - 2 * cap.size]
            work += 2 * len(boxes)
            if not seeds:
                continue
            box, looked = _grow(seeds, side)
            work += looked
            if box[2] - box[0] >= MIN_FIGURE_SIDE and box[3] - box[1] >= MIN_FIGURE_SIDE \
                    and not any(isinstance(r, Region) and _overlaps(box, r) for r in out):
                out.append(Region(BlockKind.FIGURE, cap.page, max(0.0, box[0]), max(0.0, box[1]),
                                  min(width, box[2]), min(height, box[3])))
                break
    return out


def _grow(seeds: list[tuple[float, float, float, float]],
          side: list[tuple[float, float, float, float]]) -> tuple[tuple[float, float, float, float], int]:
    """The box of ``seeds`` grown by the objects of ``side`` touching it, until none is left (at most
    50 rounds), and how many objects were looked at. An object taken stays inside the box: later
    rounds look only at those left."""
    left, top, right, bottom = (min(b[0] for b in seeds), min(b[1] for b in seeds),
                                max(b[2] for b in seeds), max(b[3] for b in seeds))
    touch = 6.0
    left_over = side
    looked = 0
    for _ in range(50):
        looked += len(left_over)
        near: list[tuple[float, float, float, float]] = []
        far: list[tuple[float, float, float, float]] = []
        for b in left_over:
            touching = b[0] <= right + touch and b[2] >= left - touch and b[1] <= bottom + touch and b[3] >= top - touch
            (near if touching else far).append(b)
        grown = (min([left, *(b[0] for b in near)]), min([top, *(b[1] for b in near)]),
                 max([right, *(b[2] for b in near)]), max([bottom, *(b[3] for b in near)]))
        if grown == (left, top, right, bottom):
            break
        left, top, right, bottom = grown
        left_over = far
    return (left, top, right, bottom), looked


def _overlaps(box: tuple[float, float, float, float], r: Region) -> bool:
    return box[0] < r.right and box[2] > r.left and box[1] < r.bottom and box[3] > r.top


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NUMBER.match(text.strip()))


def _key(line: Line) -> str:
    return _DIGITS.sub("#", " ".join(line.text.lower().split()))


def _numbers(line: Line) -> tuple[int, ...]:
    # at most 18 digits of each: int() refuses strings of over 4,300 digits
    return tuple(int(d[:18]) for d in _DIGITS.findall(line.text))


@dataclass(slots=True)
class Running:
    """What :func:`drop_running` kept of each page, and the characters it removed by reason
    (``running_header``, ``running_footer``, ``page_number``) on the pages asked for."""

    lines: dict[int, list[Line]]
    removed: dict[str, int] = field(default_factory=dict)


def drop_running(pages: dict[int, list[Line]], heights: dict[int, float],
                 context: dict[int, list[Line]] | None = None) -> Running:
    """Remove running headers/footers and page numbers from ``pages`` (page → lines).

    A running line sits in the top or bottom ``MARGIN`` of its page, is not set larger than
    the body text, and its text recurs at about the same height on two pages or more, on at
    least ``MIN_DENSITY`` of the pages from its first to its last occurrence (so a header of
    the even pages only, or a footer naming the chapter, counts). Its digits may differ
    between the occurrences when one of its numbers follows the page (a footer "Chapter 3.
    Access Control 27" on page 45, "... 29" on page 47; a printer's "Frm 00005"), and it
    holds letters (a lone number following the page is a page number; rows of figures at
    the top of pages are no running lines). ``context`` adds lines of neighbouring pages, so
    that a short page range task still recognises the document's running lines. A lone
    number (or "Page 3 of 9") in the margin is a page number.
    """
    every = {**(context or {}), **pages}
    limit = 1.15 * _body_size([ln for lines in every.values() for ln in lines])
    seen: dict[str, list[tuple[int, float, tuple[int, ...]]]] = {}
    for number, lines in every.items():
        for ln in lines:
            if _in_margin(ln, heights[number]) and ln.size <= limit and not is_page_number(ln.text):
                seen.setdefault(_key(ln), []).append((number, ln.top, _numbers(ln)))
    repeated = {(key, top) for key, places in seen.items() for top in _recurring_tops(key, places)}
    out = Running({})
    for number, lines in pages.items():
        kept = []
        for ln in lines:
            reason = _running_reason(ln, heights[number], limit, repeated)
            if reason is None:
                kept.append(ln)
            else:
                out.removed[reason] = out.removed.get(reason, 0) + len(ln.text)
        out.lines[number] = kept
    return out


class _Near:
    """The places of one text within a band of heights, as :func:`_recurring_tops` slides the band down
    the page: the pages they are on and, for each of their numbers, the values it takes and its offsets
    from the page number (each a counter, so a place enters and leaves in time proportional to its
    numbers, and the question "does it recur?" is answered without going through the band)."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.pages: Counter[int] = Counter()
        self.values: list[Counter[int]] = [Counter() for _ in range(width)]
        self.offsets: list[Counter[int]] = [Counter() for _ in range(width)]
        self._low: list[int] = []  # heaps of the pages, stale entries popped when looked at
        self._high: list[int] = []

    def add(self, page: int, nums: tuple[int, ...]) -> None:
        if not self.pages[page]:
            heapq.heappush(self._low, page)
            heapq.heappush(self._high, -page)
        self.pages[page] += 1
        for i, value in enumerate(nums[: self.width]):
            self.values[i][value] += 1
            self.offsets[i][value - page] += 1

    def remove(self, page: int, nums: tuple[int, ...]) -> None:
        _drop(self.pages, page)
        for i, value in enumerate(nums[: self.width]):
            _drop(self.values[i], value)
            _drop(self.offsets[i], value - page)

    def span(self) -> int:
        """Pages from the first to the last page in the band."""
        while not self.pages[self._low[0]]:
            heapq.heappop(self._low)
        while not self.pages[-self._high[0]]:
            heapq.heappop(self._high)
        return -self._high[0] - self._low[0] + 1

    def recurs(self, key: str) -> bool:
        """On at least two pages, on ``MIN_DENSITY`` of the pages from the first to the last, its numbers
        the same everywhere or one of them following the page (a lone number: a page number)."""
        if len(self.pages) < 2 or len(self.pages) < MIN_DENSITY * self.span():
            return False
        varying = [i for i in range(self.width) if len(self.values[i]) > 1]
        follows = [i for i in varying if len(self.offsets[i]) == 1]  # a page number
        if not any(c.isalpha() for c in key):  # figures only: a page number ("47699"), a date, not a row of a table
            return not varying or self.width == 1 and bool(follows)
        return not varying or bool(follows)


def _drop(counter: Counter[int], key: int) -> None:
    counter[key] -= 1
    if not counter[key]:
        del counter[key]


def _recurring_tops(key: str, places: list[tuple[int, float, tuple[int, ...]]]) -> set[int]:
    """The rounded heights of the places of a margin text that recur: the places within 4 points of
    its height recur (:meth:`_Near.recurs`). A band slides over the places sorted by height, so
    the cost is linear in the places (times a logarithm), however many share a height."""
    order = sorted(places, key=lambda place: place[1])
    near = _Near(min(len(nums) for _, _, nums in order))
    found: set[int] = set()
    lo = hi = 0
    band: tuple[int, int] | None = None
    answer = False
    for _, top, _ in order:
        while hi < len(order) and order[hi][1] <= top + 4:
            near.add(order[hi][0], order[hi][2])
            hi += 1
        while order[lo][1] < top - 4:
            near.remove(order[lo][0], order[lo][2])
            lo += 1
        if band != (lo, hi):  # the same places as the last band: the same answer
            band, answer = (lo, hi), near.recurs(key)
        if answer:
            found.add(round(top))
    return found


def _running_reason(ln: Line, height: float, limit: float, repeated: set[tuple[str, int]]) -> str | None:
    if not _in_margin(ln, height) or ln.size > limit:
        return None
    if is_page_number(ln.text):
        return "page_number"
    if _is_repeated(key := _key(ln), ln.top, repeated):
        if not any(c.isalpha() for c in key) and len(_numbers(ln)) == 1:
            return "page_number"
        return "running_header" if ln.bottom < height / 2 else "running_footer"
    return None


def _body_size(lines: list[Line]) -> float:
    weights: dict[float, int] = {}
    for ln in lines:
        weights[round(ln.size)] = weights.get(round(ln.size), 0) + len(ln.text)
    return max(weights, key=lambda k: weights[k]) if weights else 0.0


def _in_margin(line: Line, height: float) -> bool:
    return line.bottom < MARGIN * height or line.top > (1 - MARGIN) * height


def _is_repeated(key: str, top: float, repeated: set[tuple[str, int]]) -> bool:
    return any((key, round(top) + d) in repeated for d in range(-4, 5))
