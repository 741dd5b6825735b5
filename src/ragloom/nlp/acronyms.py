"""Questions that ask what an acronym stands for ("What does MCAS stand for?", "MCAS是什么的缩写"):
read by the retrieval gate (the documents may write the acronym out) and by the extractive answerer
(which spells it out)."""

from __future__ import annotations

import re

__all__ = ["acronym_asked"]

_ACRONYM_QUESTION = re.compile(
    r"\b[Ww]hat\s+(?:does|do|did)\s+(?:the\s+)?(?:abbreviation\s+|acronym\s+)?[\"'“]?([A-Z][A-Za-z0-9&]{1,9})[\"'”]?\s+stand\s+for\b|"
    r"\b[Ww]hat\s+is\s+(?:the\s+)?(?:abbreviation\s+|acronym\s+)?[\"'“]?([A-Z][A-Z0-9&]{1,9})[\"'”]?\s+short\s+for\b|"
    r"\b(?:expansion|full\s+(?:name|form))\s+of\s+(?:the\s+)?([A-Z][A-Z0-9&]{1,9})\b|"
    r"([A-Z][A-Z0-9&]{1,9})\s*(?:是什么的缩写|的全称|的全名|代表什么)")


def acronym_asked(question: str) -> str:
    """The acronym a question asks the expansion of ("What does MCAS stand for?" -> ``MCAS``), else ``""``."""
    m = _ACRONYM_QUESTION.search(question)
    if not m:
        return ""
    acronym = next(g for g in m.groups() if g)
    return acronym if sum(ch.isupper() for ch in acronym) >= 2 else ""
