"""TOC enhancement at query time (REFERENCE §10; the TOC itself: :mod:`ragloom.knowledge.toc`).

Take the document with the highest summed similarity among the candidates,
score each of its titles against the question, give each chunk of a title the
mean of its titles' scores, keep chunks scoring ≥ ``MIN_CHUNK_SCORE``, add the
score to a candidate's similarity or fetch the chunk as a new candidate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragloom.dataflow import Candidate, ChunkRecord
from ragloom.knowledge.toc import TitleScorer, TocEntry

MIN_CHUNK_SCORE = 0.3


def enhance(candidates: list[Candidate], question: str, tocs: Callable[[str], list[TocEntry]],
            fetch: Callable[[list[str]], list[ChunkRecord]], scorer: TitleScorer, top_n: int) -> list[Candidate]:
    """Candidates re-scored with the best document's TOC (see the module docstring)."""
    if not candidates:
        return candidates
    per_doc: dict[str, float] = {}
    for c in candidates:
        per_doc[c.record.doc_id] = per_doc.get(c.record.doc_id, 0.0) + c.similarity
    best_doc = max(per_doc, key=per_doc.__getitem__)
    entries = tocs(best_doc)
    if not entries:
        return candidates
    scores = scorer(question, [e.title for e in entries])
    chunk_scores: dict[str, list[float]] = {}
    for entry, s in zip(entries, scores, strict=True):
        if s > 0:
            for cid in entry.ids:
                chunk_scores.setdefault(cid, []).append(s)
    boost = {cid: float(np.mean(v)) for cid, v in chunk_scores.items() if np.mean(v) >= MIN_CHUNK_SCORE}
    boost = dict(sorted(boost.items(), key=lambda kv: -kv[1])[: 2 * top_n])
    if not boost:
        return candidates
    out = []
    for c in candidates:
        if c.record.id in boost:
            c.similarity += boost.pop(c.record.id)
        out.append(c)
    for record in fetch(list(boost)):
        if record.available:
            out.append(Candidate(record=record, similarity=boost[record.id]))
    return out
