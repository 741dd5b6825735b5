"""Page furniture that is not text: turned margin text, watermarks, line numbers, vertical stamps.

:func:`remove_furniture` takes one page's lines and turned runs (:mod:`.pdf_layout`) and keeps
what a reader reads as the page's text; what it leaves out is counted in characters by reason,
for ``ParsedDocument.removed``:

- ``watermark``: text behind the page's text — a run turned diagonally that is large, light or
  laid over other lines, or any text set at least :data:`WATERMARK_SIZE` times the body size over
  two lines of the page or more ("DRAFT", "CONFIDENTIAL");
- ``rotated_margin_text``: a run turned by 90, 180 or 270 degrees outside the page's text area
  (a printer's slug up the margin, an arXiv identifier, a journal's side label). Turned text
  inside the text area (a table's turned header, a chart's label) stays: it is read as a line of
  its own, in its own direction;
- ``vertical_stamp``: upright letters stacked one above the other in a margin (a word written
  downwards, "D R A F T" letter under letter);
- ``line_number``: a column of ascending numbers (by a constant step, evenly spaced) in a margin
  beside the text, as legal transcripts, pleadings and drafts for review are set; a number set
  apart before a line's text counts as well.

A margin is where no other text of the page is: the text area is the box of the page's lines of
two glyphs or more, and a column of line numbers has no other line beside it on its outer side.
Everything here is one pass over the page's lines (sorting aside): its cost is linear.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragloom.ingest.parsers.pdf_layout import Line, Turned, Word

WATERMARK_SIZE = 2.0  # upright text this many times the body size, laid over other lines: a watermark
DIAGONAL_SIZE = 1.5  # a diagonal run this many times the body size: a watermark
MIN_COLUMN = 5  # line numbers in a column, at least
MIN_STACK = 4  # stacked glyphs in a vertical stamp, at least
COVER_WORK = 1_000_000  # line boxes looked at per page to tell whether large text lies over other lines
_NUMBER = re.compile(r"^\d{1,4}$")

Box = tuple[float, float, float, float]


@dataclass(slots=True)
class Furniture:
    """What :func:`remove_furniture` kept of a page, and the characters it left out by reason."""

    lines: list[Line]
    removed: dict[str, int] = field(default_factory=dict)

    def count(self, reason: str, chars: int) -> None:
        if chars:
            self.removed[reason] = self.removed.get(reason, 0) + chars


def remove_furniture(lines: list[Line], turned: Sequence[Turned]) -> Furniture:
    """The page's ``lines`` (and its turned runs read as lines where they are text) without its furniture."""
    out = Furniture([])
    if not lines:  # nothing upright to tell the turned runs from: they are the text
        out.lines = [run.as_line() for run in turned]
        return out
    body = body_size(lines)
    area = text_area(lines)
    over = _Over(lines)
    kept: list[Line] = []
    for run in turned:
        reason = _turned_reason(run, area, body, over)
        if reason is None:
            kept.append(run.as_line())
        else:
            out.count(reason, len(run.text))
    for ln in lines:
        if ln.size >= WATERMARK_SIZE * body and _glyphs(ln.text) >= 4 and over.covers(ln):
            out.count("watermark", len(ln.text))
        else:
            kept.append(ln)
    kept = _drop_stamps(kept, area, out)
    out.lines = _drop_line_numbers(kept, body, out)
    return out


def body_size(lines: Sequence[Line]) -> float:
    """The size most of the page's characters are set in (0 without lines)."""
    weights: Counter[float] = Counter()
    for ln in lines:
        weights[round(ln.size)] += len(ln.text)
    return weights.most_common(1)[0][0] if weights else 0.0


def text_area(lines: Sequence[Line]) -> Box | None:
    """The box of the page's lines of two glyphs or more (None without any)."""
    full = [ln for ln in lines if _glyphs(ln.text) >= 2]
    if not full:
        return None
    return (min(ln.left for ln in full), min(ln.top for ln in full),
            max(ln.right for ln in full), max(ln.bottom for ln in full))


