"""Geometry of one PDF text page: characters → words → lines, in the page's reading frame.

Every page gets a :class:`Frame`: the affine map from PDF user space to the
*reading frame*, a top-left-origin system in which the page's dominant text runs
left to right. For an ordinary page the reading frame is the page as displayed;
for a page with ``/Rotate`` or with text set sideways it is the displayed page
turned so the text stands upright. Lines are built and ordered in the reading
frame; :meth:`Frame.to_display` maps their boxes back to the displayed page
(PDF points, top-left origin), which is what blocks carry.

Characters set at an angle to the page's text (more than :data:`OFF_AXIS` degrees off it: a
word turned up the margin, a diagonal watermark, a turned table header) never join its lines:
each run of them is a :class:`Turned` of its own, for :mod:`.pdf_furniture` to judge. A line is
bold when every word on it with a letter is set bold (a run-in "SUMMARY:" does not make its line
bold).
"""

from __future__ import annotations

import ctypes
import math
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from ragloom.ingest.blocks import BBox

Box = tuple[float, float, float, float]  # left, top, right, bottom
_Char = tuple[str, float, float, float, float, int]  # ch, l, t, r, b (reading frame), char index
_GARBAGE_RANGES = ((0xE000, 0xF8FF), (0xFFFD, 0xFFFD), (0x0000, 0x0008), (0x000B, 0x001F))
OFF_AXIS = 8.0  # degrees between a character's direction and the page's text beyond which it is turned
LOOSE = 1.17  # a glyph's loose box height per point of font size (Helvetica; near enough for others)
LIGHT = 0.75  # a fill this light (0 black .. 1 white), or this transparent, is light


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
    tag: str = ""  # the structure type of a tagged page's line ("H1", "P", ...), from its first word


@dataclass(slots=True)
class Turned:
    """A run of characters set at an angle to the page's text (one line of a turned text object).

    The box is in the reading frame (the axis-aligned box of the turned glyphs); ``angle`` is
    how far the run is turned from the page's text (degrees clockwise, 0..360); ``size`` is its
    glyphs' height measured as :attr:`Line.size` is (loose box) but in the run's own direction;
    ``light`` a light or transparent fill.
    """

    page: int
    text: str
    left: float
    top: float
    right: float
    bottom: float
    angle: float
    size: float
    light: bool = False
    words: list[Word] = field(default_factory=list)
    box_height: float = 0.0  # its glyphs' median box height in the reading frame (the size its line has)

    @property
    def diagonal(self) -> bool:
        """Turned by an angle that is not a multiple of 90 degrees (give or take 10)."""
        return 10.0 < self.angle % 90.0 < 80.0

    def as_line(self) -> Line:
        """The run read as a line of its own, in its own direction (turned text inside the page's text).
        Its size is that of its glyphs' boxes in the reading frame, as any line's: a word turned up a
        table's header stays too small to make a row of the table."""
        return Line(page=self.page, text=self.text, left=self.left, top=self.top, right=self.right,
                    bottom=self.bottom, size=self.box_height, words=list(self.words))


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


