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
  with ``w = fusion_vector_weight`` (default 0.75), mapped to (0, 1) by the
  logistic function so that it reads like a similarity and rank features can be
  added to it. It is relative: no threshold applies. A side that does not vary
  over the candidates contributes nothing. In keyword-only mode this fusion
  ranks by the engine's BM25 score (z-scored, logistic), which ranks better
  alone than token similarity (Cranfield nDCG@10 0.294 against 0.252), while
  inside the hybrid fusion token similarity does better than BM25.

The default and its weight were chosen on the labelled sets (``ragloom eval``):
see the README's retrieval-quality table for the figures.
"""

from __future__ import annotations

import numpy as np

FUSIONS = ("normalized", "weighted")


def zscore(x: np.ndarray) -> np.ndarray:
    """(x − mean) / standard deviation; zeros when ``x`` does not vary (or is empty)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return x
    sd = float(x.std())
    return (x - float(x.mean())) / sd if sd > 1e-12 else np.zeros_like(x)


def fuse_weighted(term: np.ndarray, cosine: np.ndarray, vector_weight: float) -> np.ndarray:
    """The reference's fusion: ``(1 − w)·term + w·cosine``."""
    return (1.0 - vector_weight) * np.asarray(term, dtype=np.float64) + vector_weight * np.asarray(cosine)


def fuse_normalized(term: np.ndarray, cosine: np.ndarray, vector_weight: float) -> np.ndarray:
    """``logistic((1 − w)·z(term) + w·z(cosine))`` over the candidates of one query, in (0, 1)."""
    fused = (1.0 - vector_weight) * zscore(term) + vector_weight * zscore(cosine)
    return 1.0 / (1.0 + np.exp(-fused))
