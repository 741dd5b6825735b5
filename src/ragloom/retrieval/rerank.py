"""The rerank stage (REFERENCE §5.3, ``rerank_by_model``).

The top ``window`` candidates by their current similarity are sent to a
:class:`~ragloom.models.rerank.Reranker`; in their similarity the rerank score
takes the place of the vector similarity::

    similarity = (1 - vsw) * term_similarity + vsw * rerank_score + rank_features

whatever fusion produced the incoming similarity (the reranked similarity is
absolute, so it is comparable across the reranked candidates whichever way they
were recalled). ``rank_features`` is the candidate's ``rank_feature`` (pagerank
and tags). ``vsw`` is the weight the score stage gave the vector side (1 in
vector-only mode, 0 in keyword-only mode, where reranking changes nothing).

Text given to the reranker (a decision, see :func:`rerank_text`): the document
title (file name without extension), the chunk's raw content, and its important
keywords. The reference feeds the *tokenised* fields (content_ltks + title_tks
+ important_kwd); cross-encoders and LLMs read natural text, and the
space-separated Chinese tokens would only hurt them, so the raw text is used.

Candidates outside the window keep their order and come after every reranked
candidate, whatever their similarity; :func:`rank_key` sorts that way.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import PurePath

import numpy as np

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.errors import ModelError
from ragloom.models.rerank import Reranker
from ragloom.nlp.names import telling_name

log = logging.getLogger(__name__)

__all__ = ["rank_key", "rerank", "rerank_text"]


def rerank_text(record: ChunkRecord) -> str:
    """Title line (document name without extension, when it names something: not an identifier such as
    ``1.txt`` or a hex digest, :func:`ragloom.nlp.names.telling_name`), content, then important keywords."""
    parts = []
    named = telling_name(record.document_name) if record.document_name else None
    title = PurePath(named).stem if named else ""
    if title:
        parts.append(title)
    parts.append(record.content)
    if record.important_keywords:
        parts.append(" ".join(record.important_keywords))
    return "\n".join(parts)


def rank_key(candidate: Candidate) -> tuple[bool, float]:
    """Sort key: reranked candidates first, then by similarity, highest first.

    Use it (with a stable sort) wherever candidates are re-sorted after this
    stage, so that the candidates outside the rerank window stay below it.
    """
    return (candidate.rerank_score is None, -candidate.similarity)


def rerank(
    candidates: list[Candidate],
    question: str,
    reranker: Reranker,
    *,
    vector_similarity_weight: float,
    window: int,
) -> list[Candidate]:
    """Rescore the top ``window`` candidates with ``reranker``; return all candidates, new order.

    The input is first ordered by similarity (stable). The first ``window`` get a
    ``rerank_score`` (clipped to [0, 1]) and a new similarity and are re-sorted by
    it; the rest follow unchanged, in their order. Input objects are not modified
    (new :class:`Candidate` objects are returned). ``window <= 0`` or an empty
    input calls no model. A reranker failure propagates as :class:`ModelError`.
    """
    ordered = sorted(candidates, key=lambda c: -c.similarity)
    if window <= 0 or not ordered:
        return ordered
    head, tail = ordered[:window], ordered[window:]
    started = time.perf_counter()
    scores = np.asarray(reranker.score(question, [rerank_text(c.record) for c in head]), dtype=np.float64)
    if scores.shape != (len(head),):
        raise ModelError(f"reranker {reranker.name} returned {scores.shape} scores for {len(head)} passages")
    scores = np.clip(np.nan_to_num(scores, nan=0.0), 0.0, 1.0)
    vsw = vector_similarity_weight
    rescored = [
        dataclasses.replace(
            c, rerank_score=float(s), similarity=(1 - vsw) * c.term_similarity + vsw * float(s) + c.rank_feature
        )
        for c, s in zip(head, scores, strict=True)
    ]
    rescored.sort(key=lambda c: -c.similarity)
    log.debug("reranked %d of %d candidates with %s in %.1f ms", len(head), len(ordered), reranker.name,
              (time.perf_counter() - started) * 1000)
    return rescored + tail