def page_lines(textpage: pdfium.PdfTextPage, text: str, page: int, frame: Frame,
               tags: Mapping[int, str] | None = None) -> tuple[list[Line], list[Turned]]:
    """Lines of one page in the reading frame (unordered: the caller orders them), and the runs of
    characters set at an angle to them. ``tags`` (marked-content id → structure type) sets
    :attr:`Line.tag`."""
    lines: list[tuple[Line, list[int]]] = []
    runs: list[list[_Char]] = []
    chars: list[_Char] = []
    run: list[_Char] | None = None  # the turned run being read, if any
    run_angle = 0.0
    base = (frame.turn - frame.rotation) % 360  # the page's text direction in user space (clockwise)
    for i, ch in enumerate(text):
        if ch in "\r\n":
            if ch == "\n":
                lines.extend(_make_lines(chars, page))
                chars = []
            run = None
            continue
        if ch in "\x02\ufffe":  # pdfium's markers of a hyphen at a line end (soft, or one the layout set)
            ch = "-"
        if ch.isspace() or ch == "\x00":
            (chars if run is None else run).append((" ", 0.0, 0.0, 0.0, 0.0, i))
            continue
        left, top, right, bottom = frame.map_box(*textpage.get_charbox(i, loose=True))
        angle = _turned_by(textpage, i, base)
        if angle is None:
            run = None
            chars.append((ch, left, top, right, bottom, i))
            continue
        if run is None or _angle_apart(angle, run_angle) > 2.0:
            run, run_angle = [], angle
            runs.append(run)
        run.append((ch, left, top, right, bottom, i))
    lines.extend(_make_lines(chars, page))
    _mark_bold(textpage, lines)
    if tags:
        _mark_tags(textpage, lines, tags)
    turned = [t for r in runs if (t := _turned(textpage, r, page, base)) is not None]
    out = [line for line, _ in lines]
    width, height = frame.size
    items: list[Line | Turned] = [*out, *turned]
    for item in items:  # boxes inside the page (a line set off the page keeps an empty box at its edge)
        _clamp(item, width, height)
    return out, turned


def _clamp(item: Line | Turned, width: float, height: float) -> None:
    item.left, item.right = min(max(item.left, 0.0), width), max(min(item.right, width), 0.0)
    item.top, item.bottom = min(max(item.top, 0.0), height), max(min(item.bottom, height), 0.0)
    item.right, item.bottom = max(item.right, item.left), max(item.bottom, item.top)


def _angle_apart(a: float, b: float) -> float:
    d = abs(a - b) % 360.0
    return min(d, 360.0 - d)


def _turned_by(textpage: pdfium.PdfTextPage, index: int, base: int) -> float | None:
    """How far character ``index`` is turned from the page's text (degrees clockwise), or None when
    it runs with it (within :data:`OFF_AXIS`, or its angle is unknown)."""
    radians = pdfium_c.FPDFText_GetCharAngle(textpage, index)
    if radians < 0:
        return None
    angle = (math.degrees(radians) - base) % 360.0
    return None if _angle_apart(angle, 0.0) <= OFF_AXIS else angle


