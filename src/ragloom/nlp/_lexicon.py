"""jieba's dictionary as a frequency and part-of-speech table (private).

Term weighting (REFERENCE §4.2) needs each word's corpus frequency and POS
tag; these are the ``word freq tag`` lines of jieba's ``dict.txt`` (the same
table ``jieba.posseg`` uses for in-dictionary words). Loaded once, lazily.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Word frequencies (raw counts) and POS tags of jieba's dictionary."""

    freq: dict[str, int]
    tags: dict[str, str]
    total: int


def _dict_path() -> str:
    import jieba

    return os.path.join(os.path.dirname(jieba.__file__), "dict.txt")


@functools.cache
def load_lexicon() -> Lexicon:
    """The process-wide lexicon (parsed on first call, ~0.4 s; read-only after)."""
    freq: dict[str, int] = {}
    tags: dict[str, str] = {}
    with open(_dict_path(), encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) < 2:
                continue
            freq[parts[0]] = int(parts[1])
            if len(parts) > 2:
                tags[parts[0]] = parts[2]
    return Lexicon(freq=freq, tags=tags, total=sum(freq.values()))
