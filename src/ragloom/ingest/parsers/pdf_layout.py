"""Geometry of one PDF text page: characters → words → lines, in the page's reading frame.

Every page gets a :class:`Frame`: the affine map from PDF user space to the
*reading frame*, a top-left-origin system in which the page's dominant text runs
left to right. For an ordinary page the reading frame is the page as displayed;
for a page with ``/Rotate`` or with text set sideways it is the displayed page
turned so the text stands upright. Lines are built and ordered in the reading
frame; :meth:`Frame.to_display` maps their boxes back to the displayed page
(PDF points, top-left origin), which is what blocks carry.
"""

from __future__ import annotations

import ctypes
import math
import statistics
from collections import Counter
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ragloom.ingest.blocks import BBox

Box = tuple[float, float, float, float]  # left, top, right, bottom
_Char = tuple[str, float, float, float, float, int]  # ch, l, t, r, b (reading frame), char index
_GARBAGE_RANGES = ((0xE000, 0xF8FF), (0xFFFD, 0xFFFD), (0x0000, 0x0008), (0x000B, 0x001F))


@dataclass(slots=True)
class Word:
    text: str
    left: float
    top: float
    right: float
    bottom: float


@dataclass(slots=True)
class Line:
    """A run of text on one visual line (cut at wide gaps, so a table row or a
    two-column page gives one line per cell/column). Coordinates: reading frame."""

    page: int
    text: str
    left: float
    top: float
    right: float
    bottom: float
    size: float  # glyph box height of the line's characters (median)
    bold: bool = False
    words: list[Word] = field(default_factory=list)
    col: int = 0  # column index set by reading order (-1: spans the columns)


@dataclass(frozen=True, slots=True)
class Frame:
    """User space → reading frame (``matrix``), and reading frame → displayed page.

    ``rotation`` is the page's ``/Rotate`` (degrees clockwise); ``turn`` is how far
    the reading frame is turned from the displayed page (degrees clockwise, the
    direction the dominant text runs on the displayed page).
    """

    matrix: tuple[float, float, float, float, float, float]  # x' = a x + b y + c ; y' = d x + e y + f
    rotation: int
    turn: int
    display: tuple[float, float]  # displayed width, height

    @property
    def size(self) -> tuple[float, float]:
        """Width and height of the reading frame."""
        w, h = self.display
        return (h, w) if self.turn in (90, 270) else (w, h)

    def map_box(self, left: float, bottom: float, right: float, top: float) -> Box:
        """A user-space box (pdfium order l, b, r, t) in the reading frame."""
        a, b, c, d, e, f = self.matrix
        xs = (a * left + b * bottom + c, a * right + b * top + c)
        ys = (d * left + e * bottom + f, d * right + e * top + f)
        return min(xs), min(ys), max(xs), max(ys)

    def to_display(self, box: Box) -> BBox:
        """A reading-frame box on the displayed page (clamped to it, rounded)."""
        left, top, right, bottom = box
        w, h = self.display
        if self.turn == 90:
            left, top, right, bottom = w - bottom, left, w - top, right
        elif self.turn == 180:
            left, top, right, bottom = w - right, h - bottom, w - left, h - top
        elif self.turn == 270:
            left, top, right, bottom = top, h - right, bottom, h - left
        return BBox(round(max(0.0, left), 2), round(max(0.0, top), 2),
                    round(min(w, right), 2), round(min(h, bottom), 2))


def make_frame(crop: tuple[float, float, float, float], rotation: int, text_angle: int) -> Frame:
    """The frame of a page with crop box ``crop`` (pdfium l, b, r, t), ``/Rotate`` and text angle.

    ``text_angle`` is pdfium's dominant character angle in degrees (clockwise, user space).
    """
    x0, y0, x1, y1 = crop
    wu, hu = x1 - x0, y1 - y0

    def to_display(x: float, y: float) -> tuple[float, float]:
        u, t = x - x0, y1 - y
        return {0: (u, t), 90: (hu - t, u), 180: (wu - u, hu - t), 270: (t, wu - u)}[rotation % 360]

    display = (hu, wu) if rotation % 180 else (wu, hu)
    turn = (text_angle + rotation) % 360
    w, h = display

    def to_reading(x: float, y: float) -> tuple[float, float]:
        dx, dy = to_display(x, y)
        return {0: (dx, dy), 90: (dy, w - dx), 180: (w - dx, h - dy), 270: (h - dy, dx)}[turn]

    ox, oy = to_reading(0.0, 0.0)
    ax, ay = to_reading(1.0, 0.0)
    bx, by = to_reading(0.0, 1.0)
    matrix = (ax - ox, bx - ox, ox, ay - oy, by - oy, oy)
    return Frame(matrix=matrix, rotation=rotation % 360, turn=turn, display=display)


def char_text(textpage: pdfium.PdfTextPage, count: int) -> str:
    text: str = textpage.get_text_range()
    if len(text) != count:  # surrogate pairs etc.: fall back to per-char code points
        text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage, i) or 32) for i in range(count))
    return text