def _turned(textpage: pdfium.PdfTextPage, run: list[_Char], page: int, base: int) -> Turned | None:
    """A :class:`Turned` from a run of turned characters (None when it holds only spaces)."""
    glyphs = [c for c in run if c[0] != " "]
    if not glyphs:
        return None
    words: list[Word] = []
    current: list[_Char] = []
    for c in [*run, (" ", 0.0, 0.0, 0.0, 0.0, -1)]:  # words cut at spaces only (their boxes are turned)
        if c[0] != " ":
            current.append(c)
        elif current:
            words.append(_word(current))
            current = []
    index = glyphs[len(glyphs) // 2][5]
    angle = (math.degrees(pdfium_c.FPDFText_GetCharAngle(textpage, index)) - base) % 360.0
    matrix = pdfium_c.FS_MATRIX()
    scale = 1.0
    if pdfium_c.FPDFText_GetMatrix(textpage, index, ctypes.byref(matrix)):
        scale = math.hypot(matrix.c, matrix.d) or 1.0
    size = pdfium_c.FPDFText_GetFontSize(textpage, index) * scale * LOOSE
    return Turned(page=page, text=" ".join(w.text for w in words), left=min(w.left for w in words),
                  top=min(w.top for w in words), right=max(w.right for w in words),
                  bottom=max(w.bottom for w in words), angle=round(angle, 1), size=round(size, 1),
                  light=_light(textpage, index), words=words,
                  box_height=round(statistics.median(c[4] - c[2] for c in glyphs), 1))


def _light(textpage: pdfium.PdfTextPage, index: int) -> bool:
    """Whether character ``index`` is filled with a light colour or mostly transparent."""
    r, g, b, a = (ctypes.c_uint(0) for _ in range(4))
    if not pdfium_c.FPDFText_GetFillColor(textpage, index, ctypes.byref(r), ctypes.byref(g), ctypes.byref(b),
                                          ctypes.byref(a)):
        return False
    luminance = (0.299 * r.value + 0.587 * g.value + 0.114 * b.value) / 255
    return luminance >= LIGHT or a.value / 255 <= 1 - LIGHT


def _make_lines(chars: list[_Char], page: int) -> list[tuple[Line, list[int]]]:
    """Split one pdfium line at wide horizontal gaps (columns, cells) and where a glyph is set under
    the one before (letters stacked down a margin), and measure each part; each
    line comes with a character of each of its words with a letter (of each word when none has
    one), for the font facts."""
    parts: list[list[_Char]] = [[]]
    prev = None
    for c in chars:
        if c[0] != " " and prev is not None:
            gap, height = c[1] - prev[3], prev[4] - prev[2]
            stacked = c[2] - prev[2] > 0.5 * height and c[1] < prev[3] - 0.25 * (prev[3] - prev[1])
            if gap > 2 * height or c[1] < prev[1] - height or abs(c[2] - prev[2]) > height or stacked:
                parts.append([])  # a wide gap, a new line, or a glyph set under the last (stacked letters)
        parts[-1].append(c)
        if c[0] != " ":
            prev = c
    out = []
    for part in parts:
        groups = _word_groups(part)
        if not groups:
            continue
        words = [_word(g) for g in groups]
        glyphs = [c for c in part if c[0] != " "]
        line = Line(
            page=page, text=" ".join(w.text for w in words),
            left=min(w.left for w in words), top=min(w.top for w in words),
            right=max(w.right for w in words), bottom=max(w.bottom for w in words),
            size=round(statistics.median(c[4] - c[2] for c in glyphs), 1), words=words,
        )
        samples = [g[len(g) // 2][5] for g in groups if any(c[0].isalpha() for c in g)]
        out.append((line, samples or [g[len(g) // 2][5] for g in groups]))
    return out


def _word_groups(part: list[_Char]) -> list[list[_Char]]:
    """The characters of each word of a line part: cut at spaces and at gaps wider than 0.4 of a glyph."""
    groups: list[list[_Char]] = []
    current: list[_Char] = []
    for c in [*part, (" ", 0.0, 0.0, 0.0, 0.0, -1)]:
        if c[0] == " " or (current and c[1] - current[-1][3] > 0.4 * (c[4] - c[2])):
            if current:
                groups.append(current)
            current = [] if c[0] == " " else [c]
        else:
            current.append(c)
    return groups


def _word(chars: list[_Char]) -> Word:
    return Word("".join(c[0] for c in chars), min(c[1] for c in chars), min(c[2] for c in chars),
                max(c[3] for c in chars), max(c[4] for c in chars))


def _mark_bold(textpage: pdfium.PdfTextPage, lines: list[tuple[Line, list[int]]]) -> None:
    """A line is bold when each of its sampled words is (a bold run-in head leaves its line regular)."""
    cache: dict[bytes, bool] = {}
    buffer = ctypes.create_string_buffer(128)
    flags = ctypes.c_int(0)

    def bold(index: int) -> bool:
        weight = pdfium_c.FPDFText_GetFontWeight(textpage, index)
        n = pdfium_c.FPDFText_GetFontInfo(textpage, index, buffer, len(buffer), ctypes.byref(flags))
        name = buffer.raw[: max(0, min(n, len(buffer)) - 1)]
        if name not in cache:
            lowered = name.lower()
            cache[name] = any(k in lowered for k in (b"bold", b"black", b"heavy", b"semibold"))
        return weight >= 600 or cache[name] or bool(flags.value & 0x40000)

    for line, samples in lines:
        line.bold = all(bold(i) for i in samples)


def _mark_tags(textpage: pdfium.PdfTextPage, lines: list[tuple[Line, list[int]]], tags: Mapping[int, str]) -> None:
    for line, samples in lines:
        obj = pdfium_c.FPDFText_GetTextObject(textpage, samples[0])
        if obj:
            line.tag = tags.get(pdfium_c.FPDFPageObj_GetMarkedContentID(obj), "")
