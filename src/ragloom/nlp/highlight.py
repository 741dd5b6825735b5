"""Where a question's terms occur in a text, for a result's snippet: character spans to mark.

A Latin word is marked when its analysed form (stemmed, lower-cased) is one of the question's
terms ("pumps" for the term "pump"); a Chinese term (a word or a character pair) wherever its
characters occur. Spans are merged and sorted; the text itself is never changed (the page marks the
spans as text, never as markup)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ragloom.nlp.tokenizer import Analyzer

_WORD = re.compile(r"[^\W\d_][\w'-]*|\d[\w.,-]*", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
MAX_SPANS = 200


def spans(text: str, terms: Iterable[str], analyzer: Analyzer) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of ``text`` that state one of ``terms`` (analysed terms), merged."""
    wanted = {t for t in terms if t}
    latin = {t for t in wanted if not _CJK.search(t)}
    found: list[tuple[int, int]] = []
    if latin:
        for m in _WORD.finditer(text):
            word = m.group()
            if _CJK.search(word):
                continue
            if set(analyzer.tokenize(word)) & latin:
                found.append((m.start(), m.end()))
    for term in (t for t in wanted if _CJK.search(t)):
        start = text.find(term)
        while start >= 0 and len(found) < MAX_SPANS * 4:
            found.append((start, start + len(term)))
            start = text.find(term, start + 1)
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged[:MAX_SPANS]
