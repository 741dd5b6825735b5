"""Plane geometry of an OCR'd page: lines, layout regions, reading order, paragraphs.

Everything here works in pixels of the *upright* page image (top-left origin)
and knows nothing about the models. Lines are assigned to the layout region
that holds most of their area; lines outside every region are clustered into
``text`` regions by proximity. Regions are put in reading order by a recursive
XY-cut (bands top to bottom, columns left to right inside a band), so a
two-column page reads column by column.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

_CUT_TOLERANCE = 3.0  # pixels two boxes may overlap and still be cut apart
_CJK = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")


@dataclass(slots=True)
class Rect:
    left: float
    top: float
    right: float
    bottom: float

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def width(self) -> float:
        return self.right - self.left

    def area(self) -> float:
        return max(0.0, self.width) * max(0.0, self.height)

    def overlap(self, other: Rect) -> float:
        """Area of the intersection."""
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        return w * h if w > 0 and h > 0 else 0.0

    def union(self, other: Rect) -> Rect:
        return Rect(min(self.left, other.left), min(self.top, other.top),
                    max(self.right, other.right), max(self.bottom, other.bottom))


@dataclass(slots=True)
class OcrLine:
    """One recognised text line (or piece of one) with its axis-aligned box.

    ``size`` is the height of the text from the top of its ink to its baseline
    (descenders left out), 0 when unknown: :attr:`text_size` is then the box height.
    """

    text: str
    rect: Rect
    score: float = 1.0
    size: float = 0.0

    @property
    def text_size(self) -> float:
        """How large the text is: ``size``, or the box height when the size is unknown."""
        return self.size or self.rect.height


@dataclass(slots=True)
class Region:
    """A layout region (``text``, ``title``, ``table``, ``figure``, ...) and the lines inside it."""

    kind: str
    rect: Rect
    lines: list[OcrLine] = field(default_factory=list)


def join_text(left: str, right: str) -> str:
    """Join two pieces of text: no space between CJK characters, one space otherwise."""
    if not left:
        return right
    if not right:
        return left
    glue = "" if _CJK.match(left[-1]) and _CJK.match(right[0]) else " "
    return left + glue + right


def union_rect(rects: list[Rect]) -> Rect:
    box = rects[0]
    for rect in rects[1:]:
        box = box.union(rect)
    return box


def assign_lines(lines: list[OcrLine], regions: list[Region]) -> list[Region]:
    """Put each line into the region covering most of it (≥ half its area).

    Lines left over are clustered into new ``text`` regions. Regions that end
    up without lines are dropped. Returns the regions in no particular order.
    """
    leftovers: list[OcrLine] = []
    for line in lines:
        area = line.rect.area() or 1.0
        best = max(regions, key=lambda r: line.rect.overlap(r.rect), default=None)
        if best is not None and best.rect.overlap(line.rect) >= 0.5 * area:
            best.lines.append(line)
        else:
            leftovers.append(line)
    filled = [r for r in regions if r.lines]
    return filled + cluster_lines(leftovers)


def cluster_lines(lines: list[OcrLine]) -> list[Region]:
    """Group loose lines into ``text`` regions: a line joins a region it overlaps
    horizontally and starts less than one line height below."""
    clusters: list[Region] = []
    for line in sorted(lines, key=lambda ln: (ln.rect.top, ln.rect.left)):
        height = line.rect.height
        home = None
        for region in clusters:
            box = region.rect
            near = line.rect.top - box.bottom <= 1.0 * height and line.rect.bottom >= box.top
            beside = min(box.right, line.rect.right) - max(box.left, line.rect.left) > 0
            if near and beside:
                home = region
                break
        if home is None:
            clusters.append(Region("text", line.rect, [line]))
        else:
            home.lines.append(line)
            home.rect = home.rect.union(line.rect)
    return clusters


def reading_order(regions: list[Region]) -> list[Region]:
    """Regions in reading order by recursive XY-cut."""
    if len(regions) <= 1:
        return list(regions)
    bands = _split(regions, horizontal=True)
    if len(bands) > 1:
        return [r for band in bands for r in reading_order(band)]
    columns = _split(regions, horizontal=False)
    if len(columns) > 1:
        return [r for col in columns for r in reading_order(col)]
    return sorted(regions, key=lambda r: (r.rect.top, r.rect.left))


def _split(regions: list[Region], *, horizontal: bool) -> list[list[Region]]:
    """Cut at gaps of the projection on the y axis (``horizontal``) or the x axis."""
    def span(r: Region) -> tuple[float, float]:
        return (r.rect.top, r.rect.bottom) if horizontal else (r.rect.left, r.rect.right)

    groups: list[list[Region]] = []
    end = float("-inf")
    for region in sorted(regions, key=lambda r: span(r)[0]):
        start, stop = span(region)
        if groups and start < end - _CUT_TOLERANCE:
            groups[-1].append(region)
            end = max(end, stop)
        else:
            groups.append([region])
            end = stop
    return groups


def rows_of(lines: list[OcrLine]) -> list[OcrLine]:
    """Merge line pieces that sit on the same row (vertical overlap over half the
    smaller height) into one line each, left to right; rows top to bottom."""
    rows: list[list[OcrLine]] = []
    for line in sorted(lines, key=lambda ln: (ln.rect.top + ln.rect.bottom) / 2):
        if rows:
            last = union_rect([piece.rect for piece in rows[-1]])
            shared = min(last.bottom, line.rect.bottom) - max(last.top, line.rect.top)
            if shared > 0.5 * min(last.height, line.rect.height):
                rows[-1].append(line)
                continue
        rows.append([line])
    merged = []
    for pieces in rows:
        pieces.sort(key=lambda ln: ln.rect.left)
        text = ""
        for piece in pieces:
            text = join_text(text, piece.text)
        score = min(p.score for p in pieces)
        sizes = [p.size for p in pieces if p.size]
        merged.append(OcrLine(text, union_rect([p.rect for p in pieces]), score, max(sizes, default=0.0)))
    return merged


def paragraphs(rows: list[OcrLine]) -> list[list[OcrLine]]:
    """Split the rows of one region into paragraphs at vertical gaps wider than
    the usual line spacing (or 0.8 line height when there is no usual spacing)."""
    if not rows:
        return []
    gaps = [b.rect.top - a.rect.bottom for a, b in zip(rows, rows[1:], strict=False)]
    heights = [r.rect.height for r in rows]
    usual = statistics.median(gaps) if len(gaps) >= 2 else 0.3 * statistics.median(heights)
    limit = max(usual * 1.8, usual + 0.5 * statistics.median(heights))
    groups = [[rows[0]]]
    for gap, row in zip(gaps, rows[1:], strict=False):
        if gap > limit:
            groups.append([row])
        else:
            groups[-1].append(row)
    return groups


def paragraph_text(rows: list[OcrLine]) -> str:
    """Rows of one paragraph as text: hyphenated line ends are joined, CJK without spaces."""
    text = ""
    for row in rows:
        if text.endswith("-") and len(text) > 1 and text[-2].isalpha() and row.text[:1].islower():
            text = text[:-1] + row.text
        else:
            text = join_text(text, row.text)
    return text


def body_height(lines: list[OcrLine]) -> float:
    """The size (:attr:`OcrLine.text_size`) of ordinary text lines on the page (median weighted by length)."""
    weighted = sorted((ln.text_size, len(ln.text)) for ln in lines if ln.text)
    if not weighted:
        return 0.0
    half, acc = sum(n for _, n in weighted) / 2, 0
    for height, n in weighted:
        acc += n
        if acc >= half:
            return height
    return weighted[-1][0]
