"""Rank features added to a candidate's similarity (REFERENCE §5.3).

The reference adds ``rank_fea = 10 * tag_cos + pagerank_fea`` to a similarity
in [0, 1], with the knowledge base's pagerank as its raw integer 0..100::

    tag_cos = Σ_t q_t c_t / (‖c‖ ‖q‖)

between the question's tags ``q`` and the chunk's tags ``c``
(:mod:`ragloom.knowledge.tags`). Both features would swamp the similarity at
that scale, so ragloom divides the whole rank feature by 100: the pagerank part
is ``pagerank / 100`` (0..1) and the tag part ``10 * tag_cos / 100 =
0.1 * tag_cos`` (0..0.1). The ratio between the two parts is the reference's;
a full tag match is worth as much as a pagerank of 10, and lifts a chunk above
one that is otherwise equal or up to 0.1 more similar (a fifth to a third of
the usual spread between a relevant and an irrelevant chunk), without letting
tags outrank relevance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ragloom.dataflow import ChunkRecord

__all__ = ["PAGERANK_SCALE", "TAG_WEIGHT", "RankFeatures", "tag_cosine"]

PAGERANK_SCALE = 1 / 100  # the reference's raw 0..100 pagerank, scaled to 0..1
TAG_WEIGHT = 10 * PAGERANK_SCALE  # the reference's 10 × tag_cos, on the same scale


def tag_cosine(query_tags: Mapping[str, float], chunk_tags: Mapping[str, float]) -> float:
    """``Σ q_t c_t / (‖c‖ ‖q‖)``; 0 when either side has no tag."""
    q_norm = math.sqrt(sum(v * v for v in query_tags.values()))
    c_norm = math.sqrt(sum(v * v for v in chunk_tags.values()))
    if q_norm == 0 or c_norm == 0:
        return 0.0
    return sum(query_tags[t] * v for t, v in chunk_tags.items() if t in query_tags) / (q_norm * c_norm)


class RankFeatures:
    """The rank feature of a candidate: ``pagerank(kb) / 100 + 0.1 * tag_cos(question, chunk)``."""

    def __init__(self, pageranks: Mapping[str, int] | None = None,
                 query_tags: Mapping[str, float] | None = None) -> None:
        self.pageranks = pageranks or {}
        self.query_tags = dict(query_tags or {})

    def tag_part(self, record: ChunkRecord) -> float:
        if not self.query_tags or not record.tags:
            return 0.0
        return TAG_WEIGHT * tag_cosine(self.query_tags, record.tags)

    def __call__(self, record: ChunkRecord) -> float:
        return self.pageranks.get(record.kb_id, 0) * PAGERANK_SCALE + self.tag_part(record)
