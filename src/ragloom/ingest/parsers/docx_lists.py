"""Word list numbering: the label ("1.", "2.1", "a)", "•") each list paragraph shows.

Word stores the numbers nowhere: a paragraph refers to a numbering definition
(``w:numPr``: ``numId`` + level, directly or through its style) and the label
comes from the level's format (``decimal``, ``lowerLetter``, ``bullet``...) and
template (``%1.%2.``), counted in document order. :class:`ListNumbering`
replays that count as the parser walks the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from docx.document import Document as DocxDocument
from docx.oxml.ns import qn
from docx.styles.style import ParagraphStyle
from docx.text.paragraph import Paragraph
from lxml.etree import _Element

from ragloom.ingest.parsers.common import small_int

MAX_LEVEL = 8  # list levels are 0..8
MAX_LEVEL_TEXT = 64  # characters of a level's label template (Word's are a few: "%1.%2."); more is a hostile file
MAX_START = 32767  # Word's largest start value; beyond it a counter is a damaged (or hostile) file's
_BULLETS = {"\uf0b7": "•", "\uf0a7": "▪", "\uf0d8": "➢", "\uf0fc": "✓", "o": "◦", "": "•"}


@dataclass(frozen=True, slots=True)
class _Level:
    fmt: str
    text: str
    start: int


def _val(el: _Element | None, child: str) -> str | None:
    if el is None:
        return None
    node = el.find(qn(child))
    return None if node is None else node.get(qn("w:val"))


def _level_number(value: str | None) -> int:
    """A list level (``w:ilvl``) in Word's range 0..8; anything else (damaged files) counts as 0 or 8."""
    return small_int(value or "", 0, MAX_LEVEL)


def _start(value: str | None) -> int | None:
    """A start value (``w:start``, ``w:startOverride``) in 0..``MAX_START`` (negative values count as 0),
    or None when it is no number."""
    if not value:
        return None
    negative = value.startswith("-")
    number = small_int(value[1:] if negative else value, -1, MAX_START)
    return None if number < 0 else 0 if negative else number


