"""Token similarity between a question and chunks (REFERENCE §5.3).

Query side: :func:`query_weights` turns the weighted keywords into a dict
``d[t_i] += 0.4 w_i`` and ``d[pair(t_i, t_{i+1})] += 0.6 max(w_i, w_{i+1})``.
Chunk side: the set of keys a chunk holds — its unique content, title,
important-keyword and question terms, and the pairs of adjacent terms in each
of those sequences. ``sim(q, d) = Σ_{k ∈ q ∩ d} q_k / Σ_k q_k`` (the chunk side's
multiplicities — title ×2, important ×5, question ×6 in the reference — do not
enter the formula, so only membership is computed).

A pair key of two Chinese terms is their concatenation, as in the reference,
so the query pair 北京+大学 also matches a chunk holding the single term
北京大学, and likewise a query term 北京大学 matches a chunk where 北京 and 大学
are adjacent (segmentation varies with context). Other pairs are joined with a
space, so ``new york`` never collides with a single term.

Speed: a chunk's terms are intersected (in C) with the few terms the query can
use — its keys and both halves of its pairs — so no set of all the chunk's terms
is built; adjacency is checked, by substring search in the space-joined terms,
only for a chunk holding both halves of some query pair. The score is summed in
the query's key order, so it does not depend on set iteration order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Protocol

import numpy as np

from ragloom.nlp.tokenizer import Analyzer, is_han


class HasTerms(Protocol):
    """What token similarity reads from a chunk (``ChunkTerms`` and ``ChunkRecord`` fit)."""

    content_terms: list[str]
    title_terms: list[str]
    important_keywords: list[str]
    important_terms: list[str]
    question_terms: list[str]


def pair_key(a: str, b: str) -> str:
    """The key of an adjacent pair: concatenation for two Chinese terms, else ``"a b"``."""
    return a + b if is_han(a) and is_han(b) else f"{a} {b}"


def query_weights(keywords: Sequence[tuple[str, float]]) -> dict[str, float]:
    """The query-side dict of :func:`token_similarity` (terms and adjacent pairs)."""
    d: dict[str, float] = {}
    for i, (term, w) in enumerate(keywords):
        d[term] = d.get(term, 0.0) + 0.4 * w
        if i + 1 < len(keywords):
            nxt, w2 = keywords[i + 1]
            key = pair_key(term, nxt)
            d[key] = d.get(key, 0.0) + 0.6 * max(w, w2)
    return d


class _QueryIndex:
    """The query dict split for fast matching."""

    def __init__(self, keywords: Sequence[tuple[str, float]]) -> None:
        self.weights = query_weights(keywords)
        self.total = sum(self.weights.values())
        self.keys = frozenset(self.weights)
        # Keys that also match as two adjacent chunk terms, by first half:
        # a Latin pair "a b" <- (a, b); a Chinese key <- each split (北京大学 <- 北京+大学).
        self.heads: dict[str, list[tuple[str, str]]] = {}
        for (a, _), (b, _) in zip(keywords, keywords[1:], strict=False):
            if not (is_han(a) and is_han(b)):
                self.heads.setdefault(a, []).append((b, pair_key(a, b)))
        for key in self.weights:
            if len(key) > 1 and is_han(key):
                for i in range(1, len(key)):
                    self.heads.setdefault(key[:i], []).append((key[i:], key))
        self.head_set = frozenset(self.heads)
        # every term whose presence in a chunk matters: keys, and both halves of adjacency pairs
        self.lookup = self.keys | self.head_set | {b for pairs in self.heads.values() for b, _ in pairs}

    def score(self, chunk: HasTerms) -> float:
        if self.total <= 0:
            return 0.0
        seqs = (chunk.content_terms, chunk.title_terms, chunk.important_terms, chunk.question_terms)
        # the chunk's terms restricted to the few the query can use (no set of all its terms is built)
        present = self.lookup.intersection(chain(chunk.important_keywords, *seqs))
        if not present:
            return 0.0
        hit = set(self.keys.intersection(present))
        needed = [
            (a, b, key) for a in self.head_set & present for b, key in self.heads[a] if b in present and key not in hit
        ]
        if needed:
            # terms never contain spaces, so " a b " in the joined terms = a and b adjacent
            joined = [f" {' '.join(seq)} " for seq in seqs if len(seq) > 1]
            for a, b, key in needed:
                probe = f" {a} {b} "
                if key not in hit and any(probe in text for text in joined):
                    hit.add(key)
        # summed in the query's key order, so the result does not depend on set iteration order
        return sum(w for k, w in self.weights.items() if k in hit) / self.total


def token_similarity(keywords: Sequence[tuple[str, float]], chunk: HasTerms) -> float:
    """``sim(q, d)`` in [0, 1] for one chunk; 0 when there are no keywords."""
    return _QueryIndex(keywords).score(chunk)


def token_similarities(keywords: Sequence[tuple[str, float]], chunks: Sequence[HasTerms]) -> np.ndarray:
    """``sim(q, d)`` for each chunk, as a float64 array of ``len(chunks)``."""
    index = _QueryIndex(keywords)
    return np.fromiter((index.score(c) for c in chunks), dtype=np.float64, count=len(chunks))


def text_similarity(analyzer: Analyzer, query_text: str, chunk_text: str) -> float:
    """Token similarity of a free text (a sentence) to another text, both analysed here.

    Query weights are uniform over the query's non-stop-word terms; used to tie
    answer sentences to evidence, where index statistics add little.
    """
    terms = analyzer.remove_stop_words(analyzer.tokenize(query_text)) or analyzer.tokenize(query_text)
    if not terms:
        return 0.0
    w = 1.0 / len(terms)
    chunk = _PlainTerms(content_terms=analyzer.tokenize(chunk_text))
    return token_similarity([(t, w) for t in terms], chunk)


@dataclass(slots=True)
class _PlainTerms:
    content_terms: list[str]
    title_terms: list[str] = field(default_factory=list)
    important_keywords: list[str] = field(default_factory=list)
    important_terms: list[str] = field(default_factory=list)
    question_terms: list[str] = field(default_factory=list)