def text_quality(text: str) -> tuple[int, int]:
    """(usable glyphs, garbage glyphs): private-use, replacement and control characters are garbage."""
    usable = garbage = 0
    for ch in text:
        if ch.isspace() or ch == "\x02":
            continue
        code = ord(ch)
        if any(lo <= code <= hi for lo, hi in _GARBAGE_RANGES):
            garbage += 1
        else:
            usable += 1
    return usable, garbage


def dominant_angle(textpage: pdfium.PdfTextPage, text: str) -> int:
    """The most common character angle of a page, rounded to 0/90/180/270 (sampled)."""
    indices = [i for i, ch in enumerate(text) if not ch.isspace()]
    if not indices:
        return 0
    step = max(1, len(indices) // 40)
    votes: Counter[int] = Counter()
    for i in indices[::step]:
        angle = pdfium_c.FPDFText_GetCharAngle(textpage, i)
        if angle >= 0:
            votes[round(math.degrees(angle) / 90) % 4 * 90] += 1
    return votes.most_common(1)[0][0] if votes else 0


def page_lines(textpage: pdfium.PdfTextPage, text: str, page: int, frame: Frame) -> list[Line]:
    """Lines of one page in the reading frame (unordered: the caller orders them)."""
    lines: list[Line] = []
    chars: list[_Char] = []
    for i, ch in enumerate(text):
        if ch in "\r\n":
            if ch == "\n":
                lines.extend(_make_lines(chars, page))
                chars = []
            continue
        if ch == "\x02":  # pdfium's soft-hyphen marker at a line end
            ch = "-"
        if ch.isspace() or ch == "\x00":
            chars.append((" ", 0.0, 0.0, 0.0, 0.0, i))
            continue
        left, top, right, bottom = frame.map_box(*textpage.get_charbox(i, loose=True))
        chars.append((ch, left, top, right, bottom, i))
    lines.extend(_make_lines(chars, page))
    width, height = frame.size
    for line in lines:  # keep boxes inside the page (a line set off the page keeps an empty box at its edge)
        line.left, line.right = min(max(line.left, 0.0), width), max(min(line.right, width), 0.0)
        line.top, line.bottom = min(max(line.top, 0.0), height), max(min(line.bottom, height), 0.0)
        line.right, line.bottom = max(line.right, line.left), max(line.bottom, line.top)
    _mark_bold(textpage, lines)
    return lines


def _make_lines(chars: list[_Char], page: int) -> list[Line]:
    """Split one pdfium line at wide horizontal gaps (columns, cells) and measure each part."""
    parts: list[list[_Char]] = [[]]
    prev = None
    for c in chars:
        if c[0] != " " and prev is not None:
            gap, height = c[1] - prev[3], prev[4] - prev[2]
            if gap > 2 * height or c[1] < prev[1] - height or abs(c[2] - prev[2]) > height:
                parts.append([])
        parts[-1].append(c)
        if c[0] != " ":
            prev = c
    out = []
    for part in parts:
        words = _words(part)
        if not words:
            continue
        glyphs = [c for c in part if c[0] != " "]
        line = Line(
            page=page, text=" ".join(w.text for w in words),
            left=min(w.left for w in words), top=min(w.top for w in words),
            right=max(w.right for w in words), bottom=max(w.bottom for w in words),
            size=round(statistics.median(c[4] - c[2] for c in glyphs), 1), words=words,
        )
        line.col = glyphs[len(glyphs) // 2][5]  # temporarily: a sample char index for font facts
        out.append(line)
    return out


def _words(part: list[_Char]) -> list[Word]:
    words: list[Word] = []
    current: list[_Char] = []
    for c in [*part, (" ", 0.0, 0.0, 0.0, 0.0, -1)]:
        if c[0] == " " or (current and c[1] - current[-1][3] > 0.4 * (c[4] - c[2])):
            if current:
                words.append(Word("".join(x[0] for x in current), min(x[1] for x in current),
                                  min(x[2] for x in current), max(x[3] for x in current),
                                  max(x[4] for x in current)))
            current = [] if c[0] == " " else [c]
        else:
            current.append(c)
    return words


def _mark_bold(textpage: pdfium.PdfTextPage, lines: list[Line]) -> None:
    cache: dict[bytes, bool] = {}
    buffer = ctypes.create_string_buffer(128)
    flags = ctypes.c_int(0)
    for line in lines:
        index, line.col = line.col, 0
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        n = pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, len(buffer), ctypes.byref(flags))
        name = buffer.raw[: max(0, min(n, len(buffer)) - 1)]
        if name not in cache:
            lowered = name.lower()
            cache[name] = any(k in lowered for k in (b"bold", b"black", b"heavy", b"semibold"))
        line.bold = weight >= 600 or cache[name] or bool(flags.value & 0x40000)
