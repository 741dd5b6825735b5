"""Small text helpers of the graph builders: sentences, a rough token count, clipping."""

from __future__ import annotations

import re
from collections.abc import Callable

from ragloom.nlp import has_han

CountTokens = Callable[[str], int]

_ROUGH = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\s\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# a sentence ends at . ! ? (followed by a space) or at Chinese 。！？；, or at a line break
_SENTENCE_END = re.compile(r"(?<=[.!?;])[\"'”’)\]]*\s+|(?<=[。！？；!?])[\"'”’」』)]*|\n+")


def words_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` as a set (for word lists written as one string)."""
    return frozenset(text.split())


_ABBREVIATIONS = words_set("inc ltd co corp dr mr mrs ms prof st jr sr vs e.g i.e etc no fig approx dept est mt "
                           "ft u.s u.k")
_LAST_WORD = re.compile(r"([\w.]+)\.\s*$")


def rough_tokens(text: str) -> int:
    """About how many tokens ``text`` is: one per Chinese character, one per other run of non-space
    characters (a fair stand-in when the chat model's tokenizer is not at hand)."""
    return len(_ROUGH.findall(text))


def clip(text: str, max_tokens: int, count_tokens: CountTokens = rough_tokens) -> str:
    """``text`` cut to about ``max_tokens`` tokens (with "..." when cut)."""
    n = count_tokens(text)
    if n <= max_tokens:
        return text
    if max_tokens <= 0:
        return ""
    cut = text[: max(1, len(text) * max_tokens // n)]
    while cut and count_tokens(cut) > max_tokens:
        cut = cut[: len(cut) * 9 // 10]
    return cut.rstrip() + "..."


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order (English and Chinese), stripped; an abbreviation such as
    ``Inc.`` or ``Dr.`` does not end a sentence."""
    out: list[str] = []
    start = 0
    pending = ""
    for m in _SENTENCE_END.finditer(text):
        piece = text[start : m.end()]
        start = m.end()
        last = _LAST_WORD.search(piece.rstrip())
        if "\n" not in m.group(0) and last and last.group(1).lower() in _ABBREVIATIONS:
            pending += piece
            continue
        sentence = (pending + piece).strip()
        pending = ""
        if sentence:
            out.append(sentence)
    tail = (pending + text[start:]).strip()
    if tail:
        out.append(tail)
    return out


def is_chinese(text: str) -> bool:
    """True when ``text`` holds Chinese characters."""
    return has_han(text)
