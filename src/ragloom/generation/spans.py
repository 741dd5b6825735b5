"""Spans of an asked-for type in a text: numbers with their unit or scale, dates and times, names of
people and organisations, places — in English and Chinese (:func:`find_spans`).

* **number** — digits (``189``, ``264,140``, ``4.2``, ``12%``, ``€5``) or number words (``fourteen``,
  ``two``, ``a dozen``), with a scale word (``million``, 万, 亿) and the unit word after it
  (``189 fatalities``, ``16 weeks``, ``2 hours 40 minutes``, ``30公里``, ``3个``); a number glued to a
  code (``HX-220``, ``E1024``) is not one;
* **date** — ``March 31``, ``31 March 2024``, ``2024-03-31``, ``31/03/2024``, a year (``1998``,
  ``the 1990s``), a weekday, a clock time (``10:00``, ``6 pm``), a duration (``7 calendar days``,
  ``within two weeks``), else a condition (``when the stems reach about 20 cm``);
  2024年3月31日, 1998年, 3月31日, 星期一, 下午3点, 19世纪;
* **person** — a sequence of capitalised words (``Wojciech Stanisław Czarnecki``, ``Ada Lovelace``,
  ``Koei Tecmo Games``; initials and particles such as ``J.``, ``van`` allowed); in Chinese the names
  jieba tags as a person (``nr``) or an organisation (``nt``);
* **code** — an identifier: digits joined by hyphens, dots or slashes with letters or digits
  (``07-1315``, ``DARPA-BAA-15-58``, ``2018–23–51``), letters and digits (``0050003A``), ``Vol. 85, No. 152``;
* **place** — a capitalised sequence (``New South Wales``), in Chinese a ``ns`` name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ragloom.generation.qtype import QType

_HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN = re.compile(f"[{_HAN_CHARS}]")

_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
    "dozen half"
)
_NUMBER_WORD = "|".join(sorted(_NUMBER_WORDS.split(), key=len, reverse=True))
_DIGITS = r"(?<![\w.\-/])(?:[$€£¥]\s?)?\d+(?:[.,]\d+)*(?:\s?(?:%|percent\b|per cent\b))?(?![\w\-])"
_WORDNUM = rf"\b(?:a\s+)?(?:{_NUMBER_WORD})(?:[\s-](?:{_NUMBER_WORD}))*\b"
_SCALE = r"(?:\s(?:hundred|thousand|million|billion|trillion|bn|m|k)\b)?"
_STOP_UNIT = (
    "and or the of in to at on for from by with as is are was were be been that which who this than per "
    "a an it its their his her each every more less most least"
)
_NOT_UNIT = rf"(?!(?:{'|'.join(_STOP_UNIT.split())})\b)"
# a word that qualifies the unit after it: "5 working days", "450 operating hours", "12 square metres"
_UNIT_QUALIFIER = (r"(?:working|business|calendar|banking|school|consecutive|clear|full|operating|flight|flying|"
                   r"man|person|square|sq\.?|cubic|metric|nautical|fluid|light|solar|lunar|standard|net|gross)\s")
_UNIT = rf"(?:\s{_NOT_UNIT}(?:{_UNIT_QUALIFIER})?[A-Za-z°µ][\w°/]*(?:\s(?:per|a|an)\s[a-z]+)?)?"
_QUANTITY = rf"(?:{_DIGITS}|{_WORDNUM}){_SCALE}(?:\s\(\d+(?:\.\d+)?\))?{_UNIT}"  # "three (3) minutes": legal style
_EN_NUMBER = re.compile(rf"{_QUANTITY}(?:,?\s(?:and\s)?(?:{_DIGITS}|{_WORDNUM}){_SCALE}{_UNIT})*", re.IGNORECASE)

_MONTHS = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
           r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_WEEKDAYS = r"(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?"
_TIME_UNITS = r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?|centuries|century|nights?)"
_EN_DATE = re.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\.?(?:,?\s+\d{{4}})?\b|"
    rf"\b{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|"
    rf"\b{_MONTHS}\.?\s+\d{{4}}\b|"
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|"
    r"\b(?:1[0-9]|20)\d{2}s?\b|"
    rf"\b{_WEEKDAYS}\b|"
    # a clock time: hours 0-24 and minutes 00-59 ("16:30", "9.15 a.m."), never a decimal ("41.33 years")
    r"\b(?:[01]?\d|2[0-4]):[0-5]\d(?:\s?[ap]\.?m\.?)?(?!\d)|\b(?:[01]?\d|2[0-4])\.[0-5]\d\s?[ap]\.?m\.?(?!\w)|"
    r"\b(?:[01]?\d|2[0-4])\.[0-5]\d(?=\s?(?:h|hrs|hours|o'clock|uhr)\b)|"
    r"\b\d{1,2}\s?[ap]\.?m\.?(?!\w)|\bmidnight\b|\bnoon\b"
)
_EN_CALENDAR = re.compile(_EN_DATE.pattern)  # dates and times proper (a number inside one is no quantity)
_EN_DATE = re.compile(
    rf"{_EN_DATE.pattern}|(?:\b(?:after|within|before|for|over|under|up to|at least|at most)\s)?"
    rf"(?:{_DIGITS}|{_WORDNUM})(?:\s[a-z]+)?\s{_TIME_UNITS}\b", re.IGNORECASE)

# "when should I ...?" is often answered by a condition: "when the stems reach about 20 cm"
_EN_CONDITION = re.compile(r"\b(?:[Ww]hen|[Oo]nce|[Aa]s soon as|[Bb]efore|[Aa]fter|[Uu]ntil)\s[^,;.:!?]{3,60}")

_ZH_NUM = r"(?:\d+(?:[.,]\d+)*|[零〇一二两三四五六七八九十百千万亿几数]+)"
_ZH_UNIT = (r"(?:%|％|万|亿|千|百)?(?:多|余)?(?:\s?(?:个月|个小时|个星期|平方公里|平方千米|平方公尺|平方米|公里|千米|"
            r"公尺|公分|公顷|厘米|毫米|英尺|英里|海里|立方米|公斤|千克|小时|分钟|美元|英镑|欧元|人民币|港元|"
            r"km|[个次天年岁人种名位条家座部场件本只辆台米克吨元倍秒届集层所项首张页册章卷艘架枚名户头匹亩万亿]))?")
# a range is one quantity: "2至23公尺", "10-15米"
_ZH_NUMBER = re.compile(
    rf"(?<![A-Za-z0-9\-.]){_ZH_NUM}(?:\.\d+)?(?:\s*[至到~～\-－—–]\s*{_ZH_NUM}(?:\.\d+)?)?{_ZH_UNIT}")
# no quantity: a vague numeral alone ("几", "数", "万" of 万那杜) or a bare 一 (之一, 一般, 一套)
_ZH_VAGUE = re.compile(r"[几数百千万亿]+")
_ARTICLE_BEFORE = frozenset("的是为中")
_ZH_SOME = re.compile(r"^[几数][百千万亿]*")  # 数人, 数千人, 几个: some, not a number
_ZH_ONE_DATE = (
    rf"{_ZH_NUM}年代|(?:公元前?)?{_ZH_NUM}年(?:{_ZH_NUM}月(?:{_ZH_NUM}[日号])?)?|{_ZH_NUM}月{_ZH_NUM}[日号]|"
    rf"{_ZH_NUM}世纪(?:{_ZH_NUM}年代)?")
# a range is one span ("475年至477年", "1969年至1970年间"); a festival or an era's period is a time ("春节时期")
_ZH_DATE = re.compile(
    rf"(?:{_ZH_ONE_DATE})(?:\s*[至到~\-－—–]\s*(?:{_ZH_ONE_DATE}))?(?:间|期间)?|"
    rf"星期[一二三四五六日天]|周[一二三四五六日]|(?:上午|下午|晚上|凌晨|中午)?{_ZH_NUM}[点时](?:{_ZH_NUM}分)?|"
    r"\d{1,2}:\d{2}|(?:春|夏|秋|冬)[天季]|"
    r"(?:春节|元旦|元宵|清明|端午|中秋|国庆|除夕|圣诞|寒假|暑假|节假日|农历新年)(?:时期|期间|前后|前夕)?|"
    rf"(?:(?![在于只从自到至是的为和与及])[{_HAN_CHARS}]){{2,4}}(?:时期|年间)")

_NAME_WORD = (r"(?:[A-Z][^\W\d_]*(?:['’\-][^\W\d_]+)*(?![\w])|[A-Z]\.|"
              r"(?:van|von|de|der|da|di|del|la|le|bin|al)(?=\s[A-Z]))")
_EN_NAME = re.compile(rf"\b{_NAME_WORD}(?:[ \t]+{_NAME_WORD}){{0,4}}")
_PATH = re.compile(r"(?<!\S)(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]*\w)+|\bhttps?://\S+[\w/]|\b[A-Za-z]:\\\\\S+")
_SENTENCE_START = re.compile(r"(?:\A|[.!?:;]\s+|\n|[—–])\s*\Z")
_NOT_NAMES_TEXT = (
    "The A An This That These Those It Its In On At For From By With And Or But If When Where Why How What Who "
    "Which Our Your Their His Her We You They He She I Abstract Introduction Keywords Figure Table Chapter Section "
    "Page Note Notes E-Mail E-mail Email Mail Tel Phone Fax Web "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June "
    "July August September October November December")
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())


@dataclass(frozen=True, slots=True)
class Span:
    """``text`` at ``start:end`` of the text it was found in."""

    text: str
    start: int
    end: int


def _matches(pattern: re.Pattern[str], text: str) -> list[Span]:
    return [Span(m.group(0).strip(), m.start(), m.end()) for m in pattern.finditer(text) if m.group(0).strip()]


@functools.cache
def _posseg() -> Any:
    import jieba.posseg

    return jieba.posseg


def _jieba_names(text: str, flags: tuple[str, ...]) -> list[Span]:
    out: list[Span] = []
    pos = 0
    for word, flag in _posseg().cut(text):
        start = text.find(word, pos)
        if start < 0:
            continue
        pos = start + len(word)
        if flag.startswith(flags) and len(word) >= 2:
            if out and out[-1].end == start:  # 光荣 + 公司: one name
                prev = out.pop()
                out.append(Span(prev.text + word, prev.start, pos))
            else:
                out.append(Span(word, start, pos))
    return out


def _en_names(text: str) -> list[Span]:
    out: list[Span] = []
    for m in _EN_NAME.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and words[0] in _NOT_NAMES:  # "The Eiffel Tower" -> "Eiffel Tower"
            start = text.index(words[0], start) + len(words[0])
            words = words[1:]
        while words and words[-1] in _NOT_NAMES:
            words = words[:-1]
        if not words:
            continue
        name = " ".join(words)
        start = text.index(words[0], start)
        if len(words) == 1 and _SENTENCE_START.search(text[:start]):
            continue  # "Made by ...": a capitalised first word is no name
        if len(words) == 1 and _ROMAN.fullmatch(name):
            continue  # "Section II": a numeral (in a name it is part of it: "John Paul II")
        out.append(Span(name, start, start + len(name)))
    return out


_ROMAN = re.compile(r"[IVXLC]{2,}|[VXLC]")


_CODE_SPAN = re.compile(
    # 07-1315, DARPA-BAA-15-58
    r"(?<![\w\-–‐‑])(?=[A-Za-z\-–‐‑./]*\d)[A-Za-z0-9]+(?:[\-–‐‑./][A-Za-z0-9]+)+(?![\w\-–‐‑])|"
    r"(?<![\w\-])(?=[A-Z]*\d)(?=\d*[A-Z])[A-Z0-9]{3,}(?![\w\-])|"  # 0050003A, E1024
    r"\b(?:No|Vol|Nr)\.\s?\d+(?:,\s(?:No|Vol|Nr)\.\s?\d+)*(?![\w\-–])")  # Vol. 85, No. 152


def find_spans(text: str, qtype: QType) -> list[Span]:
    """The spans of ``qtype`` in ``text``, in order (``[]`` for a type without spans: reason, list...)."""
    chinese = bool(_HAN.search(text))
    if qtype is QType.CODE:
        return [s for s in _matches(_CODE_SPAN, text) if not _FULL_DATE.fullmatch(s.text)]
    if qtype is QType.NUMBER:
        dates = _matches(_ZH_DATE, text) if chinese else []
        dates += _matches(_EN_CALENDAR, text)
        spans = [s for s in _matches(_ZH_NUMBER, text) if not _overlaps(s, dates) and not _vague(s, text)] \
            if chinese else []
        spans += [s for s in _matches(_EN_NUMBER, text) if not _overlaps(s, spans) and not _overlaps(s, dates)]
        return sorted(spans, key=lambda s: s.start)
    if qtype is QType.DATE:
        spans = _matches(_ZH_DATE, text) if chinese else []
        spans += [s for s in _matches(_EN_DATE, text) if not _overlaps(s, spans)]
        return spans + [s for s in _matches(_EN_CONDITION, text) if not _overlaps(s, spans)]
    if qtype is QType.PERSON:
        spans = _jieba_names(text, ("nr", "nt")) if chinese else []
        return spans + [s for s in _en_names(text) if not _overlaps(s, spans)]
    if qtype is QType.PLACE:
        spans = _jieba_names(text, ("ns",)) if chinese else []
        spans += [s for s in _matches(_PATH, text) if not _overlaps(s, spans)]
        return spans + [s for s in _en_names(text) if not _overlaps(s, spans)]
    return []


def _vague(span: Span, text: str) -> bool:
    """A Chinese "number" that states no amount: only vague numerals (几, 数, 万 alone), some (数人, 几个), 一 with
    no unit, or 一 and a measure word used as an article (是一种, 其中一种)."""
    if span.text == "一" or _ZH_VAGUE.fullmatch(span.text) or _ZH_SOME.match(span.text):
        return True  # 之一, 一般: "one of", a word; 数人: some people
    # "是一种方法", "其中一种": 一 and a measure word after 的, 是, 为, 其中: an article, not a count
    return len(span.text) == 2 and span.text[0] == "一" and text[max(0, span.start - 1):span.start] in _ARTICLE_BEFORE


_NAME_BEFORE = re.compile(r"(?:\b(?:No|Nr|Vol|Art|Sec|Fig|no|vol)\.|#|\b[A-Z][\w\-]*)\s?\Z")
_LEADING_NUMBER = re.compile(r"[$€£¥]?\s?(\d+(?:[.,]\d+)*)")


def names_a_thing(text: str, span: Span) -> bool:
    """Whether a number span is part of a name or code rather than a quantity: it follows a capitalised
    word that does not open the sentence ("Lion Air Flight 610", "Section 3", "Vol. 85", "AD 2018"), or
    ``No.``/``#``. Such a number identifies something; it never answers "how many"."""
    before = text[max(0, span.start - 40):span.start]
    m = _NAME_BEFORE.search(before)
    if m is None:
        return False
    if not m.group(0)[:1].isupper() or m.group(0).rstrip().endswith("."):
        return True  # No. 152, # 3
    word_start = span.start - (len(before) - m.start())
    return not _SENTENCE_START.search(text[:word_start])