def _glyphs(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


class _Over:
    """Whether a box lies over two lines of the page or more (their centres inside it). Each question
    looks at every line, so a page stops asking after :data:`COVER_WORK` lines looked at (what is
    left is read as text: a hostile page of thousands of large lines stays linear)."""

    def __init__(self, lines: Sequence[Line]) -> None:
        self.centres = [(id(ln), (ln.left + ln.right) / 2, (ln.top + ln.bottom) / 2) for ln in lines]
        self.work = 0

    def covers(self, item: Line | Turned) -> bool:
        if self.work > COVER_WORK:
            return False
        self.work += len(self.centres)
        found = 0
        for key, cx, cy in self.centres:
            if key != id(item) and item.left <= cx <= item.right and item.top <= cy <= item.bottom:
                found += 1
                if found >= 2:
                    return True
        return False


def _outside(box: Box, area: Box | None) -> bool:
    """Whether ``box`` lies beside, above or below the text ``area`` (not when there is none)."""
    if area is None:
        return False
    left, top, right, bottom = box
    return right <= area[0] + 1 or left >= area[2] - 1 or bottom <= area[1] + 1 or top >= area[3] - 1


def _turned_reason(run: Turned, area: Box | None, body: float, over: _Over) -> str | None:
    if run.diagonal and (run.size >= DIAGONAL_SIZE * body or run.light):
        return "watermark"
    if run.size >= WATERMARK_SIZE * body and over.covers(run):
        return "watermark"
    if not run.diagonal and _outside((run.left, run.top, run.right, run.bottom), area):
        return "rotated_margin_text"
    return None


def _drop_stamps(lines: list[Line], area: Box | None, out: Furniture) -> list[Line]:
    """``lines`` without the vertical stamps: single upright letters stacked into a column of
    :data:`MIN_STACK` or more outside the text area (stacked digits are a narrow column of a table)."""
    singles = sorted((ln for ln in lines if _glyphs(ln.text) == 1 and ln.text.strip().isalpha()),
                     key=lambda ln: (ln.top, ln.left))
    stacks: list[list[Line]] = []
    open_at: dict[int, list[Line]] = {}  # the stack whose last glyph is in a strip of the page, by strip
    for ln in singles:  # each glyph joins the stack whose last glyph is just above it, in line with it
        strip = round((ln.left + ln.right) / 2 / max(ln.size, 1.0))
        for near in (strip, strip - 1, strip + 1):
            stack = open_at.get(near)
            if stack is None:
                continue
            last = stack[-1]
            if abs((ln.left + ln.right) - (last.left + last.right)) / 2 <= 0.5 * ln.size \
                    and -0.4 * ln.size <= ln.top - last.bottom <= 0.8 * ln.size:
                stack.append(ln)
                break
        else:
            stack = [ln]
            stacks.append(stack)
        open_at[strip] = stack
    gone: set[int] = set()
    for stack in stacks:
        box = (min(ln.left for ln in stack), stack[0].top, max(ln.right for ln in stack), stack[-1].bottom)
        if len(stack) >= MIN_STACK and _outside(box, area):
            gone.update(id(ln) for ln in stack)
            out.count("vertical_stamp", sum(len(ln.text) for ln in stack))
    return [ln for ln in lines if id(ln) not in gone] if gone else lines


@dataclass(slots=True)
class _Number:
    """A line number candidate: a whole line, or the first word of one set apart from its text."""

    line: Line
    word: Word
    value: int
    whole: bool


def _candidates(lines: Sequence[Line]) -> list[_Number]:
    out: list[_Number] = []
    for ln in lines:
        if not ln.words or not _NUMBER.match(ln.words[0].text):
            continue
        first = ln.words[0]
        if len(ln.words) == 1:
            out.append(_Number(ln, first, int(first.text), True))
        elif ln.words[1].left - first.right >= ln.size:  # set apart from the line's text
            out.append(_Number(ln, first, int(first.text), False))
    return out


def _drop_line_numbers(lines: list[Line], body: float, out: Furniture) -> list[Line]:
    """``lines`` without their line numbers (a column of them beside the text, in a margin)."""
    candidates = [c for c in _candidates(lines) if c.line.size <= 1.15 * body]
    if len(candidates) < MIN_COLUMN:
        return lines
    found: dict[int, _Number] = {}
    edges: list[Callable[[_Number], float]] = [lambda c: c.word.right, lambda c: c.word.left]
    for edge in edges:  # right-aligned, left-aligned numbers
        for column in _aligned(candidates, edge):
            if len(column) >= MIN_COLUMN and _counts_lines(column) and _in_margin(column, lines):
                found.update((id(c.line), c) for c in column)
    if not found:
        return lines
    kept: list[Line] = []
    for ln in lines:
        number = found.get(id(ln))
        if number is None:
            kept.append(ln)
            continue
        out.count("line_number", len(number.word.text))
        if not number.whole:
            kept.append(_without_first_word(ln))
    return kept


def _aligned(candidates: list[_Number], edge: Callable[[_Number], float]) -> list[list[_Number]]:
    """Candidates whose ``edge`` lies within 2 points of each other, each group top to bottom."""
    ordered = sorted(candidates, key=edge)
    groups: list[list[_Number]] = []
    for c in ordered:
        if groups and edge(c) - edge(groups[-1][0]) <= 2.0:
            groups[-1].append(c)
        else:
            groups.append([c])
    return [sorted(g, key=lambda c: c.line.top) for g in groups]


def _counts_lines(column: list[_Number]) -> bool:
    """Numbers that go up by a constant step, evenly down the page (the same distance per step):
    not a list of figures nor a column of a table read out of order."""
    steps = [b.value - a.value for a, b in zip(column, column[1:], strict=False)]
    if any(step <= 0 for step in steps):
        return False
    step, times = Counter(steps).most_common(1)[0]
    if times < 0.8 * len(steps):
        return False
    pitches = sorted((b.line.top - a.line.top) / (b.value - a.value) * step
                     for a, b in zip(column, column[1:], strict=False))
    pitch = pitches[len(pitches) // 2]
    return pitch > 0 and sum(1 for p in pitches if abs(p - pitch) <= 0.15 * pitch) >= 0.8 * len(pitches)


def _in_margin(column: list[_Number], lines: Sequence[Line]) -> bool:
    """Whether the column stands beside the page's text: on its left (or right) no other line of the
    page, and beside it in its height at least two lines, all clear of it."""
    ids = {id(c.line): c for c in column}
    left = min(c.word.left for c in column)
    right = max(c.word.right for c in column)
    top, bottom = column[0].line.top, column[-1].line.bottom
    gap = 0.3 * column[0].line.size
    rest: list[tuple[float, float, float, float, int]] = []  # left, top, right, bottom, characters
    for ln in lines:
        if id(ln) in ids:
            if not ids[id(ln)].whole:
                rest.append((ln.words[1].left, ln.top, ln.right, ln.bottom, len(ln.text)))
        else:
            rest.append((ln.left, ln.top, ln.right, ln.bottom, len(ln.text)))
    beside = [r for r in rest if top <= (r[1] + r[3]) / 2 <= bottom]
    if len(beside) < 2:
        return False
    total = sum(r[4] for r in rest)
    if all(r[0] >= right + gap for r in beside):  # a column in the left margin
        return sum(r[4] for r in rest if r[0] < right) <= 0.1 * total
    if all(r[2] <= left - gap for r in beside):  # in the right margin
        return sum(r[4] for r in rest if r[2] > left) <= 0.1 * total
    return False


def _without_first_word(ln: Line) -> Line:
    words = ln.words[1:]
    return Line(page=ln.page, text=" ".join(w.text for w in words), left=min(w.left for w in words),
                top=min(w.top for w in words), right=max(w.right for w in words),
                bottom=max(w.bottom for w in words), size=ln.size, bold=ln.bold, words=words, tag=ln.tag)