def _roman(n: int) -> str:
    out = []
    for value, digits in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
                          (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        while n >= value:
            out.append(digits)
            n -= value
    return "".join(out)


def _letters(n: int) -> str:
    # Word repeats the letter: a..z, aa..zz, aaa...; past 30 letters (item 780) the number is written in
    # digits, or each label of a long list would be longer than the one before
    return chr(ord("a") + (n - 1) % 26) * ((n - 1) // 26 + 1) if 1 <= n <= 780 else str(n)


def format_number(n: int, fmt: str) -> str:
    """``n`` in a Word number format; unknown formats fall back to decimal, and so do counts no start value
    can reach (a label never grows with a number a file makes up)."""
    if n > 2 * MAX_START:
        return str(n)
    if fmt == "lowerLetter":
        return _letters(n)
    if fmt == "upperLetter":
        return _letters(n).upper()
    if fmt == "lowerRoman":
        return _roman(n)
    if fmt == "upperRoman":
        return _roman(n).upper()
    if fmt == "decimalZero":
        return f"{n:02d}"
    if fmt == "none":
        return ""
    return str(n)


# per document part: style id -> (style, the pPr of the style and of each base style). python-docx
# finds a paragraph's style by scanning every style of the document when it has none of its own
# (milliseconds a paragraph: minutes for a document of 20,000 paragraphs), so it is looked up once.
_STYLES: WeakKeyDictionary[object, dict[str | None, tuple[ParagraphStyle | None, list[_Element | None]]]] = (
    WeakKeyDictionary()
)


def _style_entry(par: Paragraph) -> tuple[ParagraphStyle | None, list[_Element | None]]:
    cache = _STYLES.setdefault(par.part, {})
    style_id = par._p.style
    entry = cache.get(style_id)
    if entry is None:
        style = par.style
        chain: list[_Element | None] = []
        seen: set[str | None] = set()
        node = style
        while node is not None and node.style_id not in seen:  # a style based on itself: stop
            seen.add(node.style_id)
            chain.append(node.element.pPr)
            node = node.base_style
        entry = cache[style_id] = (style, chain)
    return entry


def paragraph_style(par: Paragraph) -> ParagraphStyle | None:
    """``par.style``, looked up once per style of a document."""
    return _style_entry(par)[0]


def property_chain(par: Paragraph) -> list[_Element | None]:
    """The paragraph's own properties, then those of its style and of each base style."""
    return [par._p.pPr, *_style_entry(par)[1]]


class ListNumbering:
    """Replays Word's list counters; :meth:`label` returns each list paragraph's label."""

    def __init__(self, document: DocxDocument) -> None:
        self._levels: dict[str, dict[int, _Level]] = {}
        self._counters: dict[str, list[int]] = {}
        try:
            numbering = document.part.numbering_part.element
        except (KeyError, NotImplementedError):
            return
        abstract: dict[str, dict[int, _Level]] = {}
        by_style: dict[str, dict[int, _Level]] = {}  # the levels of a numbering style (w:styleLink)
        style_users: dict[str, str] = {}  # abstractNumId -> the numbering style it takes its levels from
        for node in numbering.findall(qn("w:abstractNum")):
            levels = {}
            for lvl in node.findall(qn("w:lvl")):
                start = _start(_val(lvl, "w:start"))
                levels[_level_number(lvl.get(qn("w:ilvl"), "0"))] = _Level(
                    fmt=_val(lvl, "w:numFmt") or "decimal", text=(_val(lvl, "w:lvlText") or "")[:MAX_LEVEL_TEXT],
                    start=start if start is not None else 1,
                )
            abstract_id = node.get(qn("w:abstractNumId"), "")
            abstract[abstract_id] = levels
            link, uses = _val(node, "w:styleLink"), _val(node, "w:numStyleLink")
            if link and levels:
                by_style[link] = levels
            if uses and not levels:
                style_users[abstract_id] = uses
        for abstract_id, style in style_users.items():  # a list defined by a numbering style ("1 / 1.1 / 1.1.1")
            abstract[abstract_id] = by_style.get(style, {})
        for num in numbering.findall(qn("w:num")):
            levels = dict(abstract.get(_val(num, "w:abstractNumId") or "", {}))
            for override in num.findall(qn("w:lvlOverride")):
                ilvl = _level_number(override.get(qn("w:ilvl"), "0"))
                start = _start(_val(override, "w:startOverride"))
                if ilvl in levels and start is not None:
                    old = levels[ilvl]
                    levels[ilvl] = _Level(old.fmt, old.text, start)
            self._levels[num.get(qn("w:numId"), "")] = levels

    def reference(self, par: Paragraph) -> tuple[str, int] | None:
        """``(numId, level)`` of a list paragraph (direct or from its style chain), else None."""
        num_id, ilvl = None, None
        for ppr in property_chain(par):
            num_pr = ppr.find(qn("w:numPr")) if ppr is not None else None
            if num_pr is None:
                continue
            num_id = num_id if num_id is not None else _val(num_pr, "w:numId")
            ilvl = ilvl if ilvl is not None else _val(num_pr, "w:ilvl")
        if num_id is None or num_id == "0" or num_id not in self._levels:
            return None
        return num_id, _level_number(ilvl)

    def label(self, num_id: str, ilvl: int) -> tuple[str, bool]:
        """Advance the counter and return ``(label, is_bullet)``."""
        levels = self._levels[num_id]
        level = levels.get(ilvl, _Level("decimal", f"%{ilvl + 1}.", 1))
        counters = self._counters.setdefault(num_id, [0] * 9)
        for deeper in range(ilvl + 1, 9):
            counters[deeper] = 0
        counters[ilvl] = counters[ilvl] + 1 if counters[ilvl] else level.start
        if level.fmt == "bullet":
            return _BULLETS.get(level.text, level.text), True
        text = level.text
        for k in range(ilvl, -1, -1):
            lvl_k = levels.get(k, level)
            value = counters[k] or lvl_k.start
            text = text.replace(f"%{k + 1}", format_number(value, "decimal" if k < ilvl and lvl_k.fmt == "bullet"
                                                           else lvl_k.fmt))
        return text, False