def leading_number(span: str) -> str:
    """The digits a number span opens with, separators removed (``"189 fatalities"`` -> ``"189"``)."""
    m = _LEADING_NUMBER.match(span.strip())
    return re.sub(r"[.,]", "", m.group(1)) if m else ""


class DateKind(StrEnum):
    FULL = "full"  # a day, a month and a year
    DAY = "day"  # a day and a month, or a month and a year
    YEAR = "year"
    WEEKDAY = "weekday"
    CLOCK = "clock"
    DURATION = "duration"
    CONDITION = "condition"


_FULL_DATE = re.compile(
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\.?,?\s+\d{{4}}|{_MONTHS}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|"
    r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}|\d+年\d+月\d+[日号]", re.IGNORECASE)
_DAY_DATE = re.compile(rf"{_MONTHS}\.?\s+\d|\d\s+(?:of\s+)?{_MONTHS}|\d+月\d+[日号]|\d+年\d+月", re.IGNORECASE)
_YEAR = re.compile(r"^(?:(?:1[0-9]|20)\d{2}s?|(?:公元前?)?\S+年代?|\S+世纪.*)$")
_CLOCK = re.compile(r"\d[:.]\d{2}|\d\s?[ap]\.?m|midnight|noon|[点时]", re.IGNORECASE)


def date_kind(span: str) -> DateKind:
    """How precise a date span is: a full date, a day (or month and year), a year, a weekday, a clock
    time, a duration or a condition ("when the stems reach ...")."""
    text = span.strip()
    if _FULL_DATE.search(text):
        return DateKind.FULL
    if _DAY_DATE.search(text):
        return DateKind.DAY
    if _EN_CONDITION.match(text):
        return DateKind.CONDITION
    if re.search(rf"\b{_TIME_UNITS}\b", text, re.IGNORECASE) and not _CLOCK.search(text):
        return DateKind.DURATION
    if _YEAR.match(text):
        return DateKind.YEAR
    if re.search(_WEEKDAYS, text) or text.startswith(("星期", "周")):
        return DateKind.WEEKDAY
    return DateKind.CLOCK if _CLOCK.search(text) else DateKind.YEAR


def _overlaps(span: Span, others: list[Span]) -> bool:
    return any(span.start < o.end and o.start < span.end for o in others)
