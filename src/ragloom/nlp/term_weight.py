"""Query term weights (REFERENCE §4.2).

``w(t) = (0.3 * idf(freq(t), 1e7) + 0.7 * idf(df(t), 1e9)) * ner(t) * pos(t)``,
``idf(s, N) = log10(10 + (N - s + 0.5) / (s + 0.5))``, normalised to sum 1.

* ``freq(t)`` — corpus frequency from jieba's dictionary; heuristics for
  numbers, unknown Latin words (longer = rarer) and unknown long Chinese words
  (a sixth of their rarest piece); floor 10.
* ``df(t)`` — document frequency. When a ``doc_freq`` callable is given and the
  index holds at least ``min_rows`` rows, the index's own statistics are used
  (``idf(df_index(t), N_rows)``); otherwise the reference heuristics (the
  reference's ``term.freq`` table is not shipped there either).
* ``ner(t)`` — numbers ×2; model numbers / codes (``x-200``, ``v2.5``, ``gpt4``)
  ×2 (ragloom addition); one- or two-letter Latin words ×0.01. The reference's
  named-entity table (company, location, school, ... types) is not available:
  left out.
* ``pos(t)`` — jieba dictionary POS tag: pronoun/conjunction/adverb ×0.3,
  place/organisation ×3, noun ×2, number ×2. Words outside the dictionary
  (and English words) get ×1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ragloom.nlp._lexicon import load_lexicon
from ragloom.nlp.tokenizer import Analyzer, is_han

DocFreq = Callable[[list[str]], tuple[dict[str, int], int]]
"""Given terms, return (document frequency of each term, number of rows N)."""

_NUMBER_LIKE = re.compile(r"^[0-9][0-9,.]+$")
_DIGITS = re.compile(r"^[0-9][0-9.,-]*$")
_CODE_LIKE = re.compile(r"^(?=.*[0-9])(?=.*[a-z])[a-z0-9][a-z0-9._/-]*$")
_SHORT_LATIN = re.compile(r"^[a-z]{1,2}$")
_LATIN_WORD = re.compile(r"^[a-z. -]+$")
_POS_FACTORS = {"r": 0.3, "c": 0.3, "d": 0.3, "ns": 3.0, "nt": 3.0, "n": 2.0}


def idf(s: float, n: float) -> float:
    """``log10(10 + (n - s + 0.5) / (s + 0.5))`` — always ≥ 1 for 0 ≤ s ≤ n."""
    return math.log10(10 + (n - s + 0.5) / (s + 0.5))


def _latin_rarity(term: str) -> int:
    letters = sum(c.isalpha() for c in term)
    return max(10, round(300 / 2 ** (max(0, letters - 3) / 2)))


class TermWeigher:
    """Weights query terms. Cheap to construct (build one per request when
    ``doc_freq`` is bound to a tenant's index); thread-safe."""

    def __init__(self, analyzer: Analyzer, doc_freq: DocFreq | None = None, *, min_rows: int = 100) -> None:
        self.analyzer = analyzer
        self.doc_freq = doc_freq
        self.min_rows = min_rows

    def weights(self, terms: Sequence[str]) -> list[tuple[str, float]]:
        """``(term, weight)`` for each term, in the given order; the weights are
        positive and sum to 1 (an empty input gives ``[]``)."""
        if not terms:
            return []
        df_part = self._df_part(list(dict.fromkeys(terms)))
        raw = [(0.3 * idf(self.freq(t), 1e7) + df_part[t] * 0.7) * self.ner(t) * self.pos(t) for t in terms]
        total = sum(raw)
        return [(t, w / total) for t, w in zip(terms, raw, strict=True)]

    def _df_part(self, unique: list[str]) -> dict[str, float]:
        if self.doc_freq is not None:
            counts, n_rows = self.doc_freq(unique)
            if n_rows >= self.min_rows:
                return {t: idf(min(counts.get(t, 0), n_rows), n_rows) for t in unique}
        return {t: idf(self.df(t), 1e9) for t in unique}

    # -- factors (public for tests and explain output) ----------------------
    def ner(self, term: str) -> float:
        if _NUMBER_LIKE.match(term) or _CODE_LIKE.match(term):
            return 2.0
        if _SHORT_LATIN.match(term):
            return 0.01
        return 1.0

    def pos(self, term: str) -> float:
        if _DIGITS.match(term):
            return 2.0
        tag = load_lexicon().tags.get(term)
        return _POS_FACTORS.get(tag, 1.0) if tag else 1.0

    def freq(self, term: str) -> float:
        if _NUMBER_LIKE.match(term):
            return 3
        known = load_lexicon().freq.get(term)
        if known:
            return max(known, 10)
        if _LATIN_WORD.match(term):
            return _latin_rarity(term)
        if is_han(term) and len(term) >= 4:
            pieces = [p for p in self.analyzer.fine_pieces(term) if len(p) > 1]
            if len(pieces) > 1:
                return max(10, min(self.freq(p) for p in pieces) / 6)
        return 10

    def df(self, term: str) -> float:
        if _NUMBER_LIKE.match(term):
            return 5
        if _LATIN_WORD.match(term):
            return _latin_rarity(term)
        if is_han(term) and len(term) >= 4:
            pieces = [p for p in self.analyzer.fine_pieces(term) if len(p) > 1]
            if len(pieces) > 1:
                return max(3, min(self.df(p) for p in pieces) / 6)
        return 3
