"""How the term side and the vector side of a hybrid search become one similarity.

Two fusions, chosen per request (``fusion``) with a default in the settings
(``RAGLOOM_FUSION``):

* ``weighted`` — the reference's (REFERENCE §5.3): ``(1 − w)·term + w·cosine``
  with the knowledge base's ``vector_similarity_weight`` (default 0.3) and its
  ``similarity_threshold`` (default 0.2). The two sides live on different
  scales: token similarity spreads over [0, 1] while the cosines of one question
  with e5-style embeddings bunch within a few hundredths of each other, so the
  vector side barely moves the order and the term side decides.
* ``normalized`` (ragloom's default) — each side is first put on the same scale
  by its z-score over the candidates of *this* query (how many standard deviations
  a candidate stands above the others), then ``(1 − w)·z(term) + w·z(cosine)``
  with ``w = fusion_vector_weight`` (default 0.7), mapped to (0, 1) by the
  logistic function so that it reads like a similarity and rank features can be
  added to it. It is relative: no threshold applies. A side that does not vary
  over the candidates contributes nothing. In keyword-only mode this fusion
  ranks by the engine's BM25 score (z-scored, logistic), which ranks better
  alone than token similarity. In hybrid mode the term side is BM25 for a
  non-Chinese question and the mean of the z-scores of token similarity and BM25
  for a Chinese one (:func:`term_side`). nDCG@10 of hybrid on Cranfield (graded,
  1 = most relevant), shipped ``builtin:en`` and ``builtin:zh``, and CMRC (first
  300 passages): 0.401 / 0.989 / 0.988 / 0.997; before, with the mean for every
  question and a weight of 0.75: 0.395 / 0.989 / 0.988 / 0.996.

In hybrid mode, when the question is in another language than most candidates (CJK vs Latin script),
the normalized fusion scales the term side's weight by the share of the question's terms it can reach
at best (:func:`cross_language_weight`) and the weighted fusion ranks by the cosine alone, so the keyword
side neither drowns nor vetoes the vector side.

The default and its weight were chosen on the labelled sets (``ragloom eval``):
see the README's retrieval-quality table for the figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ragloom.registry import Registry


@dataclass(frozen=True, slots=True)
class Sides:
    """What a fusion combines, one value per candidate: token similarity, the engine's BM25
    score (0 for vector-only hits) and the cosine of question and chunk; ``chinese``: the question is."""

    term: np.ndarray
    bm25: np.ndarray
    cosine: np.ndarray
    chinese: bool = False
    # per candidate: the chunk is written in another script than the question (CJK vs Latin); empty: none is
    cross_language: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


class Fusion(Protocol):
    """A way to make one similarity of the two sides. ``weight`` is the vector side's weight in
    the request's mode (0 keyword-only, 1 vector-only); ``default_weight`` is the weight used when the
    request gives none (from the settings or the knowledge base); ``threshold`` the similarity under
    which candidates are dropped (0: none)."""

    name: str

    def default_weight(self, *, settings_weight: float, kb_weight: float | None) -> float: ...

    def threshold(self, *, mode: str, weight: float, kb_threshold: float) -> float: ...

    def fuse(self, sides: Sides, *, mode: str, weight: float) -> np.ndarray: ...


class NormalizedFusion:
    """z-scores of both sides over the query's candidates, weighted, logistic; relative: no threshold.
    Keyword-only ranks by BM25; vector-only by the cosine."""

    name = "normalized"

    def default_weight(self, *, settings_weight: float, kb_weight: float | None) -> float:
        return settings_weight

    def threshold(self, *, mode: str, weight: float, kb_threshold: float) -> float:
        return 0.0

    def fuse(self, sides: Sides, *, mode: str, weight: float) -> np.ndarray:
        if mode == "keyword":  # the engine's BM25 ranks better alone than token similarity
            return fuse_normalized(sides.bm25, sides.cosine, 0.0)
        if mode == "hybrid":
            return fuse_normalized(term_side(sides), sides.cosine, cross_language_weight(sides, weight))
        return fuse_weighted(sides.term, sides.cosine, weight)


class WeightedFusion:
    """The reference's ``(1 − w)·term + w·cosine`` with the knowledge base's weight (0.3) and, for
    hybrid search, its threshold."""

    name = "weighted"

    def default_weight(self, *, settings_weight: float, kb_weight: float | None) -> float:
        return kb_weight if kb_weight is not None else 0.3

    def threshold(self, *, mode: str, weight: float, kb_threshold: float) -> float:
        return kb_threshold if weight > 0 and mode == "hybrid" else 0.0

    def fuse(self, sides: Sides, *, mode: str, weight: float) -> np.ndarray:
        # across languages the cosines' few hundredths decide nothing against any term match: vector ranking
        cross = mode == "hybrid" and is_cross_language(sides)
        return fuse_weighted(sides.term, sides.cosine, 1.0 if cross else weight)


fusions: Registry[[], Fusion] = Registry("fusion", "ragloom.fusions")  # built-ins: ragloom.plugins


def is_cross_language(sides: Sides) -> bool:
    """Most candidates are written in another script than the question."""
    return sides.cross_language.size > 0 and float(np.mean(sides.cross_language)) > 0.5


def cross_language_weight(sides: Sides, weight: float) -> float:
    """The vector side's weight when the question is in another language than the chunks (issue 26).

    When most candidates are written in another script than the question (a Chinese question over
    English text, or the reverse), the term side can only match the few tokens both share (numbers,
    names): left at its weight it would drown the vector side (normalized: its z-scores single out the
    chunks holding a stray number) or veto it (weighted: the similarity of every chunk stays under the
    threshold). Its weight is then scaled by the coverage it can reach — the best token similarity over
    the candidates, the share of the question's terms any chunk holds — and the vector side takes the
    rest: ``1 − (1 − w) · reach``. A question in the chunks' language keeps ``w``. (The weighted fusion,
    whose cosines differ by hundredths, ranks by the vector side alone then.)"""
    if not is_cross_language(sides):
        return weight
    reach = float(np.clip(np.max(sides.term), 0.0, 1.0)) if sides.term.size else 0.0
    return 1.0 - (1.0 - weight) * reach


def zscore(x: np.ndarray) -> np.ndarray:
    """(x − mean) / standard deviation; zeros when ``x`` does not vary (or is empty)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    sd = float(x.std())
    return (x - float(x.mean())) / sd if sd > 1e-12 else np.zeros_like(x)


