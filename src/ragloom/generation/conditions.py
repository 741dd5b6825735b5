"""A number under a threshold: the case a question asks about and the cases a rule's clauses cover.

"工作满十年每年能休几天带薪假？" asks about the case "满 10 年"; of the rule "满 1 年不满 10 年的，每年
5 天；满 10 年不满 20 年的，每年 10 天", the first clause covers another case (不满 10 年: under ten
years) although it states the question's number. :func:`contradicts` says so, in Chinese and English
("at least 10 years" against "less than 10 years"). Chinese numerals count as digits (十年 is 10 年:
:func:`chinese_value`).
"""

from __future__ import annotations

import functools
import re

_DIGIT_VALUES = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
                 "九": 9}
_SCALES = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL = "零〇一二两三四五六七八九十百千万"
_UNITS = r"(?:个月|个小时|小时|周岁|年|月|天|日|岁|周|次|个|人|元|米|公里|公斤|分钟)"

# a negated threshold first: "不满" holds "满"
_ZH_BELOW = r"(?:不满|未满|不足|不到|少于|低于|小于|未超过|不超过)"
_ZH_AT_LEAST = r"(?:满|超过|达到|已满|多于|高于|大于|不少于|不低于|至少)"
_ZH_THRESHOLD = re.compile(
    rf"(?P<word>{_ZH_BELOW}|{_ZH_AT_LEAST})\s*(?P<num>\d+(?:\.\d+)?|[{_ZH_NUMERAL}]+)\s*(?P<unit>{_UNITS})")
_EN_BELOW = r"(?:less than|fewer than|under|below|up to|at most|no more than)"
_EN_AT_LEAST = r"(?:at least|more than|over|above|no less than|or more|and over|or longer)"
_EN_THRESHOLD = re.compile(
    rf"\b(?P<word>{_EN_BELOW}|{_EN_AT_LEAST})\s+(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)", re.IGNORECASE)
_EN_AFTER = re.compile(r"\b(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)\s+(?P<word>or more|and over|or longer)\b",
                       re.IGNORECASE)
_ZH_IN_NUMBER = re.compile(rf"[{_ZH_NUMERAL}]+(?={_UNITS})")


def chinese_value(numeral: str) -> int | None:
    """The value of a Chinese numeral up to the ten thousands (十 10, 十五 15, 二十 20, 一百零五 105,
    三万 30000); ``None`` for anything else."""
    if not numeral or any(ch not in _DIGIT_VALUES and ch not in _SCALES and ch != "万" for ch in numeral):
        return None
    total, section, digit = 0, 0, None
    for ch in numeral:
        if ch in _DIGIT_VALUES:
            digit = _DIGIT_VALUES[ch]
        elif ch in _SCALES:
            section += (1 if digit is None else digit) * _SCALES[ch]
            digit = None
        else:  # 万
            total += (section + (digit or 0)) * 10000
            section, digit = 0, None
    return total + section + (digit or 0)


def _value(number: str) -> str:
    if number[0].isdigit():
        return number
    value = chinese_value(number)
    return "" if value is None else str(value)


def _unit(unit: str) -> str:
    unit = unit.lower()
    if unit.endswith("s") and len(unit) > 3:
        unit = unit[:-1]
    return {"周岁": "岁", "个月": "月", "个小时": "小时", "日": "天"}.get(unit, unit)


@functools.lru_cache(maxsize=1024)
def thresholds(text: str) -> frozenset[tuple[bool, str, str]]:
    """The thresholds ``text`` states, as ``(below, number, unit)``: "不满 10 年" is ``(True, "10", "年")``,
    "满十年" ``(False, "10", "年")``, "less than 2 years" ``(True, "2", "year")``. Kept for the texts
    last asked about: an answer asks it of its question once per candidate and per span."""
    out: set[tuple[bool, str, str]] = set()
    for m in _ZH_THRESHOLD.finditer(text):
        if value := _value(m.group("num")):
            out.add((re.fullmatch(_ZH_BELOW, m.group("word")) is not None, value, _unit(m.group("unit"))))
    for pattern in (_EN_THRESHOLD, _EN_AFTER):
        for m in pattern.finditer(text):
            below = re.fullmatch(_EN_BELOW, m.group("word").lower()) is not None
            out.add((below, m.group("num"), _unit(m.group("unit"))))
    return frozenset(out)


def contradicts(question: str, text: str) -> bool:
    """Whether ``text`` states the threshold of ``question`` the other way round: the question asks
    about "满十年" (ten years or more) and the text's case is "不满 10 年" (under ten) — a clause of a rule
    for another case, however many of the question's words it shares."""
    asked = thresholds(question)
    if not asked:
        return False
    stated = thresholds(text)
    return any((not below, number, unit) in stated and (below, number, unit) not in stated
               and (not below, number, unit) not in asked for below, number, unit in asked)


def in_condition(question: str, text: str, start: int) -> bool:
    """Whether the number at ``start`` of ``text`` is a threshold's (满 **20 年**, less than **2 years**) in
    the unit of a threshold the question states: the case a rule's clause covers, not what it grants."""
    units = {unit for _, _, unit in thresholds(question)}
    if not units:
        return False
    return any(m.start("num") <= start < m.end() and _unit(m.group("unit")) in units
               for pattern in (_ZH_THRESHOLD, _EN_THRESHOLD, _EN_AFTER) for m in pattern.finditer(text))


def chinese_numbers(text: str) -> set[str]:
    """The Chinese numerals of ``text`` that count something (a unit follows: 十年, 三个月), as digits."""
    return {v for m in _ZH_IN_NUMBER.finditer(text) if (v := _value(m.group()))}
