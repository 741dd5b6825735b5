"""Parent-child retrieval: child hits are replaced by their (hidden) parent chunk (REFERENCE §5.6).

With parent-child chunking the small children are indexed and matched, while
their parent — the larger chunk they were cut from — is stored unavailable
(never matched). After scoring (and reranking), :func:`swap_in_parents` groups the
child hits by ``record.parent_id`` and emits each parent once in their place.

A parent's scores come from its children's *final* scores: when some of them
were reranked, only those count (a reranked child's similarity holds the rerank
score, an un-reranked one's does not, so the two are not averaged together) and
the parent carries the mean rerank score, so it stays among the reranked
candidates, in their order (:func:`ragloom.retrieval.rerank.rank_key`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.retrieval.rerank import rank_key

FetchParents = Callable[[Sequence[str]], Sequence[ChunkRecord]]


def _mean(values: Sequence[float]) -> float:
    return float(sum(values) / len(values))


def _merged_parent(parent: ChunkRecord, children: Sequence[Candidate]) -> Candidate:
    keywords = list(dict.fromkeys([*parent.important_keywords,
                                   *(k for c in children for k in c.record.important_keywords)]))
    record = replace(parent, important_keywords=keywords)
    if record.vector is None or record.vector.size == 0 or not np.any(record.vector):
        best = max(children, key=lambda c: c.similarity)
        record.vector = best.record.vector  # a hidden parent may be stored without a vector
    text_scores = [c.text_score for c in children if c.text_score is not None]
    reranked = [c for c in children if c.rerank_score is not None]
    scored = reranked or children
    return Candidate(
        record=record,
        term_similarity=_mean([c.term_similarity for c in scored]),
        vector_similarity=_mean([c.vector_similarity for c in scored]),
        similarity=_mean([c.similarity for c in scored]),
        text_score=max(text_scores) if text_scores else None,
        rank_feature=_mean([c.rank_feature for c in scored]),
        rerank_score=_mean([c.rerank_score for c in reranked if c.rerank_score is not None]) if reranked else None,
        relevance=max((c.relevance for c in children if c.relevance is not None), default=None),
    )


def swap_in_parents(candidates: Sequence[Candidate], fetch_parents: FetchParents) -> list[Candidate]:
    """Candidates with every group of child hits replaced by their parent, sorted by similarity.

    * Child hits (``record.parent_id`` set) are grouped by parent id; each parent
      found by ``fetch_parents(ids)`` (called once, with the distinct ids in
      order of first hit) is emitted once, its ``similarity``,
      ``term_similarity``, ``vector_similarity``, ``rank_feature`` and
      ``rerank_score`` the means of its reranked children's when any was
      reranked, else of all its children's (``rerank_score`` then None), its
      important keywords merged with theirs, ``text_score`` their best.
    * Children whose parent is not returned are kept as they are.
    * Candidates without a parent pass through unchanged.
    * The result is sorted by :func:`~ragloom.retrieval.rerank.rank_key`:
      reranked candidates (parents of reranked children included) first, each
      part by descending ``similarity``; ties keep the order of first appearance
      (a parent sits where its first child was).
    """
    groups: dict[str, list[Candidate]] = {}
    for cand in candidates:
        if cand.record.parent_id:
            groups.setdefault(cand.record.parent_id, []).append(cand)
    if not groups:
        return sorted(candidates, key=rank_key)
    parents = {p.id: p for p in fetch_parents(list(groups))}
    out: list[Candidate] = []
    for cand in candidates:
        pid = cand.record.parent_id
        if not pid or pid not in parents:
            out.append(cand)
        elif groups[pid][0] is cand:
            out.append(_merged_parent(parents[pid], groups[pid]))
    return sorted(out, key=rank_key)