def term_side(sides: Sides) -> np.ndarray:
    """The term side of the normalized hybrid fusion. For a Chinese question, the mean of the
    z-scores of token similarity and BM25 (each side is z-scored again by the fusion, so the mean's
    own spread does not matter): word segmentation makes BM25 alone noisier there. For any other,
    BM25 alone: token similarity only repeats it, less well (Cranfield nDCG@10: hybrid 0.395 with
    the mean, 0.401 with BM25; BM25 alone 0.372, token similarity alone 0.294)."""
    if not sides.chinese:
        return np.asarray(sides.bm25, dtype=np.float64)
    mean: np.ndarray = (zscore(sides.term) + zscore(sides.bm25)) / 2.0
    return mean


def fuse_weighted(term: np.ndarray, cosine: np.ndarray, vector_weight: float) -> np.ndarray:
    """The reference's fusion: ``(1 − w)·term + w·cosine``."""
    return (1.0 - vector_weight) * np.asarray(term, dtype=np.float64) + vector_weight * np.asarray(cosine)


def fuse_normalized(term: np.ndarray, cosine: np.ndarray, vector_weight: float) -> np.ndarray:
    """``logistic((1 − w)·z(term) + w·z(cosine))`` over the candidates of one query, in (0, 1)."""
    fused = (1.0 - vector_weight) * zscore(term) + vector_weight * zscore(cosine)
    return 1.0 / (1.0 + np.exp(-fused))
